//! The export format, version 1: JSON Lines. Line 1 is a `Header`; every other line is one
//! memory with every column (`MemoryLine`), hot or archived, its vector only when asked for.
//! A line is read through the domain types before anything is written, and a bad one is
//! reported with its number and the field at fault (`LineError`).

use chrono::{DateTime, Utc};
use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::domain::{
    Content, Importance, Memory, MemoryId, MemoryType, Namespace, Status, ValidationError,
};
use crate::service::requests::{bounded_json, key_part, nul_path};

/// The format this build writes and reads.
pub const FORMAT_VERSION: u32 = 1;

/// Line 1 of an export: what wrote it and what its vectors are.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Header {
    /// The format version (`FORMAT_VERSION`).
    pub hindsight_export: u32,
    /// The embedder the data set's vectors came from (`builtin-ngram-v1/512`, …).
    pub embedder: String,
    pub dimension: usize,
    pub exported_at: DateTime<Utc>,
    /// Whether the lines carry their vectors.
    pub with_vectors: bool,
}

/// One memory as exported: `Memory`'s columns (its signature left out: it is this server's
/// key's, and an importer signs with its own), the archive time of an archived row, and the
/// vector when the export was asked for it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct MemoryLine {
    pub id: MemoryId,
    pub namespace: String,
    pub memory_type: MemoryType,
    pub content: String,
    pub importance: f64,
    pub status: Status,
    #[serde(default)]
    pub entity: Option<String>,
    #[serde(default)]
    pub attribute: Option<String>,
    #[serde(default)]
    pub source: Value,
    #[serde(default = "empty_array")]
    pub merged_sources: Value,
    #[serde(default = "empty_object")]
    pub metadata: Value,
    pub created_at: DateTime<Utc>,
    pub occurred_at: DateTime<Utc>,
    pub updated_at: DateTime<Utc>,
    #[serde(default)]
    pub expires_at: Option<DateTime<Utc>>,
    #[serde(default)]
    pub last_accessed_at: Option<DateTime<Utc>>,
    #[serde(default)]
    pub access_count: i64,
    #[serde(default)]
    pub deprecated_at: Option<DateTime<Utc>>,
    #[serde(default)]
    pub deprecated_by: Option<MemoryId>,
    #[serde(default)]
    pub embedding_model: String,
    /// When it moved to the archive (archived rows only).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub archived_at: Option<DateTime<Utc>>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub embedding: Option<Vec<f32>>,
}

/// `value` with every object's keys in sorted order: PostgreSQL's `jsonb` keeps keys in an
/// order of its own, SQLite keeps the text as written, and one export of the same rows should
/// read the same from either.
fn canonical(value: Value) -> Value {
    match value {
        Value::Object(map) => {
            let mut entries: Vec<(String, Value)> = map.into_iter().collect();
            entries.sort_by(|a, b| a.0.cmp(&b.0));
            Value::Object(
                entries
                    .into_iter()
                    .map(|(k, v)| (k, canonical(v)))
                    .collect(),
            )
        }
        Value::Array(items) => Value::Array(items.into_iter().map(canonical).collect()),
        other => other,
    }
}

fn empty_array() -> Value {
    Value::Array(vec![])
}

fn empty_object() -> Value {
    Value::Object(Default::default())
}

impl MemoryLine {
    /// A new active memory as a line, every other column at a fresh write's value (times
    /// `now`, no history, no vector): what an import from a peer or a generated file starts
    /// from.
    pub fn new_active(
        id: MemoryId,
        namespace: String,
        memory_type: MemoryType,
        content: String,
        now: DateTime<Utc>,
    ) -> Self {
        Self {
            id,
            namespace,
            memory_type,
            content,
            importance: 0.5,
            status: Status::Active,
            entity: None,
            attribute: None,
            source: Value::Null,
            merged_sources: empty_array(),
            metadata: empty_object(),
            created_at: now,
            occurred_at: now,
            updated_at: now,
            expires_at: None,
            last_accessed_at: None,
            access_count: 0,
            deprecated_at: None,
            deprecated_by: None,
            embedding_model: String::new(),
            archived_at: None,
            embedding: None,
        }
    }

    /// A stored row as a line; `archived_at` for a row of the archive table.
    pub fn from_row(row: Memory, archived_at: Option<DateTime<Utc>>, with_vector: bool) -> Self {
        Self {
            id: row.id,
            namespace: row.namespace,
            memory_type: row.memory_type,
            content: row.content,
            importance: row.importance,
            status: row.status,
            entity: row.entity,
            attribute: row.attribute,
            source: canonical(row.source),
            merged_sources: canonical(row.merged_sources),
            metadata: canonical(row.metadata),
            created_at: row.created_at,
            occurred_at: row.occurred_at,
            updated_at: row.updated_at,
            expires_at: row.expires_at,
            last_accessed_at: row.last_accessed_at,
            access_count: row.access_count,
            deprecated_at: row.deprecated_at,
            deprecated_by: row.deprecated_by,
            embedding_model: row.embedding_model,
            archived_at,
            embedding: with_vector.then_some(row.embedding),
        }
    }

