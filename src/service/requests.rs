//! Request shapes of the three operations, shared by MCP (their JSON schema is the tool's input
//! schema), the CLI and tests, and their parsing into validated domain values.

use std::borrow::Cow;

use chrono::{DateTime, Duration, Utc};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize, de::DeserializeOwned};
use serde_json::{Map, Value};

use crate::domain::{Content, Importance, MemoryId, MemoryType, Namespace, TopK, ValidationError};
use crate::store::{ForgetFilter, ForgetSelector};

pub const MAX_KEY_CHARS: usize = 256;
pub const MAX_JSON_BYTES: usize = 16 * 1024;
pub const MAX_TTL_DAYS: f64 = 36_500.0;
/// How far in the future `occurred_at` may be: clocks differ a little between an agent and
/// the server, but an event that has not happened yet is a mistake (a wrong year, a local time
/// sent as UTC hours ahead), and it would rank as the most recent memory for as long as it lasts.
pub const MAX_OCCURRED_AHEAD_MINUTES: i64 = 5;

/// Arguments that deserialize without failing: a shape error (missing field, wrong type) is kept,
/// with the path of the offending field, so the tool can answer with a tool error naming it
/// instead of a bare JSON-RPC error. The schema is `T`'s.
#[derive(Debug)]
pub struct Args<T>(pub Result<T, ValidationError>);

impl<'de, T: DeserializeOwned> Deserialize<'de> for Args<T> {
    fn deserialize<D: serde::Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        let value = Value::deserialize(deserializer)?;
        Ok(Args(parse_args(value)))
    }
}

impl<T: JsonSchema> JsonSchema for Args<T> {
    fn schema_name() -> Cow<'static, str> {
        T::schema_name()
    }
    fn json_schema(generator: &mut schemars::SchemaGenerator) -> schemars::Schema {
        T::json_schema(generator)
    }
}

/// Deserialize `value` into `T`, naming the offending field on failure.
pub fn parse_args<T: DeserializeOwned>(value: Value) -> Result<T, ValidationError> {
    serde_path_to_error::deserialize(value).map_err(|e| {
        let path = e.path().to_string();
        let inner = e.into_inner().to_string();
        // At the root, serde's message names the field itself ("missing field `content`").
        ValidationError::new(if path == "." { String::new() } else { path }, inner)
    })
}

/// `memory_write` arguments.
#[derive(Debug, Clone, Default, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct WriteRequest {
    /// The memory itself: one self-contained statement, written so it makes sense when read
    /// later without the conversation (e.g. "The user wants data sources cited in every report").
    pub content: String,
    /// `working` (scratch context for the current task, expires after 24 h by default),
    /// `episodic` (something that happened, at a time) or `semantic` (a durable fact or
    /// preference). Default: `episodic`.
    #[schemars(extend("enum" = ["working", "episodic", "semantic"]))]
    pub memory_type: Option<String>,
    /// How much this matters, 0 to 1. Below 0.3 the memory is not stored. Default 0.5.
    #[schemars(range(min = 0.0, max = 1.0))]
    pub importance: Option<f64>,
    /// Forget automatically after this many days (0 < ttl_days <= 36500).
    pub ttl_days: Option<f64>,
    /// Partition, e.g. a user or project id. Default `default`.
    pub namespace: Option<String>,
    /// What the fact is about (e.g. `user`, `project:apollo`). With `attribute`, a newer memory
    /// about the same entity and attribute supersedes the older one.
    pub entity: Option<String>,
    /// Which property of the entity (e.g. `preferred_language`). Requires `entity`.
    pub attribute: Option<String>,
    /// Provenance: where this came from (conversation id, task, tool…), any JSON.
    pub source: Option<Value>,
    /// Free-form JSON object stored with the memory.
    pub metadata: Option<Map<String, Value>>,
    /// When it happened, RFC 3339 (e.g. `2024-06-01T14:30:00Z`), when that is not now: set it
    /// when writing down something from the past, such as importing a conversation's history.
    /// Recency and a search's `time_range` use it. At most a few minutes in the future.
    /// Default: now.
    pub occurred_at: Option<String>,
}

