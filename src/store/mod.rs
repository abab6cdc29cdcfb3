//! The store: memories as rows, the source of truth. One trait, one implementation per database
//! (SQLite embedded, PostgreSQL for scale-out); the shared behaviour is pinned by the backend-agnostic suite in
//! `tests/integration/store_suite.rs`.

mod audit;
mod distill;
mod integrity;
mod ledger;
mod maintenance;
mod postgres;
mod quarantine;
mod sqlite;
mod tokens;
mod transfer;

use async_trait::async_trait;
use chrono::{DateTime, Utc};
use serde_json::Value;

use crate::domain::{Memory, MemoryId, MemoryType, Namespace, Status};

pub use crate::lexical::{LexicalHit, LexicalHits};
pub use audit::{AuditEntry, AuditStore};
pub use distill::{
    Candidate, CandidateId, CandidateStatus, ClusterOutcome, DistillMethod, DistillStore,
    DistilledCluster, Evidence, EvidenceTo, Review,
};
pub use integrity::{
    IntegrityStore, ResignReport, RowTable, TamperedRow, VerifyReport, adopt, resign_all,
    verify_all,
};
pub use ledger::{RunLedger, RunRecord, RunStatus};
pub use maintenance::{
    ArchiveBatch, ArchivedRow, BatchState, ColdRows, MaintenanceStore, RestoreBatch,
    RestoreSelector,
};
pub use postgres::{PoolSize, PostgresStore};
pub use quarantine::{QuarantineDecision, QuarantineStore, Quarantined};
pub use sqlite::SqliteStore;
pub use tokens::{TokenRecord, TokenStore};
pub use transfer::{ExportFilter, ImportedLine, StoredRow, TransferStore};

#[derive(Debug, thiserror::Error)]
pub enum StoreError {
    #[error("database error: {0}")]
    Database(#[from] sqlx::Error),
    #[error("migration failed: {0}")]
    Migrate(#[from] sqlx::migrate::MigrateError),
    #[error("an active memory already holds ({namespace}, {entity}, {attribute}); retry the write")]
    FactConflict {
        namespace: String,
        entity: String,
        attribute: String,
    },
    #[error(
        "another hindsight process with an embedded vector index already writes to this database, \
         and neither embedded index would see the other process's writes. Run one process, or give \
         every replica the shared Qdrant server index (`qdrant_url`)"
    )]
    DatabaseClaimed,
    #[error("corrupt row {id}: {reason}")]
    Corrupt { id: String, reason: String },
    #[error("an active token is already named {0:?}; revoke it first or choose another name")]
    TokenNameTaken(String),
    #[error(
        "this database's newest rows are signed with key {found}, and this server's signing key \
         is {ours}: every process on one database needs the same key (`signing_key`, \
         HINDSIGHT_SIGNING_KEY); after a rotation, name the old key in `signing_previous_keys` \
         until `hindsight resign` has run"
    )]
    ForeignSigningKey { found: String, ours: String },
}

/// An INSERT's error: the partial unique index refusing a second active fact becomes
/// `FactConflict` naming the key; anything else stays a database error.
fn insert_error(err: sqlx::Error, memory: &Memory) -> StoreError {
    match &err {
        sqlx::Error::Database(db) if db.is_unique_violation() => StoreError::FactConflict {
            namespace: memory.namespace.clone(),
            entity: memory.entity.clone().unwrap_or_default(),
            attribute: memory.attribute.clone().unwrap_or_default(),
        },
        _ => StoreError::Database(err),
    }
}

/// `expire_due`'s order (neither `IN (…)` nor RETURNING keeps the subquery's), the same on
/// every backend.
fn soonest_expiry_first(mut rows: Vec<Memory>) -> Result<Vec<Memory>, StoreError> {
    rows.sort_by(|a, b| a.expires_at.cmp(&b.expires_at).then(a.id.cmp(&b.id)));
    Ok(rows)
}

