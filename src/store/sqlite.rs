//! SQLite implementation of `MemoryStore` (the embedded default). WAL mode, one file under the
//! data dir. Id lists are passed as one JSON array and expanded with `json_each`, so every
//! statement is static SQL.

use std::path::Path;
use std::str::FromStr;
use std::time::Duration;

use async_trait::async_trait;
use chrono::{DateTime, TimeZone, Utc};
use serde_json::Value;
use sqlx::Row;
use sqlx::sqlite::{
    SqliteConnectOptions, SqliteJournalMode, SqlitePool, SqlitePoolOptions, SqliteRow,
    SqliteSynchronous,
};

use super::{
    AccessHit, COLUMNS, COUNTS_SQL, CountRow, ForgetSelector, Forgotten, Inserted, LexicalHit,
    LexicalHits, LexicalQuery, MemoryStore, MergeUpdate, StoreError, StoreLock, corrupt, count_row,
    insert_error, parse_type_and_status, soonest_expiry_first,
};
use crate::domain::{Memory, MemoryId, Namespace};
use crate::lexical::{self, StatsCache};

pub struct SqliteStore {
    pool: SqlitePool,
    document_frequencies: StatsCache<i64>,
}

impl SqliteStore {
    /// Open (creating if needed) the database file and apply migrations.
    pub async fn open(path: &Path) -> Result<Self, StoreError> {
        let options = SqliteConnectOptions::new()
            .filename(path)
            .create_if_missing(true)
            .journal_mode(SqliteJournalMode::Wal)
            .synchronous(SqliteSynchronous::Normal)
            .busy_timeout(Duration::from_secs(10))
            .foreign_keys(true);
        let pool = SqlitePoolOptions::new()
            .max_connections(4)
            .connect_with(options)
            .await?;
        sqlx::migrate!("./migrations/sqlite").run(&pool).await?;
        let store = Self {
            pool,
            document_frequencies: StatsCache::default(),
        };
        store.fill_lexical().await?;
        store.upgrade_lexical().await?;
        Ok(store)
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
                let mut tx = self.pool.begin_with("BEGIN IMMEDIATE").await?;
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
            let mut tx = self.pool.begin_with("BEGIN IMMEDIATE").await?;
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

    /// For tests and tools: open from a URL such as `sqlite://path/to.db`.
    pub async fn open_url(url: &str) -> Result<Self, StoreError> {
        let options = SqliteConnectOptions::from_str(url)?;
        Self::open(options.get_filename()).await
    }

    pub fn pool(&self) -> &SqlitePool {
        &self.pool
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
        let mut tx = self.pool.begin_with("BEGIN IMMEDIATE").await?;
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

pub(super) fn ms(at: DateTime<Utc>) -> i64 {
    at.timestamp_millis()
}

pub(super) fn from_ms(value: i64) -> DateTime<Utc> {
    Utc.timestamp_millis_opt(value)
        .single()
        .unwrap_or(DateTime::<Utc>::MIN_UTC)
}

pub(super) fn ids_json(ids: &[MemoryId]) -> String {
    Value::Array(ids.iter().map(|id| Value::String(id.to_string())).collect()).to_string()
}

/// Ids read back as text.
pub(super) fn parse_ids(ids: Vec<String>) -> Result<Vec<MemoryId>, StoreError> {
    ids.into_iter()
        .map(|id| MemoryId::parse_str(&id).map_err(|e| corrupt(&id, e.to_string())))
        .collect()
}

pub(crate) fn embedding_to_bytes(embedding: &[f32]) -> Vec<u8> {
    embedding.iter().flat_map(|x| x.to_le_bytes()).collect()
}

pub(crate) fn embedding_from_bytes(bytes: &[u8]) -> Option<Vec<f32>> {
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

pub(super) fn row_to_memory(row: &SqliteRow) -> Result<Memory, StoreError> {
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
    })
}

fn rows_to_memories(rows: &[SqliteRow]) -> Result<Vec<Memory>, StoreError> {
    rows.iter().map(row_to_memory).collect()
}

/// A query with a row's columns bound as `?1`…`?21`, in `COLUMNS` order: every statement that
/// writes a whole row (an insert, an archive row read back from an object) binds them here.
pub(super) fn bind_memory<'q>(
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
}

/// The INSERT of a new row (active, index pending), on a pool or inside a transaction.
async fn insert_row<'e>(
    executor: impl sqlx::Executor<'e, Database = sqlx::Sqlite>,
    memory: &Memory,
) -> Result<(), StoreError> {
    bind_memory(
        sqlx::query(sqlx::AssertSqlSafe(format!(
            "INSERT INTO memories ({COLUMNS}, index_pending, lexical) \
             VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13, ?14, ?15, ?16, ?17, \
             ?18, ?19, ?20, ?21, 1, ?22)"
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
impl MemoryStore for SqliteStore {
    /// The data-dir lock keeps other processes away; the service serialises its own writers.
    async fn lock(&self, _key: &str) -> Result<StoreLock, StoreError> {
        Ok(StoreLock::process_local())
    }

    async fn try_lock(&self, _key: &str) -> Result<Option<StoreLock>, StoreError> {
        Ok(Some(StoreLock::process_local()))
    }

    /// The data-dir lock already keeps a second process away from this file.
    async fn claim_for_local_index(&self) -> Result<StoreLock, StoreError> {
        Ok(StoreLock::process_local())
    }

    async fn insert(&self, memory: &Memory) -> Result<Inserted, StoreError> {
        let (Some(entity), Some(attribute)) = (&memory.entity, &memory.attribute) else {
            // Not a fact: nothing to supersede, so one autocommitted statement will do.
            insert_row(&self.pool, memory).await?;
            return Ok(Inserted::default());
        };
        // IMMEDIATE takes the write lock up front: writers queue here, so the supersede below
        // sees every fact committed before it (and no deadlock-prone lock upgrade mid-way).
        let mut tx = self.pool.begin_with("BEGIN IMMEDIATE").await?;
        let now = memory.created_at.max(memory.updated_at);
        let rows = sqlx::query(sqlx::AssertSqlSafe(format!(
            "UPDATE memories SET status = 'deprecated', deprecated_at = ?1, \
             deprecated_by = ?2, updated_at = ?1, index_pending = 1 \
             WHERE namespace = ?3 AND entity = ?4 AND attribute = ?5 AND status = 'active' \
               AND occurred_at <= ?6 \
             RETURNING {COLUMNS}"
        )))
        .bind(ms(now))
        .bind(memory.id.to_string())
        .bind(&memory.namespace)
        .bind(entity)
        .bind(attribute)
        .bind(ms(memory.occurred_at))
        .fetch_all(&mut *tx)
        .await?;
        let superseded = rows_to_memories(&rows)?;
        let later: Option<String> = sqlx::query_scalar(
            "SELECT id FROM memories \
             WHERE namespace = ?1 AND entity = ?2 AND attribute = ?3 AND status = 'active'",
        )
        .bind(&memory.namespace)
        .bind(entity)
        .bind(attribute)
        .fetch_optional(&mut *tx)
        .await?;
        let superseded_by = later
            .map(|id| MemoryId::parse_str(&id).map_err(|e| corrupt(&id, e.to_string())))
            .transpose()?;
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
        let mut tx = self.pool.begin_with("BEGIN IMMEDIATE").await?;
        let (content, embedding) = match &update.replace_content {
            Some((content, embedding)) => {
                (Some(content.as_str()), Some(embedding_to_bytes(embedding)))
            }
            None => (None, None),
        };
        let changed = sqlx::query(
            "UPDATE memories SET \
               content = COALESCE(?2, content), \
               lexical = COALESCE(?8, lexical), \
               embedding = COALESCE(?3, embedding), \
               importance = MAX(importance, ?4), \
               merged_sources = json_insert(merged_sources, '$[#]', json(?5)), \
               updated_at = ?6, \
               expires_at = CASE WHEN expires_at IS NULL OR ?7 IS NULL THEN NULL \
                                 ELSE MAX(expires_at, ?7) END, \
               occurred_at = MAX(occurred_at, ?9), \
               index_pending = CASE WHEN ?2 IS NULL THEN index_pending ELSE 1 END \
             WHERE id = ?1 AND status = 'active'",
        )
        .bind(update.id.to_string())
        .bind(content)
        .bind(embedding)
        .bind(update.importance)
        .bind(update.merged_source.to_string())
        .bind(ms(update.at))
        .bind(update.expires_at.map(ms))
        .bind(content.map(lexical::document))
        .bind(ms(update.occurred_at))
        .execute(&mut *tx)
        .await?
        .rows_affected();
        if changed == 0 {
            return Ok(None);
        }
        let row = sqlx::query(sqlx::AssertSqlSafe(format!(
            "SELECT {COLUMNS} FROM memories WHERE id = ?1"
        )))
        .bind(update.id.to_string())
        .fetch_one(&mut *tx)
        .await?;
        tx.commit().await?;
        row_to_memory(&row).map(Some)
    }

    async fn get(&self, id: MemoryId) -> Result<Option<Memory>, StoreError> {
        let row = sqlx::query(sqlx::AssertSqlSafe(format!(
            "SELECT {COLUMNS} FROM memories WHERE id = ?1"
        )))
        .bind(id.to_string())
        .fetch_optional(&self.pool)
        .await?;
        row.as_ref().map(row_to_memory).transpose()
    }

    async fn get_many(&self, ids: &[MemoryId]) -> Result<Vec<Memory>, StoreError> {
        if ids.is_empty() {
            return Ok(vec![]);
        }
        let rows = sqlx::query(sqlx::AssertSqlSafe(format!(
            "SELECT {COLUMNS} FROM memories WHERE id IN (SELECT value FROM json_each(?1))"
        )))
        .bind(ids_json(ids))
        .fetch_all(&self.pool)
        .await?;
        rows_to_memories(&rows)
    }

    async fn lexical_search(&self, query: &LexicalQuery) -> Result<LexicalHits, StoreError> {
        if query.terms.is_empty() {
            return Ok(LexicalHits::default());
        }
        let (terms, full_match) = self.selective_terms(query).await?;
        // Every term quoted (an FTS5 string), any of them may match; bm25() is lower-is-better.
        let expression = terms
            .iter()
            .map(|t| format!("\"{}\"", t.replace('"', "\"\"")))
            .collect::<Vec<_>>()
            .join(" OR ");
        // CROSS JOIN keeps the full-text match the outer loop: with a plain JOIN the planner
        // may walk `memories` by namespace and re-run the match for every row (135 ms a query
        // on LoCoMo's 2,760 turns, measured; ~1 ms this way).
        let rows: Vec<(String, f64)> = sqlx::query_as(
            "SELECT m.id, -bm25(memories_fts) AS score \
             FROM memories_fts CROSS JOIN memories m ON m.seq = memories_fts.rowid \
             WHERE memories_fts MATCH ?1 AND m.namespace = ?2 \
               AND m.memory_type IN (SELECT value FROM json_each(?3)) \
               AND m.status IN (SELECT value FROM json_each(?4)) \
               AND (m.expires_at IS NULL OR m.expires_at > ?6) \
               AND (?7 IS NULL OR m.occurred_at >= ?7) AND (?8 IS NULL OR m.occurred_at <= ?8) \
             ORDER BY bm25(memories_fts) LIMIT ?5",
        )
        .bind(expression)
        .bind(&query.namespace)
        .bind(serde_json::to_string(&query.type_names()).unwrap_or_default())
        .bind(serde_json::to_string(&query.status_names()).unwrap_or_default())
        .bind(query.limit as i64)
        .bind(ms(query.now))
        .bind(query.occurred_from.map(ms))
        .bind(query.occurred_to.map(ms))
        .fetch_all(&self.pool)
        .await?;
        let hits = rows
            .into_iter()
            .map(|(id, score)| {
                Ok(LexicalHit {
                    id: MemoryId::parse_str(&id).map_err(|e| corrupt(&id, e.to_string()))?,
                    score,
                })
            })
            .collect::<Result<_, StoreError>>()?;
        Ok(LexicalHits {
            hits,
            full_match: Some(full_match),
        })
    }

    async fn active_facts(
        &self,
        namespace: &Namespace,
        entity: &str,
        attribute: &str,
    ) -> Result<Vec<Memory>, StoreError> {
        let rows = sqlx::query(sqlx::AssertSqlSafe(format!(
            "SELECT {COLUMNS} FROM memories \
             WHERE namespace = ?1 AND entity = ?2 AND attribute = ?3 AND status = 'active'"
        )))
        .bind(namespace.as_str())
        .bind(entity)
        .bind(attribute)
        .fetch_all(&self.pool)
        .await?;
        rows_to_memories(&rows)
    }

    async fn record_access(&self, hits: &[AccessHit]) -> Result<(), StoreError> {
        let rows = hits
            .iter()
            .map(|h| serde_json::json!([h.id.to_string(), h.count, ms(h.at)]));
        self.update_from_json_rows(
            "UPDATE memories SET access_count = access_count + p.n, \
               last_accessed_at = MAX(COALESCE(last_accessed_at, 0), p.at) \
             FROM (SELECT json_extract(value, '$[0]') AS id, json_extract(value, '$[1]') AS n, \
                          json_extract(value, '$[2]') AS at FROM json_each(?1)) AS p \
             WHERE memories.id = p.id",
            rows.collect(),
        )
        .await
    }

    async fn forget(
        &self,
        selector: &ForgetSelector,
        hard: bool,
        at: DateTime<Utc>,
    ) -> Result<Forgotten, StoreError> {
        // One WHERE clause for every table and both selectors; unused parameters are NULL.
        let (id, namespace, memory_type, entity, created_before) = match selector {
            ForgetSelector::Id(id) => (Some(id.to_string()), None, None, None, None),
            ForgetSelector::Filter(f) => (
                None,
                Some(f.namespace.as_str().to_owned()),
                f.memory_type.map(|t| t.as_str()),
                f.entity.clone(),
                f.created_before.map(ms),
            ),
        };
        let filter = "(?1 IS NULL OR id = ?1) AND (?2 IS NULL OR namespace = ?2) \
             AND (?3 IS NULL OR memory_type = ?3) AND (?4 IS NULL OR entity = ?4) \
             AND (?5 IS NULL OR created_at < ?5)";
        // (hot, archived, exported): hard means gone everywhere the database holds it. The
        // exported copies stay listed until a purge rewrites their objects.
        let exported = format!(
            "SELECT DISTINCT id FROM archive_exported WHERE {filter} AND NOT EXISTS \
             (SELECT 1 FROM forgotten AS f WHERE f.id = archive_exported.id {})",
            if hard { "AND f.mode = 'hard'" } else { "" }
        );
        let statements = if hard {
            [
                format!("DELETE FROM memories WHERE {filter} RETURNING id"),
                format!("DELETE FROM memories_archive WHERE {filter} RETURNING id"),
                exported,
            ]
        } else {
            [
                format!(
                    "UPDATE memories SET status = 'forgotten', updated_at = ?6, index_pending = 1 \
                     WHERE {filter} AND status <> 'forgotten' RETURNING id"
                ),
                format!(
                    "UPDATE memories_archive SET status = 'forgotten', updated_at = ?6 \
                     WHERE {filter} AND status <> 'forgotten' RETURNING id"
                ),
                exported,
            ]
        };
        let mut tx = self.pool.begin_with("BEGIN IMMEDIATE").await?;
        let mut found: [Vec<MemoryId>; 3] = Default::default();
        for (sql, ids) in statements.into_iter().zip(found.iter_mut()) {
            let rows: Vec<String> = sqlx::query_scalar(sqlx::AssertSqlSafe(sql))
                .bind(&id)
                .bind(&namespace)
                .bind(memory_type)
                .bind(&entity)
                .bind(created_before)
                .bind(ms(at))
                .fetch_all(&mut *tx)
                .await?;
            *ids = parse_ids(rows)?;
            ids.sort();
            ids.dedup();
        }
        let [hot, archived, exported] = found;
        let forgotten = Forgotten {
            hot,
            archived,
            exported,
        };
        sqlx::query(
            "INSERT INTO forgotten (id, mode, forgotten_at) \
             SELECT value, ?2, ?3 FROM json_each(?1) WHERE true \
             ON CONFLICT (id) DO UPDATE SET mode = 'hard', forgotten_at = excluded.forgotten_at \
             WHERE excluded.mode = 'hard' AND forgotten.mode <> 'hard'",
        )
        .bind(ids_json(&forgotten.ids()))
        .bind(if hard { "hard" } else { "soft" })
        .bind(ms(at))
        .execute(&mut *tx)
        .await?;
        if hard && !forgotten.hot.is_empty() {
            // The deleted hot rows had points: the tombstone carries their delete to the index.
            sqlx::query(
                "UPDATE forgotten SET index_delete_pending = 1 \
                 WHERE id IN (SELECT value FROM json_each(?1))",
            )
            .bind(ids_json(&forgotten.hot))
            .execute(&mut *tx)
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
        let due = "SELECT id FROM memories WHERE status = 'active' AND expires_at <= ?1 \
                   ORDER BY expires_at, id LIMIT ?2";
        let sql = if dry_run {
            format!("SELECT {COLUMNS} FROM memories WHERE id IN ({due})")
        } else {
            format!(
                "UPDATE memories SET status = 'expired', updated_at = ?1, index_pending = 1 \
                 WHERE id IN ({due}) RETURNING {COLUMNS}"
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
            "SELECT {COLUMNS} FROM memories WHERE index_pending = 1 ORDER BY id LIMIT ?1"
        )))
        .bind(limit)
        .fetch_all(&self.pool)
        .await?;
        rows_to_memories(&rows)
    }

    async fn index_deletes_pending(&self, limit: i64) -> Result<Vec<MemoryId>, StoreError> {
        let ids: Vec<String> = sqlx::query_scalar(
            "SELECT id FROM forgotten WHERE index_delete_pending = 1 ORDER BY id LIMIT ?1",
        )
        .bind(limit)
        .fetch_all(&self.pool)
        .await?;
        parse_ids(ids)
    }

    async fn mark_deletes_indexed(&self, ids: &[MemoryId]) -> Result<(), StoreError> {
        if ids.is_empty() {
            return Ok(());
        }
        sqlx::query(
            "UPDATE forgotten SET index_delete_pending = 0 \
             WHERE index_delete_pending = 1 AND id IN (SELECT value FROM json_each(?1))",
        )
        .bind(ids_json(ids))
        .execute(&self.pool)
        .await?;
        Ok(())
    }

    async fn mark_indexed(&self, rows: &[(MemoryId, DateTime<Utc>)]) -> Result<(), StoreError> {
        let rows = rows
            .iter()
            .map(|(id, at)| serde_json::json!([id.to_string(), ms(*at)]));
        self.update_from_json_rows(
            "UPDATE memories SET index_pending = 0 \
             FROM (SELECT json_extract(value, '$[0]') AS id, json_extract(value, '$[1]') AS at \
                   FROM json_each(?1)) AS p \
             WHERE memories.id = p.id AND memories.updated_at = p.at AND memories.index_pending = 1",
            rows.collect(),
        )
        .await
    }

    async fn indexable_after(
        &self,
        after: Option<MemoryId>,
        limit: i64,
    ) -> Result<Vec<Memory>, StoreError> {
        let rows = sqlx::query(sqlx::AssertSqlSafe(format!(
            "SELECT {COLUMNS} FROM memories \
             WHERE status IN ('active', 'deprecated') AND (?1 IS NULL OR id > ?1) \
             ORDER BY id LIMIT ?2"
        )))
        .bind(after.map(|id| id.to_string()))
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
        sqlx::query("UPDATE memories SET embedding_model = ?2, embedding = ?3 WHERE id = ?1")
            .bind(id.to_string())
            .bind(model)
            .bind(embedding_to_bytes(embedding))
            .execute(&self.pool)
            .await?;
        Ok(())
    }

    async fn counts(&self) -> Result<Vec<CountRow>, StoreError> {
        let rows = sqlx::query(COUNTS_SQL).fetch_all(&self.pool).await?;
        rows.iter().map(count_row).collect()
    }

    async fn meta_get(&self, key: &str) -> Result<Option<String>, StoreError> {
        Ok(sqlx::query_scalar("SELECT value FROM meta WHERE key = ?1")
            .bind(key)
            .fetch_optional(&self.pool)
            .await?)
    }

    async fn meta_set(&self, key: &str, value: &str) -> Result<(), StoreError> {
        sqlx::query(
            "INSERT INTO meta (key, value) VALUES (?1, ?2) \
             ON CONFLICT (key) DO UPDATE SET value = excluded.value",
        )
        .bind(key)
        .bind(value)
        .execute(&self.pool)
        .await?;
        Ok(())
    }
}