/// `memory_write_batch` arguments.
#[derive(Debug, Clone, Default, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct WriteBatchRequest {
    /// The memories, 1 to 1000, each as `memory_write` takes it, written in this order. If one
    /// is invalid or refused by the screen, none is written.
    pub memories: Vec<WriteRequest>,
}

/// `memory_search` arguments.
#[derive(Debug, Clone, Default, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct SearchRequest {
    /// What to look for, in natural language.
    pub query: String,
    /// How many memories to return, 1 to 50. Default 5.
    #[schemars(range(min = 1, max = 50))]
    pub top_k: Option<i64>,
    /// Only these types (any of `working`, `episodic`, `semantic`). Default: all.
    pub memory_types: Option<Vec<String>>,
    /// Partition to search. Default `default` (with a scoped token: every namespace it may
    /// read).
    pub namespace: Option<String>,
    /// Several partitions at once (e.g. `["private/me", "team/analytics", "global"]`), ranked
    /// together; each hit names its own. Instead of `namespace`.
    pub namespaces: Option<Vec<String>>,
    /// Only memories of what happened in this range (their `occurred_at`; RFC 3339 timestamps,
    /// both ends inclusive).
    pub time_range: Option<TimeRange>,
    /// Also return memories superseded by newer facts. Default false.
    pub include_deprecated: Option<bool>,
    /// An operator browsing (the console): the hits are not recorded as accessed, so looking
    /// does not change what ranks or what the archive job finds cold. Not a tool argument.
    #[serde(skip)]
    #[schemars(skip)]
    pub browsing: bool,
}

#[derive(Debug, Clone, Default, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct TimeRange {
    /// e.g. `2024-06-01T00:00:00Z`
    pub from: Option<String>,
    /// e.g. `2024-06-30T23:59:59Z`
    pub to: Option<String>,
}

/// `memory_forget` arguments: exactly one of `memory_id` or `filter`.
#[derive(Debug, Clone, Default, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ForgetRequest {
    /// Forget this one memory.
    pub memory_id: Option<String>,
    /// Forget every memory matching this filter.
    pub filter: Option<ForgetFilterRequest>,
    /// Delete the rows for good (privacy requests). Default false: the memory stops being
    /// returned but its row is kept for audit.
    pub hard: Option<bool>,
}

#[derive(Debug, Clone, Default, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ForgetFilterRequest {
    /// Required: the partition to forget in.
    pub namespace: String,
    #[schemars(extend("enum" = ["working", "episodic", "semantic"]))]
    pub memory_type: Option<String>,
    pub entity: Option<String>,
    /// Only memories created before this RFC 3339 timestamp.
    pub created_before: Option<String>,
}

/// A page of the memory browser (`hindsight memory list`, the console): every filter optional,
/// newest stored first; `before`: the last id of the previous page.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ListRequest {
    pub namespace: Option<String>,
    pub memory_type: Option<String>,
    /// `active`, `deprecated`, `expired`, `forgotten` or `archived`.
    pub status: Option<String>,
    pub entity: Option<String>,
    pub attribute: Option<String>,
    /// The memories this one deprecated.
    pub deprecated_by: Option<String>,
    /// `occurred_at` from / to, RFC 3339, both inclusive.
    pub from: Option<String>,
    pub to: Option<String>,
    pub before: Option<String>,
    /// 1 to 500. Default 50.
    pub limit: Option<i64>,
}

pub const MAX_LIST_LIMIT: i64 = 500;

