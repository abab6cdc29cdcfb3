//! PostgreSQL implementation of `MemoryStore` (scale-out: several daemons on one database).
//! Same rules as `sqlite.rs`, pinned by the same suite; id lists travel as arrays and are
//! expanded with `unnest`, so every statement is static SQL.

use std::time::Duration;

use async_trait::async_trait;
use chrono::{DateTime, TimeZone, Utc};
use sqlx::Row;
use sqlx::postgres::{PgPool, PgPoolOptions, PgRow};

use super::{
    AccessHit, COLUMNS, COUNTS_SQL, CountRow, ForgetSelector, Forgotten, Inserted, LexicalHit,
    LexicalHits, LexicalQuery, MemoryStore, MergeUpdate, StoreError, StoreLock, count_row,
    insert_error, parse_type_and_status, soonest_expiry_first,
};
use crate::domain::{Memory, MemoryId, Namespace};
use crate::lexical;

/// Connection pool bounds. A pool per daemon replica: 20 × replicas must stay under the
/// server's `max_connections` (100 by default).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct PoolSize {
    pub min: u32,
    pub max: u32,
}

impl Default for PoolSize {
    fn default() -> Self {
        Self { min: 5, max: 20 }
    }
}

pub struct PostgresStore {
    pool: PgPool,
}

impl PostgresStore {
    /// Connect and apply the migrations in `migrations/postgres/`.
    pub async fn connect(url: &str, size: PoolSize) -> Result<Self, StoreError> {
        let pool = PgPoolOptions::new()
            .min_connections(size.min)
            .max_connections(size.max)
            .acquire_timeout(Duration::from_secs(10))
            .connect(url)
            .await?;
        let store = Self { pool };
        store.migrate().await?;
        store.fill_lexical().await?;
        store.upgrade_lexical().await?;
        Ok(store)
    }

    /// Index every row (hot and archived) again when the stored terms were made under other
    /// rules than `lexical::VERSION`'s, a batch per statement; then record the version.
    /// Replicas starting together may both do it: the values are the same.
    async fn upgrade_lexical(&self) -> Result<(), StoreError> {
        if self.meta_get(lexical::VERSION_KEY).await?.as_deref() == Some(lexical::VERSION) {
            return Ok(());
        }
        for table in ["memories", "memories_archive"] {
            let mut after: Option<MemoryId> = None;
            loop {
                let rows: Vec<(MemoryId, String)> = sqlx::query_as(sqlx::AssertSqlSafe(format!(
                    "SELECT id, content FROM {table} WHERE $1::uuid IS NULL OR id > $1 \
                     ORDER BY id LIMIT 1000"
                )))
                .bind(after)
                .fetch_all(&self.pool)
                .await?;
                let Some((last, _)) = rows.last() else { break };
                after = Some(*last);
                let (ids, documents): (Vec<MemoryId>, Vec<String>) = rows
                    .iter()
                    .map(|(id, content)| (*id, lexical::document(content)))
                    .unzip();
                sqlx::query(sqlx::AssertSqlSafe(format!(
                    "UPDATE {table} m SET lexical = v.lexical \
                     FROM unnest($1::uuid[], $2::text[]) AS v(id, lexical) WHERE m.id = v.id"
                )))
                .bind(&ids)
                .bind(&documents)
                .execute(&self.pool)
                .await?;
            }
        }
        self.meta_set(lexical::VERSION_KEY, lexical::VERSION).await
    }

    /// Compute the lexical terms of rows stored before the full-text index existed (the
    /// migration leaves them NULL), a batch per statement. Replicas starting together may both
    /// fill a batch: the values are the same, and `lexical IS NULL` keeps the second a no-op.
    async fn fill_lexical(&self) -> Result<(), StoreError> {
        loop {
            let rows: Vec<(MemoryId, String)> = sqlx::query_as(
                "SELECT id, content FROM memories WHERE lexical IS NULL ORDER BY id LIMIT 1000",
            )
            .fetch_all(&self.pool)
            .await?;
            if rows.is_empty() {
                return Ok(());
            }
            let (ids, documents): (Vec<MemoryId>, Vec<String>) = rows
                .iter()
                .map(|(id, content)| (*id, lexical::document(content)))
                .unzip();
            sqlx::query(
                "UPDATE memories m SET lexical = v.lexical \
                 FROM unnest($1::uuid[], $2::text[]) AS v(id, lexical) \
                 WHERE m.id = v.id AND m.lexical IS NULL",
            )
            .bind(&ids)
            .bind(&documents)
            .execute(&self.pool)
            .await?;
        }
    }