/// Which rows a forget applies to.
#[derive(Debug, Clone)]
pub enum ForgetSelector {
    Id(MemoryId),
    Filter(ForgetFilter),
}

/// What a forget reached, by where the copies were. An id can be in two places at once (a
/// restored row whose object still exists is in `hot` and `exported`).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Forgotten {
    /// Rows of `memories` (their index points must go).
    pub hot: Vec<MemoryId>,
    /// Rows of `memories_archive`.
    pub archived: Vec<MemoryId>,
    /// Copies in exported archive objects. A soft forget leaves them there (restore skips
    /// them); a hard forget leaves them until `hindsight archive purge` rewrites the objects.
    pub exported: Vec<MemoryId>,
}

impl Forgotten {
    pub fn is_empty(&self) -> bool {
        self.hot.is_empty() && self.archived.is_empty() && self.exported.is_empty()
    }

    /// Every id forgotten, once each, sorted.
    pub fn ids(&self) -> Vec<MemoryId> {
        let mut ids: Vec<_> = self
            .hot
            .iter()
            .chain(&self.archived)
            .chain(&self.exported)
            .copied()
            .collect();
        ids.sort();
        ids.dedup();
        ids
    }
}

#[derive(Debug, Clone)]
pub struct ForgetFilter {
    pub namespace: Namespace,
    pub memory_type: Option<MemoryType>,
    pub entity: Option<String>,
    pub created_before: Option<DateTime<Utc>>,
}

/// A dedup merge: what changes on the surviving row.
#[derive(Debug, Clone)]
pub struct MergeUpdate {
    pub id: MemoryId,
    /// New content and its embedding, when the merge policy keeps the newer text.
    pub replace_content: Option<(String, Vec<f32>)>,
    pub importance: f64,
    /// Appended to `merged_sources`.
    pub merged_source: Value,
    /// The write's own expiry: the row keeps the later of the two, and never expires if
    /// either never does.
    pub expires_at: Option<DateTime<Utc>>,
    /// When the write's event happened: the row keeps the later of the two (the last time it
    /// happened is what recency reads).
    pub occurred_at: DateTime<Utc>,
    pub at: DateTime<Utc>,
}

/// What an insert did about the fact its row states.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Inserted {
    /// Active rows of the same fact (or rows the write updates) that happened no later than the
    /// new one, now deprecated by it (as they now are).
    pub superseded: Vec<Memory>,
    /// The active row of the same fact that happened after the new one: the new row was stored
    /// deprecated by it.
    pub superseded_by: Option<MemoryId>,
}

/// Accesses of one memory by searches since the last flush.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct AccessHit {
    pub id: MemoryId,
    pub count: i64,
    pub at: DateTime<Utc>,
}

/// One row of `stats`.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct CountRow {
    pub namespace: String,
    pub memory_type: MemoryType,
    pub status: Status,
    pub count: i64,
}

fn corrupt(id: &str, reason: impl Into<String>) -> StoreError {
    StoreError::Corrupt {
        id: id.to_owned(),
        reason: reason.into(),
    }
}

/// The `memory_type` and `status` columns of the row `id`, parsed (both backends store text).
fn parse_type_and_status(
    id: &str,
    memory_type: &str,
    status: &str,
) -> Result<(MemoryType, Status), StoreError> {
    Ok((
        MemoryType::parse(memory_type).map_err(|e| corrupt(id, e.to_string()))?,
        Status::parse(status).map_err(|e| corrupt(id, e.to_string()))?,
    ))
}

/// Every column of `memories`, in the order both backends' row decoders read (`occurred_at`
/// came last, migration 0009: the statements that bind a whole row keep their positions).
const COLUMNS: &str = "id, namespace, memory_type, content, importance, status, entity, attribute, \
     source, merged_sources, metadata, created_at, updated_at, expires_at, last_accessed_at, \
     access_count, deprecated_at, deprecated_by, embedding_model, embedding, occurred_at, signature";

