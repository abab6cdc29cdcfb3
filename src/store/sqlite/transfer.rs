//! `TransferStore` on SQLite.

use std::sync::atomic::Ordering;

use async_trait::async_trait;
use chrono::{DateTime, Utc};
use sqlx::Row;

use super::{bind_memory, from_ms, ids_json, insert_rows, ms, parse_ids, row_to_memory};
use crate::domain::{Memory, MemoryId, Status};
use crate::lexical;
use crate::store::maintenance::ARCHIVE_COLUMNS;
use crate::store::transfer::{ExportFilter, ImportedLine, StoredRow, TransferStore, fresh_rows};
use crate::store::{COLUMNS, SqliteStore, StoreError};

/// `begin_bulk_load` drops the exact-repeat key for a load of at least 1/`REBUILD_RATIO` of the
/// rows stored: kept up, the key cost 44–91 µs a loaded row at 1M (`REPEAT_INDEX`); made
/// again, ~5 µs a stored row. At a tenth the two are about even; above it the drop wins.
const REBUILD_RATIO: u64 = 10;

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

    /// Drops the exact-repeat key (`REPEAT_INDEX`) when the load is at least a tenth of the
    /// rows ever stored here: made again from the table it costs the whole table, kept up it
    /// costs the load.
    async fn begin_bulk_load(&self, load_rows: u64) -> Result<bool, StoreError> {
        if self.repeat_index_dropped.load(Ordering::Acquire) {
            return Ok(true);
        }
        let stored: i64 = sqlx::query_scalar("SELECT coalesce(max(seq), 0) FROM memories")
            .fetch_one(&self.writer)
            .await?;
        if load_rows.saturating_mul(REBUILD_RATIO) < stored.max(0) as u64 {
            return Ok(false);
        }
        // Lookups stop before the key goes: one asked meanwhile would scan the table.
        self.repeat_index_dropped.store(true, Ordering::Release);
        sqlx::query("DROP INDEX IF EXISTS memories_active_content")
            .execute(&self.writer)
            .await?;
        Ok(true)
    }

    async fn finish_bulk_load(&self) -> Result<(), StoreError> {
        self.make_repeat_index().await
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::domain::{Content, Importance, MemoryType, Namespace, NewMemory};
    use crate::signing::Signer;
    use crate::store::MemoryStore;

    fn row(content: &str) -> StoredRow {
        let memory = NewMemory {
            id: uuid::Uuid::now_v7(),
            namespace: Namespace::default(),
            memory_type: MemoryType::Episodic,
            content: Content::parse(content, 1000).unwrap(),
            importance: Importance::parse(0.5).unwrap(),
            entity: None,
            attribute: None,
            source: serde_json::json!({}),
            metadata: serde_json::json!({}),
            created_at: Utc::now(),
            occurred_at: Utc::now(),
            expires_at: None,
            embedding_model: "test/2".into(),
            embedding: vec![0.6, 0.8],
        }
        .into_memory();
        StoredRow {
            memory,
            archived_at: None,
        }
    }

    /// The key's statement as `sqlite_master` holds it, its spacing made one.
    async fn repeat_index(store: &SqliteStore) -> Option<String> {
        let sql: Option<String> = sqlx::query_scalar(
            "SELECT sql FROM sqlite_master WHERE name = 'memories_active_content'",
        )
        .fetch_optional(store.pool())
        .await
        .unwrap();
        sql.map(|s| s.split_whitespace().collect::<Vec<_>>().join(" "))
    }

    #[tokio::test]
    async fn a_load_large_against_the_store_drops_the_repeat_key_until_its_end() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("test.db");
        let signer = Signer::ephemeral();
        let store = SqliteStore::open(&path, signer.clone()).await.unwrap();
        let migrated = repeat_index(&store).await.expect("migration 0016 made it");
        let rows: Vec<StoredRow> = (0..30).map(|i| row(&format!("row {i}"))).collect();
        store.import_rows(&rows).await.unwrap();

        assert!(
            !store.begin_bulk_load(2).await.unwrap(),
            "2 rows against 30"
        );
        assert_eq!(repeat_index(&store).await.as_ref(), Some(&migrated));
        assert!(store.begin_bulk_load(3).await.unwrap(), "3 rows against 30");
        assert_eq!(repeat_index(&store).await, None);
        let found = store
            .active_repeats("default", MemoryType::Episodic, "row 7")
            .await
            .unwrap();
        assert!(found.is_empty(), "not asked while the key is away");
        assert!(store.begin_bulk_load(1).await.unwrap(), "still this load's");

        store.finish_bulk_load().await.unwrap();
        assert_eq!(repeat_index(&store).await, Some(migrated.clone()));
        let found = store
            .active_repeats("default", MemoryType::Episodic, "row 7")
            .await
            .unwrap();
        assert_eq!(found.len(), 1, "asked again");

        // A load that never ended: the next open makes the key again.
        assert!(store.begin_bulk_load(100).await.unwrap());
        store.pool().close().await;
        store.writer().close().await;
        drop(store);
        let store = SqliteStore::open(&path, signer).await.unwrap();
        assert_eq!(repeat_index(&store).await, Some(migrated));
        let found = store
            .active_repeats("default", MemoryType::Episodic, "row 7")
            .await
            .unwrap();
        assert_eq!(found.len(), 1);
    }
}
