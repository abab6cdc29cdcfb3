//! `DistillStore` on PostgreSQL: id lists as JSONB arrays.

use async_trait::async_trait;
use chrono::{DateTime, Utc};
use sqlx::Row;
use sqlx::postgres::PgRow;

use super::{ROWS, ms, row_to_memory};
use crate::domain::Memory;
use crate::store::distill::{
    CANDIDATE_COLUMNS, Candidate, CandidateId, CandidateStatus, DistillMethod, DistillStore,
    DistilledCluster, EvidenceTo, Review, memory_evidence,
};
use crate::store::{COLUMNS, PostgresStore, StoreError, corrupt};

fn row_to_candidate(row: &PgRow) -> Result<Candidate, StoreError> {
    let id: CandidateId = row.try_get("id")?;
    let bad = |reason: String| corrupt(&format!("candidates/{id}"), reason);
    let sources: serde_json::Value = row.try_get("source_ids")?;
    let method: String = row.try_get("method")?;
    let status: String = row.try_get("status")?;
    Ok(Candidate {
        id,
        namespace: row.try_get("namespace")?,
        content: row.try_get("content")?,
        entity: row.try_get("entity")?,
        attribute: row.try_get("attribute")?,
        confidence: row.try_get("confidence")?,
        source_ids: serde_json::from_value(sources).map_err(|e| bad(e.to_string()))?,
        fingerprint: row.try_get("fingerprint")?,
        method: DistillMethod::parse(&method).ok_or_else(|| bad(format!("method {method:?}")))?,
        model: row.try_get("model")?,
        prompt_version: row.try_get("prompt_version")?,
        status: CandidateStatus::parse(&status).ok_or_else(|| bad(format!("status {status:?}")))?,
        reviewer: row.try_get("reviewer")?,
        reviewed_at: row.try_get("reviewed_at")?,
        note: row.try_get("note")?,
        memory_id: row.try_get("memory_id")?,
        created_at: row.try_get("created_at")?,
        updated_at: row.try_get("updated_at")?,
        embedding: row.try_get("embedding")?,
    })
}

#[async_trait]
impl DistillStore for PostgresStore {
    async fn distill_namespaces(&self, since: DateTime<Utc>) -> Result<Vec<String>, StoreError> {
        Ok(sqlx::query_scalar(
            "SELECT DISTINCT namespace FROM memories m \
             WHERE memory_type = 'episodic' AND status = 'active' AND created_at >= $1 \
               AND NOT EXISTS (SELECT 1 FROM distilled_episodes d WHERE d.id = m.id) \
             ORDER BY namespace",
        )
        .bind(ms(since))
        .fetch_all(self.pool())
        .await?)
    }

    async fn undistilled_episodes(
        &self,
        namespace: &str,
        since: DateTime<Utc>,
        limit: i64,
    ) -> Result<Vec<Memory>, StoreError> {
        let rows = sqlx::query(sqlx::AssertSqlSafe(format!(
            "SELECT {COLUMNS} FROM {ROWS} \
             WHERE namespace = $1 AND memory_type = 'episodic' AND status = 'active' \
               AND created_at >= $2 \
               AND NOT EXISTS (SELECT 1 FROM distilled_episodes d WHERE d.id = memories.id) \
             ORDER BY created_at, id LIMIT $3"
        )))
        .bind(namespace)
        .bind(ms(since))
        .bind(limit)
        .fetch_all(self.pool())
        .await?;
        rows.iter().map(row_to_memory).collect()
    }

