//! The shape of a distill reply, once: the Rust types a reply is read into, and the JSON Schema
//! sent with the request (`response_format`), generated from those same types by schemars so
//! the two cannot drift. The bounds (`MAX_DRAFTS`, `MAX_DRAFT_CHARS`, …) are written once here
//! and are both in the schema and checked on the reply (`prompt::parse_reply`).
//!
//! Episodes are shown to the model under short aliases (`[1]`, `[2]`, …), and the schema
//! enumerates them: a UUID costs ~35 tokens and small models cannot copy it (measured with
//! SmolLM2 135M and Gemma 3 270M: left free, they cited `"user"`).

use schemars::JsonSchema;
use serde::{Deserialize, Deserializer};
use serde_json::{Value, json};

/// Drafts one reply may hold: a cluster is one topic; more are small talk.
pub const MAX_DRAFTS: usize = 3;
/// One draft's content: one sentence.
pub const MAX_DRAFT_CHARS: usize = 240;
/// `entity` and `attribute`.
pub const MAX_NAME_CHARS: usize = 48;
/// Sources one draft may cite (the cluster's episodes beyond this add nothing a reviewer reads).
pub const MAX_SOURCES: usize = 16;
/// The confidences a reply may give: grammars (llama.cpp's, node-llama-cpp's) do not bound a
/// number's range or length, and a small model wrote `0.99999…` or `2`; eleven levels bound
/// both, and say as much as a small model's confidence does.
pub const CONFIDENCE_LEVELS: [f64; 11] = [0.0, 0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8, 0.9, 1.0];

/// The most characters one draft can take in a reply the schema allows, JSON included: the
/// bound on its tokens too (a token is at least a character; SmolLM2 looping on "1.1.1…" spent
/// one per character).
pub const MAX_DRAFT_REPLY_CHARS: usize =
    MAX_DRAFT_CHARS + 2 * MAX_NAME_CHARS + 4 * MAX_SOURCES + 3 + 80;
/// The reply around its drafts.
pub const REPLY_OVERHEAD_CHARS: usize = 24;

/// A whole reply, as the model writes it.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct WireReply {
    /// The durable knowledge the episodes support; empty when they support none.
    #[schemars(length(max = MAX_DRAFTS))]
    pub candidates: Vec<WireDraft>,
}

/// One draft, as the model writes it.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct WireDraft {
    /// One short, self-contained sentence in the third person, without dates.
    #[schemars(length(min = 1, max = MAX_DRAFT_CHARS))]
    pub content: String,
    /// For a fact with a clear subject and property: the subject (e.g. a person's name); else null.
    #[schemars(length(min = 1, max = MAX_NAME_CHARS))]
    pub entity: Option<String>,
    /// The property (e.g. "home_city"); null when `entity` is.
    #[schemars(length(min = 1, max = MAX_NAME_CHARS))]
    pub attribute: Option<String>,
    /// How strongly the episodes support it, from 0 to 1.
    #[schemars(range(min = 0.0, max = 1.0))]
    pub confidence: f64,
    /// The numbers of the episodes that support it, as shown in brackets.
    #[schemars(length(min = 1, max = MAX_SOURCES), with = "Vec<u32>")]
    #[serde(deserialize_with = "aliases")]
    pub sources: Vec<u32>,
}

/// The schema a reply to a prompt showing `episodes` episodes must follow: strict (every
/// property required, nullable where optional, nothing else allowed), with `sources` limited to
/// the aliases `1..=episodes`. `max_drafts` may be lowered so a whole reply fits the token cap.
pub fn reply_schema(episodes: usize, max_drafts: usize) -> Value {
    let generator = schemars::generate::SchemaSettings::draft2020_12()
        .with(|s| {
            s.inline_subschemas = true;
            s.meta_schema = None;
        })
        .into_generator();
    let mut schema = generator.into_root_schema_for::<WireReply>().to_value();
    strictify(&mut schema);
    let candidates = &mut schema["properties"]["candidates"];
    candidates["maxItems"] = json!(max_drafts.clamp(1, MAX_DRAFTS));
    candidates["items"]["properties"]["confidence"] = json!({
        "description": candidates["items"]["properties"]["confidence"]["description"],
        "type": "number",
        "enum": CONFIDENCE_LEVELS,
    });
    let sources = &mut candidates["items"]["properties"]["sources"];
    sources["items"] =
        json!({"type": "integer", "enum": (1..=episodes.max(1)).collect::<Vec<_>>()});
    sources["maxItems"] = json!(episodes.clamp(1, MAX_SOURCES));
    schema
}

