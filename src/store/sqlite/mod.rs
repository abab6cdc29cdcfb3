//! SQLite implementation of `MemoryStore` (the embedded default). WAL mode, one file under the
//! data dir. Id lists are passed as one JSON array and expanded with `json_each`, so every
//! statement is static SQL.

mod audit;
mod distill;
mod integrity;
mod ledger;
mod maintenance;
mod memories;
mod quarantine;
mod tokens;
mod transfer;

use std::path::Path;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

use chrono::{DateTime, TimeZone, Utc};
use serde_json::Value;
use sqlx::Row;
use sqlx::sqlite::{
    SqliteConnectOptions, SqliteJournalMode, SqlitePool, SqlitePoolOptions, SqliteRow,
    SqliteSynchronous,
};

use crate::domain::{Memory, MemoryId};
use crate::lexical::{self, StatsCache};
use crate::signing::Signer;
use crate::store::{
    AccessHit, COLUMNS, COUNTS_SQL, CountRow, ForgetSelector, Forgotten, Inserted, LexicalHit,
    LexicalHits, LexicalQuery, MemoryStore, MergeUpdate, StoreError, StoreLock, corrupt, count_row,
    insert_error, parse_type_and_status, soonest_expiry_first,
};

pub struct SqliteStore {
    /// Reads (several at once: WAL readers never wait for the writer).
    pool: SqlitePool,
    /// Every write, on one connection: this process's writers queue for it in order. On the
    /// shared pool they raced for SQLite's write lock, and a loser's busy handler slept 1, 2,
    /// 5… ms however soon the lock was free again: `bench search --n 100000 --dimension 512
    /// --writers 8` made 1.5 such sleeps a write and left a quarter of the CPU idle.
    writer: SqlitePool,
    document_frequencies: StatsCache<i64>,
    signer: Signer,
    /// A bulk load dropped `memories_active_content` (`REPEAT_INDEX`) until its end. The
    /// data-dir lock makes this process the file's only writer, so the flag is the truth.
    repeat_index_dropped: AtomicBool,
}

/// The write path's exact-repeat key, as migration 0016 made it: a bulk load drops it and
/// makes it again at its end, and opening the store makes it again after a load that never
/// ended. Kept up in the texts' order, unlike the rows', it cost `bench import --n 1000000
/// --locomo` a quarter to a third (162–176 s dropped against 217–220 s kept on one machine;
/// 196 s without the key against 287 s on another): each 500-row transaction wrote ~500 of
/// its 4 kB pages to the WAL again. Made again in one sorted pass it costs ~5 µs a row (300k
/// synthetic rows: 1.5 s).
const REPEAT_INDEX: &str = "CREATE INDEX IF NOT EXISTS memories_active_content \
     ON memories (substr(content, 1, 64)) WHERE status = 'active'";

impl SqliteStore {
    /// Open (creating if needed) the database file and apply migrations; rows are signed with
    /// `signer` (`store::adopt` checks it against the rows already there).
    pub async fn open(path: &Path, signer: Signer) -> Result<Self, StoreError> {
        let options = SqliteConnectOptions::new()
            .filename(path)
            .create_if_missing(true)
            .journal_mode(SqliteJournalMode::Wal)
            .synchronous(SqliteSynchronous::Normal)
            .busy_timeout(Duration::from_secs(10))
            .foreign_keys(true);
        let writer = SqlitePoolOptions::new()
            .max_connections(1)
            .connect_with(options.clone())
            .await?;
        sqlx::migrate!("./migrations/sqlite").run(&writer).await?;
        let pool = SqlitePoolOptions::new()
            .max_connections(4)
            .connect_with(options)
            .await?;
        let store = Self {
            pool,
            writer,
            document_frequencies: StatsCache::default(),
            signer,
            repeat_index_dropped: AtomicBool::new(false),
        };
        store.make_repeat_index().await?;
        store.fill_lexical().await?;
        store.upgrade_lexical().await?;
        crate::store::adopt(&store).await?;
        Ok(store)
    }

    /// Close both pools and wait for their connections to close, so the last one checkpoints
    /// the WAL into the database file (a file about to be copied must hold everything).
    pub async fn close(self) {
        self.pool.close().await;
        self.writer.close().await;
    }

