//! What the maintenance jobs need from the database beyond `MemoryStore`: counting what a job
//! would touch (for dry runs and progress), and moving cold rows into `memories_archive` and
//! back. One trait, implemented by both stores (`sqlite/maintenance.rs`,
//! `postgres/maintenance.rs`) and pinned by `tests/integration/store_suite.rs`.

use async_trait::async_trait;
use chrono::{DateTime, Utc};

use super::StoreError;
use crate::domain::{Memory, MemoryId};

/// The archive job's selection: active rows created before `created_before`, not accessed
/// since then (a restored row counts as accessed when restored), and accessed fewer than
/// `max_access_count` times in all.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ColdRows {
    pub created_before: DateTime<Utc>,
    pub max_access_count: i64,
}

/// Which archived rows `restore_from_table` brings back.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum RestoreSelector {
    Ids(Vec<MemoryId>),
    Namespace(String),
}

/// One restore batch.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct RestoreBatch {
    /// Back in `memories`, active and waiting for the index.
    pub restored: Vec<MemoryId>,
    /// Left in the archive: an active memory already holds the same (namespace, entity,
    /// attribute), and a restored row must not silently supersede it.
    pub skipped: Vec<MemoryId>,
    /// Left in the archive: forgotten (a tombstone, or a soft forget's status, says so).
    pub forgotten: Vec<MemoryId>,
    /// Where the next batch starts (`None`: this was the last).
    pub next_after: Option<MemoryId>,
}

/// One batch of the archive job's object sink, as the journal (`archive_batches`) records it.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct ArchiveBatch {
    /// The object's key: `<namespace>/<first id>_<last id>_<staged at, unix ms>.jsonl.gz`.
    pub key: String,
    pub namespace: String,
    pub ids: Vec<MemoryId>,
    pub state: BatchState,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "lowercase")]
pub enum BatchState {
    /// Rows moved to `memories_archive`; the object may not be written yet.
    Staged,
    /// The object is written and verified; the rows live only there.
    Exported,
    /// Brought back by `hindsight archive restore`.
    Restored,
}

impl BatchState {
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Staged => "staged",
            Self::Exported => "exported",
            Self::Restored => "restored",
        }
    }

    pub(super) fn parse(text: &str) -> Option<Self> {
        [Self::Staged, Self::Exported, Self::Restored]
            .into_iter()
            .find(|s| s.as_str() == text)
    }
}

/// An archived row with every column: one line of an archive object.
#[derive(Debug, Clone, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct ArchivedRow {
    #[serde(flatten)]
    pub memory: Memory,
    /// (`Memory` leaves its vector out of JSON; an archive keeps it, so a restore needs no
    /// re-embedding.)
    pub embedding: Vec<f32>,
    pub lexical: Option<String>,
    pub archived_at: DateTime<Utc>,
}

/// A batch's key, fixed when it is staged (the journal keeps it, so a retry writes the same
/// object): its namespace, id range and staging time — the time keeps a later batch of the
/// same rows (archived, restored, archived again) from landing on an earlier object.
pub(super) fn batch_key(namespace: &str, ids: &[MemoryId], staged_at: DateTime<Utc>) -> String {
    let first = ids
        .iter()
        .min()
        .map(|id| id.to_string())
        .unwrap_or_default();
    let last = ids
        .iter()
        .max()
        .map(|id| id.to_string())
        .unwrap_or_default();
    format!(
        "{namespace}/{first}_{last}_{}.jsonl.gz",
        staged_at.timestamp_millis()
    )
}

