//! The language model's side of distillation, without the network: the prompt template
//! (`prompts/distill.md`, versioned on its first line) rendered for one cluster, and the reply
//! checked against the schema (`schema.rs`) before anything is stored. A reply is untrusted
//! input: every draft must cite only episodes of its cluster (by the numbers the prompt shows),
//! have non-empty bounded content and a confidence in [0, 1], or the reply is refused with the
//! item and field named.

use chrono::{DateTime, Utc};

use super::schema::{
    MAX_DRAFT_CHARS, MAX_DRAFTS, MAX_NAME_CHARS, MAX_SOURCES, WireDraft, WireReply,
};
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

    /// The prompt for one cluster: `[n] (YYYY-MM-DD) content` per episode, numbered from 1 in
    /// the order given (the reply cites these numbers), each on one line (line breaks inside an
    /// episode become spaces so one episode cannot pose as several).
    pub fn render(&self, episodes: &[EpisodeLine<'_>]) -> String {
        let lines: Vec<String> = episodes
            .iter()
            .enumerate()
            .map(|(i, e)| {
                let content = e.content.split_whitespace().collect::<Vec<_>>().join(" ");
                format!(
                    "[{}] ({}) {}",
                    i + 1,
                    e.occurred_at.format("%Y-%m-%d"),
                    content
                )
            })
            .collect();
        self.body.replace(PLACEHOLDER, &lines.join("\n"))
    }

    /// The template without its episodes.
    pub fn own_text(&self) -> String {
        self.body.replace(PLACEHOLDER, "\n")
    }

    /// The template's own sentences (instructions, examples): a draft that repeats one of
    /// these rather than its episodes is refused (`grounding`).
    pub fn own_sentences(&self) -> Vec<String> {
        self.own_text()
            .split(['.', '\n', ':', ';', '(', ')', '"'])
            .map(|s| s.trim_matches(|c: char| !c.is_alphanumeric()).to_owned())
            .filter(|s| s.split_whitespace().count() >= 4)
            .collect()
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
    #[error(
        "the reply must be a JSON object {{\"candidates\": [...]}} (or a bare array of drafts)"
    )]
    NotArray,
    #[error("draft {index}: {field} {rule}")]
    Invalid {
        index: usize,
        field: String,
        rule: String,
    },
}

/// Check a reply against the schema (`schema::WireReply` and its bounds). `cluster` is the
/// episodes the prompt showed, in the order shown: alias `n` is `cluster[n - 1]`; `max_chars`
/// is the write path's content limit (the schema's own is tighter unless configured lower).
pub fn parse_reply(
    reply: &str,
    cluster: &[MemoryId],
    max_chars: usize,
) -> Result<Vec<Draft>, ReplyError> {
    let value: serde_json::Value =
        serde_json::from_str(strip_fence(reply)).map_err(|e| ReplyError::NotJson(e.to_string()))?;
    // A model left free may answer with the bare array.
    let value = match value {
        serde_json::Value::Array(items) => serde_json::json!({ "candidates": items }),
        serde_json::Value::Object(object) if object.contains_key("candidates") => {
            serde_json::Value::Object(object)
        }
        _ => return Err(ReplyError::NotArray),
    };
    let wire: WireReply = serde_path_to_error::deserialize(value).map_err(|e| {
        let rule = e.inner().to_string();
        let (index, field) = located(e.path(), &rule);
        ReplyError::Invalid { index, field, rule }
    })?;
    if wire.candidates.len() > MAX_DRAFTS {
        return Err(ReplyError::Invalid {
            index: MAX_DRAFTS,
            field: "(reply)".to_owned(),
            rule: format!("has {} drafts; at most {MAX_DRAFTS}", wire.candidates.len()),
        });
    }
    wire.candidates
        .into_iter()
        .enumerate()
        .map(|(index, draft)| check(index, draft, cluster, max_chars.min(MAX_DRAFT_CHARS)))
        .collect()
}

