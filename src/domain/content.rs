use super::ValidationError;

/// The text of a memory: non-blank, at most `max_chars` characters (configurable, so the limit
/// is carried in by the caller rather than baked in).
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
#[serde(transparent)]
pub struct Content(String);

impl Content {
    pub const DEFAULT_MAX_CHARS: usize = 8_000;

    pub fn parse(value: &str, max_chars: usize) -> Result<Self, ValidationError> {
        let trimmed = value.trim();
        if trimmed.is_empty() {
            return Err(ValidationError::new(
                "content",
                "must not be empty or blank",
            ));
        }
        let chars = trimmed.chars().count();
        if chars > max_chars {
            return Err(ValidationError::new(
                "content",
                format!("must be at most {max_chars} characters, got {chars}"),
            ));
        }
        if trimmed.contains('\0') {
            return Err(ValidationError::new(
                "content",
                "must not contain NUL characters",
            ));
        }
        Ok(Self(trimmed.to_owned()))
    }

    pub fn as_str(&self) -> &str {
        &self.0
    }

    pub fn into_string(self) -> String {
        self.0
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rejects_blank_and_oversized() {
        assert!(Content::parse("  \n", 10).is_err());
        let err = Content::parse("abcdefghijk", 10).unwrap_err();
        assert!(err.to_string().contains("at most 10"), "{err}");
        assert_eq!(Content::parse(" hi ", 10).unwrap().as_str(), "hi");
        // Counted in characters, not bytes: ten CJK characters fit in a 10-char limit.
        assert!(Content::parse("记忆记忆记忆记忆记忆", 10).is_ok());
    }
}
