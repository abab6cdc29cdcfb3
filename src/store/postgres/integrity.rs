//! `IntegrityStore` on PostgreSQL, and the signing helpers the other statements call inside
//! their transactions.

use async_trait::async_trait;
use chrono::{DateTime, Utc};
use sqlx::PgConnection;

use super::{ms, rows_to_memories};
use crate::domain::{Memory, MemoryId};
use crate::signing::Signer;
use crate::store::integrity::{IntegrityStore, RowTable, TamperedRow};
use crate::store::{COLUMNS, PostgresStore, StoreError, corrupt};

/// Store each row's signature as it stands (`rows` as the transaction now holds them); the
/// rows, signed.
pub(super) async fn sign_rows(
    conn: &mut PgConnection,
    signer: &Signer,
    table: RowTable,
    rows: Vec<Memory>,
) -> Result<Vec<Memory>, StoreError> {
    if rows.is_empty() {
        return Ok(rows);
    }
    let rows: Vec<Memory> = rows.into_iter().map(|m| signer.signed(m)).collect();
    let (ids, signatures): (Vec<MemoryId>, Vec<String>) = rows
        .iter()
        .map(|m| (m.id, m.signature.clone().unwrap_or_default()))
        .unzip();
    sqlx::query(sqlx::AssertSqlSafe(format!(
        "UPDATE {} m SET signature = v.sig \
         FROM unnest($1::uuid[], $2::text[]) AS v(id, sig) WHERE m.id = v.id",
        table.as_str()
    )))
    .bind(&ids)
    .bind(&signatures)
    .execute(&mut *conn)
    .await?;
    Ok(rows)
}

/// Sign these rows of `table` again, as the transaction now holds them; how many.
pub(super) async fn resign_ids(
    conn: &mut PgConnection,
    signer: &Signer,
    table: RowTable,
    ids: &[MemoryId],
) -> Result<u64, StoreError> {
    if ids.is_empty() {
        return Ok(0);
    }
    let rows = sqlx::query(sqlx::AssertSqlSafe(format!(
        "SELECT {COLUMNS} FROM {} JOIN memory_vectors USING (id) WHERE id = ANY($1)",
        table.as_str()
    )))
    .bind(ids)
    .fetch_all(&mut *conn)
    .await?;
    let rows = rows_to_memories(&rows)?;
    Ok(sign_rows(conn, signer, table, rows).await?.len() as u64)
}

#[async_trait]
impl IntegrityStore for PostgresStore {
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
            "SELECT {COLUMNS} FROM {} JOIN memory_vectors USING (id) \
             WHERE ($1::uuid IS NULL OR id > $1) ORDER BY id LIMIT $2",
            table.as_str()
        )))
        .bind(after)
        .bind(limit)
        .fetch_all(self.pool())
        .await?;
        rows_to_memories(&rows)
    }

    async fn resign(&self, table: RowTable, ids: &[MemoryId]) -> Result<u64, StoreError> {
        let mut tx = self.pool().begin().await?;
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
                 VALUES ($1, $2, $3, $4, $5) ON CONFLICT (id, row_table) DO NOTHING",
            )
            .bind(row.id)
            .bind(row.table.as_str())
            .bind(&row.namespace)
            .bind(&row.reason)
            .bind(ms(row.detected_at))
            .execute(self.pool())
            .await?;
        }
        Ok(())
    }

    async fn tampered(&self) -> Result<Vec<TamperedRow>, StoreError> {
        let rows: Vec<(MemoryId, String, String, String, DateTime<Utc>)> = sqlx::query_as(
            "SELECT id, row_table, namespace, reason, detected_at FROM tampered \
             ORDER BY detected_at, id",
        )
        .fetch_all(self.pool())
        .await?;
        rows.into_iter()
            .map(|(id, table, namespace, reason, detected_at)| {
                let table = RowTable::parse(&table).ok_or_else(|| {
                    corrupt(&id.to_string(), format!("tampered.row_table {table:?}"))
                })?;
                Ok(TamperedRow {
                    id,
                    table,
                    namespace,
                    reason,
                    detected_at,
                })
            })
            .collect()
    }

    async fn clear_tampered(&self, table: RowTable, ids: &[MemoryId]) -> Result<(), StoreError> {
        if ids.is_empty() {
            return Ok(());
        }
        sqlx::query("DELETE FROM tampered WHERE row_table = $1 AND id = ANY($2)")
            .bind(table.as_str())
            .bind(ids)
            .execute(self.pool())
            .await?;
        Ok(())
    }
}
