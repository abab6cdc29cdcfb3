//! The language model's side of distillation, without the network: the prompt template
//! (`prompts/distill.md`, versioned on its first line) rendered for one cluster, and the reply
//! checked against the schema before anything is stored. A reply is untrusted input: every
//! draft must name only episodes of its cluster, have non-empty bounded content and a
//! confidence in [0, 1], or the reply is refused with the item and field named.

use std::collections::HashSet;

use chrono::{DateTime, Utc};
use serde::Deserialize;

use crate::domain::{Content, MemoryId};

/// What `{{episodes}}` in the template is replaced by: one line per episode.
const PLACEHOLDER: &str = "{{episodes}}";

/// A prompt template and its version (recorded with every candidate it drafts).
#[derive(Debug, Clone, PartialEq)]
pub struct Prompt {
    pub version: String,
    body: String,
}

#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum PromptError {
    #[error("the first line must be `version: <name>`, got {0:?}")]
    NoVersion(String),
    #[error("the template must contain {PLACEHOLDER} once")]
    NoPlaceholder,
}

/// One episode as the prompt shows it.
#[derive(Debug, Clone)]
pub struct EpisodeLine<'a> {
    pub id: MemoryId,
    /// When it happened.
    pub occurred_at: DateTime<Utc>,
    pub content: &'a str,
}

impl Prompt {
    pub fn parse(text: &str) -> Result<Self, PromptError> {
        let (first, body) = text.split_once('\n').unwrap_or((text, ""));
        let version = first
            .strip_prefix("version:")
            .map(str::trim)
            .filter(|v| !v.is_empty())
            .ok_or_else(|| PromptError::NoVersion(first.to_owned()))?;
        if body.matches(PLACEHOLDER).count() != 1 {
            return Err(PromptError::NoPlaceholder);
        }
        Ok(Self {
            version: version.to_owned(),
            body: body.trim_start_matches('\n').to_owned(),
        })
    }

    /// The prompt for one cluster: `- [id] (YYYY-MM-DD) content` per episode, each on one line
    /// (line breaks inside an episode become spaces so one episode cannot pose as several).
    pub fn render(&self, episodes: &[EpisodeLine<'_>]) -> String {
        let lines: Vec<String> = episodes
            .iter()
            .map(|e| {
                let content = e.content.split_whitespace().collect::<Vec<_>>().join(" ");
                format!(
                    "- [{}] ({}) {}",
                    e.id,
                    e.occurred_at.format("%Y-%m-%d"),
                    content
                )
            })
            .collect();
        self.body.replace(PLACEHOLDER, &lines.join("\n"))
    }
}

/// One piece of knowledge the model drafted, checked.
#[derive(Debug, Clone, PartialEq)]
pub struct Draft {
    pub content: String,
    pub entity: Option<String>,
    pub attribute: Option<String>,
    pub confidence: f64,
    pub source_ids: Vec<MemoryId>,
}

#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum ReplyError {
    #[error("the reply is not JSON: {0}")]
    NotJson(String),
    #[error("the reply must be a JSON array of drafts (or an object with a \"candidates\" array)")]
    NotArray,
    #[error("draft {index}: {field} {rule}")]
    Invalid {
        index: usize,
        field: &'static str,
        rule: String,
    },
}

#[derive(Deserialize)]
struct RawDraft {
    content: Option<serde_json::Value>,
    entity: Option<String>,
    attribute: Option<String>,
    confidence: Option<serde_json::Value>,
    source_ids: Option<Vec<serde_json::Value>>,
}

/// Check a reply against the schema. `cluster` is the episodes the prompt showed; `max_chars`
/// bounds each draft's content (the write path's limit).
pub fn parse_reply(
    reply: &str,
    cluster: &[MemoryId],
    max_chars: usize,
) -> Result<Vec<Draft>, ReplyError> {
    let value: serde_json::Value =
        serde_json::from_str(strip_fence(reply)).map_err(|e| ReplyError::NotJson(e.to_string()))?;
    // JSON mode of OpenAI-compatible servers only returns objects: accept {"candidates": [...]}.
    let items = match value {
        serde_json::Value::Array(items) => items,
        serde_json::Value::Object(mut object) => match object.remove("candidates") {
            Some(serde_json::Value::Array(items)) => items,
            _ => return Err(ReplyError::NotArray),
        },
        _ => return Err(ReplyError::NotArray),
    };
    let allowed: HashSet<MemoryId> = cluster.iter().copied().collect();
    items
        .into_iter()
        .enumerate()
        .map(|(index, item)| check(index, item, &allowed, max_chars))
        .collect()
}

