//! `MemoryStore` on PostgreSQL: the memories themselves.

use async_trait::async_trait;
use chrono::{DateTime, Utc};

use super::integrity::{resign_ids, sign_rows};
use super::*;
use crate::domain::{Memory, MemoryId, MemoryType, Namespace};
use crate::lexical;
use crate::store::{MemoryListQuery, RowTable};

/// `active_repeats`' statement. Its key is the expression `memories_active_content` indexes,
/// written as the index writes it: the planner matches an indexed expression only so.
fn active_repeats_sql() -> String {
    format!(
        "SELECT {COLUMNS} FROM {ROWS} \
         WHERE md5(content) = md5($3) AND status = 'active' \
           AND content = $3 AND namespace = $1 AND memory_type = $2"
    )
}

#[async_trait]
impl MemoryStore for PostgresStore {
    async fn lock(&self, key: &str) -> Result<StoreLock, StoreError> {
        // A transaction-scoped advisory lock in a transaction of its own: dropping the guard
        // rolls that transaction back, which releases the lock even if the work failed midway.
        let mut tx = self.pool.begin().await?;
        sqlx::query("SELECT pg_advisory_xact_lock(hashtextextended($1, 0))")
            .bind(format!("lock\u{1f}{key}"))
            .execute(&mut *tx)
            .await?;
        Ok(StoreLock::holding(tx))
    }

    async fn try_lock(&self, key: &str) -> Result<Option<StoreLock>, StoreError> {
        let mut tx = self.pool.begin().await?;
        // Held (idle) for a whole job run: a server-side idle-in-transaction timeout, common on
        // managed PostgreSQL, must not end it and silently free the lock.
        sqlx::query("SET LOCAL idle_in_transaction_session_timeout = 0")
            .execute(&mut *tx)
            .await?;
        let held: bool =
            sqlx::query_scalar("SELECT pg_try_advisory_xact_lock(hashtextextended($1, 0))")
                .bind(format!("lock\u{1f}{key}"))
                .fetch_one(&mut *tx)
                .await?;
        Ok(held.then(|| StoreLock::holding(tx)))
    }

    async fn claim_for_local_index(&self) -> Result<StoreLock, StoreError> {
        // A session-level advisory lock on a connection taken out of the pool for good: the
        // server releases it when the connection closes, including when the process is killed.
        let mut connection = self.pool.acquire().await?.detach();
        let claimed: bool =
            sqlx::query_scalar("SELECT pg_try_advisory_lock(hashtextextended($1, 0))")
                .bind(LOCAL_INDEX_CLAIM)
                .fetch_one(&mut connection)
                .await?;
        if claimed {
            Ok(StoreLock::holding(connection))
        } else {
            Err(StoreError::DatabaseClaimed)
        }
    }

