//! `TransferStore` on PostgreSQL.

use std::sync::atomic::{AtomicU64, Ordering};

use async_trait::async_trait;
use chrono::{DateTime, Utc};
use sqlx::Row;

use super::{ROWS, bind_memory, insert_rows, ms, row_to_memory, without_embedding};
use crate::domain::{Memory, MemoryId, Status};
use crate::lexical;
use crate::store::maintenance::ARCHIVE_COLUMNS;
use crate::store::transfer::{ExportFilter, ImportedLine, StoredRow, TransferStore, fresh_rows};
use crate::store::{COLUMNS, PostgresStore, StoreError};

/// The archive's rows with their vectors (which live in `memory_vectors` either way).
const ARCHIVE_ROWS: &str = "memories_archive JOIN memory_vectors USING (id)";

/// The planner's statistics under a bulk import. Each connection keeps a generic plan for a
/// prepared statement once it has run it a few times, planned from the statistics of that
/// moment: planned while `memories` was nearly empty, an import's id lookups (`id = ANY($1)`
/// against 2,000 ids a batch) scanned the whole table, and the import slowed with the square
/// of its rows; autovacuum's ANALYZE comes a minute or more later. So an import analyses the
/// tables it fills itself, after its first `FIRST_ANALYZE` rows and then each time its rows
/// double (about 8 times over 1M rows; an ANALYZE samples at most 30,000 rows). `bench import
/// --backend postgres` at 100k LoCoMo turns, 2 cores: 41.1 s → 21.1–22.4 s.
#[derive(Debug, Default)]
pub(super) struct Statistics {
    /// Rows imported through this handle.
    imported: AtomicU64,
    /// The count at which the next ANALYZE is due (below `FIRST_ANALYZE`: at that).
    due: AtomicU64,
}

const FIRST_ANALYZE: u64 = 5_000;

impl Statistics {
    /// Count `added` rows in; whether the statistics are due now (then the next is set).
    fn due_after(&self, added: u64) -> bool {
        let imported = self.imported.fetch_add(added, Ordering::Relaxed) + added;
        let current = self.due.load(Ordering::Relaxed);
        imported >= current.max(FIRST_ANALYZE)
            && self
                .due
                .compare_exchange(current, imported * 2, Ordering::Relaxed, Ordering::Relaxed)
                .is_ok()
    }
}

#[async_trait]
impl TransferStore for PostgresStore {
    async fn export_page(
        &self,
        filter: &ExportFilter,
        archived: bool,
        after: Option<MemoryId>,
        limit: i64,
    ) -> Result<Vec<StoredRow>, StoreError> {
        let (rows, archived_at) = if archived {
            (ARCHIVE_ROWS, "archived_at")
        } else {
            (ROWS, "NULL::timestamptz AS archived_at")
        };
        let rows = sqlx::query(sqlx::AssertSqlSafe(format!(
            "SELECT {COLUMNS}, {archived_at} FROM {rows} \
             WHERE (cardinality($1::text[]) = 0 OR namespace = ANY($1)) \
               AND (cardinality($2::text[]) = 0 OR status = ANY($2)) \
               AND ($3::timestamptz IS NULL OR updated_at >= $3) \
               AND ($4::uuid IS NULL OR id > $4) \
             ORDER BY id LIMIT $5"
        )))
        .bind(&filter.namespaces)
        .bind(
            filter
                .statuses
                .iter()
                .map(|s| s.as_str())
                .collect::<Vec<_>>(),
        )
        .bind(filter.since.map(ms))
        .bind(after)
        .bind(limit)
        .fetch_all(self.pool())
        .await?;
        rows.iter()
            .map(|row| {
                Ok(StoredRow {
                    memory: row_to_memory(row)?,
                    archived_at: row.try_get("archived_at")?,
                })
            })
            .collect()
    }

    async fn held(&self, ids: &[MemoryId]) -> Result<Vec<Memory>, StoreError> {
        if ids.is_empty() {
            return Ok(vec![]);
        }
        let rows = sqlx::query(sqlx::AssertSqlSafe(format!(
            "SELECT {COLUMNS} FROM {ROWS} WHERE id = ANY($1) \
             UNION ALL SELECT {COLUMNS} FROM {ARCHIVE_ROWS} WHERE id = ANY($1)"
        )))
        .bind(ids)
        .fetch_all(self.pool())
        .await?;
        rows.iter().map(row_to_memory).collect()
    }

