//! `TransferStore` on SQLite.

use async_trait::async_trait;
use chrono::{DateTime, Utc};
use sqlx::Row;

use super::{bind_memory, from_ms, ids_json, insert_rows, ms, parse_ids, row_to_memory};
use crate::domain::{Memory, MemoryId, Status};
use crate::lexical;
use crate::store::maintenance::ARCHIVE_COLUMNS;
use crate::store::transfer::{ExportFilter, ImportedLine, StoredRow, TransferStore, fresh_rows};
use crate::store::{COLUMNS, SqliteStore, StoreError};

#[async_trait]
impl TransferStore for SqliteStore {
    async fn export_page(
        &self,
        filter: &ExportFilter,
        archived: bool,
        after: Option<MemoryId>,
        limit: i64,
    ) -> Result<Vec<StoredRow>, StoreError> {
        let (table, archived_at) = if archived {
            ("memories_archive", "archived_at")
        } else {
            ("memories", "NULL AS archived_at")
        };
        let (namespaces, statuses) = filter.json_lists();
        let rows = sqlx::query(sqlx::AssertSqlSafe(format!(
            "SELECT {COLUMNS}, {archived_at} FROM {table} \
             WHERE (?1 = '[]' OR namespace IN (SELECT value FROM json_each(?1))) \
               AND (?2 = '[]' OR status IN (SELECT value FROM json_each(?2))) \
               AND (?3 IS NULL OR updated_at >= ?3) AND (?4 IS NULL OR id > ?4) \
             ORDER BY id LIMIT ?5"
        )))
        .bind(namespaces)
        .bind(statuses)
        .bind(filter.since.map(ms))
        .bind(after.map(|id| id.to_string()))
        .bind(limit)
        .fetch_all(self.pool())
        .await?;
        rows.iter()
            .map(|row| {
                Ok(StoredRow {
                    memory: row_to_memory(row)?,
                    archived_at: row.try_get::<Option<i64>, _>("archived_at")?.map(from_ms),
                })
            })
            .collect()
    }

    async fn held(&self, ids: &[MemoryId]) -> Result<Vec<Memory>, StoreError> {
        if ids.is_empty() {
            return Ok(vec![]);
        }
        let rows = sqlx::query(sqlx::AssertSqlSafe(format!(
            "SELECT {COLUMNS} FROM memories WHERE id IN (SELECT value FROM json_each(?1)) \
             UNION ALL \
             SELECT {COLUMNS} FROM memories_archive WHERE id IN (SELECT value FROM json_each(?1))"
        )))
        .bind(ids_json(ids))
        .fetch_all(self.pool())
        .await?;
        rows.iter().map(row_to_memory).collect()
    }

    async fn import_rows(&self, rows: &[StoredRow]) -> Result<Vec<MemoryId>, StoreError> {
        if rows.is_empty() {
            return Ok(vec![]);
        }
        let ids: Vec<MemoryId> = rows.iter().map(|r| r.memory.id).collect();
        let mut tx = self.writer.begin_with("BEGIN IMMEDIATE").await?;
        let taken: Vec<String> = sqlx::query_scalar(
            "SELECT id FROM memories WHERE id IN (SELECT value FROM json_each(?1)) \
             UNION SELECT id FROM memories_archive WHERE id IN (SELECT value FROM json_each(?1)) \
             UNION SELECT id FROM forgotten WHERE id IN (SELECT value FROM json_each(?1))",
        )
        .bind(ids_json(&ids))
        .fetch_all(&mut *tx)
        .await?;
        let (fresh, hot) = fresh_rows(rows, parse_ids(taken)?.into_iter().collect());
        insert_rows(&mut tx, &self.signer, &hot).await?;
        for row in &fresh {
            if let Some(at) = row.archived_at {
                let memory = self.signer.signed(row.memory.clone());
                bind_memory(
                    sqlx::query(sqlx::AssertSqlSafe(format!(
                        "INSERT INTO memories_archive ({ARCHIVE_COLUMNS}) VALUES (?1, ?2, \
                         ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13, ?14, ?15, ?16, ?17, \
                         ?18, ?19, ?20, ?21, ?22, ?23, ?24)"
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
                    "INSERT INTO forgotten (id, mode, forgotten_at) VALUES (?1, 'soft', ?2) \
                     ON CONFLICT (id) DO NOTHING",
                )
                .bind(row.memory.id.to_string())
                .bind(ms(row.memory.updated_at))
                .execute(&mut *tx)
                .await?;
            }
        }
        let added = fresh.iter().map(|r| r.memory.id).collect();
        tx.commit().await?;
        Ok(added)
    }

    async fn imported(&self, ids: &[MemoryId]) -> Result<Vec<MemoryId>, StoreError> {
        let found: Vec<String> = sqlx::query_scalar(
            "SELECT line_id FROM imports WHERE line_id IN (SELECT value FROM json_each(?1))",
        )
        .bind(ids_json(ids))
        .fetch_all(self.pool())
        .await?;
        parse_ids(found)
    }

    async fn record_imported(
        &self,
        lines: &[ImportedLine],
        at: DateTime<Utc>,
    ) -> Result<(), StoreError> {
        let mut tx = self.writer.begin_with("BEGIN IMMEDIATE").await?;
        for line in lines {
            sqlx::query(
                "INSERT INTO imports (line_id, memory_id, outcome, imported_at) \
                 VALUES (?1, ?2, ?3, ?4) ON CONFLICT (line_id) DO NOTHING",
            )
            .bind(line.line_id.to_string())
            .bind(line.memory_id.map(|id| id.to_string()))
            .bind(&line.outcome)
            .bind(ms(at))
            .execute(&mut *tx)
            .await?;
        }
        tx.commit().await?;
        Ok(())
    }
}
