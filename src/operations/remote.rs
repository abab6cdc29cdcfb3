//! `Operations` of the daemon that owns the data dir, over its HTTP API (`http/`), with the
//! endpoint and token it published in `endpoint.json`. The daemon answers each route through
//! its own `LocalOperations`, so the work happens in the process holding the data and index.

use async_trait::async_trait;
use reqwest::Method;
use serde::Serialize;
use serde::de::DeserializeOwned;
use serde_json::{Value, json};

use super::{
    CandidateQuery, CreatedToken, JobRunReport, JobSummary, NewToken, OperationError, Operations,
    ProgressFn, Rejection, RestoreRequest, Stats,
};
use crate::domain::{Memory, MemoryId};
use crate::jobs::archive::RestoreReport;
use crate::jobs::archive::purge::PurgeReport;
use crate::lock::Endpoint;
use crate::service::requests::ListRequest;
use crate::service::review::{Approval, CandidateDetail};
use crate::service::{
    ForgetRequest, ForgetResult, SearchRequest, SearchResult, WriteBatchRequest, WriteBatchResult,
    WriteRequest, WriteResult,
};
use crate::store::{AuditEntry, Candidate, CandidateId, Quarantined, RunRecord, TokenRecord};
use crate::transfer::{ExportPage, ExportRequest, ImportBatch, ImportReport};

pub struct RemoteOperations {
    endpoint: Endpoint,
    base: String,
    http: reqwest::Client,
}

impl RemoteOperations {
    pub fn new(endpoint: Endpoint) -> Self {
        let base = endpoint.url.trim_end_matches("/mcp").to_owned();
        Self {
            endpoint,
            base,
            http: reqwest::Client::new(),
        }
    }

    pub fn endpoint(&self) -> &Endpoint {
        &self.endpoint
    }

    /// `segments` are escaped into the path below the daemon's base URL.
    async fn call<T: DeserializeOwned>(
        &self,
        method: Method,
        segments: &[&str],
        query: &[(&str, String)],
        body: Option<Value>,
    ) -> Result<T, OperationError> {
        let mut url = reqwest::Url::parse(&self.base).map_err(|e| OperationError::Unreachable {
            pid: self.endpoint.pid,
            url: self.base.clone(),
            reason: e.to_string(),
        })?;
        if let Ok(mut path) = url.path_segments_mut() {
            path.pop_if_empty().extend(segments);
        }
        let unreachable = |reason: String| OperationError::Unreachable {
            pid: self.endpoint.pid,
            url: url.to_string(),
            reason,
        };
        let mut request = self.http.request(method.clone(), url.clone()).query(query);
        if let Some(token) = &self.endpoint.token {
            request = request.bearer_auth(token.expose());
        }
        if method == Method::POST {
            // Always a JSON body: the daemon refuses any other kind of POST (its browser guard).
            request = request.json(&body.unwrap_or_else(|| json!({})));
        }
        let response = request
            .send()
            .await
            .map_err(|e| unreachable(e.to_string()))?;
        let status = response.status();
        let bytes = response
            .bytes()
            .await
            .map_err(|e| unreachable(e.to_string()))?;
        if !status.is_success() {
            let value: Value = serde_json::from_slice(&bytes).unwrap_or(Value::Null);
            return Err(OperationError::Remote {
                pid: self.endpoint.pid,
                status: status.as_u16(),
                message: value["error"].as_str().unwrap_or("no details").to_owned(),
            });
        }
        serde_json::from_slice(&bytes).map_err(|e| unreachable(format!("unreadable answer: {e}")))
    }

    async fn get<T: DeserializeOwned>(
        &self,
        segments: &[&str],
        query: &[(&str, String)],
    ) -> Result<T, OperationError> {
        self.call(Method::GET, segments, query, None).await
    }

    async fn post<T: DeserializeOwned>(
        &self,
        segments: &[&str],
        query: &[(&str, String)],
        body: &impl Serialize,
    ) -> Result<T, OperationError> {
        let body = serde_json::to_value(body).map_err(|e| OperationError::Unreachable {
            pid: self.endpoint.pid,
            url: self.base.clone(),
            reason: format!("request not serialisable: {e}"),
        })?;
        self.call(Method::POST, segments, query, Some(body)).await
    }
}

#[derive(Serialize, serde::Deserialize)]
struct Candidates {
    candidates: Vec<Candidate>,
}

#[async_trait]
impl Operations for RemoteOperations {
    async fn write(&self, request: WriteRequest) -> Result<WriteResult, OperationError> {
        self.post(&["api", "memories"], &[], &request).await
    }

    async fn write_batch(
        &self,
        request: WriteBatchRequest,
    ) -> Result<WriteBatchResult, OperationError> {
        self.post(&["api", "memories", "batch"], &[], &request)
            .await
    }

    async fn search(&self, request: SearchRequest) -> Result<SearchResult, OperationError> {
        self.post(&["api", "memories", "search"], &[], &request)
            .await
    }

    async fn forget(&self, request: ForgetRequest) -> Result<ForgetResult, OperationError> {
        self.post(&["api", "memories", "forget"], &[], &request)
            .await
    }