    async fn import_rows(&self, rows: &[StoredRow]) -> Result<Vec<MemoryId>, StoreError> {
        if rows.is_empty() {
            return Ok(vec![]);
        }
        let ids: Vec<MemoryId> = rows.iter().map(|r| r.memory.id).collect();
        let mut tx = self.pool().begin().await?;
        let taken: Vec<MemoryId> = sqlx::query_scalar(
            "SELECT id FROM memories WHERE id = ANY($1) \
             UNION SELECT id FROM memories_archive WHERE id = ANY($1) \
             UNION SELECT id FROM forgotten WHERE id = ANY($1)",
        )
        .bind(&ids)
        .fetch_all(&mut *tx)
        .await?;
        let (fresh, hot) = fresh_rows(rows, taken.into_iter().collect());
        insert_rows(&mut tx, &self.signer, &hot).await?;
        for row in &fresh {
            if let Some(at) = row.archived_at {
                let memory = self.signer.signed(row.memory.clone());
                // The row and its vector in one statement, as every insert here.
                bind_memory(
                    sqlx::query(sqlx::AssertSqlSafe(format!(
                        "WITH vector AS (INSERT INTO memory_vectors (id, embedding) \
                           VALUES ($1, $20)) \
                         INSERT INTO memories_archive ({}) VALUES ($1, $2, $3, $4, $5, $6, \
                         $7, $8, $9, $10, $11, $12, $13, $14, $15, $16, $17, $18, $19, $21, \
                         $22, $23, $24)",
                        without_embedding(ARCHIVE_COLUMNS)
                    ))),
                    &memory,
                )
                .bind(lexical::document(&memory.content))
                .bind(ms(at))
                .execute(&mut *tx)
                .await?;
            }
            if row.memory.status == Status::Forgotten {
                // Forgotten here as there: its tombstone keeps any copy from coming back.
                sqlx::query(
                    "INSERT INTO forgotten (id, mode, forgotten_at) VALUES ($1, 'soft', $2) \
                     ON CONFLICT (id) DO NOTHING",
                )
                .bind(row.memory.id)
                .bind(ms(row.memory.updated_at))
                .execute(&mut *tx)
                .await?;
            }
        }
        let added: Vec<MemoryId> = fresh.iter().map(|r| r.memory.id).collect();
        tx.commit().await?;
        if self.statistics.due_after(added.len() as u64)
            && let Err(e) = sqlx::query("ANALYZE memories, memory_vectors")
                .execute(self.pool())
                .await
        {
            // The rows are committed: a slower plan is no reason to report them as not.
            tracing::warn!(error = %e, "could not renew the planner's statistics during an import");
        }
        Ok(added)
    }

    /// Keeps the exact-repeat key (`md5(content)`, migration 0016) up: PostgreSQL writes a
    /// page to its WAL once per checkpoint, not once per commit, so kept up it cost ~12 µs a
    /// row (300k rows of 500-row transactions, 6.1 → 9.7 s); and a dropped key would have the
    /// other replicas' write paths compare every active row of a scope until the load's end.
    async fn begin_bulk_load(&self, _load_rows: u64) -> Result<bool, StoreError> {
        Ok(false)
    }

    async fn finish_bulk_load(&self) -> Result<(), StoreError> {
        Ok(())
    }

    async fn imported(&self, ids: &[MemoryId]) -> Result<Vec<MemoryId>, StoreError> {
        Ok(
            sqlx::query_scalar("SELECT line_id FROM imports WHERE line_id = ANY($1)")
                .bind(ids)
                .fetch_all(self.pool())
                .await?,
        )
    }

    async fn record_imported(
        &self,
        lines: &[ImportedLine],
        at: DateTime<Utc>,
    ) -> Result<(), StoreError> {
        let line_ids: Vec<MemoryId> = lines.iter().map(|l| l.line_id).collect();
        let memory_ids: Vec<Option<MemoryId>> = lines.iter().map(|l| l.memory_id).collect();
        let outcomes: Vec<&str> = lines.iter().map(|l| l.outcome.as_str()).collect();
        sqlx::query(
            "INSERT INTO imports (line_id, memory_id, outcome, imported_at) \
             SELECT l, m, o, $4 FROM UNNEST($1::uuid[], $2::uuid[], $3::text[]) AS t(l, m, o) \
             ON CONFLICT (line_id) DO NOTHING",
        )
        .bind(&line_ids)
        .bind(&memory_ids)
        .bind(&outcomes)
        .bind(ms(at))
        .execute(self.pool())
        .await?;
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn statistics_are_due_after_the_first_rows_then_each_doubling() {
        let statistics = Statistics::default();
        let due: Vec<u64> = (1..=100)
            .filter(|_| statistics.due_after(1_000))
            .map(|batch| batch * 1_000)
            .collect();
        assert_eq!(due, [5_000, 10_000, 20_000, 40_000, 80_000]);
    }
}
