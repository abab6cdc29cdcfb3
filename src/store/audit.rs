//! The audit trail (`audit`): who (a token's or the operator's name) did what (action, ids,
//! namespace, outcome) and when. No memory content. One trait, implemented by both stores
//! (`sqlite/audit.rs`, `postgres/audit.rs`) and pinned by `tests/integration/store_suite.rs`.

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
    /// `write`, `forget`, `approve`, `reject`, `token_create`, `token_revoke`; an operator's
    /// store commands: `verify`, `resign`, `migrate`, `backup`, `restore`, `reindex`.
    pub action: String,
    pub namespace: Option<String>,
    /// What it touched: memory ids, a candidate id (and the memory it became).
    pub ids: Vec<String>,
    /// `ok`, `stored`/`merged`/`skipped` for a write, `refused`, or `failed: <kind>`.
    pub outcome: String,
    /// A short note without content (a token's name, a forget's mode).
    pub detail: Option<String>,
}

impl AuditEntry {
    /// An entry for an operator's command run against the store directly (`verify`, `resign`,
    /// `migrate`, `backup`, `restore`, `reindex`: commands that do not go through
    /// `Operations`), made by the `cli` actor now.
    pub fn operator_command(action: &str, outcome: impl Into<String>) -> Self {
        Self {
            id: 0,
            at: Utc::now(),
            actor: "cli".into(),
            action: action.into(),
            namespace: None,
            ids: Vec::new(),
            outcome: outcome.into(),
            detail: None,
        }
    }

    /// The ids it touched, the first `MAX_IDS` of them (an entry is one row of the trail; the
    /// command's detail gives the full count).
    pub fn with_ids(mut self, ids: impl IntoIterator<Item = impl ToString>) -> Self {
        self.ids = ids
            .into_iter()
            .take(Self::MAX_IDS)
            .map(|id| id.to_string())
            .collect();
        self
    }

    pub const MAX_IDS: usize = 1_000;

    pub fn with_detail(mut self, detail: impl Into<String>) -> Self {
        self.detail = Some(detail.into());
        self
    }
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

#[cfg(test)]
mod tests {
    use super::AuditEntry;

    #[test]
    fn a_store_command_s_entry_is_the_cli_s_and_keeps_at_most_max_ids() {
        let entry = AuditEntry::operator_command("resign", "ok")
            .with_ids(0..AuditEntry::MAX_IDS + 500)
            .with_detail("all: 1500 rows signed");
        assert_eq!(
            (entry.actor.as_str(), entry.action.as_str()),
            ("cli", "resign")
        );
        assert_eq!(entry.ids.len(), AuditEntry::MAX_IDS);
        assert_eq!(entry.ids[0], "0");
        assert_eq!(entry.namespace, None);
    }
}
