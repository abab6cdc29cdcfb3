//! `Operations` in this process: the memory service for memories, the job runner for jobs and
//! the archive, the review rules for candidates, the database for reads.

use std::sync::Arc;

use async_trait::async_trait;
use chrono::Utc;
use futures::future::BoxFuture;
use serde_json::Value;
use tokio::sync::OnceCell;

use super::{
    CandidateQuery, CreatedToken, JobRunReport, JobSummary, LastRun, NewToken, OperationError,
    Operations, ProgressFn, Rejection, RestoreRequest, Stats, check_history_limit,
};
use crate::auth::{Principal, generate_token, token_hash};
use crate::domain::{Memory, MemoryId};
use crate::jobs::archive::purge::PurgeReport;
use crate::jobs::archive::{self, ArchiveOperations, RestoreReport};
use crate::jobs::engine::interrupt_stale_runs;
use crate::jobs::{JobSettings, Runner, TickOutcome};
use crate::service::requests::ListRequest;
use crate::service::review::{self, Approval, CandidateDetail, ReviewError};
use crate::service::{
    BatchWrite, ForgetRequest, ForgetResult, MemoryService, SearchRequest, SearchResult,
    ServiceError, WriteBatchRequest, WriteBatchResult, WriteRequest, WriteResult, WriteStatus,
};
use crate::store::{
    AuditEntry, AuditStore, Candidate, CandidateId, Database, QuarantineDecision, Quarantined,
    RestoreSelector, RowTable, RunRecord, TokenRecord,
};
use crate::transfer::{ExportPage, ExportRequest, ImportBatch, ImportReport};

/// What a process that owns the data dir but runs no daemon (a CLI command) assembles on
/// demand: the jobs' settings, the service when an operation first needs it (a command that
/// only reads never loads the embedder or opens the index), the job runner over it when a job
/// operation does (a memory write never reads the job files).
pub trait Assemble: Send + Sync {
    fn job_settings(&self) -> Result<Vec<JobSettings>, OperationError>;
    fn service(&self) -> BoxFuture<'_, Result<Arc<MemoryService>, OperationError>>;
    fn runner(
        &self,
        service: Arc<MemoryService>,
    ) -> BoxFuture<'_, Result<Arc<Runner>, OperationError>>;
}

pub struct LocalOperations {
    db: Arc<dyn Database>,
    service: OnceCell<Arc<MemoryService>>,
    runner: OnceCell<Arc<Runner>>,
    assemble: Option<Box<dyn Assemble>>,
}

impl LocalOperations {
    /// Over a running daemon's runner (its service and database).
    pub fn new(runner: Arc<Runner>) -> Self {
        Self {
            db: runner.db().clone(),
            service: OnceCell::new_with(Some(runner.service().clone())),
            runner: OnceCell::new_with(Some(runner)),
            assemble: None,
        }
    }

    /// Reads from `db` at once; the rest assembled on demand.
    pub fn lazy(db: Arc<dyn Database>, assemble: Box<dyn Assemble>) -> Self {
        Self {
            db,
            service: OnceCell::new(),
            runner: OnceCell::new(),
            assemble: Some(assemble),
        }
    }

    pub(super) fn db(&self) -> &Arc<dyn Database> {
        &self.db
    }

    fn assembler(&self) -> Result<&dyn Assemble, OperationError> {
        self.assemble.as_deref().ok_or_else(|| {
            OperationError::Unavailable("nothing to assemble the service with".to_owned())
        })
    }

    pub async fn service(&self) -> Result<&Arc<MemoryService>, OperationError> {
        self.service
            .get_or_try_init(|| async { self.assembler()?.service().await })
            .await
    }

    /// The service if it is assembled already (a daemon's), without assembling it.
    pub(super) fn assembled(&self) -> Option<&Arc<MemoryService>> {
        self.service.get()
    }

    pub async fn runner(&self) -> Result<&Arc<Runner>, OperationError> {
        self.runner
            .get_or_try_init(|| async {
                let service = self.service().await?.clone();
                self.assembler()?.runner(service).await
            })
            .await
    }