    async fn insert_revising(
        &self,
        memory: &Memory,
        replaces: &[MemoryId],
    ) -> Result<Inserted, StoreError> {
        let key = memory.entity.as_ref().zip(memory.attribute.as_ref());
        if key.is_none() && replaces.is_empty() {
            // Nothing to supersede, so one autocommitted statement will do.
            insert_row(&self.pool, &self.signer, memory).await?;
            return Ok(Inserted::default());
        }
        let mut tx = self.pool.begin().await?;
        let now = ms(memory.created_at.max(memory.updated_at));
        let mut superseded = Vec::new();
        let mut superseded_by: Option<MemoryId> = None;
        if let Some((entity, attribute)) = key {
            // Writers of one fact key queue on a transaction-scoped advisory lock: under
            // READ COMMITTED two writers would otherwise both find no active row and both
            // insert (the partial unique index would then reject one of them).
            sqlx::query("SELECT pg_advisory_xact_lock(hashtextextended($1, 0))")
                .bind(fact_lock_key(&memory.namespace, entity, attribute))
                .execute(&mut *tx)
                .await?;
            let rows = sqlx::query(sqlx::AssertSqlSafe(format!(
                "UPDATE memories SET status = 'deprecated', deprecated_at = $1, \
                 deprecated_by = $2, updated_at = $1, index_pending = TRUE \
                 WHERE namespace = $3 AND entity = $4 AND attribute = $5 AND status = 'active' \
                   AND occurred_at <= $6 \
                 RETURNING {}",
                returning_columns(CURRENT_VECTOR)
            )))
            .bind(now)
            .bind(memory.id)
            .bind(&memory.namespace)
            .bind(entity)
            .bind(attribute)
            .bind(ms(memory.occurred_at))
            .fetch_all(&mut *tx)
            .await?;
            superseded.extend(rows_to_memories(&rows)?);
            superseded_by = sqlx::query_scalar(
                "SELECT id FROM memories \
                 WHERE namespace = $1 AND entity = $2 AND attribute = $3 AND status = 'active'",
            )
            .bind(&memory.namespace)
            .bind(entity)
            .bind(attribute)
            .fetch_optional(&mut *tx)
            .await?;
        }
        if !replaces.is_empty() {
            // The look-alikes this one updates: those that happened no later are retired by
            // it; one that happened later (history written out of order) retires it. The
            // rows are locked first, in id order, so two writers updating one row queue.
            sqlx::query("SELECT id FROM memories WHERE id = ANY($1) ORDER BY id FOR UPDATE")
                .bind(replaces)
                .execute(&mut *tx)
                .await?;
            let rows = sqlx::query(sqlx::AssertSqlSafe(format!(
                "UPDATE memories SET status = 'deprecated', deprecated_at = $1, \
                 deprecated_by = $2, updated_at = $1, index_pending = TRUE \
                 WHERE id = ANY($3) AND status = 'active' AND occurred_at <= $4 \
                 RETURNING {}",
                returning_columns(CURRENT_VECTOR)
            )))
            .bind(now)
            .bind(memory.id)
            .bind(replaces)
            .bind(ms(memory.occurred_at))
            .fetch_all(&mut *tx)
            .await?;
            superseded.extend(rows_to_memories(&rows)?);
            if superseded_by.is_none() {
                superseded_by = sqlx::query_scalar(
                    "SELECT id FROM memories WHERE id = ANY($1) AND status = 'active' \
                     ORDER BY occurred_at DESC LIMIT 1",
                )
                .bind(replaces)
                .fetch_optional(&mut *tx)
                .await?;
            }
        }
        let superseded = sign_rows(&mut tx, &self.signer, RowTable::Memories, superseded).await?;
        insert_row(
            &mut *tx,
            &self.signer,
            &memory.clone().deprecated_on_arrival(superseded_by, now),
        )
        .await?;
        tx.commit().await?;
        Ok(Inserted {
            superseded,
            superseded_by,
        })
    }

    async fn insert_many(&self, memories: &[Memory]) -> Result<(), StoreError> {
        if memories.is_empty() {
            return Ok(());
        }
        let mut tx = self.pool.begin().await?;
        let rows: Vec<&Memory> = memories.iter().collect();
        insert_rows(&mut tx, &self.signer, &rows).await?;
        tx.commit().await?;
        Ok(())
    }

    async fn merge(&self, update: &MergeUpdate) -> Result<Option<Memory>, StoreError> {
        let (content, embedding) = match &update.replace_content {
            Some((content, embedding)) => (Some(content.as_str()), Some(embedding.as_slice())),
            None => (None, None),
        };
        // The row, then its vector if the content changed, in one transaction. RETURNING sees the
        // vector as it was before: the new one, when there is one, is $3.
        let mut tx = self.pool.begin().await?;
        let row = sqlx::query(sqlx::AssertSqlSafe(format!(
            "UPDATE memories SET \
               content = COALESCE($2, content), \
               lexical = COALESCE($8, lexical), \
               importance = GREATEST(importance, $4), \
               merged_sources = merged_sources || jsonb_build_array($5::jsonb), \
               updated_at = $6, \
               expires_at = CASE WHEN expires_at IS NULL OR $7::timestamptz IS NULL THEN NULL \
                                 ELSE GREATEST(expires_at, $7) END, \
               occurred_at = GREATEST(occurred_at, $9), \
               index_pending = index_pending OR $2 IS NOT NULL \
             WHERE id = $1 AND status = 'active' \
             RETURNING {}",
            returning_columns(&format!("COALESCE($3, {CURRENT_VECTOR})"))
        )))
        .bind(update.id)
        .bind(content)
        .bind(embedding)
        .bind(update.importance)
        .bind(&update.merged_source)
        .bind(ms(update.at))
        .bind(update.expires_at.map(ms))
        .bind(content.map(lexical::document))
        .bind(ms(update.occurred_at))
        .fetch_optional(&mut *tx)
        .await?;
        if let (Some(_), Some(embedding)) = (&row, embedding) {
            sqlx::query("UPDATE memory_vectors SET embedding = $2 WHERE id = $1")
                .bind(update.id)
                .bind(embedding)
                .execute(&mut *tx)
                .await?;
        }
        let Some(row) = row else {
            return Ok(None);
        };
        let signed = sign_rows(
            &mut tx,
            &self.signer,
            RowTable::Memories,
            vec![row_to_memory(&row)?],
        )
        .await?;
        tx.commit().await?;
        Ok(signed.into_iter().next())
    }

