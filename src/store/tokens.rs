//! The tokens an operator gave out (`tokens`): name, the secret's SHA-256, the namespace
//! scopes, when created and revoked. One trait, implemented by both stores
//! (`sqlite/tokens.rs`, `postgres/tokens.rs`) and pinned by `tests/integration/store_suite.rs`.

use async_trait::async_trait;
use chrono::{DateTime, Utc};
use serde::{Deserialize, Serialize};
use uuid::Uuid;

use super::StoreError;
use crate::auth::Grants;

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct TokenRecord {
    pub id: Uuid,
    pub name: String,
    /// The secret's SHA-256; never shown.
    #[serde(skip)]
    pub hash: String,
    pub grants: Grants,
    /// An operator token may do everything (its grants are not read).
    pub operator: bool,
    pub created_at: DateTime<Utc>,
    pub revoked_at: Option<DateTime<Utc>>,
}

#[async_trait]
pub trait TokenStore: Send + Sync {
    /// Store a new token; `TokenNameTaken` when an active token has its name.
    async fn create_token(&self, token: &TokenRecord) -> Result<(), StoreError>;
    /// Every token, revoked ones too, oldest first.
    async fn tokens(&self) -> Result<Vec<TokenRecord>, StoreError>;
    /// Revoke the active token `name`; `None` when there is none.
    async fn revoke_token(
        &self,
        name: &str,
        at: DateTime<Utc>,
    ) -> Result<Option<TokenRecord>, StoreError>;
    /// The active token whose secret hashes to `hash`.
    async fn active_token(&self, hash: &str) -> Result<Option<TokenRecord>, StoreError>;
}

/// A token row's grants, read back from their JSON.
pub(super) fn grants_from_json(id: &str, text: &str) -> Result<Grants, StoreError> {
    serde_json::from_str(text).map_err(|e| super::corrupt(&format!("tokens/{id}"), e.to_string()))
}

/// An INSERT's error: the partial unique index on active names becomes `TokenNameTaken`.
pub(super) fn create_error(err: sqlx::Error, name: &str) -> StoreError {
    match &err {
        sqlx::Error::Database(db) if db.is_unique_violation() => {
            StoreError::TokenNameTaken(name.to_owned())
        }
        _ => StoreError::Database(err),
    }
}