    fn job_settings(&self) -> Result<Vec<JobSettings>, OperationError> {
        match (self.runner.get(), &self.assemble) {
            (Some(runner), _) => Ok(runner.jobs().map(|j| j.settings.clone()).collect()),
            (None, Some(assemble)) => assemble.job_settings(),
            (None, None) => Ok(Vec::new()),
        }
    }

    /// The caller a bearer token stands for, when it is an active token of ours.
    pub async fn principal_for_token(
        &self,
        token: &str,
    ) -> Result<Option<Principal>, OperationError> {
        Ok(self
            .db
            .active_token(&token_hash(token))
            .await?
            .map(|t| match t.operator {
                true => Principal::operator(t.name),
                false => Principal::agent(t.name, t.grants),
            }))
    }

    /// The operations as `caller` may use them, each decision recorded in the audit trail.
    pub fn guarded(self: &Arc<Self>, caller: Principal) -> super::Guarded {
        let audit: Arc<dyn AuditStore> = self.db.clone();
        super::Guarded::new(self.clone(), caller).audited(audit)
    }

    /// Keep a write the screen held, for a reviewer; nothing reaches `memories` or the index.
    async fn hold(
        &self,
        request: WriteRequest,
        rule: String,
        kind: String,
    ) -> Result<WriteResult, OperationError> {
        let item = Quarantined {
            id: uuid::Uuid::now_v7(),
            namespace: request
                .namespace
                .clone()
                .unwrap_or_else(|| crate::domain::Namespace::DEFAULT.to_owned()),
            rule: rule.clone(),
            kind,
            request: serde_json::to_value(&request).unwrap_or(Value::Null),
            created_at: Utc::now(),
            status: "pending".to_owned(),
            reviewer: None,
            reviewed_at: None,
            note: None,
            memory_id: None,
        };
        self.db.hold(&item).await?;
        Ok(WriteResult {
            status: WriteStatus::Quarantined,
            memory_id: None,
            reason: Some(format!("held for review: rule {rule}")),
            duplicate_of: None,
            superseded: vec![],
            superseded_by: None,
            redacted: vec![],
            quarantine_id: Some(item.id),
            look_alike: None,
        })
    }

    /// A held write that is still pending.
    async fn pending_held(&self, id: uuid::Uuid) -> Result<Quarantined, OperationError> {
        let item = self.quarantined_one(id).await?;
        if item.status != "pending" {
            return Err(OperationError::HeldNotPending {
                id,
                status: item.status,
            });
        }
        Ok(item)
    }

    async fn decide_held(
        &self,
        id: uuid::Uuid,
        decision: QuarantineDecision,
    ) -> Result<Quarantined, OperationError> {
        match self.db.decide_quarantined(id, &decision).await? {
            Some(item) => Ok(item),
            // Another reviewer decided it in the meantime.
            None => Err(match self.db.quarantined_one(id).await? {
                Some(item) => OperationError::HeldNotPending {
                    id,
                    status: item.status,
                },
                None => OperationError::HeldNotFound(id),
            }),
        }
    }

    /// The store answers (for `/healthz`).
    pub async fn ping(&self) -> Result<(), OperationError> {
        self.db.meta_get(crate::service::EMBEDDER_META_KEY).await?;
        Ok(())
    }

    /// Write out what the service holds in memory (index changes, access counts): a CLI
    /// process calls this before it exits. Nothing to do when nothing built the service.
    pub async fn flush(&self) -> Result<(), OperationError> {
        if let Some(service) = self.service.get() {
            service.flush().await?;
        }
        Ok(())
    }
}

/// A task of its own: a caller that goes away (an HTTP client disconnecting) must not cancel
/// an operation halfway, between a write and its mark.
async fn detached<T: Send + 'static>(
    what: &str,
    work: impl std::future::Future<Output = Result<T, OperationError>> + Send + 'static,
) -> Result<T, OperationError> {
    tokio::spawn(work).await.unwrap_or_else(|e| {
        Err(OperationError::Job(crate::jobs::JobError::Task(
            what.to_owned(),
            e.to_string(),
        )))
    })
}

#[async_trait]
impl Operations for LocalOperations {
    async fn write(&self, request: WriteRequest) -> Result<WriteResult, OperationError> {
        match self.service().await?.write(&request).await {
            Err(ServiceError::Held { rule, kind }) => self.hold(request, rule, kind).await,
            other => Ok(other?),
        }
    }

