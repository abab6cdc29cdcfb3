//! The one way in. Every CLI command, HTTP route and MCP tool asks an `Operations` for what it
//! wants done, and nothing else: `local.rs` does it in this process (over the memory service,
//! the job runner and the database), `remote.rs` asks the daemon that owns the data dir over
//! its HTTP API (which answers through its own `LocalOperations`). "Run here or ask the owner"
//! is decided once, in `startup::connect`.
//!
//! This is the choke point where a caller's identity is to be checked: a transport hands the
//! request here and gets a result or an `OperationError`, whose `kind` each transport maps to
//! its own shape (HTTP status, MCP tool error, CLI message).

mod guarded;
mod local;
mod remote;
mod transfer;

use std::sync::Arc;

use async_trait::async_trait;
use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::auth::Grants;
use crate::domain::{Memory, MemoryId};
use crate::jobs::archive::RestoreReport;
use crate::jobs::archive::purge::PurgeReport;
use crate::jobs::{JobError, Progress};
use crate::service::requests::ListRequest;
use crate::service::review::{Approval, CandidateDetail, ReviewError};
use crate::service::{
    ForgetRequest, ForgetResult, SearchRequest, SearchResult, ServiceError, WriteBatchRequest,
    WriteBatchResult, WriteRequest, WriteResult,
};
use crate::store::{
    AuditEntry, Candidate, CandidateId, CountRow, Quarantined, RunRecord, RunStatus, StoreError,
    TokenRecord,
};
use crate::transfer::{ExportPage, ExportRequest, ImportBatch, ImportReport};

pub use guarded::Guarded;
pub use local::{Assemble, LocalOperations};
pub use remote::RemoteOperations;

/// Progress of a long operation (a job run), for a terminal; a remote run reports none.
pub type ProgressFn = Arc<dyn Fn(Progress) + Send + Sync>;

#[async_trait]
pub trait Operations: Send + Sync {
    async fn write(&self, request: WriteRequest) -> Result<WriteResult, OperationError>;
    /// Several writes, each as `write` would do it, in order; checked whole first (one refused
    /// refuses them all).
    async fn write_batch(
        &self,
        request: WriteBatchRequest,
    ) -> Result<WriteBatchResult, OperationError>;
    async fn search(&self, request: SearchRequest) -> Result<SearchResult, OperationError>;
    async fn forget(&self, request: ForgetRequest) -> Result<ForgetResult, OperationError>;
    /// A page of memories matching the filters, newest stored first (the memory browser).
    async fn list(&self, request: ListRequest) -> Result<Vec<Memory>, OperationError>;
    /// One memory with all its fields.
    async fn get(&self, id: MemoryId) -> Result<Memory, OperationError>;
    /// Counts by namespace, type and status, and the data set's embedder.
    async fn stats(&self) -> Result<Stats, OperationError>;

    /// Every job: enabled, schedule, next run, last result.
    async fn jobs(&self) -> Result<Vec<JobSummary>, OperationError>;
    /// Run a job now, through the same runner as a scheduled tick.
    async fn run_job(
        &self,
        name: &str,
        dry_run: bool,
        progress: Option<ProgressFn>,
    ) -> Result<JobRunReport, OperationError>;
    /// Past runs, newest first.
    async fn job_history(
        &self,
        name: Option<&str>,
        limit: i64,
    ) -> Result<Vec<RunRecord>, OperationError>;
    /// Archived memories back into the hot table and the index, under the archive job's guards.
    async fn restore(&self, request: RestoreRequest) -> Result<RestoreReport, OperationError>;
    /// Hard-forgotten memories out of the exported archive objects.
    async fn purge(&self, dry_run: bool) -> Result<PurgeReport, OperationError>;

    /// Distilled candidates, oldest first.
    async fn candidates(&self, query: CandidateQuery) -> Result<Vec<Candidate>, OperationError>;
    /// One candidate with the episodes it rests on.
    async fn candidate(&self, id: CandidateId) -> Result<CandidateDetail, OperationError>;
    async fn approve(
        &self,
        id: CandidateId,
        approval: Approval,
    ) -> Result<Candidate, OperationError>;
    async fn reject(
        &self,
        id: CandidateId,
        rejection: Rejection,
    ) -> Result<Candidate, OperationError>;

    /// A token for an agent (or another operator); its secret is in the answer, and nowhere
    /// else ever again.
    async fn create_token(&self, request: NewToken) -> Result<CreatedToken, OperationError>;
    /// Every token, revoked ones too (no secrets).
    async fn tokens(&self) -> Result<Vec<TokenRecord>, OperationError>;
    async fn revoke_token(&self, name: &str) -> Result<TokenRecord, OperationError>;

