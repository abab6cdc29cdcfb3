//! `MaintenanceStore` on PostgreSQL. The archive move is one statement
//! (`WITH moved AS (DELETE … RETURNING …) INSERT INTO memories_archive …`) over rows selected
//! `FOR UPDATE SKIP LOCKED`, so replicas (and the job's own workers) archiving at once take
//! different rows. Vectors stay in `memory_vectors` whichever table holds their row, so a move
//! copies only the row's metadata.

use async_trait::async_trait;
use chrono::{DateTime, Utc};

use sqlx::Row;

use super::{bind_memory, ms, row_to_memory, without_embedding};
use crate::domain::{Memory, MemoryId, Status};
use crate::store::maintenance::{
    ARCHIVE_COLUMNS, ArchiveBatch, ArchivedRow, BatchState, ColdRows, MaintenanceStore, RESTORABLE,
    RESTORE_COLUMNS, RestoreBatch, RestoreSelector, archive_select, batch_key, restore_batch,
    restore_select,
};
use crate::store::{PostgresStore, StoreError, corrupt};

const COLD: &str = "status = 'active' AND created_at < $1 AND access_count < $2 \
     AND (last_accessed_at IS NULL OR last_accessed_at < $1)";

#[async_trait]
impl MaintenanceStore for PostgresStore {
    async fn count_expire_due(&self, now: DateTime<Utc>) -> Result<i64, StoreError> {
        Ok(sqlx::query_scalar(
            "SELECT COUNT(*) FROM memories WHERE status = 'active' AND expires_at <= $1",
        )
        .bind(ms(now))
        .fetch_one(self.pool())
        .await?)
    }

    async fn count_cold(&self, cold: &ColdRows) -> Result<i64, StoreError> {
        Ok(sqlx::query_scalar(sqlx::AssertSqlSafe(format!(
            "SELECT COUNT(*) FROM memories WHERE {COLD}"
        )))
        .bind(ms(cold.created_before))
        .bind(cold.max_access_count)
        .fetch_one(self.pool())
        .await?)
    }

    async fn cold_ids(&self, cold: &ColdRows, limit: i64) -> Result<Vec<MemoryId>, StoreError> {
        Ok(sqlx::query_scalar(sqlx::AssertSqlSafe(format!(
            "SELECT id FROM memories WHERE {COLD} ORDER BY created_at, id LIMIT $3"
        )))
        .bind(ms(cold.created_before))
        .bind(cold.max_access_count)
        .bind(limit)
        .fetch_all(self.pool())
        .await?)
    }

    async fn archive_to_table(
        &self,
        cold: &ColdRows,
        limit: i64,
        at: DateTime<Utc>,
    ) -> Result<Vec<MemoryId>, StoreError> {
        // One statement, autocommitted: the oldest cold rows are locked, deleted by their tuple
        // address (no second index lookup per row) and inserted into the archive.
        Ok(sqlx::query_scalar(sqlx::AssertSqlSafe(format!(
            "WITH picked AS (SELECT ctid FROM memories WHERE {COLD} \
               ORDER BY created_at, id LIMIT $3 FOR UPDATE SKIP LOCKED), {} RETURNING id",
            move_rows("ctid = ANY(ARRAY(SELECT ctid FROM picked))", "$4")
        )))
        .bind(ms(cold.created_before))
        .bind(cold.max_access_count)
        .bind(limit)
        .bind(ms(at))
        .fetch_all(self.pool())
        .await?)
    }

    async fn restore_from_table(
        &self,
        selector: &RestoreSelector,
        after: Option<MemoryId>,
        limit: i64,
        at: DateTime<Utc>,
    ) -> Result<RestoreBatch, StoreError> {
        let mut tx = self.pool().begin().await?;
        let select = format!(
            "SELECT id, NOT ({RESTORABLE}) FROM memories_archive \
             WHERE ($2::uuid IS NULL OR id > $2)"
        );
        let query = match selector {
            RestoreSelector::Ids(ids) => sqlx::query_as(sqlx::AssertSqlSafe(format!(
                "{select} AND id = ANY($1) ORDER BY id LIMIT $3 FOR UPDATE"
            )))
            .bind(ids.clone()),
            RestoreSelector::Namespace(namespace) => sqlx::query_as(sqlx::AssertSqlSafe(format!(
                "{select} AND namespace = $1 ORDER BY id LIMIT $3 FOR UPDATE"
            )))
            .bind(namespace.clone()),
        };
        let selected: Vec<(MemoryId, bool)> =
            query.bind(after).bind(limit).fetch_all(&mut *tx).await?;
        let restorable: Vec<MemoryId> = selected
            .iter()
            .filter(|(_, forgotten)| !forgotten)
            .map(|(id, _)| *id)
            .collect();
        // ON CONFLICT DO NOTHING: a row whose fact key an active memory holds (the partial
        // unique index) stays in the archive rather than superseding a newer fact. The vectors
        // never left `memory_vectors`.
        let restored: Vec<MemoryId> = sqlx::query_scalar(sqlx::AssertSqlSafe(format!(
            "INSERT INTO memories ({}) \
             SELECT {} FROM memories_archive WHERE id = ANY($1) ORDER BY id \
             ON CONFLICT DO NOTHING RETURNING id",
            without_embedding(RESTORE_COLUMNS),
            without_embedding(&restore_select("$2", "TRUE"))
        )))
        .bind(&restorable)
        .bind(ms(at))
        .fetch_all(&mut *tx)
        .await?;
        sqlx::query("DELETE FROM memories_archive WHERE id = ANY($1)")
            .bind(&restored)
            .execute(&mut *tx)
            .await?;
        tx.commit().await?;
        Ok(restore_batch(selected, restored, limit))
    }