    async fn write_batch(
        &self,
        request: WriteBatchRequest,
    ) -> Result<WriteBatchResult, OperationError> {
        // The batch runs to its end even if the caller goes away: the rows it has stored get
        // their index update.
        let service = self.service().await?.clone();
        let memories = request.memories.clone();
        let outcomes = detached("write batch", async move {
            Ok(service.write_batch(&memories).await?)
        })
        .await?;
        let mut results = Vec::with_capacity(outcomes.len());
        for (outcome, request) in outcomes.into_iter().zip(request.memories) {
            results.push(match outcome {
                BatchWrite::Done(result) => result,
                BatchWrite::Held { rule, kind } => self.hold(request, rule, kind).await?,
            });
        }
        Ok(WriteBatchResult { results })
    }

    async fn search(&self, request: SearchRequest) -> Result<SearchResult, OperationError> {
        Ok(self.service().await?.search(&request).await?)
    }

    async fn forget(&self, request: ForgetRequest) -> Result<ForgetResult, OperationError> {
        Ok(self.service().await?.forget(&request).await?)
    }

    /// Rows whose signature fails are left out (and counted), as in a search.
    async fn list(&self, request: ListRequest) -> Result<Vec<Memory>, OperationError> {
        let query = request
            .validate()
            .map_err(|e| OperationError::Service(e.into()))?;
        let rows = self.db.list(&query).await?;
        let metrics = self.service.get().map(|s| s.metrics().as_ref());
        let store: &dyn crate::store::IntegrityStore = self.db.as_ref();
        let rows =
            crate::service::integrity::checked(store, metrics, RowTable::Memories, rows).await;
        Ok(rows
            .into_iter()
            .map(|row| Memory {
                signature: None,
                ..row
            })
            .collect())
    }

    /// A row whose signature fails is not served: the caller hears it failed its check.
    async fn get(&self, id: MemoryId) -> Result<Memory, OperationError> {
        let row = self
            .db
            .get(id)
            .await?
            .ok_or(OperationError::MemoryNotFound(id))?;
        let metrics = self.service.get().map(|s| s.metrics().as_ref());
        let store: &dyn crate::store::IntegrityStore = self.db.as_ref();
        match crate::service::integrity::checked(store, metrics, RowTable::Memories, vec![row])
            .await
            .pop()
        {
            Some(row) => Ok(Memory {
                signature: None,
                ..row
            }),
            None => Err(OperationError::Tampered(id)),
        }
    }

    async fn stats(&self) -> Result<Stats, OperationError> {
        let counts = self.db.counts().await?;
        Ok(Stats {
            total: counts.iter().map(|r| r.count).sum(),
            embedder: self.db.meta_get(crate::service::EMBEDDER_META_KEY).await?,
            counts,
            embedder_note: self
                .db
                .meta_get(crate::service::EMBEDDER_NOTE_META_KEY)
                .await?
                .filter(|n| !n.is_empty()),
        })
    }

    async fn jobs(&self) -> Result<Vec<JobSummary>, OperationError> {
        // Runs whose process died (a killed `jobs run`, with no daemon to notice) show as
        // what they are.
        interrupt_stale_runs(self.db.as_ref()).await;
        let now = Utc::now();
        let jobs = self.job_settings()?;
        let mut rows = Vec::with_capacity(jobs.len());
        for s in &jobs {
            let last = self.db.history(Some(&s.name), 1).await?.into_iter().next();
            rows.push(JobSummary {
                name: s.name.clone(),
                enabled: s.enabled,
                cron: s.schedule.as_str().to_owned(),
                next_run: s.enabled.then(|| s.schedule.next_after(now)).flatten(),
                batch_size: s.batch_size,
                params: serde_json::to_value(&s.params).unwrap_or(Value::Null),
                last_success: self.db.last_success(&s.name).await?,
                last_run: last.map(|r| LastRun {
                    status: r.status,
                    scheduled_for: r.scheduled_for,
                    finished_at: r.finished_at,
                    error: r.error,
                    stats: r.stats,
                }),
            });
        }
        Ok(rows)
    }

