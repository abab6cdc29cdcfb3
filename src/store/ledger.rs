//! The run ledger of the maintenance jobs (`job_runs`): claiming a scheduled tick, recording
//! how the run ended, and reading the history. One trait, implemented by both stores
//! (`sqlite/ledger.rs`, `postgres/ledger.rs`) and pinned by `tests/integration/ledger_suite.rs`.

use async_trait::async_trait;
use chrono::{DateTime, Utc};
use serde::Serialize;
use serde_json::Value;

use super::StoreError;

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, serde::Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum RunStatus {
    Running,
    Ok,
    Failed,
    /// Left `running` by a process that died; marked when that node starts again.
    Interrupted,
}

impl RunStatus {
    pub fn as_str(self) -> &'static str {
        match self {
            RunStatus::Running => "running",
            RunStatus::Ok => "ok",
            RunStatus::Failed => "failed",
            RunStatus::Interrupted => "interrupted",
        }
    }

    pub(crate) fn parse(text: &str) -> Option<Self> {
        Some(match text {
            "running" => RunStatus::Running,
            "ok" => RunStatus::Ok,
            "failed" => RunStatus::Failed,
            "interrupted" => RunStatus::Interrupted,
            _ => return None,
        })
    }
}

#[derive(Debug, Clone, PartialEq, Serialize, serde::Deserialize)]
pub struct RunRecord {
    pub id: i64,
    pub job: String,
    pub scheduled_for: DateTime<Utc>,
    pub node: String,
    pub status: RunStatus,
    pub started_at: DateTime<Utc>,
    pub finished_at: Option<DateTime<Utc>>,
    /// Rows examined / changed, duration, … as the job reports them.
    pub stats: Value,
    pub error: Option<String>,
}

#[async_trait]
pub trait RunLedger: Send + Sync + 'static {
    /// Claim the tick `scheduled_for` of `job` for `node`: the run's id, or `None` when another
    /// process (or an earlier attempt) already claimed that tick. At most one claim per tick
    /// ever succeeds, however many replicas try at once.
    async fn claim(
        &self,
        job: &str,
        scheduled_for: DateTime<Utc>,
        node: &str,
        at: DateTime<Utc>,
    ) -> Result<Option<i64>, StoreError>;

    /// Record how a claimed run ended (`ok` or `failed`, with its stats and error).
    async fn finish(
        &self,
        run: i64,
        status: RunStatus,
        stats: &Value,
        error: Option<&str>,
        at: DateTime<Utc>,
    ) -> Result<(), StoreError>;

    /// A running run is alive: move its heartbeat to `at`.
    async fn heartbeat(&self, runs: &[i64], at: DateTime<Utc>) -> Result<(), StoreError>;

    /// Runs left `running` whose heartbeat is older than `heartbeat_before` (their process died
    /// or was killed): mark them `interrupted`. Returns how many there were.
    async fn interrupt_stale(
        &self,
        heartbeat_before: DateTime<Utc>,
        at: DateTime<Utc>,
    ) -> Result<u64, StoreError>;

    /// When `job` last finished `ok` (its finish time).
    async fn last_success(&self, job: &str) -> Result<Option<DateTime<Utc>>, StoreError>;

    /// Newest first; every job when `job` is `None`.
    async fn history(&self, job: Option<&str>, limit: i64) -> Result<Vec<RunRecord>, StoreError>;
}
