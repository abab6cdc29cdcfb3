//! What `hindsight export` reads and `hindsight import` writes: every row as it stands, hot or
//! archived, with its vector; rows put back exactly as a file gives them (a restore), signed
//! with this server's key; and the ids the write-mode import already passed through the write
//! path, so running an import again changes nothing.

use std::collections::HashSet;

use async_trait::async_trait;
use chrono::{DateTime, Utc};

use super::StoreError;
use crate::domain::{Memory, MemoryId, Status};

/// Which rows an export reads; every part optional (empty: no restriction).
#[derive(Debug, Clone, Default, PartialEq)]
pub struct ExportFilter {
    pub namespaces: Vec<String>,
    pub statuses: Vec<Status>,
    /// Only rows changed (`updated_at`) at or after this time: an incremental export.
    pub since: Option<DateTime<Utc>>,
}

impl ExportFilter {
    fn status_names(&self) -> Vec<&'static str> {
        self.statuses.iter().map(|s| s.as_str()).collect()
    }

    /// The filter's lists as JSON arrays (both backends bind them as one parameter each).
    pub(super) fn json_lists(&self) -> (String, String) {
        (
            serde_json::to_string(&self.namespaces).unwrap_or_else(|_| "[]".into()),
            serde_json::to_string(&self.status_names()).unwrap_or_else(|_| "[]".into()),
        )
    }
}

/// A row with every column and its vector; `archived_at` when it is in the archive table.
#[derive(Debug, Clone, PartialEq)]
pub struct StoredRow {
    pub memory: Memory,
    pub archived_at: Option<DateTime<Utc>>,
}

/// `import_rows`' split of `rows`: those whose id is not `taken` (nor earlier in `rows`), and
/// of them the hot rows (not archived), for the backend's multi-row insert.
pub(super) fn fresh_rows(
    rows: &[StoredRow],
    mut taken: HashSet<MemoryId>,
) -> (Vec<&StoredRow>, Vec<&Memory>) {
    let fresh: Vec<&StoredRow> = rows.iter().filter(|r| taken.insert(r.memory.id)).collect();
    let hot = fresh
        .iter()
        .filter(|r| r.archived_at.is_none())
        .map(|r| &r.memory)
        .collect();
    (fresh, hot)
}

/// What the write-mode import did with a line: the line's id, and the memory it became or
/// merged into (none when it was skipped or held for review).
#[derive(Debug, Clone, PartialEq)]
pub struct ImportedLine {
    pub line_id: MemoryId,
    pub memory_id: Option<MemoryId>,
    pub outcome: String,
}

#[async_trait]
pub trait TransferStore: Send + Sync + 'static {
    /// Up to `limit` rows of `memories` (or, with `archived`, of `memories_archive`) matching
    /// `filter`, with their vectors, in id order after `after`.
    async fn export_page(
        &self,
        filter: &ExportFilter,
        archived: bool,
        after: Option<MemoryId>,
        limit: i64,
    ) -> Result<Vec<StoredRow>, StoreError>;

    /// The rows holding these ids, hot or archived.
    async fn held(&self, ids: &[MemoryId]) -> Result<Vec<Memory>, StoreError>;

    /// Insert every row as given (status, times, history), signed with this server's key, in
    /// one transaction: hot rows pending for the index, archived rows (`archived_at`) into the
    /// archive. An id already held (hot or archived) or forgotten here is left alone. Returns
    /// the ids added.
    async fn import_rows(&self, rows: &[StoredRow]) -> Result<Vec<MemoryId>, StoreError>;

    /// A preserve-mode load of `load_rows` rows is under way, its vector index deferred to its
    /// end: the store may drop what such a load would keep up row by row at a cost (an index
    /// in an order other than the rows'), to make it again in one pass at `finish_bulk_load`.
    /// Whether it did (or had already, for this load).
    async fn begin_bulk_load(&self, load_rows: u64) -> Result<bool, StoreError>;

    /// A bulk load's end (called after any import's last batch): what `begin_bulk_load` dropped
    /// is made again. A load that never ends is repaired when the store is next opened.
    async fn finish_bulk_load(&self) -> Result<(), StoreError>;

    /// Which of these line ids a write-mode import has already passed through the write path.
    async fn imported(&self, ids: &[MemoryId]) -> Result<Vec<MemoryId>, StoreError>;

    /// Remember what the write-mode import did with these lines.
    async fn record_imported(
        &self,
        lines: &[ImportedLine],
        at: DateTime<Utc>,
    ) -> Result<(), StoreError>;
}
