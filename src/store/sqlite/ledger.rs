//! `RunLedger` on SQLite: times as unix milliseconds, stats as JSON text.

use async_trait::async_trait;
use chrono::{DateTime, Utc};
use serde_json::Value;
use sqlx::Row;
use sqlx::sqlite::SqliteRow;

use super::{from_ms, ms};
use crate::store::ledger::{RunLedger, RunRecord, RunStatus};
use crate::store::{SqliteStore, StoreError, corrupt};

fn row_to_run(row: &SqliteRow) -> Result<RunRecord, StoreError> {
    let id: i64 = row.try_get("id")?;
    let status: String = row.try_get("status")?;
    let stats: String = row.try_get("stats")?;
    Ok(RunRecord {
        id,
        job: row.try_get("job")?,
        scheduled_for: from_ms(row.try_get("scheduled_for")?),
        node: row.try_get("node")?,
        status: RunStatus::parse(&status)
            .ok_or_else(|| corrupt(&format!("job_runs/{id}"), format!("status {status:?}")))?,
        started_at: from_ms(row.try_get("started_at")?),
        finished_at: row.try_get::<Option<i64>, _>("finished_at")?.map(from_ms),
        stats: serde_json::from_str(&stats)
            .map_err(|e| corrupt(&format!("job_runs/{id}"), e.to_string()))?,
        error: row.try_get("error")?,
    })
}

#[async_trait]
impl RunLedger for SqliteStore {
    async fn claim(
        &self,
        job: &str,
        scheduled_for: DateTime<Utc>,
        node: &str,
        at: DateTime<Utc>,
    ) -> Result<Option<i64>, StoreError> {
        Ok(sqlx::query_scalar(
            "INSERT INTO job_runs (job, scheduled_for, node, status, started_at, heartbeat_at) \
             VALUES (?1, ?2, ?3, 'running', ?4, ?4) \
             ON CONFLICT (job, scheduled_for) DO NOTHING RETURNING id",
        )
        .bind(job)
        .bind(ms(scheduled_for))
        .bind(node)
        .bind(ms(at))
        .fetch_optional(&self.writer)
        .await?)
    }

    async fn finish(
        &self,
        run: i64,
        status: RunStatus,
        stats: &Value,
        error: Option<&str>,
        at: DateTime<Utc>,
    ) -> Result<(), StoreError> {
        sqlx::query(
            "UPDATE job_runs SET status = ?2, stats = ?3, error = ?4, finished_at = ?5 \
             WHERE id = ?1",
        )
        .bind(run)
        .bind(status.as_str())
        .bind(stats.to_string())
        .bind(error)
        .bind(ms(at))
        .execute(&self.writer)
        .await?;
        Ok(())
    }

    async fn heartbeat(&self, runs: &[i64], at: DateTime<Utc>) -> Result<(), StoreError> {
        if runs.is_empty() {
            return Ok(());
        }
        sqlx::query(
            "UPDATE job_runs SET heartbeat_at = ?2 WHERE id IN (SELECT value FROM json_each(?1)) AND status = 'running'",
        )
        .bind(serde_json::to_string(runs).unwrap_or_default())
        .bind(ms(at))
        .execute(&self.writer)
        .await?;
        Ok(())
    }

    async fn interrupt_stale(
        &self,
        heartbeat_before: DateTime<Utc>,
        at: DateTime<Utc>,
    ) -> Result<u64, StoreError> {
        Ok(sqlx::query(
            "UPDATE job_runs SET status = 'interrupted', finished_at = ?2 \
             WHERE status = 'running' AND COALESCE(heartbeat_at, started_at) < ?1",
        )
        .bind(ms(heartbeat_before))
        .bind(ms(at))
        .execute(&self.writer)
        .await?
        .rows_affected())
    }

    async fn last_success(&self, job: &str) -> Result<Option<DateTime<Utc>>, StoreError> {
        let last: Option<i64> = sqlx::query_scalar(
            "SELECT max(finished_at) FROM job_runs WHERE job = ?1 AND status = 'ok'",
        )
        .bind(job)
        .fetch_one(self.pool())
        .await?;
        Ok(last.map(from_ms))
    }

    async fn history(&self, job: Option<&str>, limit: i64) -> Result<Vec<RunRecord>, StoreError> {
        let rows = sqlx::query(
            "SELECT id, job, scheduled_for, node, status, started_at, finished_at, stats, error \
             FROM job_runs WHERE ?1 IS NULL OR job = ?1 \
             ORDER BY started_at DESC, id DESC LIMIT ?2",
        )
        .bind(job)
        .bind(limit)
        .fetch_all(self.pool())
        .await?;
        rows.iter().map(row_to_run).collect()
    }
}
