use super::ValidationError;

/// Lifecycle of a memory row. Only `Active` (and, on request, `Deprecated`) rows are searchable;
/// the others are kept for audit until a hard forget removes them. `Archived` rows live outside
/// the hot table (`memories_archive`, or objects the archive job wrote).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Status {
    Active,
    Deprecated,
    Expired,
    Forgotten,
    Archived,
}

impl Status {
    pub const ALL: [Status; 5] = [
        Self::Active,
        Self::Deprecated,
        Self::Expired,
        Self::Forgotten,
        Self::Archived,
    ];

    pub fn parse(value: &str) -> Result<Self, ValidationError> {
        Self::ALL
            .into_iter()
            .find(|s| s.as_str() == value)
            .ok_or_else(|| {
                ValidationError::new(
                    "status",
                    format!("must be one of active, deprecated, expired, forgotten, archived; got {value:?}"),
                )
            })
    }

    pub fn as_str(self) -> &'static str {
        match self {
            Self::Active => "active",
            Self::Deprecated => "deprecated",
            Self::Expired => "expired",
            Self::Forgotten => "forgotten",
            Self::Archived => "archived",
        }
    }

    /// Whether the vector index should hold a point for a row in this status.
    pub fn is_indexed(self) -> bool {
        matches!(self, Self::Active | Self::Deprecated)
    }
}

impl std::fmt::Display for Status {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}