impl ListRequest {
    pub fn validate(&self) -> Result<crate::store::MemoryListQuery, ValidationError> {
        let id = |field: &'static str, value: &Option<String>| {
            value
                .as_deref()
                .map(|text| {
                    MemoryId::parse_str(text.trim()).map_err(|_| {
                        ValidationError::new(
                            field,
                            format!("must be a memory id (a UUID), got {text:?}"),
                        )
                    })
                })
                .transpose()
        };
        let key = |field: &'static str, value: &Option<String>| match value {
            Some(text) if text.chars().count() > MAX_KEY_CHARS => Err(ValidationError::new(
                field,
                format!("must be at most {MAX_KEY_CHARS} characters"),
            )),
            other => Ok(other.clone()),
        };
        let limit = self.limit.unwrap_or(50);
        if !(1..=MAX_LIST_LIMIT).contains(&limit) {
            return Err(ValidationError::new(
                "limit",
                format!("must be 1..={MAX_LIST_LIMIT}, got {limit}"),
            ));
        }
        Ok(crate::store::MemoryListQuery {
            namespace: self
                .namespace
                .as_deref()
                .map(|n| Namespace::parse(n).map(|n| n.as_str().to_owned()))
                .transpose()?,
            memory_type: self
                .memory_type
                .as_deref()
                .map(MemoryType::parse)
                .transpose()?,
            status: self
                .status
                .as_deref()
                .map(crate::domain::Status::parse)
                .transpose()?,
            entity: key("entity", &self.entity)?,
            attribute: key("attribute", &self.attribute)?,
            deprecated_by: id("deprecated_by", &self.deprecated_by)?,
            occurred_from: self
                .from
                .as_deref()
                .map(|t| parse_timestamp("from", t))
                .transpose()?,
            occurred_to: self
                .to
                .as_deref()
                .map(|t| parse_timestamp("to", t))
                .transpose()?,
            before: id("before", &self.before)?,
            limit,
        })
    }
}

/// A `WriteRequest` that passed validation.
#[derive(Debug, Clone)]
pub struct ValidWrite {
    pub content: Content,
    pub memory_type: MemoryType,
    pub importance: Importance,
    /// The writer gave `importance`; otherwise write triage scores the content.
    pub importance_given: bool,
    pub ttl: Option<Duration>,
    pub namespace: Namespace,
    pub entity: Option<String>,
    pub attribute: Option<String>,
    pub source: Value,
    pub metadata: Value,
    /// `None`: now, when it is stored.
    pub occurred_at: Option<DateTime<Utc>>,
}

#[derive(Debug, Clone)]
pub struct ValidSearch {
    pub query: Content,
    pub top_k: TopK,
    pub memory_types: Vec<MemoryType>,
    /// Non-empty, no repeats.
    pub namespaces: Vec<Namespace>,
    pub from: Option<DateTime<Utc>>,
    pub to: Option<DateTime<Utc>>,
    pub include_deprecated: bool,
}

#[derive(Debug, Clone)]
pub struct ValidForget {
    pub selector: ForgetSelector,
    pub hard: bool,
}

/// How many namespaces one search may cover.
pub const MAX_SEARCH_NAMESPACES: usize = 256;

/// `namespaces`: 1 to `MAX_SEARCH_NAMESPACES` valid names, repeats dropped.
fn search_namespaces(list: &[String]) -> Result<Vec<Namespace>, ValidationError> {
    if list.is_empty() || list.len() > MAX_SEARCH_NAMESPACES {
        return Err(ValidationError::new(
            "namespaces",
            format!(
                "must list 1 to {MAX_SEARCH_NAMESPACES} namespaces, got {}",
                list.len()
            ),
        ));
    }
    let mut parsed: Vec<Namespace> = Vec::with_capacity(list.len());
    for (i, name) in list.iter().enumerate() {
        let ns = Namespace::parse(name)
            .map_err(|e| ValidationError::new(format!("namespaces[{i}]"), e.rule))?;
        if !parsed.contains(&ns) {
            parsed.push(ns);
        }
    }
    Ok(parsed)
}

fn namespace(value: Option<&str>) -> Result<Namespace, ValidationError> {
    value.map_or_else(|| Ok(Namespace::default()), Namespace::parse)
}

