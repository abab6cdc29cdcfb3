//! The one place a caller's identity is checked. Every transport wraps the operations it
//! answers with in a `Guarded` for the caller it authenticated (an HTTP bearer token, the stdio
//! owner, the CLI), and a call outside the caller's scopes is refused here before anything
//! else happens: a write or forget outside its write scopes, a search or get outside its read
//! scopes, a review outside its review scopes; jobs, the archive, tokens and metrics are the
//! operator's. Every write, forget, review decision and token change — allowed or refused —
//! is recorded in the audit trail under the caller's name (ids and outcome, no content).

use std::sync::Arc;

use async_trait::async_trait;

use super::{
    CandidateQuery, CreatedToken, JobRunReport, JobSummary, NewToken, OperationError, Operations,
    ProgressFn, Rejection, RestoreRequest, Stats,
};
use crate::auth::{Principal, Scopes};
use crate::domain::{Memory, MemoryId, Namespace};
use crate::jobs::archive::RestoreReport;
use crate::jobs::archive::purge::PurgeReport;
use crate::service::requests::ListRequest;
use crate::service::review::{Approval, CandidateDetail};
use crate::service::{
    ForgetRequest, ForgetResult, SearchRequest, SearchResult, WriteBatchRequest, WriteBatchResult,
    WriteRequest, WriteResult,
};
use crate::store::{
    AuditEntry, AuditStore, Candidate, CandidateId, Quarantined, RunRecord, TokenRecord,
};
use crate::transfer::{ExportPage, ExportRequest, ImportBatch, ImportReport};

pub struct Guarded {
    inner: Arc<dyn Operations>,
    caller: Principal,
    /// Where decisions are recorded; `None` where the operations are another process's (it
    /// records them itself).
    audit: Option<Arc<dyn AuditStore>>,
}

#[derive(Clone, Copy)]
enum Access {
    Read,
    Write,
    Review,
}

impl Access {
    fn verb(self) -> &'static str {
        match self {
            Access::Read => "read",
            Access::Write => "write to",
            Access::Review => "review the candidates of",
        }
    }

    fn scopes(self) -> &'static str {
        match self {
            Access::Read => "read",
            Access::Write => "write",
            Access::Review => "review",
        }
    }
}

impl Guarded {
    pub fn new(inner: Arc<dyn Operations>, caller: Principal) -> Self {
        Self {
            inner,
            caller,
            audit: None,
        }
    }

    /// Record each decision in `audit`.
    pub fn audited(mut self, audit: Arc<dyn AuditStore>) -> Self {
        self.audit = Some(audit);
        self
    }

    /// Record what was asked and how it ended. A failure to record is logged, not the
    /// operation's: what it did stands.
    async fn record<T>(
        &self,
        action: &str,
        namespace: Option<&str>,
        result: &Result<T, OperationError>,
        what: impl FnOnce(&T) -> (Vec<String>, String),
        detail: Option<String>,
    ) {
        let Some(audit) = &self.audit else { return };
        let (ids, outcome) = match result {
            Ok(value) => what(value),
            Err(e) => (
                Vec::new(),
                match e.kind() {
                    super::ErrorKind::Forbidden => "refused".to_owned(),
                    kind => format!("failed: {kind:?}").to_lowercase(),
                },
            ),
        };
        let entry = AuditEntry {
            id: 0,
            at: chrono::Utc::now(),
            actor: self.caller.name.clone(),
            action: action.to_owned(),
            namespace: namespace.map(str::to_owned),
            ids,
            outcome,
            detail,
        };
        if let Err(e) = audit.record_audit(&entry).await {
            tracing::error!(error = %e, action, actor = %entry.actor, "the audit trail could not record a decision");
        }
    }

    pub fn caller(&self) -> &Principal {
        &self.caller
    }