fn check(
    index: usize,
    item: serde_json::Value,
    allowed: &HashSet<MemoryId>,
    max_chars: usize,
) -> Result<Draft, ReplyError> {
    let invalid = |field: &'static str, rule: String| ReplyError::Invalid { index, field, rule };
    let raw: RawDraft = serde_json::from_value(item)
        .map_err(|e| invalid("(draft)", format!("is malformed: {e}")))?;
    let content = match raw.content {
        Some(serde_json::Value::String(text)) => Content::parse(&text, max_chars)
            .map_err(|e| invalid("content", e.rule))?
            .as_str()
            .to_owned(),
        _ => return Err(invalid("content", "must be a string".to_owned())),
    };
    let confidence = raw
        .confidence
        .as_ref()
        .and_then(serde_json::Value::as_f64)
        .filter(|c| (0.0..=1.0).contains(c))
        .ok_or_else(|| invalid("confidence", "must be a number in [0, 1]".to_owned()))?;
    let mut source_ids = Vec::new();
    for source in raw.source_ids.unwrap_or_default() {
        let id = source
            .as_str()
            .and_then(|s| MemoryId::parse_str(s.trim()).ok())
            .filter(|id| allowed.contains(id))
            .ok_or_else(|| {
                invalid(
                    "source_ids",
                    format!("must list only ids of this cluster's episodes, got {source}"),
                )
            })?;
        if !source_ids.contains(&id) {
            source_ids.push(id);
        }
    }
    if source_ids.is_empty() {
        return Err(invalid(
            "source_ids",
            "must name at least one episode".to_owned(),
        ));
    }
    let name = |value: Option<String>| value.map(|v| v.trim().to_owned()).filter(|v| !v.is_empty());
    let (entity, attribute) = (name(raw.entity), name(raw.attribute));
    for (field, value) in [("entity", &entity), ("attribute", &attribute)] {
        if value.as_deref().is_some_and(|v| v.contains('\0')) {
            return Err(invalid(field, "must not contain NUL characters".to_owned()));
        }
    }
    if entity.is_some() != attribute.is_some() {
        return Err(invalid(
            "entity",
            "and attribute must be given together or not at all".to_owned(),
        ));
    }
    Ok(Draft {
        content,
        entity,
        attribute,
        confidence,
        source_ids,
    })
}

