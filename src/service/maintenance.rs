//! Keeping the derived index in step with the store: pending-row repair, full rebuild from stored
//! vectors, and re-embedding everything with a new embedder (`hindsight reindex`).

use std::sync::Arc;

use chrono::{DateTime, Utc};

use super::{MemoryService, ServiceError, index_point};
use crate::domain::{Memory, MemoryId};
use crate::store::AccessHit;

/// Meta key recording which embedder produced the stored vectors.
pub const EMBEDDER_META_KEY: &str = "embedder_id";
/// Meta key: why `embedder = "auto"` fell back to `builtin` for this data set (shown by
/// `stats`; cleared by a reindex).
pub const EMBEDDER_NOTE_META_KEY: &str = "embedder_note";

const BATCH: i64 = 500;
/// A bulk load's feed confirms its rows (one flush, one store update) every this many: the
/// pending-row repair's 500 cost a flush of the engine's files each.
const BULK_FLUSH_EVERY: usize = 20_000;

/// Progress callback payload for long rebuilds.
#[derive(Debug, Clone, Copy)]
pub struct ReindexProgress {
    /// `re-embedding` or `indexing`.
    pub phase: &'static str,
    pub done: usize,
    pub total: usize,
}

impl MemoryService {
    /// Push rows to the index (upsert if indexable, delete otherwise) and clear their pending
    /// flag. Failures are logged, not returned: the row is committed and stays pending, so the
    /// next repair pass retries.
    pub(crate) async fn sync_index(&self, rows: &[Memory]) {
        if let Err(e) = self.try_sync_index(rows, false).await {
            tracing::warn!(error = %e, rows = rows.len(), "index update failed; rows stay pending for repair");
        }
    }

    /// Apply rows to the index (`bulk`: as part of a bulk load, whose end optimises). Their
    /// pending flag is cleared by the next `flush`, once the engine has made the change durable.
    async fn try_sync_index(&self, rows: &[Memory], bulk: bool) -> Result<(), ServiceError> {
        let (upserts, deletes): (Vec<&Memory>, Vec<&Memory>) =
            rows.iter().partition(|m| m.status.is_indexed());
        if !upserts.is_empty() {
            let points = upserts.iter().map(|m| index_point(m)).collect();
            if bulk {
                self.index.upsert_bulk(points).await?;
            } else {
                self.index.upsert(points).await?;
            }
        }
        if !deletes.is_empty() {
            self.index
                .delete(deletes.iter().map(|m| m.id).collect())
                .await?;
        }
        self.note_unflushed(rows.iter().map(|m| (m.id, m.updated_at)));
        Ok(())
    }

    pub(crate) fn note_unflushed(&self, rows: impl IntoIterator<Item = (MemoryId, DateTime<Utc>)>) {
        self.unflushed
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .extend(rows);
    }

    pub(crate) fn note_unflushed_deletes(&self, ids: impl IntoIterator<Item = MemoryId>) {
        self.unflushed_deletes
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .extend(ids);
    }

    pub(crate) fn note_access(&self, ids: impl IntoIterator<Item = MemoryId>, at: DateTime<Utc>) {
        let mut accesses = self.accesses.lock().unwrap_or_else(|e| e.into_inner());
        for id in ids {
            let entry = accesses.entry(id).or_insert((0, at));
            entry.0 += 1;
            entry.1 = entry.1.max(at);
        }
    }

    /// Put accesses that could not be written back into the buffer, added to any noted since.
    fn restore_accesses(&self, unwritten: Vec<AccessHit>) {
        let mut accesses = self.accesses.lock().unwrap_or_else(|e| e.into_inner());
        for hit in unwritten {
            let entry = accesses.entry(hit.id).or_insert((0, hit.at));
            entry.0 += hit.count;
            entry.1 = entry.1.max(hit.at);
        }
    }

