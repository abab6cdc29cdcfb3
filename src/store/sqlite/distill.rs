//! `DistillStore` on SQLite: ids and id lists as text (JSON arrays), times as unix ms.

use async_trait::async_trait;
use chrono::{DateTime, Utc};
use sqlx::Row;
use sqlx::sqlite::SqliteRow;

use super::{
    embedding_from_bytes, embedding_to_bytes, from_ms, ids_json, ms, parse_ids, row_to_memory,
};
use crate::domain::Memory;
use crate::store::distill::{
    CANDIDATE_COLUMNS, Candidate, CandidateId, CandidateStatus, DistillMethod, DistillStore,
    DistilledCluster, EvidenceTo, Review, memory_evidence,
};
use crate::store::{COLUMNS, SqliteStore, StoreError, corrupt};

fn row_to_candidate(row: &SqliteRow) -> Result<Candidate, StoreError> {
    let id: String = row.try_get("id")?;
    let bad = |reason: String| corrupt(&format!("candidates/{id}"), reason);
    let sources: String = row.try_get("source_ids")?;
    let method: String = row.try_get("method")?;
    let status: String = row.try_get("status")?;
    let embedding: Vec<u8> = row.try_get("embedding")?;
    let memory_id: Option<String> = row.try_get("memory_id")?;
    Ok(Candidate {
        id: CandidateId::parse_str(&id).map_err(|e| bad(e.to_string()))?,
        namespace: row.try_get("namespace")?,
        content: row.try_get("content")?,
        entity: row.try_get("entity")?,
        attribute: row.try_get("attribute")?,
        confidence: row.try_get("confidence")?,
        source_ids: parse_ids(serde_json::from_str(&sources).map_err(|e| bad(e.to_string()))?)?,
        fingerprint: row.try_get("fingerprint")?,
        method: DistillMethod::parse(&method).ok_or_else(|| bad(format!("method {method:?}")))?,
        model: row.try_get("model")?,
        prompt_version: row.try_get("prompt_version")?,
        status: CandidateStatus::parse(&status).ok_or_else(|| bad(format!("status {status:?}")))?,
        reviewer: row.try_get("reviewer")?,
        reviewed_at: row.try_get::<Option<i64>, _>("reviewed_at")?.map(from_ms),
        note: row.try_get("note")?,
        memory_id: memory_id
            .map(|m| CandidateId::parse_str(&m).map_err(|e| bad(e.to_string())))
            .transpose()?,
        created_at: from_ms(row.try_get("created_at")?),
        updated_at: from_ms(row.try_get("updated_at")?),
        embedding: embedding_from_bytes(&embedding)
            .ok_or_else(|| bad("embedding length".to_owned()))?,
    })
}

#[async_trait]
impl DistillStore for SqliteStore {
    async fn distill_namespaces(&self, since: DateTime<Utc>) -> Result<Vec<String>, StoreError> {
        Ok(sqlx::query_scalar(
            "SELECT DISTINCT namespace FROM memories m \
             WHERE memory_type = 'episodic' AND status = 'active' AND created_at >= ?1 \
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
            "SELECT {COLUMNS} FROM memories m \
             WHERE namespace = ?1 AND memory_type = 'episodic' AND status = 'active' \
               AND created_at >= ?2 \
               AND NOT EXISTS (SELECT 1 FROM distilled_episodes d WHERE d.id = m.id) \
             ORDER BY created_at, id LIMIT ?3"
        )))
        .bind(namespace)
        .bind(ms(since))
        .bind(limit)
        .fetch_all(self.pool())
        .await?;
        rows.iter().map(row_to_memory).collect()
    }

    async fn record_cluster(&self, cluster: &DistilledCluster) -> Result<bool, StoreError> {
        let mut tx = self.writer.begin_with("BEGIN IMMEDIATE").await?;
        let fresh = sqlx::query(
            "INSERT INTO distilled_clusters (fingerprint, namespace, outcome, created_at) \
             VALUES (?1, ?2, ?3, ?4) ON CONFLICT (fingerprint) DO NOTHING",
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
                 (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13, ?14, ?15, ?16, ?17, ?18, ?19)"
            )))
            .bind(c.id.to_string())
            .bind(&c.namespace)
            .bind(&c.content)
            .bind(&c.entity)
            .bind(&c.attribute)
            .bind(c.confidence)
            .bind(ids_json(&c.source_ids))
            .bind(&c.fingerprint)
            .bind(c.method.as_str())
            .bind(&c.model)
            .bind(&c.prompt_version)
            .bind(c.status.as_str())
            .bind(&c.reviewer)
            .bind(c.reviewed_at.map(ms))
            .bind(&c.note)
            .bind(c.memory_id.map(|m| m.to_string()))
            .bind(ms(c.created_at))
            .bind(ms(c.updated_at))
            .bind(embedding_to_bytes(&c.embedding))
            .execute(&mut *tx)
            .await?;
        }
        for evidence in &cluster.evidence {
            match evidence.to {
                EvidenceTo::Candidate(id) => {
                    // The union of the old and the new sources, in order, each once.
                    sqlx::query(
                        "UPDATE candidates SET updated_at = ?3, source_ids = ( \
                           SELECT json_group_array(value) FROM ( \
                             SELECT value FROM json_each(candidates.source_ids) \
                             UNION SELECT value FROM json_each(?2) ORDER BY value)) \
                         WHERE id = ?1",
                    )
                    .bind(id.to_string())
                    .bind(ids_json(&evidence.episodes))
                    .bind(ms(cluster.at))
                    .execute(&mut *tx)
                    .await?;
                }
                EvidenceTo::Memory(id) => {
                    sqlx::query(
                        "UPDATE memories SET updated_at = ?3, \
                           merged_sources = json_insert(merged_sources, '$[#]', json(?2)) \
                         WHERE id = ?1 AND status = 'active'",
                    )
                    .bind(id.to_string())
                    .bind(memory_evidence(cluster, &evidence.episodes).to_string())
                    .bind(ms(cluster.at))
                    .execute(&mut *tx)
                    .await?;
                }
            }
        }
        for episode in &cluster.episodes {
            sqlx::query(
                "INSERT INTO distilled_episodes (id, fingerprint, distilled_at) VALUES (?1, ?2, ?3) \
                 ON CONFLICT (id) DO NOTHING",
            )
            .bind(episode.to_string())
            .bind(&cluster.fingerprint)
            .bind(ms(cluster.at))
            .execute(&mut *tx)
            .await?;
        }
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
             WHERE (?1 IS NULL OR namespace = ?1) AND (?2 IS NULL OR status = ?2) \
             ORDER BY created_at, id LIMIT ?3"
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
            "SELECT {CANDIDATE_COLUMNS} FROM candidates WHERE id = ?1"
        )))
        .bind(id.to_string())
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
            "UPDATE candidates SET status = ?2, reviewer = ?3, note = ?4, \
               content = COALESCE(?5, content), memory_id = ?6, reviewed_at = ?7, updated_at = ?7 \
             WHERE id = ?1 AND status = 'pending' RETURNING {CANDIDATE_COLUMNS}"
        )))
        .bind(id.to_string())
        .bind(review.status.as_str())
        .bind(&review.reviewer)
        .bind(&review.note)
        .bind(&review.content)
        .bind(review.memory_id.map(|m| m.to_string()))
        .bind(ms(review.at))
        .fetch_optional(&self.writer)
        .await?;
        row.as_ref().map(row_to_candidate).transpose()
    }
}
