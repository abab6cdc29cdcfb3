use super::ValidationError;

/// How much a memory matters, in `0.0..=1.0`.
#[derive(Debug, Clone, Copy, PartialEq, PartialOrd, serde::Serialize)]
#[serde(transparent)]
pub struct Importance(f64);

impl Importance {
    pub fn parse(value: f64) -> Result<Self, ValidationError> {
        if !value.is_finite() || !(0.0..=1.0).contains(&value) {
            return Err(ValidationError::new(
                "importance",
                format!("must be a number between 0 and 1, got {value}"),
            ));
        }
        Ok(Self(value))
    }

    pub fn value(self) -> f64 {
        self.0
    }

    pub fn max(self, other: Self) -> Self {
        if other.0 > self.0 { other } else { self }
    }
}

impl Default for Importance {
    fn default() -> Self {
        Self(0.5)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn accepts_bounds_and_rejects_outside() {
        assert!(Importance::parse(0.0).is_ok());
        assert!(Importance::parse(1.0).is_ok());
        let err = Importance::parse(1.5).unwrap_err();
        assert_eq!(err.field, "importance");
        assert!(Importance::parse(-0.1).is_err());
        assert!(Importance::parse(f64::NAN).is_err());
    }
}
