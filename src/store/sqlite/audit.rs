//! `AuditStore` on SQLite: times as unix milliseconds, ids as JSON text.

use async_trait::async_trait;
use chrono::{DateTime, Utc};
use sqlx::Row;

use super::{from_ms, ms};
use crate::store::audit::{AuditEntry, AuditStore};
use crate::store::{SqliteStore, StoreError, corrupt};

#[async_trait]
impl AuditStore for SqliteStore {
    async fn record_audit(&self, entry: &AuditEntry) -> Result<(), StoreError> {
        sqlx::query(
            "INSERT INTO audit (at, actor, action, namespace, ids, outcome, detail) \
             VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7)",
        )
        .bind(ms(entry.at))
        .bind(&entry.actor)
        .bind(&entry.action)
        .bind(&entry.namespace)
        .bind(serde_json::to_string(&entry.ids).unwrap_or_else(|_| "[]".to_owned()))
        .bind(&entry.outcome)
        .bind(&entry.detail)
        .execute(&self.writer)
        .await?;
        Ok(())
    }

    async fn audit_since(
        &self,
        since: DateTime<Utc>,
        limit: i64,
    ) -> Result<Vec<AuditEntry>, StoreError> {
        let rows = sqlx::query(
            "SELECT id, at, actor, action, namespace, ids, outcome, detail FROM audit \
             WHERE at >= ?1 ORDER BY at, id LIMIT ?2",
        )
        .bind(ms(since))
        .bind(limit)
        .fetch_all(self.pool())
        .await?;
        rows.iter()
            .map(|row| {
                let id: i64 = row.try_get("id")?;
                let ids: String = row.try_get("ids")?;
                Ok(AuditEntry {
                    id,
                    at: from_ms(row.try_get("at")?),
                    actor: row.try_get("actor")?,
                    action: row.try_get("action")?,
                    namespace: row.try_get("namespace")?,
                    ids: serde_json::from_str(&ids)
                        .map_err(|e| corrupt(&format!("audit/{id}"), e.to_string()))?,
                    outcome: row.try_get("outcome")?,
                    detail: row.try_get("detail")?,
                })
            })
            .collect()
    }

    async fn prune_audit(&self, before: DateTime<Utc>) -> Result<u64, StoreError> {
        Ok(sqlx::query("DELETE FROM audit WHERE at < ?1")
            .bind(ms(before))
            .execute(&self.writer)
            .await?
            .rows_affected())
    }
}