pub fn key_part(
    field: &'static str,
    value: Option<&str>,
) -> Result<Option<String>, ValidationError> {
    match value.map(str::trim) {
        None => Ok(None),
        Some("") => Err(ValidationError::new(field, "must not be empty when given")),
        Some(v) if v.chars().count() > MAX_KEY_CHARS => Err(ValidationError::new(
            field,
            format!("must be at most {MAX_KEY_CHARS} characters"),
        )),
        Some(v) if v.contains('\0') => Err(ValidationError::new(
            field,
            "must not contain NUL characters",
        )),
        Some(v) => Ok(Some(v.to_owned())),
    }
}

/// NUL (U+0000) is refused in every text a memory keeps, on every store: PostgreSQL's `text`
/// and `jsonb` cannot hold it (SQLite can, so the stores would otherwise disagree), and no
/// memory needs it — it only truncates strings in C-based readers of an export.
pub fn bounded_json(field: &'static str, value: Value) -> Result<Value, ValidationError> {
    let size = value.to_string().len();
    if size > MAX_JSON_BYTES {
        return Err(ValidationError::new(
            field,
            format!("must serialize to at most {MAX_JSON_BYTES} bytes of JSON, got {size}"),
        ));
    }
    if let Some(path) = nul_path(&value, String::new()) {
        return Err(ValidationError::new(
            field,
            format!("must not contain NUL characters (found at {path:?})"),
        ));
    }
    Ok(value)
}

/// The JSON Pointer of the first string or key holding a NUL, if any.
pub fn nul_path(value: &Value, at: String) -> Option<String> {
    match value {
        Value::String(s) if s.contains('\0') => Some(if at.is_empty() { "/".into() } else { at }),
        Value::Array(items) => items
            .iter()
            .enumerate()
            .find_map(|(i, item)| nul_path(item, format!("{at}/{i}"))),
        Value::Object(map) => map.iter().find_map(|(key, item)| {
            let here = format!("{at}/{}", key.replace('~', "~0").replace('/', "~1"));
            if key.contains('\0') {
                Some(here)
            } else {
                nul_path(item, here)
            }
        }),
        _ => None,
    }
}

pub fn parse_timestamp(field: &'static str, value: &str) -> Result<DateTime<Utc>, ValidationError> {
    DateTime::parse_from_rfc3339(value.trim())
        .map(|t| t.with_timezone(&Utc))
        .map_err(|e| {
            ValidationError::new(
                field,
                format!(
                    "must be an RFC 3339 timestamp like 2024-06-01T00:00:00Z ({e}), got {value:?}"
                ),
            )
        })
}

impl WriteRequest {
    pub fn validate(&self, max_content_chars: usize) -> Result<ValidWrite, ValidationError> {
        let content = Content::parse(&self.content, max_content_chars)?;
        let memory_type = self
            .memory_type
            .as_deref()
            .map_or(Ok(MemoryType::Episodic), MemoryType::parse)?;
        let importance = self
            .importance
            .map_or(Ok(Importance::default()), Importance::parse)?;
        let ttl = match self.ttl_days {
            None => None,
            Some(days) if days.is_finite() && days > 0.0 && days <= MAX_TTL_DAYS => {
                Some(Duration::milliseconds((days * 86_400_000.0) as i64))
            }
            Some(days) => {
                return Err(ValidationError::new(
                    "ttl_days",
                    format!("must be greater than 0 and at most {MAX_TTL_DAYS}, got {days}"),
                ));
            }
        };
        let entity = key_part("entity", self.entity.as_deref())?;
        let attribute = key_part("attribute", self.attribute.as_deref())?;
        if attribute.is_some() && entity.is_none() {
            return Err(ValidationError::new("attribute", "requires `entity`"));
        }
        let occurred_at = self
            .occurred_at
            .as_deref()
            .map(|v| parse_timestamp("occurred_at", v))
            .transpose()?;
        if let Some(at) = occurred_at {
            let latest = Utc::now() + Duration::minutes(MAX_OCCURRED_AHEAD_MINUTES);
            if at > latest {
                return Err(ValidationError::new(
                    "occurred_at",
                    format!(
                        "must not be more than {MAX_OCCURRED_AHEAD_MINUTES} minutes in the \
                         future, got {} (the server's time is {})",
                        at.to_rfc3339_opts(chrono::SecondsFormat::Secs, true),
                        Utc::now().to_rfc3339_opts(chrono::SecondsFormat::Secs, true)
                    ),
                ));
            }
        }
        Ok(ValidWrite {
            content,
            memory_type,
            importance,
            importance_given: self.importance.is_some(),
            ttl,
            namespace: namespace(self.namespace.as_deref())?,
            entity,
            attribute,
            source: bounded_json("source", self.source.clone().unwrap_or(Value::Null))?,
            metadata: bounded_json(
                "metadata",
                Value::Object(self.metadata.clone().unwrap_or_default()),
            )?,
            occurred_at,
        })
    }
}