    /// Index every row (hot and archived) again when the stored terms were made under other
    /// rules than `lexical::VERSION`'s, a batch per transaction; then record the version. A
    /// no-op once done; a crash midway starts over at the next open (same values).
    async fn upgrade_lexical(&self) -> Result<(), StoreError> {
        if self.meta_get(lexical::VERSION_KEY).await?.as_deref() == Some(lexical::VERSION) {
            return Ok(());
        }
        for (table, key) in [("memories", "seq"), ("memories_archive", "id")] {
            let mut after: Option<String> = None;
            loop {
                let rows: Vec<(String, String)> = sqlx::query_as(sqlx::AssertSqlSafe(format!(
                    "SELECT CAST({key} AS TEXT), content FROM {table} \
                     WHERE ?1 IS NULL OR {key} > CAST(?1 AS {kind}) ORDER BY {key} LIMIT 1000",
                    kind = if key == "seq" { "INTEGER" } else { "TEXT" }
                )))
                .bind(&after)
                .fetch_all(&self.pool)
                .await?;
                let Some((last, _)) = rows.last() else { break };
                after = Some(last.clone());
                let mut tx = self.writer.begin_with("BEGIN IMMEDIATE").await?;
                for (row, content) in &rows {
                    sqlx::query(sqlx::AssertSqlSafe(format!(
                        "UPDATE {table} SET lexical = ?2 WHERE {key} = CAST(?1 AS {kind})",
                        kind = if key == "seq" { "INTEGER" } else { "TEXT" }
                    )))
                    .bind(row)
                    .bind(lexical::document(content))
                    .execute(&mut *tx)
                    .await?;
                }
                tx.commit().await?;
            }
        }
        self.meta_set(lexical::VERSION_KEY, lexical::VERSION).await
    }

    /// Compute the lexical terms of rows stored before the full-text index existed (the
    /// migration leaves them NULL), a batch per transaction. A no-op once done.
    async fn fill_lexical(&self) -> Result<(), StoreError> {
        loop {
            let rows: Vec<(i64, String)> = sqlx::query_as(
                "SELECT seq, content FROM memories WHERE lexical IS NULL ORDER BY seq LIMIT 1000",
            )
            .fetch_all(&self.pool)
            .await?;
            if rows.is_empty() {
                return Ok(());
            }
            let mut tx = self.writer.begin_with("BEGIN IMMEDIATE").await?;
            for (seq, content) in &rows {
                sqlx::query("UPDATE memories SET lexical = ?2 WHERE seq = ?1 AND lexical IS NULL")
                    .bind(seq)
                    .bind(lexical::document(content))
                    .execute(&mut *tx)
                    .await?;
            }
            tx.commit().await?;
        }
    }

    /// `REPEAT_INDEX` made (if a bulk load left it dropped) and asked again.
    async fn make_repeat_index(&self) -> Result<(), StoreError> {
        sqlx::query(REPEAT_INDEX).execute(&self.writer).await?;
        self.repeat_index_dropped.store(false, Ordering::Release);
        Ok(())
    }

    /// The readers' pool.
    pub fn pool(&self) -> &SqlitePool {
        &self.pool
    }

    /// The writer's pool (one connection).
    pub fn writer(&self) -> &SqlitePool {
        &self.writer
    }

    /// The query terms to match, and the BM25 scale of the match (`LexicalHits::full_match`).
    /// Terms held by more than `max_df` of the rows are left out (`lexical::selective`).
    async fn selective_terms(
        &self,
        query: &LexicalQuery,
    ) -> Result<(Vec<String>, f64), StoreError> {
        // The largest rowid: the row count, or more after deletes (O(1), unlike COUNT(*));
        // an overcount only makes the scale a little larger.
        let rows: Option<i64> = sqlx::query_scalar("SELECT max(seq) FROM memories")
            .fetch_one(&self.pool)
            .await?;
        let rows = rows.unwrap_or(0);
        let (mut counts, missing) = self.document_frequencies.lookup(rows, &query.terms);
        if !missing.is_empty() {
            let read: Vec<(String, i64)> = sqlx::query_as(
                "SELECT term, doc FROM memories_fts_vocab \
                 WHERE term IN (SELECT value FROM json_each(?1))",
            )
            .bind(serde_json::to_string(&missing).unwrap_or_default())
            .fetch_all(&self.pool)
            .await?;
            self.document_frequencies.remember(rows, &missing, &read);
            counts.extend(read);
        }
        let df = |term: &str| {
            counts
                .iter()
                .find(|(t, _)| t == term)
                .map_or(0, |(_, doc)| *doc)
        };
        let mut by_rarity = query.terms.clone();
        by_rarity.sort_by_key(|t| df(t));
        let limit = (query.max_df * rows as f64) as i64;
        let terms = lexical::selective(by_rarity, rows as f64, query.max_df, |t| df(t) > limit);
        // FTS5's BM25 IDF, over every term matched for. A term no row holds counts too (at
        // its IDF, the highest): a query whose telling word is nowhere is matched weakly.
        let n = rows as f64;
        let full_match = terms
            .iter()
            .map(|t| df(t) as f64)
            .map(|d| (((n - d + 0.5) / (d + 0.5)).ln()).max(1e-6))
            .sum();
        Ok((terms, full_match))
    }

