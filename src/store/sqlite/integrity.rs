//! `IntegrityStore` on SQLite, and the signing helpers the other statements call inside their
//! transactions.

use async_trait::async_trait;
use sqlx::SqliteConnection;

use super::{from_ms, ids_json, ms, parse_ids, rows_to_memories};
use crate::domain::{Memory, MemoryId};
use crate::signing::Signer;
use crate::store::integrity::{IntegrityStore, RowTable, TamperedRow};
use crate::store::{COLUMNS, SqliteStore, StoreError, corrupt};

/// Store each row's signature as it stands (`rows` as the transaction now holds them); the
/// rows, signed.
pub(super) async fn sign_rows(
    conn: &mut SqliteConnection,
    signer: &Signer,
    table: RowTable,
    rows: Vec<Memory>,
) -> Result<Vec<Memory>, StoreError> {
    if rows.is_empty() {
        return Ok(rows);
    }
    let rows: Vec<Memory> = rows.into_iter().map(|m| signer.signed(m)).collect();
    for chunk in rows.chunks(1_000) {
        let pairs: Vec<serde_json::Value> = chunk
            .iter()
            .map(|m| serde_json::json!([m.id.to_string(), m.signature]))
            .collect();
        sqlx::query(sqlx::AssertSqlSafe(format!(
            "UPDATE {table} SET signature = p.sig \
             FROM (SELECT json_extract(value, '$[0]') AS id, json_extract(value, '$[1]') AS sig \
                   FROM json_each(?1)) AS p \
             WHERE {table}.id = p.id",
            table = table.as_str()
        )))
        .bind(serde_json::Value::Array(pairs).to_string())
        .execute(&mut *conn)
        .await?;
    }
    Ok(rows)
}

/// Sign these rows of `table` again, as the transaction now holds them; how many.
pub(super) async fn resign_ids(
    conn: &mut SqliteConnection,
    signer: &Signer,
    table: RowTable,
    ids: &[MemoryId],
) -> Result<u64, StoreError> {
    if ids.is_empty() {
        return Ok(0);
    }
    let rows = sqlx::query(sqlx::AssertSqlSafe(format!(
        "SELECT {COLUMNS} FROM {} WHERE id IN (SELECT value FROM json_each(?1))",
        table.as_str()
    )))
    .bind(ids_json(ids))
    .fetch_all(&mut *conn)
    .await?;
    let rows = rows_to_memories(&rows)?;
    Ok(sign_rows(conn, signer, table, rows).await?.len() as u64)
}

#[async_trait]
impl IntegrityStore for SqliteStore {
    fn signer(&self) -> &Signer {
        &self.signer
    }

    async fn rows_after(
        &self,
        table: RowTable,
        after: Option<MemoryId>,
        limit: i64,
    ) -> Result<Vec<Memory>, StoreError> {
        let rows = sqlx::query(sqlx::AssertSqlSafe(format!(
            "SELECT {COLUMNS} FROM {} WHERE (?1 IS NULL OR id > ?1) ORDER BY id LIMIT ?2",
            table.as_str()
        )))
        .bind(after.map(|id| id.to_string()))
        .bind(limit)
        .fetch_all(self.pool())
        .await?;
        rows_to_memories(&rows)
    }

    async fn resign(&self, table: RowTable, ids: &[MemoryId]) -> Result<u64, StoreError> {
        let mut tx = self.writer.begin_with("BEGIN IMMEDIATE").await?;
        let signed = resign_ids(&mut tx, &self.signer, table, ids).await?;
        tx.commit().await?;
        Ok(signed)
    }

    async fn newest_signature(&self) -> Result<Option<String>, StoreError> {
        Ok(sqlx::query_scalar(
            "SELECT signature FROM memories WHERE signature IS NOT NULL ORDER BY id DESC LIMIT 1",
        )
        .fetch_optional(self.pool())
        .await?)
    }

    async fn record_tampered(&self, rows: &[TamperedRow]) -> Result<(), StoreError> {
        for row in rows {
            sqlx::query(
                "INSERT INTO tampered (id, row_table, namespace, reason, detected_at) \
                 VALUES (?1, ?2, ?3, ?4, ?5) ON CONFLICT (id, row_table) DO NOTHING",
            )
            .bind(row.id.to_string())
            .bind(row.table.as_str())
            .bind(&row.namespace)
            .bind(&row.reason)
            .bind(ms(row.detected_at))
            .execute(&self.writer)
            .await?;
        }
        Ok(())
    }

    async fn tampered(&self) -> Result<Vec<TamperedRow>, StoreError> {
        let rows: Vec<(String, String, String, String, i64)> = sqlx::query_as(
            "SELECT id, row_table, namespace, reason, detected_at FROM tampered \
             ORDER BY detected_at, id",
        )
        .fetch_all(self.pool())
        .await?;
        rows.into_iter()
            .map(|(id, table, namespace, reason, at)| {
                let table = RowTable::parse(&table)
                    .ok_or_else(|| corrupt(&id, format!("tampered.row_table {table:?}")))?;
                Ok(TamperedRow {
                    id: parse_ids(vec![id])?[0],
                    table,
                    namespace,
                    reason,
                    detected_at: from_ms(at),
                })
            })
            .collect()
    }

    async fn clear_tampered(&self, table: RowTable, ids: &[MemoryId]) -> Result<(), StoreError> {
        if ids.is_empty() {
            return Ok(());
        }
        sqlx::query(
            "DELETE FROM tampered WHERE row_table = ?1 \
             AND id IN (SELECT value FROM json_each(?2))",
        )
        .bind(table.as_str())
        .bind(ids_json(ids))
        .execute(&self.writer)
        .await?;
        Ok(())
    }
}
