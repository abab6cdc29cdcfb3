use super::ValidationError;

/// The three kinds of memory, after the cognitive-science split the agents' prompts use.
#[derive(
    Debug,
    Clone,
    Copy,
    PartialEq,
    Eq,
    Hash,
    serde::Serialize,
    serde::Deserialize,
    schemars::JsonSchema,
)]
#[serde(rename_all = "lowercase")]
pub enum MemoryType {
    /// Scratch context for the current task; expires after 24 h unless told otherwise.
    Working,
    /// Something that happened, at a time ("on 2024-06-01 the user asked for …").
    Episodic,
    /// A durable fact or preference ("the user wants data sources in every report").
    Semantic,
}

impl MemoryType {
    pub const ALL: [MemoryType; 3] = [Self::Working, Self::Episodic, Self::Semantic];

    pub fn parse(value: &str) -> Result<Self, ValidationError> {
        match value {
            "working" => Ok(Self::Working),
            "episodic" => Ok(Self::Episodic),
            "semantic" => Ok(Self::Semantic),
            other => Err(ValidationError::new(
                "memory_type",
                format!("must be one of working, episodic, semantic; got {other:?}"),
            )),
        }
    }

    pub fn as_str(self) -> &'static str {
        match self {
            Self::Working => "working",
            Self::Episodic => "episodic",
            Self::Semantic => "semantic",
        }
    }
}

impl std::fmt::Display for MemoryType {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}