    fn check(&self, access: Access, namespace: &str) -> Result<(), OperationError> {
        let allowed = match access {
            Access::Read => self.caller.may_read(namespace),
            Access::Write => self.caller.may_write(namespace),
            Access::Review => self.caller.may_review(namespace),
        };
        if allowed {
            return Ok(());
        }
        let scopes = self
            .caller
            .grants()
            .map(|g| match access {
                Access::Read => &g.read,
                Access::Write => &g.write,
                Access::Review => &g.review,
            })
            .cloned()
            .unwrap_or_else(Scopes::default);
        tracing::info!(token = %self.caller.name, namespace, access = access.scopes(), "refused: outside the token's scopes");
        Err(OperationError::Forbidden(format!(
            "token {:?} may not {} namespace {namespace:?} (its {} scopes: {scopes})",
            self.caller.name,
            access.verb(),
            access.scopes(),
        )))
    }

    fn operator_only(&self, what: &str) -> Result<(), OperationError> {
        if self.caller.is_operator() {
            Ok(())
        } else {
            Err(OperationError::Forbidden(format!(
                "token {:?} may not {what}: that is the operator's",
                self.caller.name
            )))
        }
    }

    /// Every namespace an agent may read: its exact read scopes, and the namespaces holding
    /// memories that its patterns (`team/*`, `*`) match.
    async fn readable(&self) -> Result<Vec<String>, OperationError> {
        let grants = self.caller.grants().cloned().unwrap_or_default();
        let mut names: Vec<String> = grants
            .read
            .0
            .iter()
            .filter_map(|p| p.exact().map(str::to_owned))
            .collect();
        if grants.read.0.iter().any(|p| p.exact().is_none()) {
            for row in self.inner.stats().await?.counts {
                if grants.read.allows(&row.namespace) && !names.contains(&row.namespace) {
                    names.push(row.namespace);
                }
            }
        }
        names.truncate(crate::service::requests::MAX_SEARCH_NAMESPACES);
        if names.is_empty() {
            return Err(OperationError::Forbidden(format!(
                "token {:?} may read no namespace",
                self.caller.name
            )));
        }
        Ok(names)
    }

    async fn record_review(
        &self,
        action: &str,
        id: CandidateId,
        result: &Result<Candidate, OperationError>,
    ) {
        let namespace = result.as_ref().ok().map(|c| c.namespace.clone());
        self.record(
            action,
            namespace.as_deref(),
            result,
            |c| {
                let ids = std::iter::once(c.id.to_string())
                    .chain(c.memory_id.map(|m| m.to_string()))
                    .collect();
                (ids, "ok".to_owned())
            },
            result.is_err().then(|| format!("candidate {id}")),
        )
        .await;
    }

    async fn record_held(
        &self,
        action: &str,
        id: uuid::Uuid,
        result: &Result<Quarantined, OperationError>,
    ) {
        let namespace = result.as_ref().ok().map(|q| q.namespace.clone());
        self.record(
            action,
            namespace.as_deref(),
            result,
            |q| {
                let ids = std::iter::once(q.id.to_string())
                    .chain(q.memory_id.map(|m| m.to_string()))
                    .collect();
                (ids, "ok".to_owned())
            },
            result.is_err().then(|| format!("held write {id}")),
        )
        .await;
    }

    /// A review decision's candidate, checked against the caller's review scopes.
    async fn reviewable(&self, id: CandidateId) -> Result<(), OperationError> {
        if self.caller.is_operator() {
            return Ok(());
        }
        let detail = self.inner.candidate(id).await?;
        self.check(Access::Review, &detail.candidate.namespace)
    }
}

/// What the audit trail records of a write: the ids it names, and its status.
fn written(r: &WriteResult) -> (Vec<String>, String) {
    let ids = r
        .memory_id
        .iter()
        .chain(&r.superseded)
        .chain(&r.quarantine_id)
        .map(ToString::to_string)
        .collect();
    (ids, r.status.as_str().to_owned())
}

/// The namespace a request names, or the default one it falls into.
fn namespace_or_default(namespace: &Option<String>) -> &str {
    namespace.as_deref().unwrap_or(Namespace::DEFAULT)
}