    /// Writes the screen held for review, oldest first (`status`: pending, approved,
    /// rejected or all).
    async fn quarantined(&self, query: CandidateQuery) -> Result<Vec<Quarantined>, OperationError>;
    async fn quarantined_one(&self, id: uuid::Uuid) -> Result<Quarantined, OperationError>;
    /// Release a held write: it goes through the write path now (its secrets still
    /// redacted), and the record keeps the memory it became.
    async fn release(
        &self,
        id: uuid::Uuid,
        reviewer: Option<String>,
    ) -> Result<Quarantined, OperationError>;
    /// Keep a held write out for good (the record stays, with the note).
    async fn discard(
        &self,
        id: uuid::Uuid,
        rejection: Rejection,
    ) -> Result<Quarantined, OperationError>;

    /// A page of an export: every column of the rows it selects, by id (the operator's).
    async fn export(&self, request: ExportRequest) -> Result<ExportPage, OperationError>;
    /// One batch of an import, checked whole and written only if every line passed (the
    /// operator's).
    async fn import(&self, batch: ImportBatch) -> Result<ImportReport, OperationError>;

    /// The audit trail from `since`, oldest first.
    async fn audit(
        &self,
        since: chrono::DateTime<chrono::Utc>,
        limit: i64,
    ) -> Result<Vec<AuditEntry>, OperationError>;
}

/// What `tokens create` asks for.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct NewToken {
    /// Who holds it (an agent's name); recorded with what it does.
    pub name: String,
    #[serde(default)]
    pub grants: Grants,
    /// Everything, like the operator (its grants are not read).
    #[serde(default)]
    pub operator: bool,
}

/// A token just created, with its secret (its `Debug` masks it: only the answer shows it).
#[derive(Clone, PartialEq, Serialize, Deserialize)]
pub struct CreatedToken {
    #[serde(flatten)]
    pub token: TokenRecord,
    /// The bearer token. Shown this once: only its hash is kept.
    pub secret: String,
}

/// What `stats` reports.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Stats {
    pub total: i64,
    /// The embedder the data set's vectors came from.
    pub embedder: Option<String>,
    pub counts: Vec<CountRow>,
    /// Why `embedder = "auto"` settled on builtin for this data set, until a reindex.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub embedder_note: Option<String>,
}

/// One job as `jobs list` shows it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct JobSummary {
    pub name: String,
    pub enabled: bool,
    pub cron: String,
    pub next_run: Option<chrono::DateTime<chrono::Utc>>,
    pub batch_size: usize,
    pub params: Value,
    pub last_success: Option<chrono::DateTime<chrono::Utc>>,
    pub last_run: Option<LastRun>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct LastRun {
    pub status: RunStatus,
    pub scheduled_for: chrono::DateTime<chrono::Utc>,
    pub finished_at: Option<chrono::DateTime<chrono::Utc>>,
    pub error: Option<String>,
    pub stats: Value,
}

/// What a job run did: the run's record, or why no run happened.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct JobRunReport {
    pub job: String,
    /// The ledger's run id (none for a dry run, which records nothing).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub run: Option<i64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub status: Option<RunStatus>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub stats: Option<Value>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
    /// Why it did not run (another run holds the tick, the job is disabled, …).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub skipped: Option<String>,
}

impl JobRunReport {
    pub fn failed(&self) -> bool {
        self.status == Some(RunStatus::Failed)
    }
}

impl std::fmt::Debug for CreatedToken {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("CreatedToken")
            .field("token", &self.token)
            .field("secret", &"********")
            .finish()
    }
}

/// Which archived memories `restore` brings back: exactly one of the three.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum RestoreRequest {
    Ids(Vec<MemoryId>),
    Namespace(String),
    /// Every memory of one exported archive object, by its key.
    Batch(String),
}

/// `candidates list` filters; checked where they are answered.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct CandidateQuery {
    pub namespace: Option<String>,
    /// `pending`, `approved`, `rejected` or `all`.
    pub status: String,
    pub limit: i64,
}

impl Default for CandidateQuery {
    fn default() -> Self {
        Self {
            namespace: None,
            status: "pending".to_owned(),
            limit: 100,
        }
    }
}

#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Rejection {
    /// Why (required).
    pub note: String,
    pub reviewer: Option<String>,
}

/// What kind of failure, for the transports to show: an HTTP status, a tool error, an exit.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ErrorKind {
    /// The request is wrong; the caller can fix it.
    Invalid,
    NotFound,
    /// The thing is busy or in a state that forbids it (a running job, a decided candidate).
    Conflict,
    /// Outside what the caller's token may do.
    Forbidden,
    /// Server-side: the store, the index, the embedder or a daemon failed.
    Internal,
}