/// What OpenAI's strict mode (and the grammar compilers of llama.cpp, vLLM and Ollama) take:
/// every object closed and all its properties required (optional ones are nullable already),
/// no `title` or numeric `format` annotations.
fn strictify(value: &mut Value) {
    match value {
        Value::Object(map) => {
            map.remove("title");
            map.remove("format");
            map.remove("$schema");
            if let Some(Value::Object(properties)) = map.get("properties") {
                let names: Vec<Value> = properties.keys().cloned().map(Value::String).collect();
                map.insert("required".into(), Value::Array(names));
                map.insert("additionalProperties".into(), Value::Bool(false));
            }
            map.values_mut().for_each(strictify);
        }
        Value::Array(items) => items.iter_mut().for_each(strictify),
        _ => {}
    }
}

/// Sources as the schema has them (integers), or as a model left free writes them: `"2"`,
/// `"[2]"`.
fn aliases<'de, D: Deserializer<'de>>(deserializer: D) -> Result<Vec<u32>, D::Error> {
    #[derive(Deserialize)]
    #[serde(untagged)]
    enum Alias {
        Number(u32),
        Text(String),
    }
    let raw = Vec::<Alias>::deserialize(deserializer)?;
    raw.into_iter()
        .map(|alias| match alias {
            Alias::Number(n) => Ok(n),
            Alias::Text(text) => text
                .trim()
                .trim_start_matches('[')
                .trim_end_matches(']')
                .trim()
                .parse()
                .map_err(|_| {
                    serde::de::Error::custom(format!(
                        "{text:?} is not an episode number such as 1 or 2"
                    ))
                }),
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_schema_is_strict_bounded_and_lists_the_aliases() {
        let schema = reply_schema(4, MAX_DRAFTS);
        assert_eq!(schema["type"], "object");
        assert_eq!(schema["required"], json!(["candidates"]));
        assert_eq!(schema["additionalProperties"], false);
        let candidates = &schema["properties"]["candidates"];
        assert_eq!(candidates["maxItems"], json!(MAX_DRAFTS));
        let draft = &candidates["items"];
        let mut required: Vec<&str> = draft["required"]
            .as_array()
            .unwrap()
            .iter()
            .map(|v| v.as_str().unwrap())
            .collect();
        required.sort();
        assert_eq!(
            required,
            ["attribute", "confidence", "content", "entity", "sources"]
        );
        assert_eq!(draft["additionalProperties"], false);
        let props = &draft["properties"];
        assert_eq!(props["content"]["maxLength"], json!(MAX_DRAFT_CHARS));
        assert_eq!(props["entity"]["type"], json!(["string", "null"]));
        assert_eq!(props["confidence"]["enum"], json!(CONFIDENCE_LEVELS));
        assert!(props["confidence"]["description"].is_string());
        assert_eq!(props["sources"]["items"]["enum"], json!([1, 2, 3, 4]));
        assert_eq!(props["sources"]["maxItems"], json!(4));
        assert!(!schema.to_string().contains("\"format\""), "{schema}");
        assert!(!schema.to_string().contains("\"title\""), "{schema}");
    }

    #[test]
    fn the_draft_cap_is_lowered_never_raised_nor_zero() {
        assert_eq!(
            reply_schema(3, 1)["properties"]["candidates"]["maxItems"],
            1
        );
        assert_eq!(
            reply_schema(3, 0)["properties"]["candidates"]["maxItems"],
            1
        );
        assert_eq!(
            reply_schema(3, 99)["properties"]["candidates"]["maxItems"],
            json!(MAX_DRAFTS)
        );
    }

    #[test]
    fn aliases_are_read_as_numbers_or_bracketed_text() {
        let reply: WireReply = serde_json::from_value(json!({"candidates": [
            {"content": "x", "entity": null, "attribute": null, "confidence": 0.5,
             "sources": [1, "2", "[3]"]}]}))
        .unwrap();
        assert_eq!(reply.candidates[0].sources, vec![1, 2, 3]);
        let err = serde_json::from_value::<WireReply>(json!({"candidates": [
            {"content": "x", "confidence": 0.5, "sources": ["user"]}]}))
        .unwrap_err();
        assert!(err.to_string().contains("episode number"), "{err}");
    }
}