    /// Write buffered state out: make index changes durable and clear the pending flag of the
    /// rows they covered, and record search accesses. Called about once a second by the daemon
    /// and before a one-shot command exits. Returns how many rows' index state was confirmed.
    pub async fn flush(&self) -> Result<usize, ServiceError> {
        let accesses: Vec<AccessHit> =
            std::mem::take(&mut *self.accesses.lock().unwrap_or_else(|e| e.into_inner()))
                .into_iter()
                .map(|(id, (count, at))| AccessHit { id, count, at })
                .collect();
        if let Err(e) = self.store.record_access(&accesses).await {
            // Kept for the next flush: the archive job ranks cold rows by these counts.
            self.restore_accesses(accesses);
            return Err(e.into());
        }
        let batch = std::mem::take(&mut *self.unflushed.lock().unwrap_or_else(|e| e.into_inner()));
        let deletes = std::mem::take(
            &mut *self
                .unflushed_deletes
                .lock()
                .unwrap_or_else(|e| e.into_inner()),
        );
        if batch.is_empty() && deletes.is_empty() {
            return Ok(0);
        }
        let confirmed = async {
            self.index.flush().await?;
            self.store.mark_indexed(&batch).await?;
            self.store.mark_deletes_indexed(&deletes).await?;
            Ok::<_, ServiceError>(())
        }
        .await;
        if let Err(e) = confirmed {
            // Still pending in the store either way; kept here so the next flush confirms them.
            self.note_unflushed(batch);
            self.note_unflushed_deletes(deletes);
            return Err(e);
        }
        Ok(batch.len() + deletes.len())
    }

    /// Bring the index up to date with the store: finish every change a crash interrupted, and
    /// rebuild from the stored vectors if the index lost points (deleted or corrupted files).
    /// Returns how many rows were repaired.
    pub async fn repair_index(&self) -> Result<usize, ServiceError> {
        let mut repaired = self.index_pending_rows().await?;
        // Hard-forgotten memories whose point may still be in the index.
        loop {
            let deletes = self.store.index_deletes_pending(BATCH).await?;
            if deletes.is_empty() {
                break;
            }
            let n = deletes.len();
            self.index.delete(deletes.clone()).await?;
            self.note_unflushed_deletes(deletes);
            self.flush().await?;
            repaired += n;
            if (n as i64) < BATCH {
                break;
            }
        }
        let expected = self.indexable_count().await?;
        let actual = self.index.count().await?;
        if actual < expected {
            repaired += self.restore_missing_points(expected, actual).await?;
        }
        if repaired > 0 {
            tracing::info!(repaired, "index repaired from the store");
        }
        Ok(repaired)
    }

    /// A bulk load's rows, just committed (pending), applied to the index in the background
    /// while the load writes its next batch: the store's writes and the index's take a core
    /// each. One batch at a time: this waits for the previous one first, so a load holds at
    /// most two batches. Every `BULK_FLUSH_EVERY` rows a flush confirms them. A failure is
    /// logged, not returned: the rows stay pending, and `finish_bulk_load` (or the next start's
    /// repair) takes them in.
    pub(crate) async fn feed_index(self: &Arc<Self>, rows: Vec<Memory>) {
        let mut feed = self.bulk_feed.lock().await;
        if let Some(previous) = feed.take() {
            let _ = previous.await;
        }
        let service = self.clone();
        *feed = Some(tokio::spawn(async move {
            let fed = async {
                service.try_sync_index(&rows, true).await?;
                if service.unflushed_rows() >= BULK_FLUSH_EVERY {
                    service.flush().await?;
                }
                Ok::<_, ServiceError>(())
            };
            if let Err(e) = fed.await {
                tracing::warn!(error = %e, rows = rows.len(), "bulk index feed failed; rows stay pending");
            }
        }));
    }

    /// The end of a bulk load: its last feed done and confirmed, every row still pending (a
    /// failed feed, an earlier load stopped half-way) taken in, the index optimised once.
    pub(crate) async fn finish_bulk_load(&self) -> Result<usize, ServiceError> {
        if let Some(previous) = self.bulk_feed.lock().await.take() {
            let _ = previous.await;
        }
        self.flush().await?;
        let done = self.apply_pending_rows().await?;
        self.index.optimize().await?;
        Ok(done)
    }

    fn unflushed_rows(&self) -> usize {
        self.unflushed
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .len()
    }

    /// Put every row marked pending into the index (or take it out), batch by batch, and
    /// optimise the index once at the end: the end of a crash's repair.
    pub async fn index_pending_rows(&self) -> Result<usize, ServiceError> {
        let done = self.apply_pending_rows().await?;
        if done > 0 {
            self.index.optimize().await?;
        }
        Ok(done)
    }

