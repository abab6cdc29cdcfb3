//! PostgreSQL implementation of `MemoryStore` (scale-out: several daemons on one database).
//! Same rules as `sqlite/`, pinned by the same suite; id lists travel as arrays and are
//! expanded with `unnest`, so every statement is static SQL.

mod audit;
mod distill;
mod integrity;
mod ledger;
mod maintenance;
mod memories;
mod quarantine;
mod tokens;
mod transfer;

use std::time::Duration;

use async_trait::async_trait;
use chrono::{DateTime, TimeZone, Utc};
use sqlx::Row;
use sqlx::postgres::{PgPool, PgPoolOptions, PgRow};

use crate::domain::{Memory, MemoryId};
use crate::lexical;
use crate::signing::Signer;
use crate::store::{
    AccessHit, COLUMNS, COUNTS_SQL, CountRow, ForgetSelector, Forgotten, Inserted, LexicalHit,
    LexicalHits, LexicalQuery, MemoryStore, MergeUpdate, StoreError, StoreLock, count_row,
    insert_error, parse_type_and_status, soonest_expiry_first,
};

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
    signer: Signer,
    /// When a bulk import next brings the planner's statistics up to date.
    statistics: transfer::Statistics,
}

impl PostgresStore {
    /// Connect and apply the migrations in `migrations/postgres/`; rows are signed with
    /// `signer` (`store::adopt` checks it against the rows already there).
    pub async fn connect(url: &str, size: PoolSize, signer: Signer) -> Result<Self, StoreError> {
        let pool = PgPoolOptions::new()
            .min_connections(size.min)
            .max_connections(size.max)
            .acquire_timeout(Duration::from_secs(10))
            .connect(url)
            .await?;
        let store = Self {
            pool,
            signer,
            statistics: transfer::Statistics::default(),
        };
        store.migrate().await?;
        store.fill_lexical().await?;
        store.upgrade_lexical().await?;
        crate::store::adopt(&store).await?;
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
impl crate::store::HeldLock for sqlx::Transaction<'static, sqlx::Postgres> {
    async fn release(self: Box<Self>) {
        // Rolling back ends the transaction and with it every xact-scoped advisory lock.
        if let Err(e) = (*self).rollback().await {
            tracing::warn!(error = %e, "releasing a database lock failed; it ends with its connection");
        }
    }
}

#[async_trait]
impl crate::store::HeldLock for sqlx::PgConnection {
    async fn release(self: Box<Self>) {
        use sqlx::Connection;
        // Session-level locks end with the session.
        let _ = (*self).close().await;
    }
}

fn ms(at: DateTime<Utc>) -> DateTime<Utc> {
    Utc.timestamp_millis_opt(at.timestamp_millis())
        .single()
        .unwrap_or(at)
}

fn row_to_memory(row: &PgRow) -> Result<Memory, StoreError> {
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
        signature: row.try_get("signature")?,
    })
}

fn rows_to_memories(rows: &[PgRow]) -> Result<Vec<Memory>, StoreError> {
    rows.iter().map(row_to_memory).collect()
}

/// Rows with their vectors: `memories` holds a row's columns but its embedding, which lives in
/// `memory_vectors` (migration 0006, so an archive move copies ~300 B, not ~2 kB). Every
/// `SELECT {COLUMNS}` reads from this join.
const ROWS: &str = "memories JOIN memory_vectors USING (id)";

/// `columns` (a list in `COLUMNS` order, possibly with more after it) without the embedding:
/// the list as `memories` and `memories_archive` hold it.
fn without_embedding(columns: &str) -> String {
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

/// A query with a row's columns bound as `$1`…`$22`, in `COLUMNS` order (the embedding is
/// `$20`): every statement that writes a whole row (an insert, an archive row read back from
/// an object) binds them here.
fn bind_memory<'q>(
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
        .bind(&memory.signature)
}

/// Rows one `insert_rows` statement holds: each column travels as one array parameter, so
/// the count is bounded by the statement's size (500 × 512-d vectors: ~1 MB), not by
/// PostgreSQL's 65,535 parameters.
const ROWS_PER_INSERT: usize = 500;

/// New rows (index pending), signed by `signer`, `ROWS_PER_INSERT` to a statement: each column
/// bound as an array and expanded with `unnest`, the vectors as one flat array sliced per row.
/// One statement a row made a bulk import a round trip per row: `bench import --backend
/// postgres` at 100k LoCoMo turns, 2 cores: 54.5 s → 41.1 s.
/// A statement that breaks a constraint (a fact's key already held) is rolled back to its
/// savepoint and retried row by row, so the error names the row at fault.
async fn insert_rows(
    tx: &mut sqlx::PgConnection,
    signer: &Signer,
    memories: &[&Memory],
) -> Result<(), StoreError> {
    use sqlx::Connection;
    let sql = insert_rows_sql();
    for chunk in memories.chunks(ROWS_PER_INSERT) {
        let signed: Vec<Memory> = chunk.iter().map(|m| signer.signed((*m).clone())).collect();
        let mut savepoint = tx.begin().await?;
        match bind_columns(sqlx::query(sqlx::AssertSqlSafe(sql.as_str())), &signed)
            .execute(&mut *savepoint)
            .await
        {
            Ok(_) => savepoint.commit().await?,
            Err(sqlx::Error::Database(db)) if db.is_unique_violation() && signed.len() > 1 => {
                savepoint.rollback().await?;
                for memory in chunk {
                    insert_row(&mut *tx, signer, memory).await?;
                }
            }
            Err(e) => return Err(insert_error(e, &signed[0])),
        }
    }
    Ok(())
}

