//! `MaintenanceStore` on PostgreSQL. The archive move is one statement
//! (`WITH moved AS (DELETE … RETURNING …) INSERT INTO memories_archive …`), and `SKIP LOCKED`
//! lets replicas archiving at once take different rows.

use async_trait::async_trait;
use chrono::{DateTime, Utc};

use super::maintenance::{
    ARCHIVE_COLUMNS, ColdRows, MaintenanceStore, RESTORE_COLUMNS, RestoreBatch, RestoreSelector,
    archive_select, restore_batch, restore_select,
};
use super::postgres::ms;
use super::{PostgresStore, StoreError};
use crate::domain::MemoryId;

const COLD: &str = "status = 'active' AND created_at < $1 AND access_count < $2";

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
        let columns = ARCHIVE_COLUMNS.replace(", archived_at", "");
        Ok(sqlx::query_scalar(sqlx::AssertSqlSafe(format!(
            "WITH moved AS ( \
               DELETE FROM memories WHERE id IN \
                 (SELECT id FROM memories WHERE {COLD} ORDER BY created_at, id LIMIT $3 \
                  FOR UPDATE SKIP LOCKED) \
               RETURNING {columns}) \
             INSERT INTO memories_archive ({ARCHIVE_COLUMNS}) SELECT {} FROM moved RETURNING id",
            archive_select("$4")
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
        let select = "SELECT id FROM memories_archive WHERE ($2::uuid IS NULL OR id > $2)";
        let query = match selector {
            RestoreSelector::Ids(ids) => sqlx::query_scalar(sqlx::AssertSqlSafe(format!(
                "{select} AND id = ANY($1) ORDER BY id LIMIT $3 FOR UPDATE"
            )))
            .bind(ids.clone()),
            RestoreSelector::Namespace(namespace) => sqlx::query_scalar(sqlx::AssertSqlSafe(
                format!("{select} AND namespace = $1 ORDER BY id LIMIT $3 FOR UPDATE"),
            ))
            .bind(namespace.clone()),
        };
        let selected: Vec<MemoryId> = query.bind(after).bind(limit).fetch_all(&mut *tx).await?;
        // ON CONFLICT DO NOTHING: a row whose fact key an active memory holds (the partial
        // unique index) stays in the archive rather than superseding a newer fact.
        let restored: Vec<MemoryId> = sqlx::query_scalar(sqlx::AssertSqlSafe(format!(
            "INSERT INTO memories ({RESTORE_COLUMNS}) \
             SELECT {} FROM memories_archive WHERE id = ANY($1) ORDER BY id \
             ON CONFLICT DO NOTHING RETURNING id",
            restore_select("$2", "TRUE")
        )))
        .bind(&selected)
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
}