    /// Apply pending migrations (what `hindsight migrate` runs; also done at connect).
    pub async fn migrate(&self) -> Result<(), StoreError> {
        sqlx::migrate!("./migrations/postgres")
            .run(&self.pool)
            .await?;
        Ok(())
    }

    pub fn pool(&self) -> &PgPool {
        &self.pool
    }
}

/// Timestamps are kept at millisecond precision, as in SQLite: `mark_indexed` compares the
/// `updated_at` a caller saw with the stored one, so both must round the same way.
#[async_trait]
impl super::HeldLock for sqlx::Transaction<'static, sqlx::Postgres> {
    async fn release(self: Box<Self>) {
        // Rolling back ends the transaction and with it every xact-scoped advisory lock.
        if let Err(e) = (*self).rollback().await {
            tracing::warn!(error = %e, "releasing a database lock failed; it ends with its connection");
        }
    }
}

#[async_trait]
impl super::HeldLock for sqlx::PgConnection {
    async fn release(self: Box<Self>) {
        use sqlx::Connection;
        // Session-level locks end with the session.
        let _ = (*self).close().await;
    }
}

pub(super) fn ms(at: DateTime<Utc>) -> DateTime<Utc> {
    Utc.timestamp_millis_opt(at.timestamp_millis())
        .single()
        .unwrap_or(at)
}

pub(super) fn row_to_memory(row: &PgRow) -> Result<Memory, StoreError> {
    let id: MemoryId = row.try_get("id")?;
    let id_text = id.to_string();
    let (memory_type, status) = parse_type_and_status(
        &id_text,
        row.try_get("memory_type")?,
        row.try_get("status")?,
    )?;
    Ok(Memory {
        id,
        namespace: row.try_get("namespace")?,
        memory_type,
        content: row.try_get("content")?,
        importance: row.try_get("importance")?,
        status,
        entity: row.try_get("entity")?,
        attribute: row.try_get("attribute")?,
        source: row.try_get("source")?,
        merged_sources: row.try_get("merged_sources")?,
        metadata: row.try_get("metadata")?,
        created_at: row.try_get("created_at")?,
        occurred_at: row.try_get("occurred_at")?,
        updated_at: row.try_get("updated_at")?,
        expires_at: row.try_get("expires_at")?,
        last_accessed_at: row.try_get("last_accessed_at")?,
        access_count: row.try_get("access_count")?,
        deprecated_at: row.try_get("deprecated_at")?,
        deprecated_by: row.try_get("deprecated_by")?,
        embedding_model: row.try_get("embedding_model")?,
        embedding: row.try_get("embedding")?,
    })
}

fn rows_to_memories(rows: &[PgRow]) -> Result<Vec<Memory>, StoreError> {
    rows.iter().map(row_to_memory).collect()
}

/// Rows with their vectors: `memories` holds a row's columns but its embedding, which lives in
/// `memory_vectors` (migration 0006, so an archive move copies ~300 B, not ~2 kB). Every
/// `SELECT {COLUMNS}` reads from this join.
pub(super) const ROWS: &str = "memories JOIN memory_vectors USING (id)";

/// `columns` (a list in `COLUMNS` order, possibly with more after it) without the embedding:
/// the list as `memories` and `memories_archive` hold it.
pub(super) fn without_embedding(columns: &str) -> String {
    columns
        .replace(", embedding,", ",")
        .trim_end_matches(", embedding")
        .to_owned()
}

/// A row's vector, inside a statement on `memories`.
const CURRENT_VECTOR: &str = "(SELECT v.embedding FROM memory_vectors v WHERE v.id = memories.id)";

/// A `RETURNING` list of `COLUMNS` for a statement that changes `memories`, the embedding being
/// `vector` (`CURRENT_VECTOR` unless the statement's caller is replacing it).
fn returning_columns(vector: &str) -> String {
    format!("{}, {vector} AS embedding", without_embedding(COLUMNS))
}

/// The advisory-lock key of the one process allowed to write with an embedded index.
const LOCAL_INDEX_CLAIM: &str = "hindsight\u{1f}embedded-index-writer";

/// One advisory-lock key per (namespace, entity, attribute), joined by the unit separator so
/// ("a b", "c") and ("a", "b c") stay apart. A hash collision only makes two keys queue.
fn fact_lock_key(namespace: &str, entity: &str, attribute: &str) -> String {
    format!("{namespace}\u{1f}{entity}\u{1f}{attribute}")
}

