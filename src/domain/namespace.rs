use super::ValidationError;

/// A tenant / project / user partition. Short, printable, no surprises in logs or filters.
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord, serde::Serialize)]
#[serde(transparent)]
pub struct Namespace(String);

impl Namespace {
    pub const MAX_LEN: usize = 128;
    pub const DEFAULT: &'static str = "default";

    pub fn parse(value: &str) -> Result<Self, ValidationError> {
        let rule = "must be 1-128 characters of letters, digits, '_', '-', '.', ':' or '/'";
        if value.is_empty() || value.chars().count() > Self::MAX_LEN {
            return Err(ValidationError::new(
                "namespace",
                format!("{rule}, got {} characters", value.chars().count()),
            ));
        }
        if let Some(bad) = value
            .chars()
            .find(|c| !(c.is_alphanumeric() || matches!(c, '_' | '-' | '.' | ':' | '/')))
        {
            return Err(ValidationError::new(
                "namespace",
                format!("{rule}, found {bad:?}"),
            ));
        }
        Ok(Self(value.to_owned()))
    }

    pub fn as_str(&self) -> &str {
        &self.0
    }
}

impl Default for Namespace {
    fn default() -> Self {
        Self(Self::DEFAULT.to_owned())
    }
}

impl std::fmt::Display for Namespace {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_valid_and_rejects_invalid() {
        assert!(Namespace::parse("team-a/project_1").is_ok());
        assert!(Namespace::parse("用户").is_ok());
        assert!(Namespace::parse("").is_err());
        assert!(Namespace::parse("has space").is_err());
        assert!(Namespace::parse(&"x".repeat(129)).is_err());
    }
}