    /// Every row marked pending applied to the index, batch by batch, without optimising.
    async fn apply_pending_rows(&self) -> Result<usize, ServiceError> {
        let mut done = 0;
        loop {
            let pending = self.store.index_pending(BATCH).await?;
            if pending.is_empty() {
                break;
            }
            let n = pending.len();
            self.try_sync_index(&pending, true).await?;
            self.flush().await?;
            done += n;
            if (n as i64) < BATCH {
                break;
            }
        }
        Ok(done)
    }

    /// The index holds fewer points than the rows say. An embedded index lost files: rebuild it.
    /// A shared (server) index is also written by other replicas, whose in-flight writes look
    /// the same for a moment, so it is only refilled when empty (a lost collection) — by one
    /// replica at a time, without dropping anything — and otherwise reported.
    async fn restore_missing_points(
        &self,
        expected: usize,
        actual: usize,
    ) -> Result<usize, ServiceError> {
        if !self.index.is_shared() {
            tracing::warn!(
                expected,
                actual,
                "index is missing points; rebuilding from the store"
            );
            self.rebuild_index(|_| {}).await?;
            return Ok(expected - actual);
        }
        if actual > 0 {
            tracing::warn!(
                expected,
                actual,
                "shared index holds fewer points than the rows (other replicas' writes in flight, \
                 or lost points); run `hindsight reindex` if this persists"
            );
            return Ok(0);
        }
        let refill = self.store.lock("index-refill").await?;
        let result = if self.index.count().await? > 0 {
            Ok(0) // another replica refilled it while we waited
        } else {
            tracing::warn!(
                expected,
                "shared index is empty; refilling it from the store"
            );
            self.fill_index(|_| {}).await
        };
        refill.release().await;
        result
    }

    async fn indexable_count(&self) -> Result<usize, ServiceError> {
        Ok(self
            .store
            .counts()
            .await?
            .iter()
            .filter(|c| c.status.is_indexed())
            .map(|c| c.count as usize)
            .sum())
    }

    /// Drop the index and load it again from the stored vectors (no re-embedding).
    pub async fn rebuild_index(
        &self,
        progress: impl FnMut(ReindexProgress),
    ) -> Result<usize, ServiceError> {
        self.index.reset(self.embedder.dimension()).await?;
        self.fill_index(progress).await
    }

    /// Upsert every indexable row's stored vector, page by page (idempotent).
    async fn fill_index(
        &self,
        mut progress: impl FnMut(ReindexProgress),
    ) -> Result<usize, ServiceError> {
        let total = self.indexable_count().await?;
        let mut done = 0;
        let mut after = None;
        loop {
            let rows = self.store.indexable_after(after, BATCH).await?;
            let Some(last) = rows.last() else { break };
            after = Some(last.id);
            self.index
                .upsert_bulk(rows.iter().map(super::index_point).collect())
                .await?;
            done += rows.len();
            progress(ReindexProgress {
                phase: "indexing",
                done,
                total,
            });
        }
        self.index.optimize().await?;
        Ok(done)
    }

    /// Re-embed every indexable row with the configured embedder, rebuild the index, and record
    /// the embedder as the data's. The fix for an embedder mismatch.
    pub async fn reindex(
        &mut self,
        mut progress: impl FnMut(ReindexProgress),
    ) -> Result<usize, ServiceError> {
        let total = self.indexable_count().await?;
        let model = self.embedder.id().to_owned();
        let mut done = 0;
        let mut after = None;
        loop {
            let rows = self.store.indexable_after(after, BATCH).await?;
            let Some(last) = rows.last() else { break };
            after = Some(last.id);
            let texts: Vec<String> = rows.iter().map(|m| m.content.clone()).collect();
            let vectors = self.embedder.embed(&texts).await?;
            for (row, vector) in rows.iter().zip(&vectors) {
                self.store.set_embedding(row.id, &model, vector).await?;
            }
            done += rows.len();
            progress(ReindexProgress {
                phase: "re-embedding",
                done,
                total,
            });
        }
        self.store.meta_set(EMBEDDER_META_KEY, &model).await?;
        self.mismatch = None;
        self.rebuild_index(progress).await?;
        Ok(done)
    }
}