    async fn get(&self, id: MemoryId) -> Result<Option<Memory>, StoreError> {
        let row = sqlx::query(sqlx::AssertSqlSafe(format!(
            "SELECT {COLUMNS} FROM {ROWS} WHERE id = $1"
        )))
        .bind(id)
        .fetch_optional(&self.pool)
        .await?;
        row.as_ref().map(row_to_memory).transpose()
    }

    async fn get_many(&self, ids: &[MemoryId]) -> Result<Vec<Memory>, StoreError> {
        if ids.is_empty() {
            return Ok(vec![]);
        }
        let rows = sqlx::query(sqlx::AssertSqlSafe(format!(
            "SELECT {COLUMNS} FROM {ROWS} WHERE id = ANY($1)"
        )))
        .bind(ids)
        .fetch_all(&self.pool)
        .await?;
        rows_to_memories(&rows)
    }

    async fn lexical_search(&self, query: &LexicalQuery) -> Result<LexicalHits, StoreError> {
        if query.terms.is_empty() {
            return Ok(LexicalHits::default());
        }
        // Any of the terms (OR), each a quoted lexeme so no term is read as tsquery syntax.
        let rows: Vec<(MemoryId, f32)> = sqlx::query_as(
            "WITH q AS (SELECT to_tsquery('simple', string_agg(quote_literal(t), ' | ')) AS query \
                        FROM unnest($1::text[]) AS t) \
             SELECT m.id, ts_rank_cd(m.lexical_tsv, q.query) AS score \
             FROM memories m, q \
             WHERE m.lexical_tsv @@ q.query AND m.namespace = ANY($2) \
               AND m.memory_type = ANY($3) AND m.status = ANY($4) \
               AND (m.expires_at IS NULL OR m.expires_at > $6) \
               AND ($7::timestamptz IS NULL OR m.occurred_at >= $7) \
               AND ($8::timestamptz IS NULL OR m.occurred_at <= $8) \
             ORDER BY score DESC, m.id LIMIT $5",
        )
        .bind(&query.terms)
        .bind(&query.namespaces)
        .bind(query.type_names())
        .bind(query.status_names())
        .bind(query.limit as i64)
        .bind(ms(query.now))
        .bind(query.occurred_from.map(ms))
        .bind(query.occurred_to.map(ms))
        .fetch_all(&self.pool)
        .await?;
        Ok(LexicalHits {
            hits: rows
                .into_iter()
                .map(|(id, score)| LexicalHit {
                    id,
                    score: f64::from(score),
                })
                .collect(),
            full_match: None,
        })
    }

    async fn active_repeats(
        &self,
        namespace: &str,
        memory_type: MemoryType,
        content: &str,
    ) -> Result<Vec<Memory>, StoreError> {
        let rows = sqlx::query(sqlx::AssertSqlSafe(active_repeats_sql()))
            .bind(namespace)
            .bind(memory_type.as_str())
            .bind(content)
            .fetch_all(&self.pool)
            .await?;
        rows_to_memories(&rows)
    }

