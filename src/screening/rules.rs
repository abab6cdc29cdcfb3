//! `screening.toml`: its format, read and checked once (errors name the file, the rule and the
//! pattern), compiled into `Rule`s.

use regex::Regex;
use serde::Deserialize;

use super::{Finding, Screen};

/// What happens to a write a rule matched.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize, serde::Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Action {
    Reject,
    Quarantine,
    Redact,
}

#[derive(Debug, thiserror::Error)]
pub enum RuleError {
    #[error("{path}: {message}")]
    Read { path: String, message: String },
    #[error("{path}: {message}")]
    Invalid { path: String, message: String },
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct File {
    version: String,
    /// Add these rules to the built-in ones instead of replacing them.
    #[serde(default)]
    extends_builtin: bool,
    #[serde(default, rename = "rule")]
    rules: Vec<RuleSpec>,
    /// Scores for writes that give no importance (`triage.rs`).
    triage: Option<super::triage::TriageSpec>,
    contradiction: Option<ContradictionSpec>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct ContradictionSpec {
    action: ContradictionAction,
}

/// What happens to a write that contradicts an active fact of its namespace.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum ContradictionAction {
    /// The new fact supersedes the old one (kept, deprecated).
    Supersede,
    /// Held for a reviewer.
    Quarantine,
    /// Refused.
    Reject,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RuleSpec {
    name: String,
    /// `injection` or `secret`.
    kind: String,
    action: Action,
    #[serde(default)]
    patterns: Vec<String>,
    /// Groups of patterns that must all match in one sentence (`[[rule.together]] all =
    /// [...]`): the shape of an attack is a combination (an override verb and the word
    /// "instructions"), where each word alone is ordinary chat.
    #[serde(default)]
    together: Vec<Together>,
    /// A built-in detector instead of patterns: `card_number`.
    detector: Option<String>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct Together {
    all: Vec<String>,
}

#[derive(Debug)]
pub(super) struct Rule {
    pub name: String,
    pub kind: String,
    pub action: Action,
    patterns: Vec<Regex>,
    together: Vec<Vec<Regex>>,
    card_numbers: bool,
}

/// The sentences of `text` with their byte ranges. A sentence ends at a line break, at `。！？；`,
/// and at `. ! ? ;` followed by a space or the end (so addresses and URLs stay whole).
fn sentences(text: &str) -> impl Iterator<Item = (usize, &str)> {
    let mut start = 0;
    let mut out = Vec::new();
    let mut chars = text.char_indices().peekable();
    while let Some((i, c)) = chars.next() {
        let next_is_space = chars.peek().is_none_or(|(_, n)| n.is_whitespace());
        let ends = matches!(c, '\n' | '。' | '！' | '？' | '；')
            || (matches!(c, '.' | '!' | '?' | ';') && next_is_space);
        if ends {
            let end = i + c.len_utf8();
            out.push((start, &text[start..end]));
            start = end;
        }
    }
    if start < text.len() {
        out.push((start, &text[start..]));
    }
    out.into_iter()
}

impl Rule {
    pub fn find(&self, text: &str) -> Option<Finding> {
        let span = self
            .patterns
            .iter()
            .find_map(|p| p.find(text).map(|m| (m.start(), m.end())))
            .or_else(|| self.together_span(text))
            .or_else(|| {
                self.card_numbers
                    .then(|| super::card::find_all(text).into_iter().next())
                    .flatten()
            })?;
        Some(Finding {
            rule: self.name.clone(),
            kind: self.kind.clone(),
            action: self.action,
            span,
        })
    }

    /// The first sentence in which one group's patterns all match.
    fn together_span(&self, text: &str) -> Option<(usize, usize)> {
        if self.together.is_empty() {
            return None;
        }
        sentences(text).find_map(|(at, sentence)| {
            self.together
                .iter()
                .any(|group| group.iter().all(|p| p.is_match(sentence)))
                .then_some((at, at + sentence.len()))
        })
    }

    pub fn all_spans(&self, text: &str) -> Vec<(usize, usize)> {
        let mut spans: Vec<(usize, usize)> = self
            .patterns
            .iter()
            .flat_map(|p| p.find_iter(text).map(|m| (m.start(), m.end())))
            .collect();
        if self.card_numbers {
            spans.extend(super::card::find_all(text));
        }
        spans
    }
}

/// Parse `text` (from `path`); with `builtin`, a file saying `extends_builtin = true` adds its
/// rules to those.
pub(super) fn parse(text: &str, path: &str, builtin: Option<&str>) -> Result<Screen, RuleError> {
    let invalid = |message: String| RuleError::Invalid {
        path: path.to_owned(),
        message,
    };
    let file: File = toml::from_str(text).map_err(|e| invalid(e.to_string()))?;
    if file.version.trim().is_empty() {
        return Err(invalid(
            "version: must name this rule set's version".to_owned(),
        ));
    }
    let mut rules = Vec::new();
    let mut version = file.version.trim().to_owned();
    let mut triage = super::triage::Triage::neutral();
    let mut contradiction = ContradictionAction::Supersede;
    if file.extends_builtin {
        let base = builtin.ok_or_else(|| {
            invalid("extends_builtin: only an operator's file can extend the built-in rules".into())
        })?;
        let base = parse(base, "(built-in screening.toml)", None)?;
        version = format!("{} + {version}", base.version);
        rules = base.rules;
        triage = base.triage;
        contradiction = base.contradiction;
    }
    if let Some(spec) = file.contradiction {
        contradiction = spec.action;
    }
    if let Some(spec) = file.triage {
        let own = super::triage::Triage::compile(spec).map_err(invalid)?;
        triage = if file.extends_builtin {
            triage.extended_by(own)
        } else {
            own
        };
    }
    for spec in file.rules {
        let rule = compile(spec).map_err(invalid)?;
        rules.retain(|r: &Rule| r.name != rule.name);
        rules.push(rule);
    }
    let mut names = std::collections::HashSet::new();
    for rule in &rules {
        if !names.insert(rule.name.as_str()) {
            return Err(invalid(format!(
                "rule {:?}: the name is used twice",
                rule.name
            )));
        }
    }
    Ok(Screen {
        version,
        rules,
        triage,
        contradiction,
    })
}

fn compile(spec: RuleSpec) -> Result<Rule, String> {
    let name = spec.name.trim().to_owned();
    if name.is_empty() {
        return Err("rule: name must not be empty".to_owned());
    }
    let at = |what: String| format!("rule {name:?}: {what}");
    if !matches!(spec.kind.as_str(), "injection" | "secret") {
        return Err(at(format!(
            "kind must be injection or secret, got {:?}",
            spec.kind
        )));
    }
    if spec.action == Action::Redact && spec.kind != "secret" {
        return Err(at(
            "action redact is for secrets (kind = \"secret\")".to_owned()
        ));
    }
    let card_numbers = match spec.detector.as_deref() {
        None => false,
        Some("card_number") => true,
        Some(other) => return Err(at(format!("detector must be card_number, got {other:?}"))),
    };
    if spec.patterns.is_empty() && spec.together.is_empty() && !card_numbers {
        return Err(at(
            "needs patterns, together groups or a detector".to_owned()
        ));
    }
    if spec.action == Action::Redact && !spec.together.is_empty() {
        return Err(at(
            "together groups match sentences, not secrets: not for redact".to_owned(),
        ));
    }
    let together = spec
        .together
        .iter()
        .enumerate()
        .map(|(g, group)| {
            if group.all.len() < 2 {
                return Err(at(format!("together[{g}]: all needs two patterns or more")));
            }
            group
                .all
                .iter()
                .enumerate()
                .map(|(i, p)| Regex::new(p).map_err(|e| at(format!("together[{g}].all[{i}]: {e}"))))
                .collect::<Result<Vec<_>, _>>()
        })
        .collect::<Result<Vec<_>, _>>()?;
    let patterns = spec
        .patterns
        .iter()
        .enumerate()
        .map(|(i, p)| Regex::new(p).map_err(|e| at(format!("patterns[{i}]: {e}"))))
        .collect::<Result<Vec<_>, _>>()?;
    Ok(Rule {
        name,
        kind: spec.kind,
        action: spec.action,
        patterns,
        together,
        card_numbers,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    const BASE: &str = r#"
version = "base-1"
[[rule]]
name = "a"
kind = "injection"
action = "reject"
patterns = ['(?i)ignore previous']
"#;

    #[test]
    fn an_operator_file_extends_or_replaces_the_builtin_rules() {
        let extra = r#"
version = "ops-1"
extends_builtin = true
[[rule]]
name = "b"
kind = "secret"
action = "redact"
patterns = ['TOKEN-[0-9]+']
"#;
        let screen = parse(extra, "ops.toml", Some(BASE)).unwrap();
        assert_eq!(screen.version, "base-1 + ops-1");
        assert_eq!(screen.rule_names().collect::<Vec<_>>(), ["a", "b"]);
        let alone = parse(
            &extra.replace("extends_builtin = true", ""),
            "ops.toml",
            Some(BASE),
        );
        assert_eq!(alone.unwrap().rule_names().collect::<Vec<_>>(), ["b"]);
    }

    #[test]
    fn bad_rules_are_refused_naming_file_rule_and_pattern() {
        for (text, says) in [
            ("version = \"\"", "version"),
            (
                "version = \"1\"\n[[rule]]\nname = \"x\"\nkind = \"injection\"\naction = \"reject\"\npatterns = ['(unclosed']",
                "rule \"x\": patterns[0]",
            ),
            (
                "version = \"1\"\n[[rule]]\nname = \"x\"\nkind = \"injection\"\naction = \"redact\"\npatterns = ['a']",
                "redact is for secrets",
            ),
            (
                "version = \"1\"\n[[rule]]\nname = \"x\"\nkind = \"other\"\naction = \"reject\"\npatterns = ['a']",
                "kind must be",
            ),
            (
                "version = \"1\"\n[[rule]]\nname = \"x\"\nkind = \"secret\"\naction = \"reject\"",
                "needs patterns, together groups",
            ),
            ("version = \"1\"\nsurprise = 1", "surprise"),
        ] {
            let err = parse(text, "screening.toml", None).unwrap_err().to_string();
            assert!(
                err.contains("screening.toml") && err.contains(says),
                "{err}"
            );
        }
    }
}