    async fn count_archived(&self) -> Result<i64, StoreError> {
        Ok(sqlx::query_scalar("SELECT COUNT(*) FROM memories_archive")
            .fetch_one(self.pool())
            .await?)
    }

    async fn stage_batch(
        &self,
        cold: &ColdRows,
        limit: i64,
        at: DateTime<Utc>,
    ) -> Result<Option<ArchiveBatch>, StoreError> {
        let mut tx = self.pool().begin().await?;
        let namespace: Option<String> = sqlx::query_scalar(sqlx::AssertSqlSafe(format!(
            "SELECT namespace FROM memories WHERE {COLD} ORDER BY created_at, id LIMIT 1 \
             FOR UPDATE SKIP LOCKED"
        )))
        .bind(ms(cold.created_before))
        .bind(cold.max_access_count)
        .fetch_optional(&mut *tx)
        .await?;
        let Some(namespace) = namespace else {
            tx.commit().await?;
            return Ok(None);
        };
        let ids = oldest_cold(&mut tx, cold, &namespace, limit).await?;
        move_to_archive(&mut tx, &ids, at).await?;
        let key = batch_key(&namespace, &ids, at);
        sqlx::query(
            "INSERT INTO archive_batches (key, namespace, ids, state, row_count, created_at) \
             VALUES ($1, $2, $3, 'staged', $4, $5)",
        )
        .bind(&key)
        .bind(&namespace)
        .bind(serde_json::json!(ids))
        .bind(ids.len() as i64)
        .bind(ms(at))
        .execute(&mut *tx)
        .await?;
        tx.commit().await?;
        Ok(Some(ArchiveBatch {
            key,
            namespace,
            ids,
            state: BatchState::Staged,
        }))
    }

    async fn batches(
        &self,
        state: BatchState,
        selector: Option<&RestoreSelector>,
    ) -> Result<Vec<ArchiveBatch>, StoreError> {
        let (filter, value) = match selector {
            None => ("TRUE", serde_json::Value::Null),
            Some(RestoreSelector::Namespace(namespace)) => {
                ("namespace = ($2 #>> '{}')", serde_json::json!(namespace))
            }
            Some(RestoreSelector::Ids(ids)) => (
                "EXISTS (SELECT 1 FROM jsonb_array_elements_text($2) AS wanted(id) \
                 WHERE ids ? wanted.id)",
                serde_json::json!(ids),
            ),
        };
        let rows: Vec<BatchRow> = sqlx::query_as(sqlx::AssertSqlSafe(format!(
            "SELECT key, namespace, ids, state FROM archive_batches \
             WHERE state = $1 AND {filter} ORDER BY created_at, key"
        )))
        .bind(state.as_str())
        .bind(value)
        .fetch_all(self.pool())
        .await?;
        rows.into_iter().map(decode_batch).collect()
    }

    async fn archived_rows(&self, ids: &[MemoryId]) -> Result<Vec<ArchivedRow>, StoreError> {
        let rows = sqlx::query(sqlx::AssertSqlSafe(format!(
            "SELECT {ARCHIVE_COLUMNS} FROM memories_archive JOIN memory_vectors USING (id) \
             WHERE id = ANY($1) ORDER BY id"
        )))
        .bind(ids)
        .fetch_all(self.pool())
        .await?;
        rows.iter()
            .map(|row| {
                let memory = row_to_memory(row)?;
                Ok(ArchivedRow {
                    embedding: memory.embedding.clone(),
                    memory,
                    lexical: row.try_get("lexical")?,
                    archived_at: row.try_get("archived_at")?,
                })
            })
            .collect()
    }