    /// The row this line restores, checked as a write's fields are (namespace, content
    /// within `max_chars`, importance, fact key, JSON sizes) plus what a stored row must
    /// hold (an archive time only on an archived row, a vector of `dimension` finite numbers
    /// when there is one). The row's vector is empty when the line has none.
    pub fn validate(
        self,
        max_chars: usize,
        dimension: usize,
    ) -> Result<ImportRow, ValidationError> {
        let namespace = Namespace::parse(&self.namespace)?;
        let content = Content::parse(&self.content, max_chars)?;
        if content.as_str() != self.content {
            return Err(ValidationError::new(
                "content",
                "must not begin or end with whitespace (a stored memory never does)",
            ));
        }
        let importance = Importance::parse(self.importance)?;
        let entity = key_part("entity", self.entity.as_deref())?;
        let attribute = key_part("attribute", self.attribute.as_deref())?;
        if attribute.is_some() && entity.is_none() {
            return Err(ValidationError::new("attribute", "requires `entity`"));
        }
        let source = bounded_json("source", self.source)?;
        let metadata = bounded_json("metadata", self.metadata)?;
        if !metadata.is_object() {
            return Err(ValidationError::new("metadata", "must be a JSON object"));
        }
        if !self.merged_sources.is_array() {
            return Err(ValidationError::new(
                "merged_sources",
                "must be a JSON array",
            ));
        }
        if let Some(path) = nul_path(&self.merged_sources, String::new()) {
            return Err(ValidationError::new(
                "merged_sources",
                format!("must not contain NUL characters (found at {path:?})"),
            ));
        }
        if self.access_count < 0 {
            return Err(ValidationError::new(
                "access_count",
                format!("must be 0 or more, got {}", self.access_count),
            ));
        }
        if self.updated_at < self.created_at {
            return Err(ValidationError::new(
                "updated_at",
                "must not be before created_at",
            ));
        }
        if (self.status == Status::Archived) != self.archived_at.is_some() {
            return Err(ValidationError::new(
                "archived_at",
                "is given exactly when status is archived",
            ));
        }
        if self.deprecated_by.is_some() && self.status != Status::Deprecated {
            return Err(ValidationError::new(
                "deprecated_by",
                format!(
                    "only a deprecated memory has one, this one is {}",
                    self.status.as_str()
                ),
            ));
        }
        let embedding = match self.embedding {
            None => Vec::new(),
            Some(v) if v.len() != dimension => {
                return Err(ValidationError::new(
                    "embedding",
                    format!(
                        "must have the header's dimension {dimension}, got {}",
                        v.len()
                    ),
                ));
            }
            Some(v) if v.iter().any(|x| !x.is_finite()) => {
                return Err(ValidationError::new(
                    "embedding",
                    "must hold finite numbers",
                ));
            }
            Some(v) => v,
        };
        Ok(ImportRow {
            memory: Memory {
                id: self.id,
                namespace: namespace.as_str().to_owned(),
                memory_type: self.memory_type,
                content: content.into_string(),
                importance: importance.value(),
                status: self.status,
                entity,
                attribute,
                source,
                merged_sources: self.merged_sources,
                metadata,
                created_at: self.created_at,
                occurred_at: self.occurred_at,
                updated_at: self.updated_at,
                expires_at: self.expires_at,
                last_accessed_at: self.last_accessed_at,
                access_count: self.access_count,
                deprecated_at: self.deprecated_at,
                deprecated_by: self.deprecated_by,
                embedding_model: self.embedding_model,
                embedding,
                signature: None,
            },
            archived_at: self.archived_at,
        })
    }
}

/// A line read and checked: the row it restores (its vector empty when the line had none).
#[derive(Debug, Clone, PartialEq)]
pub struct ImportRow {
    pub memory: Memory,
    pub archived_at: Option<DateTime<Utc>>,
}

/// A line that cannot be imported: where, which field, why.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct LineError {
    pub line: u64,
    /// The field at fault; empty when the line as a whole is (not JSON, too long).
    pub field: String,
    pub error: String,
}

impl LineError {
    pub fn new(line: u64, field: impl Into<String>, error: impl Into<String>) -> Self {
        Self {
            line,
            field: field.into(),
            error: error.into(),
        }
    }

    pub fn invalid(line: u64, e: ValidationError) -> Self {
        Self::new(line, e.field.into_owned(), e.rule)
    }
}

impl std::fmt::Display for LineError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        if self.field.is_empty() {
            write!(f, "line {}: {}", self.line, self.error)
        } else {
            write!(
                f,
                "line {}, field {}: {}",
                self.line, self.field, self.error
            )
        }
    }
}

/// Parse line `line` of a file as `T`, naming the field a mismatch is in (`importance`,
/// `source.tool`), or the unknown field itself.
pub fn parse_line<T: serde::de::DeserializeOwned>(line: u64, text: &str) -> Result<T, LineError> {
    // The plain parse first: tracking the path costs on every value (a vector's 384 numbers
    // included), and is only needed to name the field of a line that fails.
    if let Ok(value) = serde_json::from_str(text) {
        return Ok(value);
    }
    let not_json = |e: serde_json::Error| LineError::new(line, "", format!("not valid JSON: {e}"));
    let mut deserializer = serde_json::Deserializer::from_str(text);
    let value = match serde_path_to_error::deserialize::<_, T>(&mut deserializer) {
        Ok(value) => value,
        Err(e) => {
            let path = e.path().to_string();
            let inner = e.into_inner();
            if inner.is_syntax() || inner.is_eof() {
                return Err(not_json(inner));
            }
            let message = inner.to_string();
            let field = match message
                .strip_prefix("unknown field `")
                .and_then(|rest| rest.split('`').next())
            {
                Some(name) => name.to_owned(),
                None if path == "." => String::new(),
                None => path,
            };
            return Err(LineError::new(line, field, message));
        }
    };
    deserializer.end().map_err(not_json)?;
    Ok(value)
}
