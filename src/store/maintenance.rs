//! What the maintenance jobs need from the database beyond `MemoryStore`: counting what a job
//! would touch (for dry runs and progress), and moving cold rows into `memories_archive` and
//! back. One trait, implemented by both stores (`maintenance_sqlite.rs`,
//! `maintenance_postgres.rs`) and pinned by `tests/store_suite.rs`.

use async_trait::async_trait;
use chrono::{DateTime, Utc};

use super::StoreError;
use crate::domain::MemoryId;

/// The archive job's selection: active rows created before `created_before` and accessed
/// fewer than `max_access_count` times.
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
    /// Where the next batch starts (`None`: this was the last).
    pub next_after: Option<MemoryId>,
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
    /// rows waiting for the index, in one transaction.
    async fn restore_from_table(
        &self,
        selector: &RestoreSelector,
        after: Option<MemoryId>,
        limit: i64,
        at: DateTime<Utc>,
    ) -> Result<RestoreBatch, StoreError>;

    /// Rows in `memories_archive`.
    async fn count_archived(&self) -> Result<i64, StoreError>;
}

/// `memories_archive`'s columns in the order of `super::COLUMNS`, plus the terms and the time.
pub(super) const ARCHIVE_COLUMNS: &str = "id, namespace, memory_type, content, importance, status, \
     entity, attribute, source, merged_sources, metadata, created_at, updated_at, expires_at, \
     last_accessed_at, access_count, deprecated_at, deprecated_by, embedding_model, embedding, \
     lexical, archived_at";

/// What an archived row keeps of its hot row: every column, status `archived`, and `$at`
/// (the placeholder the caller binds the archive time to).
pub(super) fn archive_select(at: &str) -> String {
    format!(
        "id, namespace, memory_type, content, importance, 'archived', entity, attribute, source, \
         merged_sources, metadata, created_at, updated_at, expires_at, last_accessed_at, \
         access_count, deprecated_at, deprecated_by, embedding_model, embedding, lexical, {at}"
    )
}

/// The hot columns a restore writes (the index flag and terms included).
pub(super) const RESTORE_COLUMNS: &str = "id, namespace, memory_type, content, importance, status, \
     entity, attribute, source, merged_sources, metadata, created_at, updated_at, expires_at, \
     last_accessed_at, access_count, deprecated_at, deprecated_by, embedding_model, embedding, \
     lexical, index_pending";

/// What a restored row gets back: active, updated at `$at`, pending for the index.
pub(super) fn restore_select(at: &str, pending: &str) -> String {
    format!(
        "id, namespace, memory_type, content, importance, 'active', entity, attribute, source, \
         merged_sources, metadata, created_at, {at}, expires_at, last_accessed_at, \
         access_count, deprecated_at, deprecated_by, embedding_model, embedding, lexical, {pending}"
    )
}

/// Split a restore's selected ids into restored and skipped, and say where the next batch starts.
pub(super) fn restore_batch(
    selected: Vec<MemoryId>,
    restored: Vec<MemoryId>,
    limit: i64,
) -> RestoreBatch {
    let next_after = if selected.len() as i64 >= limit {
        selected.last().copied()
    } else {
        None
    };
    let skipped = selected
        .into_iter()
        .filter(|id| !restored.contains(id))
        .collect();
    RestoreBatch {
        restored,
        skipped,
        next_after,
    }
}