    async fn finish_export(&self, key: &str, at: DateTime<Utc>) -> Result<u64, StoreError> {
        let mut tx = self.pool().begin().await?;
        // The rows and their vectors: the object holds both now; what it holds is listed.
        let removed: i64 = sqlx::query_scalar(
            "WITH gone AS (DELETE FROM memories_archive WHERE id::text IN \
               (SELECT jsonb_array_elements_text(ids) FROM archive_batches WHERE key = $1) \
               RETURNING id, namespace, memory_type, entity, created_at), \
             vectors AS (DELETE FROM memory_vectors WHERE id IN (SELECT id FROM gone)), \
             listed AS (INSERT INTO archive_exported \
               (batch_key, id, namespace, memory_type, entity, created_at) \
               SELECT $1, id, namespace, memory_type, entity, created_at FROM gone \
               ON CONFLICT DO NOTHING) \
             SELECT COUNT(*) FROM gone",
        )
        .bind(key)
        .fetch_one(&mut *tx)
        .await?;
        sqlx::query(
            "UPDATE archive_batches SET state = 'exported', exported_at = $2, row_count = $3 \
             WHERE key = $1",
        )
        .bind(key)
        .bind(ms(at))
        .bind(removed)
        .execute(&mut *tx)
        .await?;
        tx.commit().await?;
        Ok(removed as u64)
    }

    async fn unpack(&self, rows: &[ArchivedRow]) -> Result<u64, StoreError> {
        let mut tx = self.pool().begin().await?;
        let mut added = 0;
        for row in rows {
            // Whatever an object says, what goes back into the table is archived.
            let memory = Memory {
                status: Status::Archived,
                embedding: row.embedding.clone(),
                ..row.memory.clone()
            };
            // The row and its vector, unless the row is back in either table already.
            let unpacked: i64 = bind_memory(
                sqlx::query(sqlx::AssertSqlSafe(format!(
                    "WITH row AS (INSERT INTO memories_archive ({}) \
                       SELECT $1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, \
                       $12, $13, $14, $15, $16, $17, $18, $19, $21, $22, $23, $24 \
                       WHERE NOT EXISTS (SELECT 1 FROM memories WHERE id = $1) \
                       AND NOT EXISTS (SELECT 1 FROM forgotten WHERE id = $1) \
                       ON CONFLICT (id) DO NOTHING RETURNING id), \
                     vector AS (INSERT INTO memory_vectors (id, embedding) \
                       SELECT id, $20 FROM row \
                       ON CONFLICT (id) DO UPDATE SET embedding = excluded.embedding) \
                     SELECT COUNT(*) FROM row",
                    without_embedding(ARCHIVE_COLUMNS)
                ))),
                &memory,
            )
            .bind(&row.lexical)
            .bind(ms(row.archived_at))
            .fetch_one(&mut *tx)
            .await?
            .try_get(0)?;
            added += unpacked as u64;
        }
        tx.commit().await?;
        Ok(added)
    }

    async fn active_rank_inputs(
        &self,
        after: Option<MemoryId>,
        limit: i64,
    ) -> Result<Vec<(MemoryId, f64, DateTime<Utc>)>, StoreError> {
        Ok(sqlx::query_as(
            "SELECT id, importance, greatest(created_at, last_accessed_at) \
             FROM memories WHERE status = 'active' AND ($1::uuid IS NULL OR id > $1) \
             ORDER BY id LIMIT $2",
        )
        .bind(after)
        .bind(limit)
        .fetch_all(self.pool())
        .await?)
    }

    async fn archive_ids_to_table(
        &self,
        ids: &[MemoryId],
        at: DateTime<Utc>,
    ) -> Result<Vec<MemoryId>, StoreError> {
        let mut tx = self.pool().begin().await?;
        let active: Vec<MemoryId> = sqlx::query_scalar(
            "SELECT id FROM memories WHERE status = 'active' AND id = ANY($1) \
             FOR UPDATE SKIP LOCKED",
        )
        .bind(ids)
        .fetch_all(&mut *tx)
        .await?;
        move_to_archive(&mut tx, &active, at).await?;
        tx.commit().await?;
        Ok(active)
    }

    async fn forgotten_among(&self, ids: &[MemoryId]) -> Result<Vec<MemoryId>, StoreError> {
        Ok(
            sqlx::query_scalar("SELECT id FROM forgotten WHERE id = ANY($1) ORDER BY id")
                .bind(ids)
                .fetch_all(self.pool())
                .await?,
        )
    }