    /// Run `sql` (an `UPDATE … FROM json_each(?1)`) over `rows`, 1,000 JSON rows per statement,
    /// all in one transaction. Driven from the small list and joined by primary key, so the cost
    /// is O(rows), not O(table).
    async fn update_from_json_rows(
        &self,
        sql: &'static str,
        rows: Vec<Value>,
    ) -> Result<(), StoreError> {
        if rows.is_empty() {
            return Ok(());
        }
        let mut tx = self.writer.begin_with("BEGIN IMMEDIATE").await?;
        for chunk in rows.chunks(1_000) {
            sqlx::query(sql)
                .bind(Value::Array(chunk.to_vec()).to_string())
                .execute(&mut *tx)
                .await?;
        }
        tx.commit().await?;
        Ok(())
    }
}

fn ms(at: DateTime<Utc>) -> i64 {
    at.timestamp_millis()
}

fn from_ms(value: i64) -> DateTime<Utc> {
    Utc.timestamp_millis_opt(value)
        .single()
        .unwrap_or(DateTime::<Utc>::MIN_UTC)
}

fn ids_json(ids: &[MemoryId]) -> String {
    Value::Array(ids.iter().map(|id| Value::String(id.to_string())).collect()).to_string()
}

/// Ids read back as text.
fn parse_ids(ids: Vec<String>) -> Result<Vec<MemoryId>, StoreError> {
    ids.into_iter()
        .map(|id| MemoryId::parse_str(&id).map_err(|e| corrupt(&id, e.to_string())))
        .collect()
}

fn embedding_to_bytes(embedding: &[f32]) -> Vec<u8> {
    embedding.iter().flat_map(|x| x.to_le_bytes()).collect()
}

fn embedding_from_bytes(bytes: &[u8]) -> Option<Vec<f32>> {
    if !bytes.len().is_multiple_of(4) {
        return None;
    }
    Some(
        bytes
            .chunks_exact(4)
            .map(|c| f32::from_le_bytes([c[0], c[1], c[2], c[3]]))
            .collect(),
    )
}

fn parse_json(id: &str, column: &str, text: &str) -> Result<Value, StoreError> {
    serde_json::from_str(text).map_err(|e| corrupt(id, format!("{column}: {e}")))
}

fn row_to_memory(row: &SqliteRow) -> Result<Memory, StoreError> {
    let id_text: String = row.try_get("id")?;
    let id = MemoryId::parse_str(&id_text).map_err(|e| corrupt(&id_text, e.to_string()))?;
    let (memory_type, status) = parse_type_and_status(
        &id_text,
        row.try_get("memory_type")?,
        row.try_get("status")?,
    )?;
    let deprecated_by = row
        .try_get::<Option<String>, _>("deprecated_by")?
        .map(|s| MemoryId::parse_str(&s).map_err(|e| corrupt(&id_text, e.to_string())))
        .transpose()?;
    let embedding_bytes: Vec<u8> = row.try_get("embedding")?;
    let embedding = embedding_from_bytes(&embedding_bytes)
        .ok_or_else(|| corrupt(&id_text, "embedding length is not a multiple of 4"))?;
    Ok(Memory {
        id,
        namespace: row.try_get("namespace")?,
        memory_type,
        content: row.try_get("content")?,
        importance: row.try_get("importance")?,
        status,
        entity: row.try_get("entity")?,
        attribute: row.try_get("attribute")?,
        source: parse_json(&id_text, "source", row.try_get("source")?)?,
        merged_sources: parse_json(&id_text, "merged_sources", row.try_get("merged_sources")?)?,
        metadata: parse_json(&id_text, "metadata", row.try_get("metadata")?)?,
        created_at: from_ms(row.try_get("created_at")?),
        occurred_at: from_ms(row.try_get("occurred_at")?),
        updated_at: from_ms(row.try_get("updated_at")?),
        expires_at: row.try_get::<Option<i64>, _>("expires_at")?.map(from_ms),
        last_accessed_at: row
            .try_get::<Option<i64>, _>("last_accessed_at")?
            .map(from_ms),
        access_count: row.try_get("access_count")?,
        deprecated_at: row.try_get::<Option<i64>, _>("deprecated_at")?.map(from_ms),
        deprecated_by,
        embedding_model: row.try_get("embedding_model")?,
        embedding,
        signature: row.try_get("signature")?,
    })
}

