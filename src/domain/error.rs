use std::borrow::Cow;

/// A rejected input: names the field and the rule it broke, so a client (human or LLM) can fix
/// the call without guessing. `field` is a path for nested input (`time_range.from`); it is
/// empty only when the input as a whole is malformed (then `rule` names the field, as in
/// "missing field `content`").
#[derive(Debug, Clone, PartialEq)]
pub struct ValidationError {
    pub field: Cow<'static, str>,
    pub rule: String,
}

impl ValidationError {
    pub fn new(field: impl Into<Cow<'static, str>>, rule: impl Into<String>) -> Self {
        Self {
            field: field.into(),
            rule: rule.into(),
        }
    }
}

impl std::fmt::Display for ValidationError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        if self.field.is_empty() {
            f.write_str(&self.rule)
        } else {
            write!(f, "{}: {}", self.field, self.rule)
        }
    }
}

impl std::error::Error for ValidationError {}