    async fn list(&self, request: ListRequest) -> Result<Vec<Memory>, OperationError> {
        self.post(&["api", "memories", "list"], &[], &request).await
    }

    async fn get(&self, id: MemoryId) -> Result<Memory, OperationError> {
        self.get(&["api", "memories", &id.to_string()], &[]).await
    }

    async fn stats(&self) -> Result<Stats, OperationError> {
        self.get(&["api", "stats"], &[]).await
    }

    async fn jobs(&self) -> Result<Vec<JobSummary>, OperationError> {
        self.get(&["admin", "jobs"], &[]).await
    }

    async fn run_job(
        &self,
        name: &str,
        dry_run: bool,
        _progress: Option<ProgressFn>,
    ) -> Result<JobRunReport, OperationError> {
        let query = [("dry_run", dry_run.to_string())];
        self.post(&["admin", "jobs", name, "run"], &query, &json!({}))
            .await
    }

    async fn job_history(
        &self,
        name: Option<&str>,
        limit: i64,
    ) -> Result<Vec<RunRecord>, OperationError> {
        let mut query = vec![("limit", limit.to_string())];
        if let Some(name) = name {
            query.push(("name", name.to_owned()));
        }
        self.get(&["admin", "jobs", "history"], &query).await
    }

    async fn restore(&self, request: RestoreRequest) -> Result<RestoreReport, OperationError> {
        self.post(&["admin", "archive", "restore"], &[], &request)
            .await
    }

    async fn purge(&self, dry_run: bool) -> Result<PurgeReport, OperationError> {
        self.post(
            &["admin", "archive", "purge"],
            &[],
            &json!({ "dry_run": dry_run }),
        )
        .await
    }

    async fn candidates(&self, query: CandidateQuery) -> Result<Vec<Candidate>, OperationError> {
        let mut params = vec![("status", query.status), ("limit", query.limit.to_string())];
        if let Some(namespace) = query.namespace {
            params.push(("namespace", namespace));
        }
        let listed: Candidates = self.get(&["api", "candidates"], &params).await?;
        Ok(listed.candidates)
    }

    async fn candidate(&self, id: CandidateId) -> Result<CandidateDetail, OperationError> {
        self.get(&["api", "candidates", &id.to_string()], &[]).await
    }

    async fn approve(
        &self,
        id: CandidateId,
        approval: Approval,
    ) -> Result<Candidate, OperationError> {
        self.post(
            &["api", "candidates", &id.to_string(), "approve"],
            &[],
            &approval,
        )
        .await
    }

    async fn reject(
        &self,
        id: CandidateId,
        rejection: Rejection,
    ) -> Result<Candidate, OperationError> {
        self.post(
            &["api", "candidates", &id.to_string(), "reject"],
            &[],
            &rejection,
        )
        .await
    }

    async fn create_token(&self, request: NewToken) -> Result<CreatedToken, OperationError> {
        self.post(&["admin", "tokens"], &[], &request).await
    }

    async fn tokens(&self) -> Result<Vec<TokenRecord>, OperationError> {
        self.get(&["admin", "tokens"], &[]).await
    }

    async fn revoke_token(&self, name: &str) -> Result<TokenRecord, OperationError> {
        self.post(&["admin", "tokens", name, "revoke"], &[], &json!({}))
            .await
    }

    async fn export(&self, request: ExportRequest) -> Result<ExportPage, OperationError> {
        self.post(&["admin", "export"], &[], &request).await
    }

    async fn import(&self, batch: ImportBatch) -> Result<ImportReport, OperationError> {
        self.post(&["admin", "import"], &[], &batch).await
    }

    async fn audit(
        &self,
        since: chrono::DateTime<chrono::Utc>,
        limit: i64,
    ) -> Result<Vec<AuditEntry>, OperationError> {
        let query = [("since", since.to_rfc3339()), ("limit", limit.to_string())];
        self.get(&["admin", "audit"], &query).await
    }

    async fn quarantined(&self, query: CandidateQuery) -> Result<Vec<Quarantined>, OperationError> {
        let mut params = vec![("status", query.status), ("limit", query.limit.to_string())];
        if let Some(namespace) = query.namespace {
            params.push(("namespace", namespace));
        }
        let listed: Held = self.get(&["api", "quarantine"], &params).await?;
        Ok(listed.quarantined)
    }

    async fn quarantined_one(&self, id: uuid::Uuid) -> Result<Quarantined, OperationError> {
        self.get(&["api", "quarantine", &id.to_string()], &[]).await
    }

    async fn release(
        &self,
        id: uuid::Uuid,
        reviewer: Option<String>,
    ) -> Result<Quarantined, OperationError> {
        let body = json!({ "reviewer": reviewer });
        self.post(
            &["api", "quarantine", &id.to_string(), "approve"],
            &[],
            &body,
        )
        .await
    }

    async fn discard(
        &self,
        id: uuid::Uuid,
        rejection: Rejection,
    ) -> Result<Quarantined, OperationError> {
        self.post(
            &["api", "quarantine", &id.to_string(), "reject"],
            &[],
            &rejection,
        )
        .await
    }
}

#[derive(Serialize, serde::Deserialize)]
struct Held {
    quarantined: Vec<Quarantined>,
}