#[async_trait]
impl Operations for Guarded {
    async fn write(&self, request: WriteRequest) -> Result<WriteResult, OperationError> {
        let namespace = namespace_or_default(&request.namespace).to_owned();
        let result = match self.check(Access::Write, &namespace) {
            Ok(()) => self.inner.write(request).await,
            Err(e) => Err(e),
        };
        self.record("write", Some(&namespace), &result, written, None)
            .await;
        result
    }

    /// Every memory's namespace checked before any is written; the trail records each write
    /// as a single write's (or the batch's refusal, under the namespace that refused it).
    async fn write_batch(
        &self,
        request: WriteBatchRequest,
    ) -> Result<WriteBatchResult, OperationError> {
        let namespaces: Vec<String> = request
            .memories
            .iter()
            .map(|m| namespace_or_default(&m.namespace).to_owned())
            .collect();
        let refused = namespaces
            .iter()
            .find_map(|ns| self.check(Access::Write, ns).err().map(|e| (ns, e)));
        let (result, namespace) = match refused {
            Some((namespace, e)) => (Err(e), Some(namespace.clone())),
            None => (
                self.inner.write_batch(request).await,
                namespaces.first().cloned(),
            ),
        };
        match &result {
            Ok(batch) => {
                for (r, namespace) in batch.results.iter().zip(&namespaces) {
                    let one: Result<_, OperationError> = Ok(r.clone());
                    self.record("write", Some(namespace), &one, written, None)
                        .await;
                }
            }
            Err(_) => {
                let detail = format!("a batch of {} memories", namespaces.len());
                self.record(
                    "write",
                    namespace.as_deref(),
                    &result,
                    |_| (Vec::new(), String::new()),
                    Some(detail),
                )
                .await;
            }
        }
        result
    }

    async fn search(&self, mut request: SearchRequest) -> Result<SearchResult, OperationError> {
        match (&request.namespace, &request.namespaces) {
            (_, Some(list)) => {
                for namespace in list {
                    self.check(Access::Read, namespace)?;
                }
            }
            (Some(namespace), None) => self.check(Access::Read, namespace)?,
            // Named none: the operator searches `default`; an agent every namespace it may
            // read, in one query.
            (None, None) if self.caller.is_operator() => {}
            (None, None) => request.namespaces = Some(self.readable().await?),
        }
        self.inner.search(request).await
    }

    async fn forget(&self, request: ForgetRequest) -> Result<ForgetResult, OperationError> {
        let mut namespace = request.filter.as_ref().map(|f| f.namespace.clone());
        let checked = async {
            if self.caller.is_operator() {
                return Ok(());
            }
            if let Some(filter) = &request.filter {
                self.check(Access::Write, &filter.namespace)?;
            }
            if let Some(id) = &request.memory_id {
                // By id the namespace is the row's. An agent forgets what it can see in the
                // hot table; archived rows are the operator's to forget by id.
                let id = uuid::Uuid::parse_str(id.trim()).map_err(|_| OperationError::Invalid {
                    field: "memory_id",
                    rule: format!("must be a UUID, got {id:?}"),
                })?;
                let memory = self.inner.get(id).await?;
                namespace = Some(memory.namespace.clone());
                self.check(Access::Write, &memory.namespace)?;
            }
            Ok(())
        }
        .await;
        let hard = request.hard.unwrap_or(false);
        let asked = request.memory_id.clone();
        let result = match checked {
            Ok(()) => self.inner.forget(request).await,
            Err(e) => Err(e),
        };
        let detail = Some(match (&result, asked) {
            (Ok(r), _) => r.mode.clone(),
            (Err(_), Some(id)) => format!("by id {id}"),
            (Err(_), None) => if hard { "hard" } else { "soft" }.to_owned(),
        });
        self.record(
            "forget",
            namespace.as_deref(),
            &result,
            |r| {
                (
                    r.ids.iter().map(ToString::to_string).collect(),
                    "ok".to_owned(),
                )
            },
            detail,
        )
        .await;
        result
    }