/// Models asked for bare JSON still wrap it in a ```json fence now and then; that much is
/// forgiven, nothing more.
fn strip_fence(reply: &str) -> &str {
    let trimmed = reply.trim();
    let Some(inner) = trimmed.strip_prefix("```") else {
        return trimmed;
    };
    let inner = inner.strip_prefix("json").unwrap_or(inner);
    inner.strip_suffix("```").unwrap_or(inner).trim()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ids(n: usize) -> Vec<MemoryId> {
        (0..n).map(|_| MemoryId::now_v7()).collect()
    }

    #[test]
    fn the_shipped_prompt_parses_and_renders_every_episode_on_one_line() {
        let prompt = Prompt::parse(include_str!("../../prompts/distill.md")).unwrap();
        assert_eq!(prompt.version, "distill-v1");
        let cluster = ids(2);
        let at = DateTime::from_timestamp(1_717_200_000, 0).unwrap();
        let text = prompt.render(&[
            EpisodeLine {
                id: cluster[0],
                occurred_at: at,
                content: "asked for a report\nwith sources",
            },
            EpisodeLine {
                id: cluster[1],
                occurred_at: at,
                content: "wanted sources again",
            },
        ]);
        assert!(text.contains(&format!(
            "- [{}] (2024-06-01) asked for a report with sources",
            cluster[0]
        )));
        assert!(text.contains(&format!(
            "- [{}] (2024-06-01) wanted sources again",
            cluster[1]
        )));
        assert!(!text.contains(PLACEHOLDER));
        assert!(!text.starts_with("version:"));
    }

    #[test]
    fn a_template_without_version_or_placeholder_is_refused() {
        assert!(matches!(
            Prompt::parse("hello {{episodes}}"),
            Err(PromptError::NoVersion(_))
        ));
        assert_eq!(
            Prompt::parse("version: x\nno slot"),
            Err(PromptError::NoPlaceholder)
        );
    }

    #[test]
    fn a_valid_reply_is_accepted_bare_fenced_or_wrapped() {
        let cluster = ids(3);
        let body = format!(
            r#"[{{"content": " The user wants sources cited. ", "confidence": 0.9,
                 "source_ids": ["{a}", "{b}", "{a}"]}},
                {{"content": "The user's language is Rust.", "entity": "user",
                  "attribute": "language", "confidence": 1, "source_ids": ["{c}"]}}]"#,
            a = cluster[0],
            b = cluster[1],
            c = cluster[2]
        );
        for reply in [
            body.clone(),
            format!("```json\n{body}\n```"),
            format!(r#"{{"candidates": {body}}}"#),
        ] {
            let drafts = parse_reply(&reply, &cluster, 200).unwrap();
            assert_eq!(drafts.len(), 2);
            assert_eq!(drafts[0].content, "The user wants sources cited.");
            assert_eq!(
                drafts[0].source_ids,
                vec![cluster[0], cluster[1]],
                "deduplicated"
            );
            assert_eq!(drafts[1].entity.as_deref(), Some("user"));
            assert_eq!(drafts[1].confidence, 1.0);
        }
        assert_eq!(parse_reply("[]", &cluster, 200).unwrap(), vec![]);
    }

    #[test]
    fn each_schema_violation_names_the_draft_and_field() {
        let cluster = ids(1);
        let stranger = MemoryId::now_v7();
        let ok_source = format!(r#""source_ids": ["{}"]"#, cluster[0]);
        let cases = [
            (
                format!(r#"[{{"content": "", "confidence": 0.5, {ok_source}}}]"#),
                "content",
            ),
            (
                format!(
                    r#"[{{"content": "{}", "confidence": 0.5, {ok_source}}}]"#,
                    "x".repeat(201)
                ),
                "content",
            ),
            (
                format!(r#"[{{"content": 3, "confidence": 0.5, {ok_source}}}]"#),
                "content",
            ),
            (
                format!(r#"[{{"content": "a", "confidence": 1.5, {ok_source}}}]"#),
                "confidence",
            ),
            (
                format!(r#"[{{"content": "a", {ok_source}}}]"#),
                "confidence",
            ),
            (
                format!(r#"[{{"content": "a", "confidence": 0.5, "source_ids": ["{stranger}"]}}]"#),
                "source_ids",
            ),
            (
                r#"[{"content": "a", "confidence": 0.5, "source_ids": []}]"#.to_owned(),
                "source_ids",
            ),
            (
                format!(
                    r#"[{{"content": "a", "confidence": 0.5, "entity": "user", {ok_source}}}]"#
                ),
                "entity",
            ),
            (
                format!(
                    r#"[{{"content": "a", "confidence": 0.5, "entity": "user",
                        "attribute": "tea\u0000", {ok_source}}}]"#
                ),
                "attribute",
            ),
            (
                format!(r#"[{{"content": "a\u0000", "confidence": 0.5, {ok_source}}}]"#),
                "content",
            ),
        ];
        for (reply, field) in cases {
            match parse_reply(&reply, &cluster, 200) {
                Err(ReplyError::Invalid {
                    index: 0, field: f, ..
                }) => assert_eq!(f, field, "{reply}"),
                other => panic!("{reply}: {other:?}"),
            }
        }
        assert!(matches!(
            parse_reply("here you go: [", &cluster, 200),
            Err(ReplyError::NotJson(_))
        ));
        assert_eq!(
            parse_reply(r#"{"drafts": []}"#, &cluster, 200),
            Err(ReplyError::NotArray)
        );
        assert_eq!(parse_reply("42", &cluster, 200), Err(ReplyError::NotArray));
    }
}
