//! `MemoryStore` on SQLite: the memories themselves.

use std::sync::atomic::Ordering;

use async_trait::async_trait;
use chrono::{DateTime, Utc};

use super::integrity::{resign_ids, sign_rows};
use super::*;
use crate::domain::{Memory, MemoryId, MemoryType, Namespace};
use crate::lexical;
use crate::store::{MemoryListQuery, RowTable};

/// `active_repeats`' statement. Its key is the expression `memories_active_content` indexes,
/// written as the index writes it: SQLite matches an indexed expression only so. Left to
/// itself, without statistics, SQLite seeks `memories_scope` instead (three equalities against
/// one) and compares every active row of the scope; the unary `+` keeps the scope's columns
/// from any index, so the key is the one index left. While a bulk load has the index dropped
/// (`REPEAT_INDEX`) the lookup is not asked; one asked just as it went scans the table (not
/// fails, as `INDEXED BY` would).
fn active_repeats_sql() -> String {
    format!(
        "SELECT {COLUMNS} FROM memories \
         WHERE substr(content, 1, 64) = substr(?3, 1, 64) AND status = 'active' \
           AND content = ?3 AND +namespace = ?1 AND +memory_type = ?2"
    )
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

    async fn insert_revising(
        &self,
        memory: &Memory,
        replaces: &[MemoryId],
    ) -> Result<Inserted, StoreError> {
        let key = memory.entity.as_ref().zip(memory.attribute.as_ref());
        if key.is_none() && replaces.is_empty() {
            // Nothing to supersede, so one autocommitted statement will do.
            insert_row(&self.writer, &self.signer, memory).await?;
            return Ok(Inserted::default());
        }
        // IMMEDIATE takes the write lock up front: writers queue here, so the supersede below
        // sees every fact committed before it (and no deadlock-prone lock upgrade mid-way).
        let mut tx = self.writer.begin_with("BEGIN IMMEDIATE").await?;
        let now = memory.created_at.max(memory.updated_at);
        let mut superseded = Vec::new();
        let mut superseded_by = None;
        if let Some((entity, attribute)) = key {
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
            superseded.extend(rows_to_memories(&rows)?);
            let later: Option<String> = sqlx::query_scalar(
                "SELECT id FROM memories \
                 WHERE namespace = ?1 AND entity = ?2 AND attribute = ?3 AND status = 'active'",
            )
            .bind(&memory.namespace)
            .bind(entity)
            .bind(attribute)
            .fetch_optional(&mut *tx)
            .await?;
            superseded_by = parse_ids(later.into_iter().collect())?.pop();
        }
        if !replaces.is_empty() {
            // The look-alikes this one updates: those that happened no later are retired by
            // it; one that happened later (history written out of order) retires it.
            let rows = sqlx::query(sqlx::AssertSqlSafe(format!(
                "UPDATE memories SET status = 'deprecated', deprecated_at = ?1, \
                 deprecated_by = ?2, updated_at = ?1, index_pending = 1 \
                 WHERE id IN (SELECT value FROM json_each(?3)) AND status = 'active' \
                   AND occurred_at <= ?4 \
                 RETURNING {COLUMNS}"
            )))
            .bind(ms(now))
            .bind(memory.id.to_string())
            .bind(ids_json(replaces))
            .bind(ms(memory.occurred_at))
            .fetch_all(&mut *tx)
            .await?;
            superseded.extend(rows_to_memories(&rows)?);
            if superseded_by.is_none() {
                let later: Option<String> = sqlx::query_scalar(
                    "SELECT id FROM memories \
                     WHERE id IN (SELECT value FROM json_each(?1)) AND status = 'active' \
                     ORDER BY occurred_at DESC LIMIT 1",
                )
                .bind(ids_json(replaces))
                .fetch_optional(&mut *tx)
                .await?;
                superseded_by = parse_ids(later.into_iter().collect())?.pop();
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
        let mut tx = self.writer.begin_with("BEGIN IMMEDIATE").await?;
        let rows: Vec<&Memory> = memories.iter().collect();
        insert_rows(&mut tx, &self.signer, &rows).await?;
        tx.commit().await?;
        Ok(())
    }

    async fn merge(&self, update: &MergeUpdate) -> Result<Option<Memory>, StoreError> {
        let mut tx = self.writer.begin_with("BEGIN IMMEDIATE").await?;
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
             WHERE memories_fts MATCH ?1 AND m.namespace IN (SELECT value FROM json_each(?2)) \
               AND m.memory_type IN (SELECT value FROM json_each(?3)) \
               AND m.status IN (SELECT value FROM json_each(?4)) \
               AND (m.expires_at IS NULL OR m.expires_at > ?6) \
               AND (?7 IS NULL OR m.occurred_at >= ?7) AND (?8 IS NULL OR m.occurred_at <= ?8) \
             ORDER BY bm25(memories_fts) LIMIT ?5",
        )
        .bind(expression)
        .bind(serde_json::to_string(&query.namespaces).unwrap_or_default())
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

    async fn active_repeats(
        &self,
        namespace: &str,
        memory_type: MemoryType,
        content: &str,
    ) -> Result<Vec<Memory>, StoreError> {
        if self.repeat_index_dropped.load(Ordering::Acquire) {
            // A bulk load's rows are not in the vector index either until its end.
            return Ok(vec![]);
        }
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

    async fn list(&self, query: &MemoryListQuery) -> Result<Vec<Memory>, StoreError> {
        let rows = sqlx::query(sqlx::AssertSqlSafe(format!(
            "SELECT {COLUMNS} FROM memories \
             WHERE (?1 IS NULL OR namespace = ?1) AND (?2 IS NULL OR memory_type = ?2) \
               AND (?3 IS NULL OR status = ?3) AND (?4 IS NULL OR entity = ?4) \
               AND (?5 IS NULL OR attribute = ?5) AND (?6 IS NULL OR deprecated_by = ?6) \
               AND (?7 IS NULL OR occurred_at >= ?7) AND (?8 IS NULL OR occurred_at <= ?8) \
               AND (?9 IS NULL OR id < ?9) \
             ORDER BY id DESC LIMIT ?10"
        )))
        .bind(query.namespace.as_deref())
        .bind(query.memory_type.map(|t| t.as_str()))
        .bind(query.status.map(|s| s.as_str()))
        .bind(query.entity.as_deref())
        .bind(query.attribute.as_deref())
        .bind(query.deprecated_by.map(|id| id.to_string()))
        .bind(query.occurred_from.map(ms))
        .bind(query.occurred_to.map(ms))
        .bind(query.before.map(|id| id.to_string()))
        .bind(query.limit)
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
        let mut tx = self.writer.begin_with("BEGIN IMMEDIATE").await?;
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
        if !hard {
            resign_ids(&mut tx, &self.signer, RowTable::Memories, &hot).await?;
            resign_ids(&mut tx, &self.signer, RowTable::Archive, &archived).await?;
        }
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
        let mut tx = self.writer.begin_with("BEGIN IMMEDIATE").await?;
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
        .execute(&self.writer)
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
            .execute(&self.writer)
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
        .execute(&self.writer)
        .await?;
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::signing::Signer;

    /// The write path asks this on every write: it must seek its index, not scan the scope.
    #[tokio::test]
    async fn the_repeat_lookup_seeks_its_index() {
        let dir = tempfile::tempdir().unwrap();
        let store = SqliteStore::open(&dir.path().join("test.db"), Signer::ephemeral())
            .await
            .unwrap();
        let plan: Vec<String> = sqlx::query(sqlx::AssertSqlSafe(format!(
            "EXPLAIN QUERY PLAN {}",
            active_repeats_sql()
        )))
        .bind("default")
        .bind("episodic")
        .bind("the text")
        .fetch_all(store.pool())
        .await
        .unwrap()
        .iter()
        .map(|row| row.get::<String, _>("detail"))
        .collect();
        assert!(
            plan.iter()
                .any(|step| step.contains("INDEX memories_active_content")),
            "{plan:?}"
        );
    }
}