/// `insert_rows`' statement: `$1`…`$25` are the columns of `bind_columns`, in order.
fn insert_rows_sql() -> String {
    let columns = without_embedding(COLUMNS);
    format!(
        "WITH rows AS (SELECT * FROM UNNEST($1::uuid[], $2::text[], $3::text[], $4::text[], \
           $5::float8[], $6::text[], $7::text[], $8::text[], $9::jsonb[], $10::jsonb[], \
           $11::jsonb[], $12::timestamptz[], $13::timestamptz[], $14::timestamptz[], \
           $15::timestamptz[], $16::int8[], $17::timestamptz[], $18::uuid[], $19::text[], \
           $20::timestamptz[], $21::text[], $22::text[], $23::int4[], $24::int4[]) \
           AS t({columns}, lexical, vector_at, vector_len)), \
         vectors AS (INSERT INTO memory_vectors (id, embedding) \
           SELECT id, ($25::real[])[vector_at + 1 : vector_at + vector_len] FROM rows) \
         INSERT INTO memories ({columns}, index_pending, lexical) \
         SELECT {columns}, TRUE, lexical FROM rows"
    )
}

/// `rows`' columns as arrays, in `insert_rows_sql`'s order; the vectors flattened into one
/// array, with each row's offset and length into it.
fn bind_columns<'q>(
    query: sqlx::query::Query<'q, sqlx::Postgres, sqlx::postgres::PgArguments>,
    rows: &'q [Memory],
) -> sqlx::query::Query<'q, sqlx::Postgres, sqlx::postgres::PgArguments> {
    fn column<'a, T>(rows: &'a [Memory], f: impl Fn(&'a Memory) -> T) -> Vec<T> {
        rows.iter().map(f).collect()
    }
    let mut vectors = Vec::with_capacity(rows.iter().map(|m| m.embedding.len()).sum());
    let mut offsets = Vec::with_capacity(rows.len());
    for m in rows {
        offsets.push(vectors.len() as i32);
        vectors.extend_from_slice(&m.embedding);
    }
    query
        .bind(column(rows, |m| m.id))
        .bind(column(rows, |m| m.namespace.as_str()))
        .bind(column(rows, |m| m.memory_type.as_str()))
        .bind(column(rows, |m| m.content.as_str()))
        .bind(column(rows, |m| m.importance))
        .bind(column(rows, |m| m.status.as_str()))
        .bind(column(rows, |m| m.entity.as_deref()))
        .bind(column(rows, |m| m.attribute.as_deref()))
        .bind(column(rows, |m| &m.source))
        .bind(column(rows, |m| &m.merged_sources))
        .bind(column(rows, |m| &m.metadata))
        .bind(column(rows, |m| ms(m.created_at)))
        .bind(column(rows, |m| ms(m.updated_at)))
        .bind(column(rows, |m| m.expires_at.map(ms)))
        .bind(column(rows, |m| m.last_accessed_at.map(ms)))
        .bind(column(rows, |m| m.access_count))
        .bind(column(rows, |m| m.deprecated_at.map(ms)))
        .bind(column(rows, |m| m.deprecated_by))
        .bind(column(rows, |m| m.embedding_model.as_str()))
        .bind(column(rows, |m| ms(m.occurred_at)))
        .bind(column(rows, |m| m.signature.as_deref()))
        .bind(column(rows, |m| lexical::document(&m.content)))
        .bind(offsets)
        .bind(column(rows, |m| m.embedding.len() as i32))
        .bind(vectors)
}

/// The INSERT of a new row (active, index pending), signed by `signer`, on a pool or inside a
/// transaction.
async fn insert_row<'e>(
    executor: impl sqlx::Executor<'e, Database = sqlx::Postgres>,
    signer: &Signer,
    memory: &Memory,
) -> Result<(), StoreError> {
    let memory = &signer.signed(memory.clone());
    // One statement: the row and its vector are written together or not at all.
    bind_memory(
        sqlx::query(sqlx::AssertSqlSafe(format!(
            "WITH vector AS (INSERT INTO memory_vectors (id, embedding) VALUES ($1, $20)) \
             INSERT INTO memories ({}, index_pending, lexical) \
             VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15, $16, $17, \
             $18, $19, $21, $22, TRUE, $23)",
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