/// `counts()`: the same SQL on both backends, decoded by `count_row`.
const COUNTS_SQL: &str = "SELECT namespace, memory_type, status, COUNT(*) AS n FROM memories \
     GROUP BY namespace, memory_type, status ORDER BY namespace, memory_type, status";

/// One `counts()` row from its columns (`SELECT namespace, memory_type, status, COUNT(*) AS n`).
fn count_row<'r, R: sqlx::Row>(row: &'r R) -> Result<CountRow, StoreError>
where
    usize: sqlx::ColumnIndex<R>,
    &'r str: sqlx::Decode<'r, R::Database> + sqlx::Type<R::Database>,
    String: sqlx::Decode<'r, R::Database> + sqlx::Type<R::Database>,
    i64: sqlx::Decode<'r, R::Database> + sqlx::Type<R::Database>,
{
    let namespace: String = row.try_get(0)?;
    let (memory_type, status) =
        parse_type_and_status(&namespace, row.try_get(1)?, row.try_get(2)?)?;
    Ok(CountRow {
        namespace,
        memory_type,
        status,
        count: row.try_get(3)?,
    })
}

/// A full-text search: rows of `namespace` with one of `memory_types` (all when empty) and
/// `statuses`, not expired at `now`, that happened within `occurred_from..=occurred_to` (when given),
/// matching any of `terms` (from `lexical::query_terms`). Every filter is applied inside the
/// query, so rows it excludes never take a place in the `limit`.
#[derive(Debug, Clone)]
pub struct LexicalQuery {
    /// Non-empty: the row's namespace is any of these.
    pub namespaces: Vec<String>,
    pub memory_types: Vec<MemoryType>,
    pub statuses: Vec<Status>,
    pub terms: Vec<String>,
    pub now: DateTime<Utc>,
    pub occurred_from: Option<DateTime<Utc>>,
    pub occurred_to: Option<DateTime<Utc>>,
    /// Terms held by more than this share of the rows are left out (SQLite; 1: none are).
    pub max_df: f64,
    pub limit: usize,
}

impl LexicalQuery {
    fn type_names(&self) -> Vec<&'static str> {
        let types: &[MemoryType] = if self.memory_types.is_empty() {
            &MemoryType::ALL
        } else {
            &self.memory_types
        };
        types.iter().map(|t| t.as_str()).collect()
    }

    fn status_names(&self) -> Vec<&'static str> {
        self.statuses.iter().map(|s| s.as_str()).collect()
    }
}

/// Whatever holds a database lock (a transaction, a connection), and how to let go of it now.
/// Which rows `MemoryStore::list` pages through (the console's memory browser): every filter
/// optional, newest stored first (ids are UUIDv7, so by id), `before` the last id of the
/// previous page.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct MemoryListQuery {
    pub namespace: Option<String>,
    pub memory_type: Option<crate::domain::MemoryType>,
    pub status: Option<crate::domain::Status>,
    pub entity: Option<String>,
    pub attribute: Option<String>,
    /// The rows this memory deprecated.
    pub deprecated_by: Option<MemoryId>,
    /// `occurred_at` within [from, to].
    pub occurred_from: Option<DateTime<Utc>>,
    pub occurred_to: Option<DateTime<Utc>>,
    pub before: Option<MemoryId>,
    pub limit: i64,
}

#[async_trait]
pub trait HeldLock: Send {
    async fn release(self: Box<Self>);
}

/// A lock in the database that lasts as long as this value (a write's scope lock, a job's
/// run, a process's claim on the database for its embedded index). Released when dropped; call
/// `release` where the next holder should not wait: a dropped PostgreSQL transaction is only
/// rolled back (and its lock freed) once its connection is used again.
pub struct StoreLock {
    held: Option<Box<dyn HeldLock>>,
}

impl StoreLock {
    /// For a store only one process writes to (SQLite: the data-dir lock sees to that), where
    /// the service's own write lock already serialises writers.
    pub fn process_local() -> Self {
        Self { held: None }
    }

