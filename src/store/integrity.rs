//! Row signatures in the store (`signing` says what is signed and why). Both stores sign every
//! row they insert and sign it again in the same transaction whenever they change a signed
//! column (deprecate, merge, forget, expire); this trait is the rest: the scans `hindsight
//! verify` and `resign` walk, the rows found tampered (what the capacity job alerts on), and
//! the first start after the signatures migration (`adopt`).

use async_trait::async_trait;
use chrono::{DateTime, Utc};
use serde::{Deserialize, Serialize};

use super::{MemoryStore, StoreError};
use crate::domain::{Memory, MemoryId};
use crate::signing::{Signer, signature_key_id};

/// The two tables rows live in.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum RowTable {
    Memories,
    Archive,
}

impl RowTable {
    pub fn as_str(self) -> &'static str {
        match self {
            RowTable::Memories => "memories",
            RowTable::Archive => "memories_archive",
        }
    }

    pub fn parse(text: &str) -> Option<Self> {
        match text {
            "memories" => Some(RowTable::Memories),
            "memories_archive" => Some(RowTable::Archive),
            _ => None,
        }
    }
}

/// A row that failed its check.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct TamperedRow {
    pub id: MemoryId,
    pub table: RowTable,
    /// The namespace the row says it is in (which may be what was changed).
    pub namespace: String,
    /// `unsigned`, `unknown_key` or `mismatch` (`signing::Tamper::as_str`).
    pub reason: String,
    pub detected_at: DateTime<Utc>,
}

#[async_trait]
pub trait IntegrityStore: Send + Sync {
    /// The keys this store signs with and verifies against.
    fn signer(&self) -> &Signer;
    /// Up to `limit` rows of `table` after `after`, by id: a scan's page.
    async fn rows_after(
        &self,
        table: RowTable,
        after: Option<MemoryId>,
        limit: i64,
    ) -> Result<Vec<Memory>, StoreError>;
    /// Sign these rows of `table` as they stand, with the current key; how many.
    async fn resign(&self, table: RowTable, ids: &[MemoryId]) -> Result<u64, StoreError>;
    /// The newest row's signature (by id, UUIDv7 so by time), if any row is signed.
    async fn newest_signature(&self) -> Result<Option<String>, StoreError>;
    /// Remember rows found tampered (a row already listed keeps its first detection).
    async fn record_tampered(&self, rows: &[TamperedRow]) -> Result<(), StoreError>;
    /// Every row listed as tampered, oldest detection first.
    async fn tampered(&self) -> Result<Vec<TamperedRow>, StoreError>;
    /// Take rows off the list (found good again, gone, or signed anew).
    async fn clear_tampered(&self, table: RowTable, ids: &[MemoryId]) -> Result<(), StoreError>;
}

impl TamperedRow {
    /// `row` of `table`, found failing its check for `reason` at `at`.
    pub fn of(
        row: &Memory,
        table: RowTable,
        reason: &crate::signing::Tamper,
        at: DateTime<Utc>,
    ) -> Self {
        Self {
            id: row.id,
            table,
            namespace: row.namespace.clone(),
            reason: reason.as_str().to_owned(),
            detected_at: at,
        }
    }
}

/// A scan of one table, a page of 1,000 rows by id at a time (`verify`, `resign`, `adopt`).
struct Pages {
    table: RowTable,
    after: Option<MemoryId>,
    /// Rows returned so far.
    seen: u64,
}

impl Pages {
    fn of(table: RowTable) -> Self {
        Self {
            table,
            after: None,
            seen: 0,
        }
    }

    /// The next page, `None` at the end.
    async fn next<S: IntegrityStore + ?Sized>(
        &mut self,
        store: &S,
    ) -> Result<Option<Vec<Memory>>, StoreError> {
        let rows = store.rows_after(self.table, self.after, 1_000).await?;
        let Some(last) = rows.last() else {
            return Ok(None);
        };
        self.after = Some(last.id);
        self.seen += rows.len() as u64;
        Ok(Some(rows))
    }
}

/// Meta key: set once every row of the store is signed (after the first start that had keys).
const ROWS_SIGNED: &str = "rows_signed";
/// Meta key: the id of the key the store's rows are signed with (the first process's, then
/// whatever `resign` moved them to). A second process with another key is refused even before
/// any row exists, so two replicas that each made a key of their own cannot both write.
const KEY_ID: &str = "signing_key_id";

/// What `adopt` refuses.
pub fn foreign_key_error(kid: &str, signer: &Signer) -> StoreError {
    StoreError::ForeignSigningKey {
        found: kid.to_owned(),
        ours: signer.key_id().to_owned(),
    }
}