impl SearchRequest {
    pub fn validate(&self, max_content_chars: usize) -> Result<ValidSearch, ValidationError> {
        let query = Content::parse(&self.query, max_content_chars)
            .map_err(|e| ValidationError::new("query", e.rule))?;
        let top_k = self.top_k.map_or(Ok(TopK::default()), TopK::parse)?;
        let mut memory_types = Vec::new();
        for t in self.memory_types.iter().flatten() {
            let parsed =
                MemoryType::parse(t).map_err(|e| ValidationError::new("memory_types", e.rule))?;
            if !memory_types.contains(&parsed) {
                memory_types.push(parsed);
            }
        }
        let (from, to) = match &self.time_range {
            None => (None, None),
            Some(range) => (
                range
                    .from
                    .as_deref()
                    .map(|v| parse_timestamp("time_range.from", v))
                    .transpose()?,
                range
                    .to
                    .as_deref()
                    .map(|v| parse_timestamp("time_range.to", v))
                    .transpose()?,
            ),
        };
        if let (Some(f), Some(t)) = (from, to)
            && f > t
        {
            return Err(ValidationError::new(
                "time_range",
                "`from` must not be after `to`",
            ));
        }
        let namespaces = match (&self.namespace, &self.namespaces) {
            (Some(_), Some(_)) => {
                return Err(ValidationError::new(
                    "namespaces",
                    "give `namespace` or `namespaces`, not both",
                ));
            }
            (_, Some(list)) => search_namespaces(list)?,
            (one, None) => vec![namespace(one.as_deref())?],
        };
        Ok(ValidSearch {
            query,
            top_k,
            memory_types,
            namespaces,
            from,
            to,
            include_deprecated: self.include_deprecated.unwrap_or(false),
        })
    }
}

