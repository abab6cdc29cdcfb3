//! Write triage (`[triage]` in `screening.toml`): a write that gives no `importance` is scored
//! here instead of being assumed 0.5. Small talk (greetings, thanks, acknowledgements, goodbyes;
//! English and Chinese) scores low, so the importance gate skips it; stated preferences, rules,
//! decisions, deadlines, names and numbers score high; the rest gets `default`. The first rule
//! that matches, in the file's order, sets the score, and its name is stored with the memory.

use std::collections::HashSet;

use regex::Regex;
use serde::Deserialize;

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct TriageSpec {
    /// The score of a write no rule matched.
    default: f64,
    #[serde(default, rename = "rule")]
    rules: Vec<TriageRuleSpec>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct TriageRuleSpec {
    name: String,
    score: f64,
    /// Any one matching is enough.
    #[serde(default)]
    patterns: Vec<String>,
    /// The whole message is made of these words (lower-cased; punctuation, emoji and digits
    /// of a smiley ignored), at most `max_words` of them; `names` words starting with a
    /// capital letter (the person thanked or greeted) may stand among them.
    #[serde(default)]
    words: Vec<String>,
    #[serde(default)]
    max_words: usize,
    #[serde(default)]
    names: usize,
}

/// What triage decided for one write.
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
pub struct Triaged {
    pub score: f64,
    /// The rule that set it, or `default`.
    pub rule: String,
}

#[derive(Debug)]
pub(super) struct Triage {
    default: f64,
    rules: Vec<TriageRule>,
}

#[derive(Debug)]
struct TriageRule {
    name: String,
    score: f64,
    patterns: Vec<Regex>,
    words: HashSet<String>,
    max_words: usize,
    names: usize,
}

impl Triage {
    /// No rules: every write gets 0.5 (a rule file without `[triage]`).
    pub(super) fn neutral() -> Self {
        Self {
            default: 0.5,
            rules: Vec::new(),
        }
    }

    /// The spec compiled; an error names the rule and what is wrong with it.
    pub(super) fn compile(spec: TriageSpec) -> Result<Self, String> {
        let in_range = |what: &str, x: f64| {
            if (0.0..=1.0).contains(&x) {
                Ok(())
            } else {
                Err(format!("{what}: score must be within 0..=1, got {x}"))
            }
        };
        in_range("triage.default", spec.default)?;
        let mut rules = Vec::new();
        for rule in spec.rules {
            let at = format!("triage rule {:?}", rule.name);
            in_range(&at, rule.score)?;
            if rule.patterns.is_empty() && rule.words.is_empty() {
                return Err(format!("{at}: needs patterns or words"));
            }
            if !rule.words.is_empty() && rule.max_words == 0 {
                return Err(format!("{at}: words need max_words (at least 1)"));
            }
            let patterns = rule
                .patterns
                .iter()
                .map(|p| Regex::new(p).map_err(|e| format!("{at}: pattern {p:?}: {e}")))
                .collect::<Result<_, _>>()?;
            rules.push(TriageRule {
                name: rule.name,
                score: rule.score,
                patterns,
                words: rule.words.iter().map(|w| w.to_lowercase()).collect(),
                max_words: rule.max_words,
                names: rule.names,
            });
        }
        Ok(Self {
            default: spec.default,
            rules,
        })
    }

    /// Add `other`'s rules in front of these (an operator's file extending the built-in one:
    /// a rule of the same name replaces the built-in one); `other`'s default wins.
    pub(super) fn extended_by(self, other: Triage) -> Self {
        let mut rules = other.rules;
        let kept: Vec<TriageRule> = self
            .rules
            .into_iter()
            .filter(|r| !rules_named(&rules, &r.name))
            .collect();
        rules.extend(kept);
        Self {
            default: other.default,
            rules,
        }
    }

    pub(super) fn score(&self, text: &str) -> Triaged {
        for rule in &self.rules {
            if rule.matches(text) {
                return Triaged {
                    score: rule.score,
                    rule: rule.name.clone(),
                };
            }
        }
        Triaged {
            score: self.default,
            rule: "default".to_owned(),
        }
    }
}

fn rules_named(rules: &[TriageRule], name: &str) -> bool {
    rules.iter().any(|r| r.name == name)
}

impl TriageRule {
    fn matches(&self, text: &str) -> bool {
        if self.patterns.iter().any(|p| p.is_match(text)) {
            return true;
        }
        if self.words.is_empty() {
            return false;
        }
        let words: Vec<&str> = text
            .split(|c: char| !(c.is_alphanumeric() || c == '\'' || c == '’'))
            .filter(|w| !w.is_empty())
            .collect();
        if words.is_empty() || words.len() > self.max_words {
            return false;
        }
        let mut names = 0;
        for word in words {
            let lower = word.to_lowercase().replace('’', "'");
            if self.words.contains(&lower) {
                continue;
            }
            if word.chars().next().is_some_and(char::is_uppercase) && names < self.names {
                names += 1;
                continue;
            }
            return false;
        }
        true
    }
}
