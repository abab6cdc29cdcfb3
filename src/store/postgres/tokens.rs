//! `TokenStore` on PostgreSQL: `timestamptz` at millisecond precision, grants as `jsonb`.

use async_trait::async_trait;
use chrono::{DateTime, Utc};
use sqlx::Row;
use sqlx::postgres::PgRow;

use super::ms;
use crate::store::tokens::{TokenRecord, TokenStore, create_error};
use crate::store::{PostgresStore, StoreError, corrupt};

fn row_to_token(row: &PgRow) -> Result<TokenRecord, StoreError> {
    let id: uuid::Uuid = row.try_get("id")?;
    let grants: serde_json::Value = row.try_get("grants")?;
    Ok(TokenRecord {
        id,
        name: row.try_get("name")?,
        hash: row.try_get("hash")?,
        grants: serde_json::from_value(grants)
            .map_err(|e| corrupt("tokens/{id}", e.to_string()))?,
        operator: row.try_get("operator")?,
        created_at: row.try_get("created_at")?,
        revoked_at: row.try_get("revoked_at")?,
    })
}

#[async_trait]
impl TokenStore for PostgresStore {
    async fn create_token(&self, token: &TokenRecord) -> Result<(), StoreError> {
        let grants = serde_json::to_value(&token.grants)
            .map_err(|e| corrupt(&format!("tokens/{}", token.id), e.to_string()))?;
        sqlx::query(
            "INSERT INTO tokens (id, name, hash, grants, operator, created_at, revoked_at) \
             VALUES ($1, $2, $3, $4, $5, $6, NULL)",
        )
        .bind(token.id)
        .bind(&token.name)
        .bind(&token.hash)
        .bind(grants)
        .bind(token.operator)
        .bind(ms(token.created_at))
        .execute(self.pool())
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
            "UPDATE tokens SET revoked_at = $2 WHERE name = $1 AND revoked_at IS NULL \
             RETURNING id, name, hash, grants, operator, created_at, revoked_at",
        )
        .bind(name)
        .bind(ms(at))
        .fetch_optional(self.pool())
        .await?;
        row.as_ref().map(row_to_token).transpose()
    }

    async fn active_token(&self, hash: &str) -> Result<Option<TokenRecord>, StoreError> {
        let row = sqlx::query("SELECT id, name, hash, grants, operator, created_at, revoked_at FROM tokens WHERE hash = $1 AND revoked_at IS NULL")
        .bind(hash)
        .fetch_optional(self.pool())
        .await?;
        row.as_ref().map(row_to_token).transpose()
    }
}