    async fn record_cluster(&self, cluster: &DistilledCluster) -> Result<bool, StoreError> {
        let mut tx = self.pool().begin().await?;
        let fresh = sqlx::query(
            "INSERT INTO distilled_clusters (fingerprint, namespace, outcome, created_at) \
             VALUES ($1, $2, $3, $4) ON CONFLICT (fingerprint) DO NOTHING",
        )
        .bind(&cluster.fingerprint)
        .bind(&cluster.namespace)
        .bind(cluster.outcome.as_str())
        .bind(ms(cluster.at))
        .execute(&mut *tx)
        .await?
        .rows_affected()
            == 1;
        if !fresh {
            return Ok(false);
        }
        for c in &cluster.created {
            sqlx::query(sqlx::AssertSqlSafe(format!(
                "INSERT INTO candidates ({CANDIDATE_COLUMNS}) VALUES \
                 ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15, $16, $17, $18, $19)"
            )))
            .bind(c.id)
            .bind(&c.namespace)
            .bind(&c.content)
            .bind(&c.entity)
            .bind(&c.attribute)
            .bind(c.confidence)
            .bind(serde_json::json!(c.source_ids))
            .bind(&c.fingerprint)
            .bind(c.method.as_str())
            .bind(&c.model)
            .bind(&c.prompt_version)
            .bind(c.status.as_str())
            .bind(&c.reviewer)
            .bind(c.reviewed_at.map(ms))
            .bind(&c.note)
            .bind(c.memory_id)
            .bind(ms(c.created_at))
            .bind(ms(c.updated_at))
            .bind(&c.embedding)
            .execute(&mut *tx)
            .await?;
        }
        for evidence in &cluster.evidence {
            match evidence.to {
                EvidenceTo::Candidate(id) => {
                    // The union of the old and the new sources, sorted, each once.
                    sqlx::query(
                        "UPDATE candidates SET updated_at = $3, source_ids = ( \
                           SELECT jsonb_agg(value ORDER BY value) FROM ( \
                             SELECT value FROM jsonb_array_elements_text(candidates.source_ids) \
                             UNION SELECT value FROM jsonb_array_elements_text($2)) AS s) \
                         WHERE id = $1",
                    )
                    .bind(id)
                    .bind(serde_json::json!(evidence.episodes))
                    .bind(ms(cluster.at))
                    .execute(&mut *tx)
                    .await?;
                }
                EvidenceTo::Memory(id) => {
                    sqlx::query(
                        "UPDATE memories SET updated_at = $3, \
                           merged_sources = merged_sources || jsonb_build_array($2::jsonb) \
                         WHERE id = $1 AND status = 'active'",
                    )
                    .bind(id)
                    .bind(memory_evidence(cluster, &evidence.episodes))
                    .bind(ms(cluster.at))
                    .execute(&mut *tx)
                    .await?;
                }
            }
        }
        sqlx::query(
            "INSERT INTO distilled_episodes (id, fingerprint, distilled_at) \
             SELECT unnest($1::uuid[]), $2, $3 ON CONFLICT (id) DO NOTHING",
        )
        .bind(&cluster.episodes)
        .bind(&cluster.fingerprint)
        .bind(ms(cluster.at))
        .execute(&mut *tx)
        .await?;
        tx.commit().await?;
        Ok(true)
    }

    async fn candidates(
        &self,
        namespace: Option<&str>,
        status: Option<CandidateStatus>,
        limit: i64,
    ) -> Result<Vec<Candidate>, StoreError> {
        let rows = sqlx::query(sqlx::AssertSqlSafe(format!(
            "SELECT {CANDIDATE_COLUMNS} FROM candidates \
             WHERE ($1::text IS NULL OR namespace = $1) AND ($2::text IS NULL OR status = $2) \
             ORDER BY created_at, id LIMIT $3"
        )))
        .bind(namespace)
        .bind(status.map(CandidateStatus::as_str))
        .bind(limit)
        .fetch_all(self.pool())
        .await?;
        rows.iter().map(row_to_candidate).collect()
    }

    async fn candidate(&self, id: CandidateId) -> Result<Option<Candidate>, StoreError> {
        let row = sqlx::query(sqlx::AssertSqlSafe(format!(
            "SELECT {CANDIDATE_COLUMNS} FROM candidates WHERE id = $1"
        )))
        .bind(id)
        .fetch_optional(self.pool())
        .await?;
        row.as_ref().map(row_to_candidate).transpose()
    }

    async fn review_candidate(
        &self,
        id: CandidateId,
        review: &Review,
    ) -> Result<Option<Candidate>, StoreError> {
        let row = sqlx::query(sqlx::AssertSqlSafe(format!(
            "UPDATE candidates SET status = $2, reviewer = $3, note = $4, \
               content = COALESCE($5, content), memory_id = $6, reviewed_at = $7, updated_at = $7 \
             WHERE id = $1 AND status = 'pending' RETURNING {CANDIDATE_COLUMNS}"
        )))
        .bind(id)
        .bind(review.status.as_str())
        .bind(&review.reviewer)
        .bind(&review.note)
        .bind(&review.content)
        .bind(review.memory_id)
        .bind(ms(review.at))
        .fetch_optional(self.pool())
        .await?;
        row.as_ref().map(row_to_candidate).transpose()
    }
}