/// The draft index and field a deserialisation error points at (`candidates[2].confidence`,
/// or the field serde says is missing).
fn located(path: &serde_path_to_error::Path, rule: &str) -> (usize, String) {
    use serde_path_to_error::Segment;
    let segments: Vec<&Segment> = path.iter().collect();
    let index = segments
        .iter()
        .find_map(|s| match s {
            Segment::Seq { index } => Some(*index),
            _ => None,
        })
        .unwrap_or(0);
    let missing = rule
        .strip_prefix("missing field `")
        .and_then(|rest| rest.split_once('`'))
        .map(|(name, _)| name.to_owned());
    let field = match (segments.get(2), missing) {
        (Some(Segment::Map { key }), _) => key.clone(),
        (None, Some(name)) => name,
        _ => "(draft)".to_owned(),
    };
    (index, field)
}

fn check(
    index: usize,
    draft: WireDraft,
    cluster: &[MemoryId],
    max_chars: usize,
) -> Result<Draft, ReplyError> {
    let invalid = |field: &str, rule: String| ReplyError::Invalid {
        index,
        field: field.to_owned(),
        rule,
    };
    let content = Content::parse(&draft.content, max_chars)
        .map_err(|e| invalid("content", e.rule))?
        .as_str()
        .to_owned();
    // Off the scale is no confidence: kept for a reviewer, never auto-approved. Grammars
    // (llama.cpp's, node-llama-cpp's) do not bound numbers, and SmolLM2 wrote 2.
    let confidence = match draft.confidence {
        c if (0.0..=1.0).contains(&c) => c,
        _ => 0.0,
    };
    let mut source_ids = Vec::new();
    for alias in draft.sources {
        let id = (alias as usize)
            .checked_sub(1)
            .and_then(|i| cluster.get(i))
            .ok_or_else(|| {
                invalid(
                    "sources",
                    format!(
                        "must list only the episodes' numbers, 1 to {}, got {alias}",
                        cluster.len()
                    ),
                )
            })?;
        if !source_ids.contains(id) {
            source_ids.push(*id);
        }
    }
    if source_ids.is_empty() {
        return Err(invalid(
            "sources",
            "must name at least one episode".to_owned(),
        ));
    }
    if source_ids.len() > MAX_SOURCES {
        return Err(invalid(
            "sources",
            format!("names {} episodes; at most {MAX_SOURCES}", source_ids.len()),
        ));
    }
    // `entity` and `attribute` are optional and make a fact supersede older ones; a pair that
    // breaks its bounds (too long, only one of the two, a NUL) is dropped, not the draft:
    // small models fill both with the content (SmolLM2 135M did, under a grammar that left
    // nullable strings unbounded), and a wrong pair would supersede the wrong facts.
    let name = |value: Option<String>| {
        value
            .map(|v| v.trim().to_owned())
            .filter(|v| !v.is_empty() && !v.contains('\0') && v.chars().count() <= MAX_NAME_CHARS)
    };
    let (entity, attribute) = match (name(draft.entity), name(draft.attribute)) {
        (Some(entity), Some(attribute)) => (Some(entity), Some(attribute)),
        _ => (None, None),
    };
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
    fn the_shipped_prompt_parses_and_renders_every_episode_on_one_numbered_line() {
        let prompt = Prompt::parse(include_str!("../../prompts/distill.md")).unwrap();
        assert_eq!(prompt.version, "distill-v2");
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
        assert!(text.contains("\n[1] (2024-06-01) asked for a report with sources\n"));
        assert!(text.contains("\n[2] (2024-06-01) wanted sources again\n"));
        assert!(
            !text.contains(&cluster[0].to_string()),
            "no ids in the prompt"
        );
        assert!(!text.contains(PLACEHOLDER));
        assert!(!text.starts_with("version:"));
        let own = prompt.own_sentences();
        assert!(own.iter().any(|s| s.contains("durable")), "{own:?}");
        assert!(own.iter().all(|s| !s.contains("wanted sources")), "{own:?}");
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
    fn a_valid_reply_is_accepted_wrapped_bare_or_fenced() {
        let cluster = ids(3);
        let items = r#"[{"content": " The user wants sources cited. ", "entity": null,
                 "attribute": null, "confidence": 0.9, "sources": [1, 2, 1]},
                {"content": "The user's language is Rust.", "entity": "user",
                  "attribute": "language", "confidence": 1, "sources": ["[3]"]}]"#;
        for reply in [
            format!(r#"{{"candidates": {items}}}"#),
            items.to_owned(),
            format!("```json\n{{\"candidates\": {items}}}\n```"),
        ] {
            let drafts = parse_reply(&reply, &cluster, 8000).unwrap();
            assert_eq!(drafts.len(), 2);
            assert_eq!(drafts[0].content, "The user wants sources cited.");
            assert_eq!(
                drafts[0].source_ids,
                vec![cluster[0], cluster[1]],
                "aliases mapped back, deduplicated"
            );
            assert_eq!(drafts[1].source_ids, vec![cluster[2]]);
            assert_eq!(drafts[1].entity.as_deref(), Some("user"));
            assert_eq!(drafts[1].confidence, 1.0);
        }
        assert_eq!(
            parse_reply(r#"{"candidates": []}"#, &cluster, 200).unwrap(),
            vec![]
        );
    }

    #[test]
    fn each_schema_violation_names_the_draft_and_field() {
        let cluster = ids(2);
        let ok = r#""sources": [1]"#;
        let cases = [
            (
                format!(r#"{{"content": "", "confidence": 0.5, {ok}}}"#),
                "content",
            ),
            (
                format!(
                    r#"{{"content": "{}", "confidence": 0.5, {ok}}}"#,
                    "x".repeat(MAX_DRAFT_CHARS + 1)
                ),
                "content",
            ),
            (
                format!(r#"{{"content": 3, "confidence": 0.5, {ok}}}"#),
                "content",
            ),
            (format!(r#"{{"content": "a", {ok}}}"#), "confidence"),
            (
                r#"{"content": "a", "confidence": 0.5}"#.to_owned(),
                "sources",
            ),
            (
                r#"{"content": "a", "confidence": 0.5, "sources": [3]}"#.to_owned(),
                "sources",
            ),
            (
                r#"{"content": "a", "confidence": 0.5, "sources": [0]}"#.to_owned(),
                "sources",
            ),
            (
                r#"{"content": "a", "confidence": 0.5, "sources": ["user"]}"#.to_owned(),
                "sources",
            ),
            (
                r#"{"content": "a", "confidence": 0.5, "sources": []}"#.to_owned(),
                "sources",
            ),
            (
                format!(r#"{{"content": "a\u0000", "confidence": 0.5, {ok}}}"#),
                "content",
            ),
            (
                format!(r#"{{"content": "a", "confidence": 0.5, "source_ids": [1], {ok}}}"#),
                "source_ids",
            ),
        ];
        for (draft, field) in cases {
            let reply = format!(r#"{{"candidates": [{draft}]}}"#);
            match parse_reply(&reply, &cluster, 8000) {
                Err(ReplyError::Invalid {
                    index: 0, field: f, ..
                }) => assert_eq!(f, field, "{reply}"),
                other => panic!("{reply}: {other:?}"),
            }
        }
        for off_scale in ["1.5", "-0.2", "80"] {
            let reply = format!(
                r#"{{"candidates": [{{"content": "a", "confidence": {off_scale}, {ok}}}]}}"#
            );
            assert_eq!(
                parse_reply(&reply, &cluster, 8000).unwrap()[0].confidence,
                0.0
            );
        }
        // A broken entity/attribute pair is dropped, the draft kept.
        for pair in [
            r#""entity": "user""#.to_owned(),
            r#""entity": "user", "attribute": "tea\u0000""#.to_owned(),
            format!(
                r#""entity": "user", "attribute": "{}""#,
                "x".repeat(MAX_NAME_CHARS + 1)
            ),
        ] {
            let reply = format!(
                r#"{{"candidates": [{{"content": "a", "confidence": 0.5, {pair}, {ok}}}]}}"#
            );
            let drafts = parse_reply(&reply, &cluster, 8000).unwrap();
            assert_eq!(
                (drafts[0].entity.as_ref(), drafts[0].attribute.as_ref()),
                (None, None)
            );
        }
        let four = format!(
            r#"{{"candidates": [{d}, {d}, {d}, {d}]}}"#,
            d = format!(r#"{{"content": "a", "confidence": 0.5, {ok}}}"#)
        );
        assert!(
            matches!(
                parse_reply(&four, &cluster, 8000),
                Err(ReplyError::Invalid { .. })
            ),
            "more drafts than the schema allows"
        );
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
