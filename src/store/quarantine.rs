//! Writes held by the screen for a reviewer (`quarantine`). One trait, implemented by both
//! stores (`sqlite/quarantine.rs`, `postgres/quarantine.rs`) and pinned by
//! `tests/integration/store_suite.rs`.

use async_trait::async_trait;
use chrono::{DateTime, Utc};
use serde::{Deserialize, Serialize};
use serde_json::Value;
use uuid::Uuid;

use super::StoreError;

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Quarantined {
    pub id: Uuid,
    pub namespace: String,
    /// The screen's rule that held it, and its kind.
    pub rule: String,
    pub kind: String,
    /// The write as it was asked for (`memory_write`'s arguments).
    pub request: Value,
    pub created_at: DateTime<Utc>,
    /// `pending`, `approved` or `rejected`.
    pub status: String,
    pub reviewer: Option<String>,
    pub reviewed_at: Option<DateTime<Utc>>,
    pub note: Option<String>,
    /// The memory its approval wrote.
    pub memory_id: Option<Uuid>,
}

/// A reviewer's decision on a held write.
#[derive(Debug, Clone, PartialEq)]
pub struct QuarantineDecision {
    pub approved: bool,
    pub reviewer: Option<String>,
    pub note: Option<String>,
    pub memory_id: Option<Uuid>,
    pub at: DateTime<Utc>,
}

#[async_trait]
pub trait QuarantineStore: Send + Sync {
    async fn hold(&self, item: &Quarantined) -> Result<(), StoreError>;
    /// Held writes, oldest first: of one namespace or all, one status or all.
    async fn quarantined(
        &self,
        namespace: Option<&str>,
        status: Option<&str>,
        limit: i64,
    ) -> Result<Vec<Quarantined>, StoreError>;
    async fn quarantined_one(&self, id: Uuid) -> Result<Option<Quarantined>, StoreError>;
    /// Record the decision if the item is still pending; `None` otherwise.
    async fn decide_quarantined(
        &self,
        id: Uuid,
        decision: &QuarantineDecision,
    ) -> Result<Option<Quarantined>, StoreError>;
}