    async fn active_facts(
        &self,
        namespace: &Namespace,
        entity: &str,
        attribute: &str,
    ) -> Result<Vec<Memory>, StoreError> {
        let rows = sqlx::query(sqlx::AssertSqlSafe(format!(
            "SELECT {COLUMNS} FROM {ROWS} \
             WHERE namespace = $1 AND entity = $2 AND attribute = $3 AND status = 'active'"
        )))
        .bind(namespace.as_str())
        .bind(entity)
        .bind(attribute)
        .fetch_all(&self.pool)
        .await?;
        rows_to_memories(&rows)
    }

    async fn list(&self, query: &MemoryListQuery) -> Result<Vec<Memory>, StoreError> {
        let rows = sqlx::query(sqlx::AssertSqlSafe(format!(
            "SELECT {COLUMNS} FROM {ROWS} \
             WHERE ($1::text IS NULL OR namespace = $1) AND ($2::text IS NULL OR memory_type = $2) \
               AND ($3::text IS NULL OR status = $3) AND ($4::text IS NULL OR entity = $4) \
               AND ($5::text IS NULL OR attribute = $5) AND ($6::uuid IS NULL OR deprecated_by = $6) \
               AND ($7::timestamptz IS NULL OR occurred_at >= $7) \
               AND ($8::timestamptz IS NULL OR occurred_at <= $8) \
               AND ($9::uuid IS NULL OR id < $9) \
             ORDER BY id DESC LIMIT $10"
        )))
        .bind(query.namespace.as_deref())
        .bind(query.memory_type.map(|t| t.as_str()))
        .bind(query.status.map(|s| s.as_str()))
        .bind(query.entity.as_deref())
        .bind(query.attribute.as_deref())
        .bind(query.deprecated_by)
        .bind(query.occurred_from)
        .bind(query.occurred_to)
        .bind(query.before)
        .bind(query.limit)
        .fetch_all(&self.pool)
        .await?;
        rows_to_memories(&rows)
    }

    async fn record_access(&self, hits: &[AccessHit]) -> Result<(), StoreError> {
        if hits.is_empty() {
            return Ok(());
        }
        let ids: Vec<MemoryId> = hits.iter().map(|h| h.id).collect();
        let counts: Vec<i64> = hits.iter().map(|h| h.count).collect();
        let ats: Vec<DateTime<Utc>> = hits.iter().map(|h| ms(h.at)).collect();
        sqlx::query(
            "UPDATE memories SET access_count = access_count + p.n, \
               last_accessed_at = GREATEST(last_accessed_at, p.at) \
             FROM unnest($1::uuid[], $2::bigint[], $3::timestamptz[]) AS p(id, n, at) \
             WHERE memories.id = p.id",
        )
        .bind(ids)
        .bind(counts)
        .bind(ats)
        .execute(&self.pool)
        .await?;
        Ok(())
    }

