//! `TokenStore` on SQLite: times as unix milliseconds, grants as JSON text.

use async_trait::async_trait;
use chrono::{DateTime, Utc};
use sqlx::Row;
use sqlx::sqlite::SqliteRow;

use super::{from_ms, ms};
use crate::store::tokens::{TokenRecord, TokenStore, create_error, grants_from_json};
use crate::store::{SqliteStore, StoreError, corrupt};

fn row_to_token(row: &SqliteRow) -> Result<TokenRecord, StoreError> {
    let id: String = row.try_get("id")?;
    let grants: String = row.try_get("grants")?;
    Ok(TokenRecord {
        id: uuid::Uuid::parse_str(&id).map_err(|e| corrupt("tokens/{id}", e.to_string()))?,
        name: row.try_get("name")?,
        hash: row.try_get("hash")?,
        grants: grants_from_json(&id, &grants)?,
        operator: row.try_get::<i64, _>("operator")? != 0,
        created_at: from_ms(row.try_get("created_at")?),
        revoked_at: row.try_get::<Option<i64>, _>("revoked_at")?.map(from_ms),
    })
}

#[async_trait]
impl TokenStore for SqliteStore {
    async fn create_token(&self, token: &TokenRecord) -> Result<(), StoreError> {
        let grants = serde_json::to_string(&token.grants)
            .map_err(|e| corrupt(&format!("tokens/{}", token.id), e.to_string()))?;
        sqlx::query(
            "INSERT INTO tokens (id, name, hash, grants, operator, created_at, revoked_at) \
             VALUES (?1, ?2, ?3, ?4, ?5, ?6, NULL)",
        )
        .bind(token.id.to_string())
        .bind(&token.name)
        .bind(&token.hash)
        .bind(grants)
        .bind(i64::from(token.operator))
        .bind(ms(token.created_at))
        .execute(&self.writer)
        .await
        .map_err(|e| create_error(e, &token.name))?;
        Ok(())
    }

    async fn tokens(&self) -> Result<Vec<TokenRecord>, StoreError> {
        let rows = sqlx::query("SELECT id, name, hash, grants, operator, created_at, revoked_at FROM tokens ORDER BY created_at, id")
        .fetch_all(self.pool())
        .await?;
        rows.iter().map(row_to_token).collect()
    }

    async fn revoke_token(
        &self,
        name: &str,
        at: DateTime<Utc>,
    ) -> Result<Option<TokenRecord>, StoreError> {
        let row = sqlx::query(
            "UPDATE tokens SET revoked_at = ?2 WHERE name = ?1 AND revoked_at IS NULL \
             RETURNING id, name, hash, grants, operator, created_at, revoked_at",
        )
        .bind(name)
        .bind(ms(at))
        .fetch_optional(&self.writer)
        .await?;
        row.as_ref().map(row_to_token).transpose()
    }

    async fn active_token(&self, hash: &str) -> Result<Option<TokenRecord>, StoreError> {
        let row = sqlx::query("SELECT id, name, hash, grants, operator, created_at, revoked_at FROM tokens WHERE hash = ?1 AND revoked_at IS NULL")
        .bind(hash)
        .fetch_optional(self.pool())
        .await?;
        row.as_ref().map(row_to_token).transpose()
    }
}