/// A query with a row's columns bound as `$1`…`$21`, in `COLUMNS` order (the embedding is
/// `$20`): every statement that writes a whole row (an insert, an archive row read back from
/// an object) binds them here.
pub(super) fn bind_memory<'q>(
    query: sqlx::query::Query<'q, sqlx::Postgres, sqlx::postgres::PgArguments>,
    memory: &'q Memory,
) -> sqlx::query::Query<'q, sqlx::Postgres, sqlx::postgres::PgArguments> {
    query
        .bind(memory.id)
        .bind(&memory.namespace)
        .bind(memory.memory_type.as_str())
        .bind(&memory.content)
        .bind(memory.importance)
        .bind(memory.status.as_str())
        .bind(&memory.entity)
        .bind(&memory.attribute)
        .bind(&memory.source)
        .bind(&memory.merged_sources)
        .bind(&memory.metadata)
        .bind(ms(memory.created_at))
        .bind(ms(memory.updated_at))
        .bind(memory.expires_at.map(ms))
        .bind(memory.last_accessed_at.map(ms))
        .bind(memory.access_count)
        .bind(memory.deprecated_at.map(ms))
        .bind(memory.deprecated_by)
        .bind(&memory.embedding_model)
        .bind(&memory.embedding)
        .bind(ms(memory.occurred_at))
}

/// The INSERT of a new row (active, index pending), on a pool or inside a transaction.
async fn insert_row<'e>(
    executor: impl sqlx::Executor<'e, Database = sqlx::Postgres>,
    memory: &Memory,
) -> Result<(), StoreError> {
    // One statement: the row and its vector are written together or not at all.
    bind_memory(
        sqlx::query(sqlx::AssertSqlSafe(format!(
            "WITH vector AS (INSERT INTO memory_vectors (id, embedding) VALUES ($1, $20)) \
             INSERT INTO memories ({}, index_pending, lexical) \
             VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15, $16, $17, \
             $18, $19, $21, TRUE, $22)",
            without_embedding(COLUMNS)
        ))),
        memory,
    )
    .bind(lexical::document(&memory.content))
    .execute(executor)
    .await
    .map(drop)
    .map_err(|e| insert_error(e, memory))
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

    async fn insert(&self, memory: &Memory) -> Result<Inserted, StoreError> {
        let (Some(entity), Some(attribute)) = (&memory.entity, &memory.attribute) else {
            // Not a fact: nothing to supersede, so one autocommitted statement will do.
            insert_row(&self.pool, memory).await?;
            return Ok(Inserted::default());
        };
        let mut tx = self.pool.begin().await?;
        let now = ms(memory.created_at.max(memory.updated_at));
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
        let superseded = rows_to_memories(&rows)?;
        let superseded_by: Option<MemoryId> = sqlx::query_scalar(
            "SELECT id FROM memories \
             WHERE namespace = $1 AND entity = $2 AND attribute = $3 AND status = 'active'",
        )
        .bind(&memory.namespace)
        .bind(entity)
        .bind(attribute)
        .fetch_optional(&mut *tx)
        .await?;
        insert_row(
            &mut *tx,
            &memory.clone().deprecated_on_arrival(superseded_by, now),
        )
        .await?;
        tx.commit().await?;
        Ok(Inserted {
            superseded,
            superseded_by,
        })
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
        tx.commit().await?;
        row.as_ref().map(row_to_memory).transpose()
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
             WHERE m.lexical_tsv @@ q.query AND m.namespace = $2 \
               AND m.memory_type = ANY($3) AND m.status = ANY($4) \
               AND (m.expires_at IS NULL OR m.expires_at > $6) \
               AND ($7::timestamptz IS NULL OR m.occurred_at >= $7) \
               AND ($8::timestamptz IS NULL OR m.occurred_at <= $8) \
             ORDER BY score DESC, m.id LIMIT $5",
        )
        .bind(&query.terms)
        .bind(&query.namespace)
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
        let rows: Vec<(i32, MemoryId)> = sqlx::query_as(sqlx::AssertSqlSafe(sql))
            .bind(id)
            .bind(namespace)
            .bind(memory_type)
            .bind(entity)
            .bind(created_before)
            .bind(ms(at))
            .fetch_all(&self.pool)
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
        let rows = sqlx::query(sqlx::AssertSqlSafe(sql))
            .bind(ms(now))
            .bind(limit)
            .fetch_all(&self.pool)
            .await?;
        soonest_expiry_first(rows_to_memories(&rows)?)
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
