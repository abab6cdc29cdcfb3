//! `MaintenanceStore` on SQLite. Moves run in `BEGIN IMMEDIATE` transactions: one writer at a
//! time, and the rows selected are the rows moved.

use async_trait::async_trait;
use chrono::{DateTime, Utc};

use sqlx::Row;

use super::{bind_memory, from_ms, ids_json, ms, parse_ids, row_to_memory};
use crate::domain::{Memory, MemoryId, Status};
use crate::store::maintenance::{
    ARCHIVE_COLUMNS, ArchiveBatch, ArchivedRow, BatchState, ColdRows, MaintenanceStore, RESTORABLE,
    RESTORE_COLUMNS, RestoreBatch, RestoreSelector, archive_select, batch_key, restore_batch,
    restore_select,
};
use crate::store::{SqliteStore, StoreError, corrupt};

const COLD: &str = "status = 'active' AND created_at < ?1 AND access_count < ?2 \
     AND (last_accessed_at IS NULL OR last_accessed_at < ?1)";

#[async_trait]
impl MaintenanceStore for SqliteStore {
    async fn count_expire_due(&self, now: DateTime<Utc>) -> Result<i64, StoreError> {
        Ok(sqlx::query_scalar(
            "SELECT COUNT(*) FROM memories WHERE status = 'active' AND expires_at <= ?1",
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
        let ids: Vec<String> = sqlx::query_scalar(sqlx::AssertSqlSafe(format!(
            "SELECT id FROM memories WHERE {COLD} ORDER BY created_at, id LIMIT ?3"
        )))
        .bind(ms(cold.created_before))
        .bind(cold.max_access_count)
        .bind(limit)
        .fetch_all(self.pool())
        .await?;
        parse_ids(ids)
    }

    async fn archive_to_table(
        &self,
        cold: &ColdRows,
        limit: i64,
        at: DateTime<Utc>,
    ) -> Result<Vec<MemoryId>, StoreError> {
        let mut tx = self.writer.begin_with("BEGIN IMMEDIATE").await?;
        let ids = oldest_cold(&mut tx, cold, None, limit).await?;
        move_to_archive(&mut tx, &ids, at).await?;
        tx.commit().await?;
        Ok(ids)
    }

    async fn restore_from_table(
        &self,
        selector: &RestoreSelector,
        after: Option<MemoryId>,
        limit: i64,
        at: DateTime<Utc>,
    ) -> Result<RestoreBatch, StoreError> {
        let mut tx = self.writer.begin_with("BEGIN IMMEDIATE").await?;
        let (filter, key) = match selector {
            RestoreSelector::Ids(ids) => ("id IN (SELECT value FROM json_each(?1))", ids_json(ids)),
            RestoreSelector::Namespace(namespace) => ("namespace = ?1", namespace.clone()),
        };
        let selected: Vec<(String, bool)> = sqlx::query_as(sqlx::AssertSqlSafe(format!(
            "SELECT id, NOT ({RESTORABLE}) FROM memories_archive \
             WHERE {filter} AND id > ?2 ORDER BY id LIMIT ?3"
        )))
        .bind(&key)
        .bind(after.map(|id| id.to_string()).unwrap_or_default())
        .bind(limit)
        .fetch_all(&mut *tx)
        .await?;
        let selected: Vec<(MemoryId, bool)> = selected
            .into_iter()
            .map(|(id, forgotten)| Ok((parse_ids(vec![id])?[0], forgotten)))
            .collect::<Result<_, StoreError>>()?;
        let restorable: Vec<MemoryId> = selected
            .iter()
            .filter(|(_, forgotten)| !forgotten)
            .map(|(id, _)| *id)
            .collect();
        // OR IGNORE: a row whose fact key an active memory holds (the partial unique index)
        // stays in the archive rather than superseding a newer fact.
        let restored: Vec<String> = sqlx::query_scalar(sqlx::AssertSqlSafe(format!(
            "INSERT OR IGNORE INTO memories ({RESTORE_COLUMNS}) \
             SELECT {} FROM memories_archive WHERE id IN (SELECT value FROM json_each(?1)) \
             ORDER BY id RETURNING id",
            restore_select("?2", "1")
        )))
        .bind(ids_json(&restorable))
        .bind(ms(at))
        .fetch_all(&mut *tx)
        .await?;
        let restored = parse_ids(restored)?;
        sqlx::query("DELETE FROM memories_archive WHERE id IN (SELECT value FROM json_each(?1))")
            .bind(ids_json(&restored))
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
        let mut tx = self.writer.begin_with("BEGIN IMMEDIATE").await?;
        let namespace: Option<String> = sqlx::query_scalar(sqlx::AssertSqlSafe(format!(
            "SELECT namespace FROM memories WHERE {COLD} ORDER BY created_at, id LIMIT 1"
        )))
        .bind(ms(cold.created_before))
        .bind(cold.max_access_count)
        .fetch_optional(&mut *tx)
        .await?;
        let Some(namespace) = namespace else {
            tx.commit().await?;
            return Ok(None);
        };
        let ids = oldest_cold(&mut tx, cold, Some(&namespace), limit).await?;
        move_to_archive(&mut tx, &ids, at).await?;
        let key = batch_key(&namespace, &ids, at);
        sqlx::query(
            "INSERT INTO archive_batches (key, namespace, ids, state, row_count, created_at) \
             VALUES (?1, ?2, ?3, 'staged', ?4, ?5)",
        )
        .bind(&key)
        .bind(&namespace)
        .bind(ids_json(&ids))
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
            None => ("1", String::new()),
            Some(RestoreSelector::Namespace(namespace)) => ("namespace = ?2", namespace.clone()),
            Some(RestoreSelector::Ids(ids)) => (
                "EXISTS (SELECT 1 FROM json_each(archive_batches.ids) AS b \
                 WHERE b.value IN (SELECT value FROM json_each(?2)))",
                ids_json(ids),
            ),
        };
        let rows: Vec<BatchRow> = sqlx::query_as(sqlx::AssertSqlSafe(format!(
            "SELECT key, namespace, ids, state FROM archive_batches \
             WHERE state = ?1 AND {filter} ORDER BY created_at, key"
        )))
        .bind(state.as_str())
        .bind(value)
        .fetch_all(self.pool())
        .await?;
        rows.into_iter().map(decode_batch).collect()
    }

    async fn archived_rows(&self, ids: &[MemoryId]) -> Result<Vec<ArchivedRow>, StoreError> {
        let rows = sqlx::query(sqlx::AssertSqlSafe(format!(
            "SELECT {ARCHIVE_COLUMNS} FROM memories_archive \
             WHERE id IN (SELECT value FROM json_each(?1)) ORDER BY id"
        )))
        .bind(ids_json(ids))
        .fetch_all(self.pool())
        .await?;
        rows.iter()
            .map(|row| {
                let memory = row_to_memory(row)?;
                Ok(ArchivedRow {
                    embedding: memory.embedding.clone(),
                    memory,
                    lexical: row.try_get("lexical")?,
                    archived_at: from_ms(row.try_get("archived_at")?),
                })
            })
            .collect()
    }

    async fn finish_export(&self, key: &str, at: DateTime<Utc>) -> Result<u64, StoreError> {
        let mut tx = self.writer.begin_with("BEGIN IMMEDIATE").await?;
        let in_batch =
            "SELECT j.value FROM archive_batches AS b, json_each(b.ids) AS j WHERE b.key = ?1";
        sqlx::query(sqlx::AssertSqlSafe(format!(
            "INSERT INTO archive_exported (batch_key, id, namespace, memory_type, entity, \
             created_at) SELECT ?1, id, namespace, memory_type, entity, created_at \
             FROM memories_archive WHERE id IN ({in_batch}) ON CONFLICT DO NOTHING"
        )))
        .bind(key)
        .execute(&mut *tx)
        .await?;
        let removed = sqlx::query(sqlx::AssertSqlSafe(format!(
            "DELETE FROM memories_archive WHERE id IN ({in_batch})"
        )))
        .bind(key)
        .execute(&mut *tx)
        .await?
        .rows_affected();
        sqlx::query(
            "UPDATE archive_batches SET state = 'exported', exported_at = ?2, row_count = ?3 \
             WHERE key = ?1",
        )
        .bind(key)
        .bind(ms(at))
        .bind(removed as i64)
        .execute(&mut *tx)
        .await?;
        tx.commit().await?;
        Ok(removed)
    }

    async fn unpack(&self, rows: &[ArchivedRow]) -> Result<u64, StoreError> {
        let mut tx = self.writer.begin_with("BEGIN IMMEDIATE").await?;
        let mut added = 0;
        for row in rows {
            // Whatever an object says, what goes back into the table is archived.
            let memory = Memory {
                status: Status::Archived,
                embedding: row.embedding.clone(),
                ..row.memory.clone()
            };
            added += bind_memory(
                sqlx::query(sqlx::AssertSqlSafe(format!(
                    "INSERT OR IGNORE INTO memories_archive ({ARCHIVE_COLUMNS}) \
                     SELECT ?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, \
                     ?12, ?13, ?14, ?15, ?16, ?17, ?18, ?19, ?20, ?21, ?22, ?23, ?24 \
                     WHERE NOT EXISTS (SELECT 1 FROM memories WHERE id = ?1) \
                     AND NOT EXISTS (SELECT 1 FROM forgotten WHERE id = ?1)"
                ))),
                &memory,
            )
            .bind(&row.lexical)
            .bind(ms(row.archived_at))
            .execute(&mut *tx)
            .await?
            .rows_affected();
        }
        tx.commit().await?;
        Ok(added)
    }

    async fn active_rank_inputs(
        &self,
        after: Option<MemoryId>,
        limit: i64,
    ) -> Result<Vec<(MemoryId, f64, DateTime<Utc>)>, StoreError> {
        let rows: Vec<(String, f64, i64)> = sqlx::query_as(
            "SELECT id, importance, max(created_at, coalesce(last_accessed_at, created_at)) \
             FROM memories WHERE status = 'active' AND id > ?1 ORDER BY id LIMIT ?2",
        )
        .bind(after.map(|id| id.to_string()).unwrap_or_default())
        .bind(limit)
        .fetch_all(self.pool())
        .await?;
        rows.into_iter()
            .map(|(id, importance, touched)| {
                let id = MemoryId::parse_str(&id).map_err(|e| corrupt(&id, e.to_string()))?;
                Ok((id, importance, from_ms(touched)))
            })
            .collect()
    }

    async fn archive_ids_to_table(
        &self,
        ids: &[MemoryId],
        at: DateTime<Utc>,
    ) -> Result<Vec<MemoryId>, StoreError> {
        let mut tx = self.writer.begin_with("BEGIN IMMEDIATE").await?;
        let active: Vec<String> = sqlx::query_scalar(
            "SELECT id FROM memories WHERE status = 'active' \
             AND id IN (SELECT value FROM json_each(?1))",
        )
        .bind(ids_json(ids))
        .fetch_all(&mut *tx)
        .await?;
        let active = parse_ids(active)?;
        move_to_archive(&mut tx, &active, at).await?;
        tx.commit().await?;
        Ok(active)
    }

    async fn forgotten_among(&self, ids: &[MemoryId]) -> Result<Vec<MemoryId>, StoreError> {
        let found: Vec<String> = sqlx::query_scalar(
            "SELECT id FROM forgotten WHERE id IN (SELECT value FROM json_each(?1)) ORDER BY id",
        )
        .bind(ids_json(ids))
        .fetch_all(self.pool())
        .await?;
        parse_ids(found)
    }

    async fn batches_to_purge(&self) -> Result<Vec<(ArchiveBatch, Vec<MemoryId>)>, StoreError> {
        let rows: Vec<(String, String)> = sqlx::query_as(
            "SELECT e.batch_key, e.id FROM archive_exported AS e \
             JOIN forgotten AS f ON f.id = e.id AND f.mode = 'hard' ORDER BY e.batch_key, e.id",
        )
        .fetch_all(self.pool())
        .await?;
        let mut wanted: Vec<(String, Vec<MemoryId>)> = Vec::new();
        for (key, id) in rows {
            let id = parse_ids(vec![id])?[0];
            match wanted.last_mut() {
                Some((last, ids)) if *last == key => ids.push(id),
                _ => wanted.push((key, vec![id])),
            }
        }
        let mut out = Vec::new();
        for (key, ids) in wanted {
            let batch: Option<BatchRow> = sqlx::query_as(
                "SELECT key, namespace, ids, state FROM archive_batches \
                 WHERE key = ?1 AND state IN ('exported', 'restored')",
            )
            .bind(&key)
            .fetch_optional(self.pool())
            .await?;
            if let Some(batch) = batch {
                out.push((decode_batch(batch)?, ids));
            }
        }
        Ok(out)
    }

    async fn purged_from_batch(
        &self,
        key: &str,
        removed: &[MemoryId],
        object_gone: bool,
    ) -> Result<(), StoreError> {
        let mut tx = self.writer.begin_with("BEGIN IMMEDIATE").await?;
        if object_gone {
            for sql in [
                "DELETE FROM archive_exported WHERE batch_key = ?1",
                "DELETE FROM archive_batches WHERE key = ?1",
            ] {
                sqlx::query(sql).bind(key).execute(&mut *tx).await?;
            }
        } else {
            sqlx::query(
                "DELETE FROM archive_exported WHERE batch_key = ?1 \
                 AND id IN (SELECT value FROM json_each(?2))",
            )
            .bind(key)
            .bind(ids_json(removed))
            .execute(&mut *tx)
            .await?;
            sqlx::query(
                "UPDATE archive_batches SET \
                 ids = (SELECT json_group_array(j.value) FROM json_each(archive_batches.ids) AS j \
                        WHERE j.value NOT IN (SELECT value FROM json_each(?2))), \
                 row_count = (SELECT COUNT(*) FROM archive_exported WHERE batch_key = ?1) \
                 WHERE key = ?1",
            )
            .bind(key)
            .bind(ids_json(removed))
            .execute(&mut *tx)
            .await?;
        }
        tx.commit().await?;
        Ok(())
    }

    async fn set_batch_state(&self, key: &str, state: BatchState) -> Result<(), StoreError> {
        sqlx::query("UPDATE archive_batches SET state = ?2 WHERE key = ?1")
            .bind(key)
            .bind(state.as_str())
            .execute(&self.writer)
            .await?;
        Ok(())
    }
}

/// `archive_batches`' (key, namespace, ids, state).
type BatchRow = (String, String, String, String);

fn decode_batch((key, namespace, ids, state): BatchRow) -> Result<ArchiveBatch, StoreError> {
    let bad = |reason: String| corrupt(&format!("archive_batches/{key}"), reason);
    let ids: Vec<String> = serde_json::from_str(&ids).map_err(|e| bad(e.to_string()))?;
    Ok(ArchiveBatch {
        state: BatchState::parse(&state).ok_or_else(|| bad(format!("state {state:?}")))?,
        ids: parse_ids(ids)?,
        key,
        namespace,
    })
}

/// The ids of the oldest `limit` matching rows (of `namespace`, if given).
async fn oldest_cold(
    tx: &mut sqlx::SqliteConnection,
    cold: &ColdRows,
    namespace: Option<&str>,
    limit: i64,
) -> Result<Vec<MemoryId>, StoreError> {
    let ids: Vec<String> = sqlx::query_scalar(sqlx::AssertSqlSafe(format!(
        "SELECT id FROM memories WHERE {COLD} AND (?4 IS NULL OR namespace = ?4) \
         ORDER BY created_at, id LIMIT ?3"
    )))
    .bind(ms(cold.created_before))
    .bind(cold.max_access_count)
    .bind(limit)
    .bind(namespace)
    .fetch_all(&mut *tx)
    .await?;
    parse_ids(ids)
}

/// Move rows to `memories_archive` (status `archived`, `archived_at = at`).
async fn move_to_archive(
    tx: &mut sqlx::SqliteConnection,
    ids: &[MemoryId],
    at: DateTime<Utc>,
) -> Result<(), StoreError> {
    sqlx::query(sqlx::AssertSqlSafe(format!(
        "INSERT INTO memories_archive ({ARCHIVE_COLUMNS}) \
         SELECT {} FROM memories WHERE id IN (SELECT value FROM json_each(?1))",
        archive_select("?2")
    )))
    .bind(ids_json(ids))
    .bind(ms(at))
    .execute(&mut *tx)
    .await?;
    sqlx::query("DELETE FROM memories WHERE id IN (SELECT value FROM json_each(?1))")
        .bind(ids_json(ids))
        .execute(&mut *tx)
        .await?;
    Ok(())
}
