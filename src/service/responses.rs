//! Result shapes, serialised as the tools' JSON results.

use chrono::{DateTime, Utc};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::domain::{MemoryId, MemoryType, Status};

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum WriteStatus {
    Stored,
    Skipped,
    Merged,
    /// Held by the write screen for a reviewer; not stored as a memory (yet).
    Quarantined,
}

impl WriteStatus {
    /// As it is serialised (the audit trail and the imports table record it so).
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Stored => "stored",
            Self::Skipped => "skipped",
            Self::Merged => "merged",
            Self::Quarantined => "quarantined",
        }
    }
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct WriteResult {
    /// `stored` (new memory), `merged` (folded into a near-duplicate) or `skipped` (not stored).
    pub status: WriteStatus,
    /// The memory that now holds this content (absent when skipped).
    pub memory_id: Option<MemoryId>,
    /// Why it was skipped, merged or stored as it was: `low_importance`, `duplicate` (merged
    /// into a restatement), `update:value` / `update:polarity` / `update:tense` (it retired
    /// the look-alikes in `superseded`, which said the same thing with another value or the
    /// other way round), `update:fact` (a new version of its entity and attribute),
    /// `update:model` (the `update_llm` judge said so of a pair the rules left undecided),
    /// `newer_fact_holds` (something that happened later holds: stored retired),
    /// `distinct:…` (stored beside `look_alike`).
    pub reason: Option<String>,
    /// The existing memory this write was merged into.
    pub duplicate_of: Option<MemoryId>,
    /// Older memories this one updates (the same entity and attribute, or a look-alike stating
    /// the same thing with another value or polarity), now deprecated by it.
    pub superseded: Vec<MemoryId>,
    /// The memory it updates that happened after this one (history written out of order):
    /// this one was stored as already superseded by it
    /// (`reason: newer_fact_holds`).
    pub superseded_by: Option<MemoryId>,
    /// The write screen's rules whose secrets were replaced by `[redacted:<rule>]` in what was
    /// stored.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub redacted: Vec<String>,
    /// Held for review (`status: quarantined`): the id reviewers approve or reject it by.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub quarantine_id: Option<uuid::Uuid>,
    /// Stored beside a near-duplicate it was not merged into, because it says something else
    /// (`reason`: `distinct:…`, e.g. `distinct:other_subject`): that memory.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub look_alike: Option<MemoryId>,
}

impl WriteResult {
    /// A stored write's near-duplicate that it was not merged into (`why`: `distinct:…`), when
    /// nothing else (an update, a newer fact) already gives the reason.
    pub(crate) fn note_look_alike(&mut self, look_alike: Option<(MemoryId, &str)>) {
        if let (None, Some((id, why))) = (&self.reason, look_alike) {
            self.reason = Some(why.to_owned());
            self.look_alike = Some(id);
        }
    }
}

/// `memory_write_batch`'s result.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct WriteBatchResult {
    /// One per memory, in the order they were given.
    pub results: Vec<WriteResult>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct SearchHit {
    pub id: MemoryId,
    pub content: String,
    pub memory_type: MemoryType,
    pub namespace: String,
    #[schemars(with = "String")]
    pub status: Status,
    pub importance: f64,
    pub entity: Option<String>,
    pub attribute: Option<String>,
    /// When what it tells of happened (the writer's `occurred_at`, else when it was stored).
    pub occurred_at: DateTime<Utc>,
    /// When hindsight stored it.
    pub created_at: DateTime<Utc>,
    pub expires_at: Option<DateTime<Utc>>,
    pub source: Value,
    pub merged_sources: Value,
    pub metadata: Value,
    pub deprecated_by: Option<MemoryId>,
    /// The final ranking score: weighted relevance + recency + importance.
    pub score: f64,
    /// The arms' evidence fused (`search_fusion`), in [0, 1].
    pub relevance: f64,
    /// Cosine similarity between query and memory.
    pub similarity: f64,
    /// Place in the dense (vector) arm's list, when it was there.
    pub dense_rank: Option<usize>,
    /// The lexical score (BM25; ts_rank_cd on PostgreSQL beside a Qdrant server), when the words
    /// matched.
    pub lexical_score: Option<f64>,
    /// Place in the lexical arm's list, when it was there.
    pub lexical_rank: Option<usize>,
    /// exp(-λ·days since it happened, `occurred_at`).
    pub recency: f64,
    /// Access count before this search.
    pub access_count: i64,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct SearchResult {
    /// Best first.
    pub memories: Vec<SearchHit>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct ForgetResult {
    /// How many memories were forgotten (each once, wherever its copies were).
    pub forgotten: usize,
    pub ids: Vec<MemoryId>,
    /// `soft` (row kept for audit) or `hard` (row deleted).
    pub mode: String,
    /// Of those, how many were archived in the database (`memories_archive`).
    pub archived: usize,
    /// Copies in exported archive objects the forget covered. None of them can be restored;
    /// after a hard forget they stay in the objects until the archive job's next run or
    /// `hindsight archive purge` rewrites them.
    pub exported: usize,
    /// What is left to do, when something is.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub note: Option<String>,
}

#[cfg(test)]
mod tests {
    use super::WriteStatus;

    #[test]
    fn a_write_status_reads_as_it_is_serialised() {
        for status in [
            WriteStatus::Stored,
            WriteStatus::Skipped,
            WriteStatus::Merged,
            WriteStatus::Quarantined,
        ] {
            assert_eq!(
                serde_json::to_value(status).unwrap(),
                serde_json::json!(status.as_str())
            );
        }
    }
}