    async fn run_job(
        &self,
        name: &str,
        dry_run: bool,
        progress: Option<ProgressFn>,
    ) -> Result<JobRunReport, OperationError> {
        let runner = self.runner().await?.clone();
        let job = name.to_owned();
        let outcome = detached(name, async move {
            Ok(runner.run_now(&job, dry_run, progress).await?)
        })
        .await?;
        Ok(report(name, outcome))
    }

    async fn job_history(
        &self,
        name: Option<&str>,
        limit: i64,
    ) -> Result<Vec<RunRecord>, OperationError> {
        let limit = check_history_limit(limit)?;
        interrupt_stale_runs(self.db.as_ref()).await;
        Ok(self.db.history(name, limit).await?)
    }

    async fn restore(&self, request: RestoreRequest) -> Result<RestoreReport, OperationError> {
        let selector = match request {
            RestoreRequest::Ids(ids) if ids.is_empty() => {
                return Err(OperationError::Invalid {
                    field: "ids",
                    rule: "must not be empty".to_owned(),
                });
            }
            RestoreRequest::Ids(ids) => RestoreSelector::Ids(ids),
            RestoreRequest::Namespace(namespace) => RestoreSelector::Namespace(namespace),
            RestoreRequest::Batch(key) => {
                RestoreSelector::Ids(archive::batch_ids(self.db.as_ref(), &key).await?)
            }
        };
        let runner = self.runner().await?.clone();
        detached("archive restore", async move {
            Ok(runner.restore(&selector).await?)
        })
        .await
    }

    async fn purge(&self, dry_run: bool) -> Result<PurgeReport, OperationError> {
        let runner = self.runner().await?.clone();
        detached(
            "archive purge",
            async move { Ok(runner.purge(dry_run).await?) },
        )
        .await
    }

    async fn candidates(&self, query: CandidateQuery) -> Result<Vec<Candidate>, OperationError> {
        let status = review::parse_status_filter(&query.status)?;
        let limit = review::check_limit(query.limit)?;
        Ok(self
            .db
            .candidates(query.namespace.as_deref(), status, limit)
            .await?)
    }

    async fn candidate(&self, id: CandidateId) -> Result<CandidateDetail, OperationError> {
        let candidate = self
            .db
            .candidate(id)
            .await?
            .ok_or(ReviewError::NotFound(id))?;
        let service = self.service().await?;
        Ok(review::detail(self.db.as_ref(), Some(service.as_ref()), candidate).await?)
    }

    async fn approve(
        &self,
        id: CandidateId,
        approval: Approval,
    ) -> Result<Candidate, OperationError> {
        let runner = self.runner().await?.clone();
        detached("candidate approval", async move {
            Ok(
                review::approve(runner.service(), runner.db().as_ref(), id, &approval, true)
                    .await?,
            )
        })
        .await
    }

    async fn reject(
        &self,
        id: CandidateId,
        rejection: Rejection,
    ) -> Result<Candidate, OperationError> {
        Ok(review::reject(
            self.db.as_ref(),
            id,
            &rejection.note,
            rejection.reviewer.as_deref(),
        )
        .await?)
    }

    async fn create_token(&self, request: NewToken) -> Result<CreatedToken, OperationError> {
        check_token_name(&request.name)?;
        if !request.operator && request.grants == Default::default() {
            return Err(OperationError::Invalid {
                field: "grants",
                rule: "a token needs at least one read, write or review scope (or operator)"
                    .to_owned(),
            });
        }
        let secret = generate_token();
        let token = TokenRecord {
            id: uuid::Uuid::now_v7(),
            name: request.name,
            hash: token_hash(secret.expose()),
            grants: request.grants,
            operator: request.operator,
            created_at: Utc::now(),
            revoked_at: None,
        };
        self.db.create_token(&token).await?;
        tracing::info!(token = %token.name, operator = token.operator, "token created");
        Ok(CreatedToken {
            token,
            secret: secret.expose().to_owned(),
        })
    }

    async fn tokens(&self) -> Result<Vec<TokenRecord>, OperationError> {
        Ok(self.db.tokens().await?)
    }

    async fn revoke_token(&self, name: &str) -> Result<TokenRecord, OperationError> {
        let revoked = self.db.revoke_token(name, Utc::now()).await?;
        let token = revoked.ok_or_else(|| OperationError::TokenNotFound(name.to_owned()))?;
        tracing::info!(token = %token.name, "token revoked");
        Ok(token)
    }