    async fn forget(
        &self,
        selector: &ForgetSelector,
        hard: bool,
        at: DateTime<Utc>,
    ) -> Result<Forgotten, StoreError> {
        // One WHERE clause for every table and both selectors; unused parameters are NULL.
        let (id, namespace, memory_type, entity, created_before) = match selector {
            ForgetSelector::Id(id) => (Some(*id), None, None, None, None),
            ForgetSelector::Filter(f) => (
                None,
                Some(f.namespace.as_str().to_owned()),
                f.memory_type.map(|t| t.as_str()),
                f.entity.clone(),
                f.created_before.map(ms),
            ),
        };
        let filter = "($1::uuid IS NULL OR id = $1) AND ($2::text IS NULL OR namespace = $2) \
             AND ($3::text IS NULL OR memory_type = $3) AND ($4::text IS NULL OR entity = $4) \
             AND ($5::timestamptz IS NULL OR created_at < $5)";
        // Every copy in one statement, tombstones included; (where, id) rows come back.
        // Hard means gone everywhere the database holds it: the vectors too.
        // The exported copies stay listed until a purge rewrites their objects.
        let exported = format!(
            "exported AS (SELECT DISTINCT id FROM archive_exported WHERE {filter} AND NOT EXISTS \
             (SELECT 1 FROM forgotten AS f WHERE f.id = archive_exported.id {}))",
            if hard { "AND f.mode = 'hard'" } else { "" }
        );
        let sql = if hard {
            format!(
                "WITH hot AS (DELETE FROM memories WHERE {filter} RETURNING id), \
                 archived AS (DELETE FROM memories_archive WHERE {filter} RETURNING id), \
                 {exported}, \
                 vectors AS (DELETE FROM memory_vectors WHERE id IN \
                   (SELECT id FROM hot UNION ALL SELECT id FROM archived)), \
                 found AS (SELECT 0 AS place, id FROM hot UNION ALL SELECT 1, id FROM archived \
                   UNION ALL SELECT 2, id FROM exported), \
                 tombstones AS (INSERT INTO forgotten (id, mode, forgotten_at, \
                   index_delete_pending) \
                   SELECT id, 'hard', $6::timestamptz, bool_or(place = 0) FROM found GROUP BY id \
                   ON CONFLICT (id) DO UPDATE SET mode = 'hard', forgotten_at = excluded.forgotten_at, \
                   index_delete_pending = excluded.index_delete_pending \
                   WHERE forgotten.mode <> 'hard') \
                 SELECT DISTINCT place, id FROM found"
            )
        } else {
            format!(
                "WITH hot AS (UPDATE memories SET status = 'forgotten', updated_at = $6, \
                   index_pending = TRUE WHERE {filter} AND status <> 'forgotten' RETURNING id), \
                 archived AS (UPDATE memories_archive SET status = 'forgotten', updated_at = $6 \
                   WHERE {filter} AND status <> 'forgotten' RETURNING id), \
                 {exported}, \
                 found AS (SELECT 0 AS place, id FROM hot UNION ALL SELECT 1, id FROM archived \
                   UNION ALL SELECT 2, id FROM exported), \
                 tombstones AS (INSERT INTO forgotten (id, mode, forgotten_at) \
                   SELECT DISTINCT id, 'soft', $6::timestamptz FROM found \
                   ON CONFLICT (id) DO NOTHING) \
                 SELECT DISTINCT place, id FROM found"
            )
        };
        let mut tx = self.pool.begin().await?;
        let rows: Vec<(i32, MemoryId)> = sqlx::query_as(sqlx::AssertSqlSafe(sql))
            .bind(id)
            .bind(namespace)
            .bind(memory_type)
            .bind(entity)
            .bind(created_before)
            .bind(ms(at))
            .fetch_all(&mut *tx)
            .await?;
        let mut forgotten = Forgotten::default();
        for (place, id) in rows {
            match place {
                0 => forgotten.hot.push(id),
                1 => forgotten.archived.push(id),
                _ => forgotten.exported.push(id),
            }
        }
        for ids in [
            &mut forgotten.hot,
            &mut forgotten.archived,
            &mut forgotten.exported,
        ] {
            ids.sort();
        }
        if !hard {
            resign_ids(&mut tx, &self.signer, RowTable::Memories, &forgotten.hot).await?;
            resign_ids(
                &mut tx,
                &self.signer,
                RowTable::Archive,
                &forgotten.archived,
            )
            .await?;
        }
        tx.commit().await?;
        Ok(forgotten)
    }

    async fn expire_due(
        &self,
        now: DateTime<Utc>,
        limit: i64,
        dry_run: bool,
    ) -> Result<Vec<Memory>, StoreError> {
        // SKIP LOCKED: replicas expiring at once take different rows instead of queueing.
        let due = "SELECT id FROM memories WHERE status = 'active' AND expires_at <= $1 \
                   ORDER BY expires_at, id LIMIT $2";
        let sql = if dry_run {
            format!("SELECT {COLUMNS} FROM {ROWS} WHERE id IN ({due})")
        } else {
            format!(
                "UPDATE memories SET status = 'expired', updated_at = $1, index_pending = TRUE \
                 WHERE id IN ({due} FOR UPDATE SKIP LOCKED) RETURNING {}",
                returning_columns(CURRENT_VECTOR)
            )
        };
        let mut tx = self.pool.begin().await?;
        let rows = sqlx::query(sqlx::AssertSqlSafe(sql))
            .bind(ms(now))
            .bind(limit)
            .fetch_all(&mut *tx)
            .await?;
        let rows = rows_to_memories(&rows)?;
        let rows = if dry_run {
            rows
        } else {
            sign_rows(&mut tx, &self.signer, RowTable::Memories, rows).await?
        };
        tx.commit().await?;
        soonest_expiry_first(rows)
    }

