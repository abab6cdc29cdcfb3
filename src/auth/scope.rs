/// Namespace patterns over the three tiers — `global`, `team/<name>`, `private/<agent>` — or any
/// free-form namespace by its own name. A pattern is a namespace name (exact), a prefix ending
/// in `/*` (`team/*`: every team namespace), or `*` (every namespace).
#[derive(Debug, Clone, PartialEq, Eq, Hash, serde::Serialize, serde::Deserialize)]
#[serde(try_from = "String", into = "String")]
pub struct ScopePattern(String);

#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("scope {pattern:?}: {rule}")]
pub struct ScopeError {
    pub pattern: String,
    pub rule: &'static str,
}

impl ScopePattern {
    pub fn parse(text: &str) -> Result<Self, ScopeError> {
        let text = text.trim();
        let bad = |rule| ScopeError {
            pattern: text.to_owned(),
            rule,
        };
        if text == "*" {
            return Ok(Self(text.to_owned()));
        }
        let name = text.strip_suffix("/*").unwrap_or(text);
        if name.is_empty() || name.chars().count() > 128 {
            return Err(bad(
                "must be a namespace name of 1-128 characters, `prefix/*` or `*`",
            ));
        }
        if name.contains('*') {
            return Err(bad("`*` only stands alone or as a final `/*`"));
        }
        if !name
            .chars()
            .all(|c| c.is_alphanumeric() || matches!(c, '_' | '-' | '.' | ':' | '/'))
        {
            return Err(bad(
                "a namespace name holds letters, digits, '_', '-', '.', ':' or '/'",
            ));
        }
        Ok(Self(text.to_owned()))
    }

    pub fn as_str(&self) -> &str {
        &self.0
    }

    pub fn matches(&self, namespace: &str) -> bool {
        if self.0 == "*" {
            return true;
        }
        match self.0.strip_suffix("/*") {
            Some(prefix) => namespace
                .strip_prefix(prefix)
                .is_some_and(|rest| rest.starts_with('/') && rest.len() > 1),
            None => self.0 == namespace,
        }
    }

    /// A pattern that names exactly one namespace.
    pub fn exact(&self) -> Option<&str> {
        (self.0 != "*" && !self.0.ends_with("/*")).then_some(self.0.as_str())
    }
}

impl TryFrom<String> for ScopePattern {
    type Error = ScopeError;
    fn try_from(value: String) -> Result<Self, Self::Error> {
        Self::parse(&value)
    }
}

impl From<ScopePattern> for String {
    fn from(value: ScopePattern) -> Self {
        value.0
    }
}

impl std::fmt::Display for ScopePattern {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}

/// A list of patterns; a namespace is in scope when any matches.
#[derive(Debug, Clone, Default, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(transparent)]
pub struct Scopes(pub Vec<ScopePattern>);

impl Scopes {
    /// `global,team/analytics,private/writer-agent` (commas, blanks ignored).
    pub fn parse_list(text: &str) -> Result<Self, ScopeError> {
        text.split(',')
            .map(str::trim)
            .filter(|s| !s.is_empty())
            .map(ScopePattern::parse)
            .collect::<Result<Vec<_>, _>>()
            .map(Self)
    }

    pub fn allows(&self, namespace: &str) -> bool {
        self.0.iter().any(|p| p.matches(namespace))
    }

    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }
}

impl std::fmt::Display for Scopes {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        if self.0.is_empty() {
            return f.write_str("none");
        }
        let names: Vec<&str> = self.0.iter().map(ScopePattern::as_str).collect();
        f.write_str(&names.join(", "))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn patterns_match_names_prefixes_and_everything() {
        let team = ScopePattern::parse("team/*").unwrap();
        assert!(team.matches("team/analytics"));
        assert!(!team.matches("team"));
        assert!(!team.matches("team/"));
        assert!(!team.matches("teams/x"));
        let exact = ScopePattern::parse("private/writer-agent").unwrap();
        assert!(exact.matches("private/writer-agent"));
        assert!(!exact.matches("private/writer-agent2"));
        assert_eq!(exact.exact(), Some("private/writer-agent"));
        assert!(ScopePattern::parse("*").unwrap().matches("anything"));
        assert!(
            ScopePattern::parse("legacy-project")
                .unwrap()
                .matches("legacy-project")
        );
    }

    #[test]
    fn bad_patterns_are_refused_naming_them() {
        for bad in ["", "team/*/x", "a*", "has space", "team/**"] {
            let err = ScopePattern::parse(bad).unwrap_err();
            assert_eq!(err.pattern, bad.trim(), "{bad}");
        }
        let scopes = Scopes::parse_list("global, team/analytics,,private/a").unwrap();
        assert_eq!(scopes.0.len(), 3);
        assert!(scopes.allows("global") && !scopes.allows("team/other"));
        assert_eq!(scopes.to_string(), "global, team/analytics, private/a");
    }
}
