/// A rejected input: names the field and the rule it broke, so a client (human or LLM) can fix
/// the call without guessing.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
#[error("{field}: {rule}")]
pub struct ValidationError {
    pub field: &'static str,
    pub rule: String,
}

impl ValidationError {
    pub fn new(field: &'static str, rule: impl Into<String>) -> Self {
        Self {
            field,
            rule: rule.into(),
        }
    }
}