#[derive(Debug, thiserror::Error)]
pub enum OperationError {
    #[error(transparent)]
    Service(#[from] ServiceError),
    #[error(transparent)]
    Review(#[from] ReviewError),
    #[error(transparent)]
    Job(#[from] JobError),
    #[error(transparent)]
    Store(#[from] StoreError),
    #[error("{field}: {rule}")]
    Invalid { field: &'static str, rule: String },
    #[error("no memory with id {0}")]
    MemoryNotFound(MemoryId),
    #[error(
        "memory {0} failed its signature check (changed outside hindsight) and is not served; \
         an operator can see it with `hindsight verify`"
    )]
    Tampered(MemoryId),
    #[error("{0}")]
    Forbidden(String),
    #[error("no active token named {0:?}")]
    TokenNotFound(String),
    #[error("no held write {0}")]
    HeldNotFound(uuid::Uuid),
    #[error("held write {id} is {status} already; only pending ones can be reviewed")]
    HeldNotPending { id: uuid::Uuid, status: String },
    /// This process could not assemble what the operation needs (store, index, embedder).
    #[error("{0}")]
    Unavailable(String),
    /// The owning daemon answered with an error.
    #[error("daemon (pid {pid}): HTTP {status}: {message}")]
    Remote {
        pid: u32,
        status: u16,
        message: String,
    },
    /// The owning daemon could not be reached, or answered with something unreadable.
    #[error("daemon (pid {pid}) at {url}: {reason}")]
    Unreachable {
        pid: u32,
        url: String,
        reason: String,
    },
}

impl OperationError {
    pub fn kind(&self) -> ErrorKind {
        match self {
            Self::Service(e) if e.is_client_error() => ErrorKind::Invalid,
            Self::Review(ReviewError::NotFound(_)) => ErrorKind::NotFound,
            Self::Review(ReviewError::NotPending { .. }) => ErrorKind::Conflict,
            Self::Review(e) if e.is_client_error() => ErrorKind::Invalid,
            Self::Job(JobError::Unknown(..) | JobError::NoBatch(_)) => ErrorKind::NotFound,
            Self::Job(JobError::Busy(_) | JobError::NoObjectSink(_)) => ErrorKind::Conflict,
            Self::Invalid { .. } => ErrorKind::Invalid,
            Self::MemoryNotFound(_) | Self::TokenNotFound(_) | Self::HeldNotFound(_) => {
                ErrorKind::NotFound
            }
            Self::HeldNotPending { .. } | Self::Tampered(_) => ErrorKind::Conflict,
            Self::Forbidden(_) => ErrorKind::Forbidden,
            Self::Store(StoreError::TokenNameTaken(_)) => ErrorKind::Conflict,
            Self::Remote { status, .. } => match status {
                403 => ErrorKind::Forbidden,
                404 => ErrorKind::NotFound,
                409 => ErrorKind::Conflict,
                400..=499 => ErrorKind::Invalid,
                _ => ErrorKind::Internal,
            },
            _ => ErrorKind::Internal,
        }
    }

    /// The caller can fix it by changing the request.
    pub fn is_client_error(&self) -> bool {
        self.kind() != ErrorKind::Internal
    }
}

/// `limit` of `jobs history`: 1..=10000.
pub fn check_history_limit(limit: i64) -> Result<i64, OperationError> {
    if (1..=10_000).contains(&limit) {
        Ok(limit)
    } else {
        Err(OperationError::Invalid {
            field: "limit",
            rule: format!("must be 1..=10000, got {limit}"),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn kinds_follow_the_failure() {
        let unknown = OperationError::Job(JobError::Unknown("x".into(), "expire".into()));
        assert_eq!(unknown.kind(), ErrorKind::NotFound);
        let busy = OperationError::Job(JobError::Busy("archive".into()));
        assert_eq!(busy.kind(), ErrorKind::Conflict);
        let remote = |status| OperationError::Remote {
            pid: 1,
            status,
            message: String::new(),
        };
        assert_eq!(remote(400).kind(), ErrorKind::Invalid);
        assert_eq!(remote(404).kind(), ErrorKind::NotFound);
        assert_eq!(remote(409).kind(), ErrorKind::Conflict);
        assert_eq!(remote(503).kind(), ErrorKind::Internal);
        assert!(check_history_limit(0).is_err());
        assert_eq!(check_history_limit(20).unwrap(), 20);
    }

    #[test]
    fn a_new_tokens_secret_is_never_debugged() {
        let created = CreatedToken {
            token: TokenRecord {
                id: uuid::Uuid::now_v7(),
                name: "writer".into(),
                hash: String::new(),
                grants: Grants::default(),
                operator: false,
                created_at: chrono::Utc::now(),
                revoked_at: None,
            },
            secret: "hs_do-not-print-me".into(),
        };
        let shown = format!("{created:?}");
        assert!(
            !shown.contains("do-not-print-me") && shown.contains("writer"),
            "{shown}"
        );
        // The answer itself carries it, once.
        assert!(
            serde_json::to_string(&created)
                .unwrap()
                .contains("hs_do-not-print-me")
        );
    }

    #[test]
    fn a_job_report_round_trips_and_knows_a_failure() {
        let report = JobRunReport {
            job: "expire".into(),
            run: Some(3),
            status: Some(RunStatus::Failed),
            stats: Some(serde_json::json!({"expired": 1})),
            error: Some("boom".into()),
            skipped: None,
        };
        let back: JobRunReport =
            serde_json::from_value(serde_json::to_value(&report).unwrap()).unwrap();
        assert_eq!(back, report);
        assert!(back.failed());
    }
}