/// At open: refuse a store whose newest row is signed with a key this process lacks (replicas
/// must share one key; a rotated one stays in `signing_previous_keys` until `resign`), then,
/// once per store, sign the rows written before signatures existed. After that a row without
/// a signature is one somebody wrote behind the server's back.
pub async fn adopt<S: IntegrityStore + MemoryStore + ?Sized>(store: &S) -> Result<(), StoreError> {
    let signer = store.signer();
    let recorded = store.meta_get(KEY_ID).await?;
    let newest = store.newest_signature().await?;
    let newest = newest.as_deref().and_then(signature_key_id);
    for kid in [recorded.as_deref(), newest].into_iter().flatten() {
        if !signer.knows(kid) && !signer.accepts_foreign_rows() {
            return Err(foreign_key_error(kid, signer));
        }
    }
    if recorded.is_none() {
        store.meta_set(KEY_ID, signer.key_id()).await?;
    }
    if store.meta_get(ROWS_SIGNED).await?.is_some() {
        return Ok(());
    }
    let mut signed = 0;
    for table in [RowTable::Memories, RowTable::Archive] {
        let mut pages = Pages::of(table);
        while let Some(rows) = pages.next(store).await? {
            let unsigned: Vec<MemoryId> = rows
                .iter()
                .filter(|m| m.signature.is_none())
                .map(|m| m.id)
                .collect();
            signed += store.resign(table, &unsigned).await?;
        }
    }
    if signed > 0 {
        tracing::info!(
            rows = signed,
            key = store.signer().key_id(),
            "signed the rows stored before row signatures"
        );
    }
    store.meta_set(ROWS_SIGNED, "1").await
}

/// What `hindsight verify` found.
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
pub struct VerifyReport {
    /// Rows checked in `memories`.
    pub memories: u64,
    /// Rows checked in `memories_archive`.
    pub archive: u64,
    /// Good rows still signed with a previous key (`hindsight resign` moves them on).
    pub previous_key: u64,
    /// Rows that failed, each listed for the alert until found good or gone.
    pub failed: Vec<TamperedRow>,
}

/// Check every row of both tables, a page at a time (`progress` after each: table, rows so
/// far). Rows that fail are listed in `tampered`; listed rows found good or gone come off it.
pub async fn verify_all<S: IntegrityStore + ?Sized>(
    store: &S,
    mut progress: impl FnMut(RowTable, u64),
) -> Result<VerifyReport, StoreError> {
    let listed = store.tampered().await?;
    let signer = store.signer().clone();
    let mut report = VerifyReport::default();
    let now = Utc::now();
    for table in [RowTable::Memories, RowTable::Archive] {
        let mut pages = Pages::of(table);
        while let Some(rows) = pages.next(store).await? {
            let mut failed = Vec::new();
            for row in &rows {
                match signer.verify(row) {
                    Ok(crate::signing::Verified::Current) => {}
                    Ok(crate::signing::Verified::Previous) => report.previous_key += 1,
                    Err(tamper) => failed.push(TamperedRow::of(row, table, &tamper, now)),
                }
            }
            store.record_tampered(&failed).await?;
            report.failed.extend(failed);
            progress(table, pages.seen);
        }
        match table {
            RowTable::Memories => report.memories = pages.seen,
            RowTable::Archive => report.archive = pages.seen,
        }
    }
    for table in [RowTable::Memories, RowTable::Archive] {
        let cleared: Vec<MemoryId> = listed
            .iter()
            .filter(|l| l.table == table)
            .filter(|l| {
                !report
                    .failed
                    .iter()
                    .any(|f| f.id == l.id && f.table == table)
            })
            .map(|l| l.id)
            .collect();
        store.clear_tampered(table, &cleared).await?;
    }
    Ok(report)
}

/// What `hindsight resign` did (or, dry, would do).
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
pub struct ResignReport {
    pub dry_run: bool,
    /// Rows signed with the current key now.
    pub signed: u64,
    /// Rows that fail their check and were left as they are (without `--all`).
    pub failing_left: u64,
    /// With `--all`: the rows that failed their check and were accepted as they stand (signed
    /// with the current key), by id; the audit trail records them.
    pub accepted: Vec<MemoryId>,
}

/// Sign again with the current key every row signed with a previous one, and with `all` also
/// every row that fails its check (the operator accepts them as they stand); such rows come
/// off the tampered list.
pub async fn resign_all<S: IntegrityStore + MemoryStore + ?Sized>(
    store: &S,
    all: bool,
    dry_run: bool,
    mut progress: impl FnMut(RowTable, u64),
) -> Result<ResignReport, StoreError> {
    let signer = store.signer().clone();
    let mut report = ResignReport {
        dry_run,
        ..ResignReport::default()
    };
    for table in [RowTable::Memories, RowTable::Archive] {
        let mut pages = Pages::of(table);
        while let Some(rows) = pages.next(store).await? {
            let mut chosen = Vec::new();
            for row in &rows {
                match signer.verify(row) {
                    Ok(crate::signing::Verified::Current) => {}
                    Ok(crate::signing::Verified::Previous) => chosen.push(row.id),
                    Err(_) if all => {
                        chosen.push(row.id);
                        report.accepted.push(row.id);
                    }
                    Err(_) => report.failing_left += 1,
                }
            }
            if dry_run {
                report.signed += chosen.len() as u64;
            } else {
                report.signed += store.resign(table, &chosen).await?;
                store.clear_tampered(table, &chosen).await?;
            }
            progress(table, pages.seen);
        }
    }
    if !dry_run && report.failing_left == 0 {
        // Every row is this key's now: the previous one can go.
        store.meta_set(KEY_ID, signer.key_id()).await?;
    }
    Ok(report)
}
