use super::ValidationError;

/// How many results a search returns: 1..=50.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct TopK(usize);

impl TopK {
    pub const MAX: usize = 50;
    pub const DEFAULT: usize = 5;

    pub fn parse(value: i64) -> Result<Self, ValidationError> {
        if !(1..=Self::MAX as i64).contains(&value) {
            return Err(ValidationError::new(
                "top_k",
                format!(
                    "must be an integer between 1 and {}, got {value}",
                    Self::MAX
                ),
            ));
        }
        Ok(Self(value as usize))
    }

    pub fn get(self) -> usize {
        self.0
    }
}

impl Default for TopK {
    fn default() -> Self {
        Self(Self::DEFAULT)
    }
}
