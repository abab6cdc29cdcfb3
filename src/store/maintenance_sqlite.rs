//! `MaintenanceStore` on SQLite. Moves run in `BEGIN IMMEDIATE` transactions: one writer at a
//! time, and the rows selected are the rows moved.

use async_trait::async_trait;
use chrono::{DateTime, Utc};

use super::maintenance::{
    ARCHIVE_COLUMNS, ColdRows, MaintenanceStore, RESTORE_COLUMNS, RestoreBatch, RestoreSelector,
    archive_select, restore_batch, restore_select,
};
use super::sqlite::{ids_json, ms, parse_ids};
use super::{SqliteStore, StoreError};
use crate::domain::MemoryId;

const COLD: &str = "status = 'active' AND created_at < ?1 AND access_count < ?2";

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
        let mut tx = self.pool().begin_with("BEGIN IMMEDIATE").await?;
        let ids: Vec<String> = sqlx::query_scalar(sqlx::AssertSqlSafe(format!(
            "INSERT INTO memories_archive ({ARCHIVE_COLUMNS}) \
             SELECT {} FROM memories WHERE id IN \
               (SELECT id FROM memories WHERE {COLD} ORDER BY created_at, id LIMIT ?3) \
             RETURNING id",
            archive_select("?4")
        )))
        .bind(ms(cold.created_before))
        .bind(cold.max_access_count)
        .bind(limit)
        .bind(ms(at))
        .fetch_all(&mut *tx)
        .await?;
        let ids = parse_ids(ids)?;
        sqlx::query("DELETE FROM memories WHERE id IN (SELECT value FROM json_each(?1))")
            .bind(ids_json(&ids))
            .execute(&mut *tx)
            .await?;
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
        let mut tx = self.pool().begin_with("BEGIN IMMEDIATE").await?;
        let (filter, key) = match selector {
            RestoreSelector::Ids(ids) => (
                "id IN (SELECT value FROM json_each(?1))",
                ids_json(ids),
            ),
            RestoreSelector::Namespace(namespace) => ("namespace = ?1", namespace.clone()),
        };
        let selected: Vec<String> = sqlx::query_scalar(sqlx::AssertSqlSafe(format!(
            "SELECT id FROM memories_archive WHERE {filter} AND id > ?2 ORDER BY id LIMIT ?3"
        )))
        .bind(&key)
        .bind(after.map(|id| id.to_string()).unwrap_or_default())
        .bind(limit)
        .fetch_all(&mut *tx)
        .await?;
        let selected = parse_ids(selected)?;
        // OR IGNORE: a row whose fact key an active memory holds (the partial unique index)
        // stays in the archive rather than superseding a newer fact.
        let restored: Vec<String> = sqlx::query_scalar(sqlx::AssertSqlSafe(format!(
            "INSERT OR IGNORE INTO memories ({RESTORE_COLUMNS}) \
             SELECT {} FROM memories_archive WHERE id IN (SELECT value FROM json_each(?1)) \
             ORDER BY id RETURNING id",
            restore_select("?2", "1")
        )))
        .bind(ids_json(&selected))
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
}