    async fn index_pending(&self, limit: i64) -> Result<Vec<Memory>, StoreError> {
        let rows = sqlx::query(sqlx::AssertSqlSafe(format!(
            "SELECT {COLUMNS} FROM {ROWS} WHERE index_pending ORDER BY id LIMIT $1"
        )))
        .bind(limit)
        .fetch_all(&self.pool)
        .await?;
        rows_to_memories(&rows)
    }

    async fn index_deletes_pending(&self, limit: i64) -> Result<Vec<MemoryId>, StoreError> {
        Ok(sqlx::query_scalar(
            "SELECT id FROM forgotten WHERE index_delete_pending ORDER BY id LIMIT $1",
        )
        .bind(limit)
        .fetch_all(&self.pool)
        .await?)
    }

    async fn mark_deletes_indexed(&self, ids: &[MemoryId]) -> Result<(), StoreError> {
        if ids.is_empty() {
            return Ok(());
        }
        sqlx::query(
            "UPDATE forgotten SET index_delete_pending = FALSE \
             WHERE index_delete_pending AND id = ANY($1::uuid[])",
        )
        .bind(ids.to_vec())
        .execute(&self.pool)
        .await?;
        Ok(())
    }

    async fn mark_indexed(&self, rows: &[(MemoryId, DateTime<Utc>)]) -> Result<(), StoreError> {
        if rows.is_empty() {
            return Ok(());
        }
        let ids: Vec<MemoryId> = rows.iter().map(|(id, _)| *id).collect();
        let ats: Vec<DateTime<Utc>> = rows.iter().map(|(_, at)| ms(*at)).collect();
        sqlx::query(
            "UPDATE memories SET index_pending = FALSE \
             FROM unnest($1::uuid[], $2::timestamptz[]) AS p(id, at) \
             WHERE memories.id = p.id AND memories.updated_at = p.at AND memories.index_pending",
        )
        .bind(ids)
        .bind(ats)
        .execute(&self.pool)
        .await?;
        Ok(())
    }

    async fn indexable_after(
        &self,
        after: Option<MemoryId>,
        limit: i64,
    ) -> Result<Vec<Memory>, StoreError> {
        let rows = sqlx::query(sqlx::AssertSqlSafe(format!(
            "SELECT {COLUMNS} FROM {ROWS} \
             WHERE status IN ('active', 'deprecated') AND ($1::uuid IS NULL OR id > $1) \
             ORDER BY id LIMIT $2"
        )))
        .bind(after)
        .bind(limit)
        .fetch_all(&self.pool)
        .await?;
        rows_to_memories(&rows)
    }

    async fn set_embedding(
        &self,
        id: MemoryId,
        model: &str,
        embedding: &[f32],
    ) -> Result<(), StoreError> {
        sqlx::query(
            "WITH vector AS (UPDATE memory_vectors SET embedding = $3 WHERE id = $1) \
             UPDATE memories SET embedding_model = $2 WHERE id = $1",
        )
        .bind(id)
        .bind(model)
        .bind(embedding)
        .execute(&self.pool)
        .await?;
        Ok(())
    }

    async fn counts(&self) -> Result<Vec<CountRow>, StoreError> {
        let rows = sqlx::query(COUNTS_SQL).fetch_all(&self.pool).await?;
        rows.iter().map(count_row).collect()
    }

    async fn meta_get(&self, key: &str) -> Result<Option<String>, StoreError> {
        Ok(sqlx::query_scalar("SELECT value FROM meta WHERE key = $1")
            .bind(key)
            .fetch_optional(&self.pool)
            .await?)
    }

    async fn meta_set(&self, key: &str, value: &str) -> Result<(), StoreError> {
        sqlx::query(
            "INSERT INTO meta (key, value) VALUES ($1, $2) \
             ON CONFLICT (key) DO UPDATE SET value = excluded.value",
        )
        .bind(key)
        .bind(value)
        .execute(&self.pool)
        .await?;
        Ok(())
    }
}
