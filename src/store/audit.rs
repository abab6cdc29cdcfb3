//! The audit trail (`audit`): who (a token's or the operator's name) did what (action, ids,
//! namespace, outcome) and when. No memory content. One trait, implemented by both stores
//! (`sqlite/audit.rs`, `postgres/audit.rs`) and pinned by `tests/store_suite.rs`.

use async_trait::async_trait;
use chrono::{DateTime, Utc};
use serde::{Deserialize, Serialize};

use super::StoreError;

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct AuditEntry {
    /// Assigned by the store (0 before).
    #[serde(default)]
    pub id: i64,
    pub at: DateTime<Utc>,
    /// The caller: a token's name, or the operator's (`operator`, `cli`, `stdio`).
    pub actor: String,
    /// `write`, `forget`, `approve`, `reject`, `token_create`, `token_revoke`.
    pub action: String,
    pub namespace: Option<String>,
    /// What it touched: memory ids, a candidate id (and the memory it became).
    pub ids: Vec<String>,
    /// `ok`, `stored`/`merged`/`skipped` for a write, `refused`, or `failed: <kind>`.
    pub outcome: String,
    /// A short note without content (a token's name, a forget's mode).
    pub detail: Option<String>,
}

#[async_trait]
pub trait AuditStore: Send + Sync {
    async fn record_audit(&self, entry: &AuditEntry) -> Result<(), StoreError>;
    /// Entries at or after `since`, oldest first, at most `limit`.
    async fn audit_since(
        &self,
        since: DateTime<Utc>,
        limit: i64,
    ) -> Result<Vec<AuditEntry>, StoreError>;
    /// Delete entries older than `before`; how many.
    async fn prune_audit(&self, before: DateTime<Utc>) -> Result<u64, StoreError>;
}