#[async_trait]
pub trait MaintenanceStore: Send + Sync + 'static {
    /// How many rows `expire_due(now, …)` would change in all.
    async fn count_expire_due(&self, now: DateTime<Utc>) -> Result<i64, StoreError>;

    /// How many rows match the archive job's selection.
    async fn count_cold(&self, cold: &ColdRows) -> Result<i64, StoreError>;

    /// The oldest `limit` matching rows' ids, without changing anything (dry runs).
    async fn cold_ids(&self, cold: &ColdRows, limit: i64) -> Result<Vec<MemoryId>, StoreError>;

    /// Move up to `limit` of the oldest matching rows into `memories_archive` (status
    /// `archived`, `archived_at = at`) in one transaction; returns their ids. Replicas archiving
    /// at once take different rows.
    async fn archive_to_table(
        &self,
        cold: &ColdRows,
        limit: i64,
        at: DateTime<Utc>,
    ) -> Result<Vec<MemoryId>, StoreError>;

    /// Move up to `limit` archived rows (by id, after `after`) back into `memories` as active
    /// rows waiting for the index, in one transaction. Forgotten rows (status `forgotten`, or
    /// a tombstone) never come back: they stay where they are, reported as `forgotten`.
    async fn restore_from_table(
        &self,
        selector: &RestoreSelector,
        after: Option<MemoryId>,
        limit: i64,
        at: DateTime<Utc>,
    ) -> Result<RestoreBatch, StoreError>;

    /// Rows in `memories_archive`.
    async fn count_archived(&self) -> Result<i64, StoreError>;

    /// The object sink's first step, one transaction: up to `limit` of the oldest matching rows
    /// of one namespace move to `memories_archive`, and the batch is journalled as `staged`.
    /// `None` when nothing matches.
    async fn stage_batch(
        &self,
        cold: &ColdRows,
        limit: i64,
        at: DateTime<Utc>,
    ) -> Result<Option<ArchiveBatch>, StoreError>;

    /// Journalled batches in `state`, oldest first; with `selector`, only those holding one
    /// of its ids or of its namespace.
    async fn batches(
        &self,
        state: BatchState,
        selector: Option<&RestoreSelector>,
    ) -> Result<Vec<ArchiveBatch>, StoreError>;

    /// Rows of `memories_archive` with every column.
    async fn archived_rows(&self, ids: &[MemoryId]) -> Result<Vec<ArchivedRow>, StoreError>;

    /// The object of `key` is written and verified: its rows leave `memories_archive` for the
    /// listing of what the object holds (`archive_exported`: id, namespace, type, entity,
    /// created_at, so a forget can find them), and the batch becomes `exported`, in one
    /// transaction. Returns the rows removed.
    async fn finish_export(&self, key: &str, at: DateTime<Utc>) -> Result<u64, StoreError>;

    /// Put rows read back from an object into `memories_archive`, ready for
    /// `restore_from_table`. Rows already there, already back in `memories`, or forgotten
    /// (tombstoned) are left alone.
    async fn unpack(&self, rows: &[ArchivedRow]) -> Result<u64, StoreError>;

    /// Which of `ids` have been forgotten (carry a tombstone).
    async fn forgotten_among(&self, ids: &[MemoryId]) -> Result<Vec<MemoryId>, StoreError>;

    /// Exported objects (batches `exported` or `restored`) that still hold hard-forgotten
    /// ids, as the journal lists them, with those ids; oldest first.
    async fn batches_to_purge(&self) -> Result<Vec<(ArchiveBatch, Vec<MemoryId>)>, StoreError>;

    /// The object of `key` no longer holds `removed` (rewritten without them, or deleted when
    /// `object_gone`): the journal and the export listing follow, in one transaction.
    async fn purged_from_batch(
        &self,
        key: &str,
        removed: &[MemoryId],
        object_gone: bool,
    ) -> Result<(), StoreError>;

    async fn set_batch_state(&self, key: &str, state: BatchState) -> Result<(), StoreError>;

    /// Capacity eviction's ranking inputs, one page of active rows by id: (id, importance,
    /// last touched = the later of created_at and last_accessed_at).
    async fn active_rank_inputs(
        &self,
        after: Option<MemoryId>,
        limit: i64,
    ) -> Result<Vec<(MemoryId, f64, DateTime<Utc>)>, StoreError>;

    /// Move these rows to `memories_archive`, those still active, in one transaction; returns
    /// the ids moved.
    async fn archive_ids_to_table(
        &self,
        ids: &[MemoryId],
        at: DateTime<Utc>,
    ) -> Result<Vec<MemoryId>, StoreError>;
}

/// `memories_archive`'s columns in the order of `super::COLUMNS`, plus the terms and the time.
pub(super) const ARCHIVE_COLUMNS: &str = "id, namespace, memory_type, content, importance, status, \
     entity, attribute, source, merged_sources, metadata, created_at, updated_at, expires_at, \
     last_accessed_at, access_count, deprecated_at, deprecated_by, embedding_model, embedding, \
     occurred_at, signature, lexical, archived_at";

/// What an archived row keeps of its hot row: every column, status `archived`, and `$at`
/// (the placeholder the caller binds the archive time to).
pub(super) fn archive_select(at: &str) -> String {
    format!(
        "id, namespace, memory_type, content, importance, 'archived', entity, attribute, source, \
         merged_sources, metadata, created_at, updated_at, expires_at, last_accessed_at, \
         access_count, deprecated_at, deprecated_by, embedding_model, embedding, occurred_at, \
         signature, lexical, {at}"
    )
}

/// The hot columns a restore writes (the index flag and terms included).
pub(super) const RESTORE_COLUMNS: &str = "id, namespace, memory_type, content, importance, status, \
     entity, attribute, source, merged_sources, metadata, created_at, updated_at, expires_at, \
     last_accessed_at, access_count, deprecated_at, deprecated_by, embedding_model, embedding, \
     occurred_at, signature, lexical, index_pending";

/// What a restored row gets back: active, updated and last accessed at `$at` (someone wanted
/// it: the archive job leaves it alone for another `min_age_days`), pending for the index.
pub(super) fn restore_select(at: &str, pending: &str) -> String {
    format!(
        "id, namespace, memory_type, content, importance, 'active', entity, attribute, source, \
         merged_sources, metadata, created_at, {at}, expires_at, {at}, \
         access_count, deprecated_at, deprecated_by, embedding_model, embedding, occurred_at, \
         signature, lexical, {pending}"
    )
}

/// Split a restore's selected ids (each with whether it was forgotten) into restored, skipped
/// and forgotten, and say where the next batch starts.
pub(super) fn restore_batch(
    selected: Vec<(MemoryId, bool)>,
    restored: Vec<MemoryId>,
    limit: i64,
) -> RestoreBatch {
    let next_after = if selected.len() as i64 >= limit {
        selected.last().map(|(id, _)| *id)
    } else {
        None
    };
    let (forgotten, rest): (Vec<_>, Vec<_>) = selected.into_iter().partition(|(_, f)| *f);
    let skipped = rest
        .into_iter()
        .map(|(id, _)| id)
        .filter(|id| !restored.contains(id))
        .collect();
    RestoreBatch {
        restored,
        skipped,
        forgotten: forgotten.into_iter().map(|(id, _)| id).collect(),
        next_after,
    }
}

/// Whether an archived row may come back: archived (not soft-forgotten) and not tombstoned.
/// A condition on `memories_archive`, the same on both backends.
pub(super) const RESTORABLE: &str = "memories_archive.status = 'archived' AND NOT EXISTS \
     (SELECT 1 FROM forgotten AS f WHERE f.id = memories_archive.id)";