impl ForgetRequest {
    pub fn validate(&self) -> Result<ValidForget, ValidationError> {
        let selector = match (&self.memory_id, &self.filter) {
            (Some(id), None) => {
                ForgetSelector::Id(MemoryId::parse_str(id.trim()).map_err(|_| {
                    ValidationError::new("memory_id", format!("must be a UUID, got {id:?}"))
                })?)
            }
            (None, Some(f)) => ForgetSelector::Filter(ForgetFilter {
                namespace: Namespace::parse(&f.namespace)
                    .map_err(|e| ValidationError::new("filter.namespace", e.rule))?,
                memory_type: f
                    .memory_type
                    .as_deref()
                    .map(MemoryType::parse)
                    .transpose()
                    .map_err(|e| ValidationError::new("filter.memory_type", e.rule))?,
                entity: key_part("filter.entity", f.entity.as_deref())?,
                created_before: f
                    .created_before
                    .as_deref()
                    .map(|v| parse_timestamp("filter.created_before", v))
                    .transpose()?,
            }),
            (Some(_), Some(_)) => {
                return Err(ValidationError::new(
                    "memory_id",
                    "give either `memory_id` or `filter`, not both",
                ));
            }
            (None, None) => {
                return Err(ValidationError::new(
                    "memory_id",
                    "one of `memory_id` or `filter` is required",
                ));
            }
        };
        Ok(ValidForget {
            selector,
            hard: self.hard.unwrap_or(false),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn shape_errors_name_the_field() {
        let err =
            parse_args::<WriteRequest>(json!({"content": "x", "importance": "high"})).unwrap_err();
        assert!(err.to_string().contains("importance"), "{err}");
        let err = parse_args::<WriteRequest>(json!({"importance": 0.5})).unwrap_err();
        assert!(err.to_string().contains("content"), "{err}");
        let err = parse_args::<WriteRequest>(json!({"content": "x", "colour": 1})).unwrap_err();
        assert!(err.to_string().contains("colour"), "{err}");
    }

    #[test]
    fn write_rules() {
        let ok = WriteRequest {
            content: "x".into(),
            ..Default::default()
        };
        let v = ok.validate(100).unwrap();
        assert_eq!(v.memory_type, MemoryType::Episodic);
        assert_eq!(v.namespace.as_str(), "default");

        let bad = |r: WriteRequest, field: &str| {
            let err = r.validate(100).unwrap_err();
            assert_eq!(err.field, field, "{err}");
        };
        bad(
            WriteRequest {
                content: "x".into(),
                ttl_days: Some(0.0),
                ..Default::default()
            },
            "ttl_days",
        );
        bad(
            WriteRequest {
                content: "x".into(),
                memory_type: Some("fact".into()),
                ..Default::default()
            },
            "memory_type",
        );
        bad(
            WriteRequest {
                content: "x".into(),
                attribute: Some("a".into()),
                ..Default::default()
            },
            "attribute",
        );
        bad(
            WriteRequest {
                content: "x".repeat(101),
                ..Default::default()
            },
            "content",
        );
        bad(
            WriteRequest {
                content: "x".into(),
                source: Some(json!("y".repeat(MAX_JSON_BYTES))),
                ..Default::default()
            },
            "source",
        );
        for (field, request) in [
            (
                "entity",
                WriteRequest {
                    entity: Some("us\0er".into()),
                    ..Default::default()
                },
            ),
            (
                "attribute",
                WriteRequest {
                    entity: Some("user".into()),
                    attribute: Some("\0".into()),
                    ..Default::default()
                },
            ),
            (
                "source",
                WriteRequest {
                    source: Some(json!({"chat": ["ok", "a\u{0}b"]})),
                    ..Default::default()
                },
            ),
            (
                "metadata",
                WriteRequest {
                    metadata: json!({"k\u{0}": 1}).as_object().cloned(),
                    ..Default::default()
                },
            ),
        ] {
            let err = WriteRequest {
                content: "x".into(),
                ..request
            }
            .validate(100)
            .unwrap_err();
            assert_eq!(err.field, field, "{err}");
            assert!(err.to_string().contains("NUL"), "{err}");
        }
        let err = WriteRequest {
            content: "x".into(),
            source: Some(json!({"chat": ["ok", "a\u{0}b"]})),
            ..Default::default()
        }
        .validate(100)
        .unwrap_err();
        assert!(err.to_string().contains("/chat/1"), "{err}");
    }

    #[test]
    fn search_and_forget_rules() {
        let r = SearchRequest {
            query: "q".into(),
            top_k: Some(51),
            ..Default::default()
        };
        assert_eq!(r.validate(100).unwrap_err().field, "top_k");
        let r = SearchRequest {
            query: "q".into(),
            time_range: Some(TimeRange {
                from: Some("2024-02-01T00:00:00Z".into()),
                to: Some("2024-01-01T00:00:00Z".into()),
            }),
            ..Default::default()
        };
        assert_eq!(r.validate(100).unwrap_err().field, "time_range");
        let r = SearchRequest {
            query: "q".into(),
            time_range: Some(TimeRange {
                from: Some("yesterday".into()),
                to: None,
            }),
            ..Default::default()
        };
        assert_eq!(r.validate(100).unwrap_err().field, "time_range.from");
        assert_eq!(
            ForgetRequest::default().validate().unwrap_err().field,
            "memory_id"
        );
        let r = ForgetRequest {
            memory_id: Some("nope".into()),
            ..Default::default()
        };
        assert_eq!(r.validate().unwrap_err().field, "memory_id");
    }
}