    async fn export(&self, request: ExportRequest) -> Result<ExportPage, OperationError> {
        self.export_page(request).await
    }

    async fn import(&self, batch: ImportBatch) -> Result<ImportReport, OperationError> {
        // A caller that goes away mid-batch rolls back a preserve batch (one transaction); in
        // write mode, the lines already written are merged, not doubled, when it runs again.
        self.import_batch(batch).await
    }

    async fn audit(
        &self,
        since: chrono::DateTime<Utc>,
        limit: i64,
    ) -> Result<Vec<AuditEntry>, OperationError> {
        let limit = check_history_limit(limit)?;
        Ok(self.db.audit_since(since, limit).await?)
    }

    async fn quarantined(&self, query: CandidateQuery) -> Result<Vec<Quarantined>, OperationError> {
        let status = match query.status.as_str() {
            "all" => None,
            s @ ("pending" | "approved" | "rejected") => Some(s),
            other => {
                return Err(OperationError::Invalid {
                    field: "status",
                    rule: format!("must be pending, approved, rejected or all, got {other:?}"),
                });
            }
        };
        let limit = review::check_limit(query.limit)?;
        Ok(self
            .db
            .quarantined(query.namespace.as_deref(), status, limit)
            .await?)
    }

    async fn quarantined_one(&self, id: uuid::Uuid) -> Result<Quarantined, OperationError> {
        self.db
            .quarantined_one(id)
            .await?
            .ok_or(OperationError::HeldNotFound(id))
    }

    async fn release(
        &self,
        id: uuid::Uuid,
        reviewer: Option<String>,
    ) -> Result<Quarantined, OperationError> {
        let reviewer = review::bounded("reviewer", reviewer.as_deref())?;
        let item = self.pending_held(id).await?;
        let request: WriteRequest = crate::service::requests::parse_args(item.request.clone())
            .map_err(|e| OperationError::Service(ServiceError::Invalid(e)))?;
        let service = self.service().await?.clone();
        let written = detached("release", async move {
            Ok(service.write_released(&request).await?)
        })
        .await?;
        self.decide_held(
            id,
            QuarantineDecision {
                approved: true,
                reviewer,
                note: None,
                memory_id: written.memory_id,
                at: Utc::now(),
            },
        )
        .await
    }

    async fn discard(
        &self,
        id: uuid::Uuid,
        rejection: Rejection,
    ) -> Result<Quarantined, OperationError> {
        // The same bounds as a candidate's rejection: a note is required, long ones refused.
        let note = review::bounded("note", Some(&rejection.note))?.ok_or_else(|| {
            ReviewError::Invalid {
                field: "note",
                rule: "must say why the write is rejected".to_owned(),
            }
        })?;
        let reviewer = review::bounded("reviewer", rejection.reviewer.as_deref())?;
        self.pending_held(id).await?;
        self.decide_held(
            id,
            QuarantineDecision {
                approved: false,
                reviewer,
                note: Some(note),
                memory_id: None,
                at: Utc::now(),
            },
        )
        .await
    }
}

/// Token names: what the audit and logs show; printable, short.
fn check_token_name(name: &str) -> Result<(), OperationError> {
    let ok = !name.is_empty()
        && name.chars().count() <= 128
        && name
            .chars()
            .all(|c| c.is_alphanumeric() || matches!(c, '_' | '-' | '.' | ':' | '/' | '@'));
    if ok {
        Ok(())
    } else {
        Err(OperationError::Invalid {
            field: "name",
            rule: "must be 1-128 letters, digits, '_', '-', '.', ':', '/' or '@'".to_owned(),
        })
    }
}

fn report(job: &str, outcome: TickOutcome) -> JobRunReport {
    match outcome {
        TickOutcome::Ran {
            run,
            status,
            stats,
            error,
        } => JobRunReport {
            job: job.to_owned(),
            run: (run != 0).then_some(run),
            status: Some(status),
            stats: serde_json::to_value(&stats).ok(),
            error,
            skipped: None,
        },
        TickOutcome::Skipped(reason) => JobRunReport {
            job: job.to_owned(),
            run: None,
            status: None,
            stats: None,
            error: None,
            skipped: Some(reason.to_string()),
        },
    }
}