    /// A token lists one namespace it may read at a time; the operator any or all.
    async fn list(&self, request: ListRequest) -> Result<Vec<Memory>, OperationError> {
        match &request.namespace {
            Some(namespace) => self.check(Access::Read, namespace)?,
            None if self.caller.is_operator() => {}
            None => {
                return Err(OperationError::Invalid {
                    field: "namespace",
                    rule: "required for a token that is not the operator's".to_owned(),
                });
            }
        }
        self.inner.list(request).await
    }

    async fn get(&self, id: MemoryId) -> Result<Memory, OperationError> {
        let memory = self.inner.get(id).await?;
        self.check(Access::Read, &memory.namespace)?;
        Ok(memory)
    }

    async fn stats(&self) -> Result<Stats, OperationError> {
        let mut stats = self.inner.stats().await?;
        if !self.caller.is_operator() {
            stats
                .counts
                .retain(|row| self.caller.may_read(&row.namespace));
            stats.total = stats.counts.iter().map(|r| r.count).sum();
        }
        Ok(stats)
    }

    async fn jobs(&self) -> Result<Vec<JobSummary>, OperationError> {
        self.operator_only("list the jobs")?;
        self.inner.jobs().await
    }

    async fn run_job(
        &self,
        name: &str,
        dry_run: bool,
        progress: Option<ProgressFn>,
    ) -> Result<JobRunReport, OperationError> {
        self.operator_only("run jobs")?;
        self.inner.run_job(name, dry_run, progress).await
    }

    async fn job_history(
        &self,
        name: Option<&str>,
        limit: i64,
    ) -> Result<Vec<RunRecord>, OperationError> {
        self.operator_only("read the jobs' history")?;
        self.inner.job_history(name, limit).await
    }

    async fn restore(&self, request: RestoreRequest) -> Result<RestoreReport, OperationError> {
        self.operator_only("restore from the archive")?;
        self.inner.restore(request).await
    }

    async fn purge(&self, dry_run: bool) -> Result<PurgeReport, OperationError> {
        self.operator_only("purge the archive")?;
        self.inner.purge(dry_run).await
    }

    async fn candidates(&self, query: CandidateQuery) -> Result<Vec<Candidate>, OperationError> {
        match &query.namespace {
            Some(namespace) => self.check(Access::Review, namespace)?,
            None if self.caller.is_operator() => {}
            None => {
                // Every namespace the caller may review: the listing filtered to them.
                let mut listed = self.inner.candidates(query).await?;
                listed.retain(|c| self.caller.may_review(&c.namespace));
                return Ok(listed);
            }
        }
        self.inner.candidates(query).await
    }

    async fn candidate(&self, id: CandidateId) -> Result<CandidateDetail, OperationError> {
        let detail = self.inner.candidate(id).await?;
        self.check(Access::Review, &detail.candidate.namespace)?;
        Ok(detail)
    }

    async fn approve(
        &self,
        id: CandidateId,
        mut approval: Approval,
    ) -> Result<Candidate, OperationError> {
        if !self.caller.is_operator() {
            // An agent's decision is recorded under its token's name.
            approval.reviewer = Some(self.caller.name.clone());
        }
        let result = match self.reviewable(id).await {
            Ok(()) => self.inner.approve(id, approval).await,
            Err(e) => Err(e),
        };
        self.record_review("approve", id, &result).await;
        result
    }

    async fn reject(
        &self,
        id: CandidateId,
        mut rejection: Rejection,
    ) -> Result<Candidate, OperationError> {
        if !self.caller.is_operator() {
            rejection.reviewer = Some(self.caller.name.clone());
        }
        let result = match self.reviewable(id).await {
            Ok(()) => self.inner.reject(id, rejection).await,
            Err(e) => Err(e),
        };
        self.record_review("reject", id, &result).await;
        result
    }