    async fn batches_to_purge(&self) -> Result<Vec<(ArchiveBatch, Vec<MemoryId>)>, StoreError> {
        let rows: Vec<(String, String, serde_json::Value, String, Vec<MemoryId>)> = sqlx::query_as(
            "SELECT b.key, b.namespace, b.ids, b.state, w.ids FROM \
                   (SELECT e.batch_key, array_agg(e.id ORDER BY e.id) AS ids \
                    FROM archive_exported AS e \
                    JOIN forgotten AS f ON f.id = e.id AND f.mode = 'hard' \
                    GROUP BY e.batch_key) AS w \
                 JOIN archive_batches AS b ON b.key = w.batch_key \
                 WHERE b.state IN ('exported', 'restored') ORDER BY b.created_at, b.key",
        )
        .fetch_all(self.pool())
        .await?;
        rows.into_iter()
            .map(|(key, namespace, ids, state, forgotten)| {
                Ok((decode_batch((key, namespace, ids, state))?, forgotten))
            })
            .collect()
    }

    async fn purged_from_batch(
        &self,
        key: &str,
        removed: &[MemoryId],
        object_gone: bool,
    ) -> Result<(), StoreError> {
        let mut tx = self.pool().begin().await?;
        if object_gone {
            for sql in [
                "DELETE FROM archive_exported WHERE batch_key = $1",
                "DELETE FROM archive_batches WHERE key = $1",
            ] {
                sqlx::query(sql).bind(key).execute(&mut *tx).await?;
            }
        } else {
            sqlx::query("DELETE FROM archive_exported WHERE batch_key = $1 AND id = ANY($2)")
                .bind(key)
                .bind(removed)
                .execute(&mut *tx)
                .await?;
            sqlx::query(
                "UPDATE archive_batches SET \
                 ids = COALESCE((SELECT jsonb_agg(j.id) FROM jsonb_array_elements_text(ids) AS j(id) \
                        WHERE NOT j.id::uuid = ANY($2)), '[]'::jsonb), \
                 row_count = (SELECT COUNT(*) FROM archive_exported WHERE batch_key = $1) \
                 WHERE key = $1",
            )
            .bind(key)
            .bind(removed)
            .execute(&mut *tx)
            .await?;
        }
        tx.commit().await?;
        Ok(())
    }

    async fn set_batch_state(&self, key: &str, state: BatchState) -> Result<(), StoreError> {
        sqlx::query("UPDATE archive_batches SET state = $2 WHERE key = $1")
            .bind(key)
            .bind(state.as_str())
            .execute(self.pool())
            .await?;
        Ok(())
    }
}

/// `archive_batches`' (key, namespace, ids, state).
type BatchRow = (String, String, serde_json::Value, String);

fn decode_batch((key, namespace, ids, state): BatchRow) -> Result<ArchiveBatch, StoreError> {
    let bad = |reason: String| corrupt(&format!("archive_batches/{key}"), reason);
    Ok(ArchiveBatch {
        state: BatchState::parse(&state).ok_or_else(|| bad(format!("state {state:?}")))?,
        ids: serde_json::from_value(ids).map_err(|e| bad(e.to_string()))?,
        key,
        namespace,
    })
}

/// The ids of the oldest `limit` matching rows of `namespace`, locked; rows another replica is
/// archiving are skipped.
async fn oldest_cold(
    tx: &mut sqlx::PgConnection,
    cold: &ColdRows,
    namespace: &str,
    limit: i64,
) -> Result<Vec<MemoryId>, StoreError> {
    Ok(sqlx::query_scalar(sqlx::AssertSqlSafe(format!(
        "SELECT id FROM memories WHERE {COLD} AND namespace = $4 \
         ORDER BY created_at, id LIMIT $3 FOR UPDATE SKIP LOCKED"
    )))
    .bind(ms(cold.created_before))
    .bind(cold.max_access_count)
    .bind(limit)
    .bind(namespace)
    .fetch_all(&mut *tx)
    .await?)
}

/// Move rows to `memories_archive` in one statement (status `archived`, `archived_at = at`).
async fn move_to_archive(
    tx: &mut sqlx::PgConnection,
    ids: &[MemoryId],
    at: DateTime<Utc>,
) -> Result<(), StoreError> {
    sqlx::query(sqlx::AssertSqlSafe(format!(
        "WITH {}",
        move_rows("id = ANY($1)", "$2")
    )))
    .bind(ids)
    .bind(ms(at))
    .execute(&mut *tx)
    .await?;
    Ok(())
}

/// `moved AS (DELETE … WHERE {which} RETURNING …) INSERT INTO memories_archive … FROM moved`:
/// the rows `which` picks leave `memories` for the archive (status `archived`, `archived_at =
/// {at}`), their vectors staying in `memory_vectors`. The tail of a `WITH`.
fn move_rows(which: &str, at: &str) -> String {
    let archived = without_embedding(ARCHIVE_COLUMNS);
    format!(
        "moved AS (DELETE FROM memories WHERE {which} RETURNING {}) \
         INSERT INTO memories_archive ({archived}) SELECT {} FROM moved",
        archived.replace(", archived_at", ""),
        without_embedding(&archive_select(at))
    )
}