fn rows_to_memories(rows: &[SqliteRow]) -> Result<Vec<Memory>, StoreError> {
    rows.iter().map(row_to_memory).collect()
}

/// A query with a row's columns bound as `?1`…`?22`, in `COLUMNS` order: every statement that
/// writes a whole row (an insert, an archive row read back from an object) binds them here.
fn bind_memory<'q>(
    query: sqlx::query::Query<'q, sqlx::Sqlite, sqlx::sqlite::SqliteArguments>,
    memory: &'q Memory,
) -> sqlx::query::Query<'q, sqlx::Sqlite, sqlx::sqlite::SqliteArguments> {
    query
        .bind(memory.id.to_string())
        .bind(&memory.namespace)
        .bind(memory.memory_type.as_str())
        .bind(&memory.content)
        .bind(memory.importance)
        .bind(memory.status.as_str())
        .bind(&memory.entity)
        .bind(&memory.attribute)
        .bind(memory.source.to_string())
        .bind(memory.merged_sources.to_string())
        .bind(memory.metadata.to_string())
        .bind(ms(memory.created_at))
        .bind(ms(memory.updated_at))
        .bind(memory.expires_at.map(ms))
        .bind(memory.last_accessed_at.map(ms))
        .bind(memory.access_count)
        .bind(memory.deprecated_at.map(ms))
        .bind(memory.deprecated_by.map(|id| id.to_string()))
        .bind(&memory.embedding_model)
        .bind(embedding_to_bytes(&memory.embedding))
        .bind(ms(memory.occurred_at))
        .bind(&memory.signature)
}

/// Rows one multi-row INSERT of `insert_rows` holds: 23 parameters each, within SQLite's
/// 32,766.
const ROWS_PER_INSERT: usize = 100;

/// New rows (index pending), signed by `signer`, `ROWS_PER_INSERT` to a statement. The
/// full-text index's trigger writes to an FTS5 table, which flushes its pending terms to disk
/// at each statement's savepoint: one row per statement flushed (and merged) the index row by
/// row. `bench import --locomo` at 100k, 2 cores: … A failed statement (a fact's key already
/// held) is retried row by row, so the error names the row at fault.
async fn insert_rows(
    tx: &mut sqlx::SqliteConnection,
    signer: &Signer,
    memories: &[&Memory],
) -> Result<(), StoreError> {
    for chunk in memories.chunks(ROWS_PER_INSERT) {
        let signed: Vec<Memory> = chunk.iter().map(|m| signer.signed((*m).clone())).collect();
        let lexical: Vec<String> = signed
            .iter()
            .map(|m| lexical::document(&m.content))
            .collect();
        let row = format!("({}, 1, ?)", ["?"; 22].join(", "));
        let sql = format!(
            "INSERT INTO memories ({COLUMNS}, index_pending, lexical) VALUES {}",
            vec![row; signed.len()].join(", ")
        );
        let mut query = sqlx::query(sqlx::AssertSqlSafe(sql));
        for (memory, lexical) in signed.iter().zip(&lexical) {
            query = bind_memory(query, memory).bind(lexical);
        }
        if let Err(e) = query.execute(&mut *tx).await {
            // A constraint rolls back the statement alone: find the row at fault. Any other
            // error (a full disk, I/O) may have rolled back the whole transaction, and rows
            // retried then would be written outside it.
            let constraint = matches!(&e, sqlx::Error::Database(db) if db.is_unique_violation());
            if !constraint || signed.len() == 1 {
                return Err(insert_error(e, &signed[0]));
            }
            for memory in chunk {
                insert_row(&mut *tx, signer, memory).await?;
            }
        }
    }
    Ok(())
}

/// The INSERT of a new row (active, index pending), signed by `signer`, on a pool or inside a
/// transaction.
async fn insert_row<'e>(
    executor: impl sqlx::Executor<'e, Database = sqlx::Sqlite>,
    signer: &Signer,
    memory: &Memory,
) -> Result<(), StoreError> {
    let memory = &signer.signed(memory.clone());
    bind_memory(
        sqlx::query(sqlx::AssertSqlSafe(format!(
            "INSERT INTO memories ({COLUMNS}, index_pending, lexical) \
             VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13, ?14, ?15, ?16, ?17, \
             ?18, ?19, ?20, ?21, ?22, 1, ?23)"
        ))),
        memory,
    )
    .bind(lexical::document(&memory.content))
    .execute(executor)
    .await
    .map(drop)
    .map_err(|e| insert_error(e, memory))
}