    async fn create_token(&self, request: NewToken) -> Result<CreatedToken, OperationError> {
        let name = request.name.clone();
        let result = match self.operator_only("create tokens") {
            Ok(()) => self.inner.create_token(request).await,
            Err(e) => Err(e),
        };
        self.record(
            "token_create",
            None,
            &result,
            |t| (vec![t.token.id.to_string()], "ok".to_owned()),
            Some(name),
        )
        .await;
        result
    }

    async fn tokens(&self) -> Result<Vec<TokenRecord>, OperationError> {
        self.operator_only("list tokens")?;
        self.inner.tokens().await
    }

    async fn revoke_token(&self, name: &str) -> Result<TokenRecord, OperationError> {
        let result = match self.operator_only("revoke tokens") {
            Ok(()) => self.inner.revoke_token(name).await,
            Err(e) => Err(e),
        };
        self.record(
            "token_revoke",
            None,
            &result,
            |t| (vec![t.id.to_string()], "ok".to_owned()),
            Some(name.to_owned()),
        )
        .await;
        result
    }

    async fn export(&self, request: ExportRequest) -> Result<ExportPage, OperationError> {
        self.operator_only("export memories")?;
        self.inner.export(request).await
    }

    /// Recorded once a batch (not a line: a million-row restore would flood the trail), with
    /// what it did.
    async fn import(&self, batch: ImportBatch) -> Result<ImportReport, OperationError> {
        let mode = batch.mode;
        let dry_run = batch.dry_run;
        let result = match self.operator_only("import memories") {
            Ok(()) => self.inner.import(batch).await,
            Err(e) => Err(e),
        };
        if !dry_run {
            self.record(
                "import",
                None,
                &result,
                |r| {
                    let outcome = if r.errors.is_empty() {
                        format!(
                            "{mode:?}: added {}, unchanged {}, merged {}, skipped {}",
                            r.added, r.unchanged, r.merged, r.skipped
                        )
                        .to_lowercase()
                    } else {
                        format!("refused: {} bad lines", r.errors.len())
                    };
                    (Vec::new(), outcome)
                },
                None,
            )
            .await;
        }
        result
    }

    async fn audit(
        &self,
        since: chrono::DateTime<chrono::Utc>,
        limit: i64,
    ) -> Result<Vec<AuditEntry>, OperationError> {
        self.operator_only("read the audit trail")?;
        self.inner.audit(since, limit).await
    }

    async fn quarantined(&self, query: CandidateQuery) -> Result<Vec<Quarantined>, OperationError> {
        match &query.namespace {
            Some(namespace) => self.check(Access::Review, namespace)?,
            None if self.caller.is_operator() => {}
            None => {
                let mut listed = self.inner.quarantined(query).await?;
                listed.retain(|q| self.caller.may_review(&q.namespace));
                return Ok(listed);
            }
        }
        self.inner.quarantined(query).await
    }

    async fn quarantined_one(&self, id: uuid::Uuid) -> Result<Quarantined, OperationError> {
        let item = self.inner.quarantined_one(id).await?;
        self.check(Access::Review, &item.namespace)?;
        Ok(item)
    }

    async fn release(
        &self,
        id: uuid::Uuid,
        reviewer: Option<String>,
    ) -> Result<Quarantined, OperationError> {
        let reviewer = match self.caller.is_operator() {
            true => reviewer,
            false => Some(self.caller.name.clone()),
        };
        let result = match self.quarantined_one(id).await {
            Ok(_) => self.inner.release(id, reviewer).await,
            Err(e) => Err(e),
        };
        self.record_held("release", id, &result).await;
        result
    }

    async fn discard(
        &self,
        id: uuid::Uuid,
        mut rejection: Rejection,
    ) -> Result<Quarantined, OperationError> {
        if !self.caller.is_operator() {
            rejection.reviewer = Some(self.caller.name.clone());
        }
        let result = match self.quarantined_one(id).await {
            Ok(_) => self.inner.discard(id, rejection).await,
            Err(e) => Err(e),
        };
        self.record_held("discard", id, &result).await;
        result
    }
}
