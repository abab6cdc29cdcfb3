//! `QuarantineStore` on SQLite: times as unix milliseconds, the request as JSON text.

use async_trait::async_trait;
use sqlx::Row;
use sqlx::sqlite::SqliteRow;
use uuid::Uuid;

use super::{from_ms, ms};
use crate::store::quarantine::{QuarantineDecision, QuarantineStore, Quarantined};
use crate::store::{SqliteStore, StoreError, corrupt};

fn row_to_item(row: &SqliteRow) -> Result<Quarantined, StoreError> {
    let id: String = row.try_get("id")?;
    let bad = |e: String| corrupt(&format!("quarantine/{id}"), e);
    let request: String = row.try_get("request")?;
    let memory_id: Option<String> = row.try_get("memory_id")?;
    Ok(Quarantined {
        id: Uuid::parse_str(&id).map_err(|e| bad(e.to_string()))?,
        namespace: row.try_get("namespace")?,
        rule: row.try_get("rule")?,
        kind: row.try_get("kind")?,
        request: serde_json::from_str(&request).map_err(|e| bad(e.to_string()))?,
        created_at: from_ms(row.try_get("created_at")?),
        status: row.try_get("status")?,
        reviewer: row.try_get("reviewer")?,
        reviewed_at: row.try_get::<Option<i64>, _>("reviewed_at")?.map(from_ms),
        note: row.try_get("note")?,
        memory_id: memory_id
            .map(|m| Uuid::parse_str(&m).map_err(|e| bad(e.to_string())))
            .transpose()?,
    })
}

#[async_trait]
impl QuarantineStore for SqliteStore {
    async fn hold(&self, item: &Quarantined) -> Result<(), StoreError> {
        sqlx::query(
            "INSERT INTO quarantine (id, namespace, rule, kind, request, created_at, status) \
             VALUES (?1, ?2, ?3, ?4, ?5, ?6, 'pending')",
        )
        .bind(item.id.to_string())
        .bind(&item.namespace)
        .bind(&item.rule)
        .bind(&item.kind)
        .bind(item.request.to_string())
        .bind(ms(item.created_at))
        .execute(&self.writer)
        .await?;
        Ok(())
    }

    async fn quarantined(
        &self,
        namespace: Option<&str>,
        status: Option<&str>,
        limit: i64,
    ) -> Result<Vec<Quarantined>, StoreError> {
        let rows = sqlx::query(
            "SELECT * FROM quarantine WHERE (?1 IS NULL OR namespace = ?1) \
             AND (?2 IS NULL OR status = ?2) ORDER BY created_at, id LIMIT ?3",
        )
        .bind(namespace)
        .bind(status)
        .bind(limit)
        .fetch_all(self.pool())
        .await?;
        rows.iter().map(row_to_item).collect()
    }

    async fn quarantined_one(&self, id: Uuid) -> Result<Option<Quarantined>, StoreError> {
        let row = sqlx::query("SELECT * FROM quarantine WHERE id = ?1")
            .bind(id.to_string())
            .fetch_optional(self.pool())
            .await?;
        row.as_ref().map(row_to_item).transpose()
    }

    async fn decide_quarantined(
        &self,
        id: Uuid,
        decision: &QuarantineDecision,
    ) -> Result<Option<Quarantined>, StoreError> {
        let row = sqlx::query(
            "UPDATE quarantine SET status = ?2, reviewer = ?3, note = ?4, memory_id = ?5, \
             reviewed_at = ?6 WHERE id = ?1 AND status = 'pending' RETURNING *",
        )
        .bind(id.to_string())
        .bind(if decision.approved {
            "approved"
        } else {
            "rejected"
        })
        .bind(&decision.reviewer)
        .bind(&decision.note)
        .bind(decision.memory_id.map(|m| m.to_string()))
        .bind(ms(decision.at))
        .fetch_optional(&self.writer)
        .await?;
        row.as_ref().map(row_to_item).transpose()
    }
}
