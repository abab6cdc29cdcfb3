use chrono::{DateTime, Utc};
use serde::Serialize;
use serde_json::Value;
use uuid::Uuid;

use super::{Content, Importance, MemoryType, Namespace, Status};

/// Memory ids are UUIDv7: time-ordered, so the primary key index stays append-mostly.
pub type MemoryId = Uuid;

/// A memory as stored. Rows come from our own database, so fields are plain values; validation
/// happened on the way in (`NewMemory`).
#[derive(Debug, Clone, PartialEq, Serialize, serde::Deserialize)]
pub struct Memory {
    pub id: MemoryId,
    pub namespace: String,
    pub memory_type: MemoryType,
    pub content: String,
    pub importance: f64,
    pub status: Status,
    pub entity: Option<String>,
    pub attribute: Option<String>,
    /// Provenance of the first write: conversation, task, tool… (free JSON).
    pub source: Value,
    /// Provenance of later writes merged into this one by dedup: `[{at, source, replaced_content?}]`.
    pub merged_sources: Value,
    pub metadata: Value,
    /// When hindsight stored it.
    pub created_at: DateTime<Utc>,
    /// When what it tells of happened, as its writer said (defaults to `created_at`): recency
    /// and a search's time range use this.
    pub occurred_at: DateTime<Utc>,
    pub updated_at: DateTime<Utc>,
    pub expires_at: Option<DateTime<Utc>>,
    pub last_accessed_at: Option<DateTime<Utc>>,
    pub access_count: i64,
    pub deprecated_at: Option<DateTime<Utc>>,
    pub deprecated_by: Option<MemoryId>,
    /// Which embedder produced `embedding` (`builtin-ngram-v1/512`, `openai:text-embedding-3-small/1536`).
    pub embedding_model: String,
    #[serde(skip)]
    pub embedding: Vec<f32>,
    /// The server's HMAC over what the row says (`signing`): `<key id>:<hex>`. Travels with
    /// the row into the archive and its objects; never shown to callers.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub signature: Option<String>,
}

impl Memory {
    pub fn is_expired_at(&self, now: DateTime<Utc>) -> bool {
        self.expires_at.is_some_and(|at| at <= now)
    }

    /// This row as it is stored when a fact that happened after it already holds (`later`):
    /// deprecated by that fact from the start. Unchanged when there is none.
    pub fn deprecated_on_arrival(self, later: Option<MemoryId>, at: DateTime<Utc>) -> Self {
        match later {
            None => self,
            Some(by) => Self {
                status: Status::Deprecated,
                deprecated_at: Some(at),
                deprecated_by: Some(by),
                ..self
            },
        }
    }
}

/// A validated memory about to be inserted.
#[derive(Debug, Clone)]
pub struct NewMemory {
    pub id: MemoryId,
    pub namespace: Namespace,
    pub memory_type: MemoryType,
    pub content: Content,
    pub importance: Importance,
    pub entity: Option<String>,
    pub attribute: Option<String>,
    pub source: Value,
    pub metadata: Value,
    pub created_at: DateTime<Utc>,
    pub occurred_at: DateTime<Utc>,
    pub expires_at: Option<DateTime<Utc>>,
    pub embedding_model: String,
    pub embedding: Vec<f32>,
}

impl NewMemory {
    pub fn into_memory(self) -> Memory {
        Memory {
            id: self.id,
            namespace: self.namespace.as_str().to_owned(),
            memory_type: self.memory_type,
            content: self.content.into_string(),
            importance: self.importance.value(),
            status: Status::Active,
            entity: self.entity,
            attribute: self.attribute,
            source: self.source,
            merged_sources: Value::Array(vec![]),
            metadata: self.metadata,
            created_at: self.created_at,
            occurred_at: self.occurred_at,
            updated_at: self.created_at,
            expires_at: self.expires_at,
            last_accessed_at: None,
            access_count: 0,
            deprecated_at: None,
            deprecated_by: None,
            embedding_model: self.embedding_model,
            embedding: self.embedding,
            signature: None,
        }
    }
}