    pub fn holding(resource: impl HeldLock + 'static) -> Self {
        Self {
            held: Some(Box::new(resource)),
        }
    }

    pub async fn release(mut self) {
        if let Some(held) = self.held.take() {
            held.release().await;
        }
    }
}

impl Drop for StoreLock {
    /// Dropped without `release` (an early return, a panic): release on a task of its own, so
    /// the lock does not outlive its holder until the connection happens to be reused.
    fn drop(&mut self) {
        if let Some(held) = self.held.take()
            && let Ok(runtime) = tokio::runtime::Handle::try_current()
        {
            runtime.spawn(held.release());
        }
    }
}

#[async_trait]
pub trait MemoryStore: IntegrityStore + Send + Sync + 'static {
    /// Wait for, then hold, the database-wide lock named `key` until the returned value drops:
    /// how processes sharing one database serialise work (a write's dedup scope, an index
    /// refill). A single-process store (SQLite) returns at once.
    async fn lock(&self, key: &str) -> Result<StoreLock, StoreError>;

    /// `lock` without waiting: `None` when another process holds it (a job already running on
    /// another replica).
    async fn try_lock(&self, key: &str) -> Result<Option<StoreLock>, StoreError>;

    /// Claim the database for this process's own (embedded) index: a second process doing the
    /// same would fail with `DatabaseClaimed`, since neither index would learn of the other's
    /// writes. Lasts while the returned lock lives, or until the process dies.
    async fn claim_for_local_index(&self) -> Result<StoreLock, StoreError>;

    /// Insert `memory` (active, index pending). When it states a fact (entity and attribute),
    /// the active row of the same (namespace, entity, attribute) that happened no later than it
    /// (`occurred_at`) is deprecated by it in the same transaction, serialised against
    /// concurrent writers of that key in any process; that row is returned as it now is. If the
    /// active row happened later (history written out of order), it stays, and the new row is
    /// stored already deprecated by it. `FactConflict` only if that serialisation was bypassed
    /// (the partial unique index is the last line of defence).
    async fn insert(&self, memory: &Memory) -> Result<Inserted, StoreError> {
        self.insert_revising(memory, &[]).await
    }

    /// `insert`, which also updates the rows `replaces` (the look-alikes the write path found
    /// it updates, `revision`), in the same transaction and by the same rule as a fact's
    /// versions: those still active that happened no later than it are deprecated by it; if
    /// one still active happened later, the new row is stored deprecated by that one
    /// (`superseded_by`). Rows no longer active are left as they are.
    async fn insert_revising(
        &self,
        memory: &Memory,
        replaces: &[MemoryId],
    ) -> Result<Inserted, StoreError>;

    /// Insert `memories` (active, index pending) in one transaction: all or none. Only rows
    /// that state no fact (no entity and attribute pair): nothing is superseded here.
    async fn insert_many(&self, memories: &[Memory]) -> Result<(), StoreError>;

    /// Apply a dedup merge to an existing row; returns the updated row, or `None` if it is no
    /// longer active.
    async fn merge(&self, update: &MergeUpdate) -> Result<Option<Memory>, StoreError>;

    async fn get(&self, id: MemoryId) -> Result<Option<Memory>, StoreError>;

    /// Rows for these ids, in no particular order; unknown ids are left out.
    async fn get_many(&self, ids: &[MemoryId]) -> Result<Vec<Memory>, StoreError>;

    /// Full-text search over the rows' terms (words; character bigrams for CJK), best first.
    async fn lexical_search(&self, query: &LexicalQuery) -> Result<LexicalHits, StoreError>;

    /// Active rows of `namespace` and `memory_type` whose content is exactly `content`: the
    /// write path's exact-repeat lookup, by index (not by the vector index's approximate walk).
    async fn active_repeats(
        &self,
        namespace: &str,
        memory_type: MemoryType,
        content: &str,
    ) -> Result<Vec<Memory>, StoreError>;

    /// Active rows holding (namespace, entity, attribute).
    async fn active_facts(
        &self,
        namespace: &Namespace,
        entity: &str,
        attribute: &str,
    ) -> Result<Vec<Memory>, StoreError>;

    /// A page of rows matching every filter given, newest stored first.
    async fn list(&self, query: &MemoryListQuery) -> Result<Vec<Memory>, StoreError>;

    /// Add `count` to access_count and move last_accessed_at to `at` (if later), per row.
    async fn record_access(&self, hits: &[AccessHit]) -> Result<(), StoreError>;

    /// Forget every copy the selector matches, in one transaction: the hot row, the archived
    /// row and the copies in exported objects (as `archive_exported` lists them). Soft: status
    /// `forgotten` (hot rows index pending), rows kept for audit. Hard: rows deleted (the
    /// exported copies stay until a purge rewrites their objects). Either way every id gets a
    /// tombstone (`forgotten`), which keeps a restore from bringing it back; a hard one
    /// upgrades a soft one. Copies already forgotten the same way are not counted again.
    async fn forget(
        &self,
        selector: &ForgetSelector,
        hard: bool,
        at: DateTime<Utc>,
    ) -> Result<Forgotten, StoreError>;

    /// The expire job's batch: up to `limit` active rows whose `expires_at` is at or before `now`
    /// become `expired` (index pending) in one statement; returns them as they now are, soonest
    /// expiry first. With `dry_run` nothing changes and the rows are returned as they are.
    async fn expire_due(
        &self,
        now: DateTime<Utc>,
        limit: i64,
        dry_run: bool,
    ) -> Result<Vec<Memory>, StoreError>;

    /// Rows whose index entry may be stale, oldest first.
    async fn index_pending(&self, limit: i64) -> Result<Vec<Memory>, StoreError>;

    /// Hard-forgotten ids whose index point may still be there (their tombstone says so until
    /// `mark_deletes_indexed`): the rows are gone, so `index_pending` cannot carry them.
    async fn index_deletes_pending(&self, limit: i64) -> Result<Vec<MemoryId>, StoreError>;

    /// The index has flushed the deletes of `ids`.
    async fn mark_deletes_indexed(&self, ids: &[MemoryId]) -> Result<(), StoreError>;

    /// Clear the pending flag, but only if the row has not changed since `seen_updated_at`
    /// (a concurrent change keeps it pending for the next repair).
    async fn mark_indexed(&self, rows: &[(MemoryId, DateTime<Utc>)]) -> Result<(), StoreError>;

    /// Rows that belong in the index (active or deprecated), paged by id, for a rebuild.
    async fn indexable_after(
        &self,
        after: Option<MemoryId>,
        limit: i64,
    ) -> Result<Vec<Memory>, StoreError>;

    /// Replace the stored embedding (after a re-embed with a new model).
    async fn set_embedding(
        &self,
        id: MemoryId,
        model: &str,
        embedding: &[f32],
    ) -> Result<(), StoreError>;

    async fn counts(&self) -> Result<Vec<CountRow>, StoreError>;

    async fn meta_get(&self, key: &str) -> Result<Option<String>, StoreError>;
    async fn meta_set(&self, key: &str, value: &str) -> Result<(), StoreError>;
}

/// The whole database: memories, the job ledger and the maintenance moves. Both stores are
/// one; callers take the view they need (`Arc<dyn Database>` coerces to each part).
pub trait Database:
    MemoryStore
    + RunLedger
    + MaintenanceStore
    + DistillStore
    + TokenStore
    + AuditStore
    + QuarantineStore
    + IntegrityStore
    + TransferStore
{
}

impl<T> Database for T where
    T: MemoryStore
        + RunLedger
        + MaintenanceStore
        + DistillStore
        + TokenStore
        + AuditStore
        + QuarantineStore
        + IntegrityStore
        + TransferStore
{
}
