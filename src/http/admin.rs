//! Operator routes, behind the same bearer token as `/mcp`: what `hindsight jobs` and
//! `hindsight archive` call when a daemon owns the data dir, so the work happens in the process
//! that owns the data (and its index). `GET /metrics` is here too.
//!
//! - `GET  /admin/jobs`, `GET /admin/jobs/history?name=&limit=`
//! - `POST /admin/jobs/{name}/run?dry_run=`
//! - `POST /admin/archive/restore` `{"ids": [...]}`, `{"namespace": "..."}` or `{"batch": "..."}`
//! - `POST /admin/archive/purge` `{"dry_run"?}`
//! - `GET  /admin/tokens`, `POST /admin/tokens` `{"name", "grants": {"read", "write", "review"},
//!   "operator"?}` (the answer holds the secret, once), `POST /admin/tokens/{name}/revoke`
//! - `GET  /admin/audit?since=<RFC 3339>&limit=` (default: the last 24 h, 1000)
//! - `POST /admin/export` (`transfer::ExportRequest`: one page), `POST /admin/import`
//!   (`transfer::ImportBatch`: one batch of numbered lines; bodies up to 64 MB)

use axum::extract::rejection::{JsonRejection, QueryRejection};
use axum::extract::{Path, Query, State};
use axum::http::{StatusCode, header};
use axum::response::{IntoResponse, Response};
use axum::routing::{get, post};
use axum::{Extension, Json, Router};
use serde::Deserialize;

use super::AppState;
use super::error::{answer, bad_body, bad_query, error};
use crate::auth::Principal;
use crate::operations::{NewToken, Operations, RestoreRequest};

pub fn routes() -> Router<AppState> {
    Router::new()
        .route("/metrics", get(metrics))
        .route("/admin/jobs", get(list))
        .route("/admin/jobs/history", get(history))
        .route("/admin/jobs/{name}/run", post(run_job))
        .route("/admin/archive/restore", post(restore))
        .route("/admin/archive/purge", post(purge))
        .route("/admin/tokens", get(tokens).post(create_token))
        .route("/admin/tokens/{name}/revoke", post(revoke_token))
        .route("/admin/audit", get(audit))
        .route("/admin/export", post(export))
        .route(
            "/admin/import",
            post(import).layer(axum::extract::DefaultBodyLimit::max(IMPORT_BODY_LIMIT)),
        )
}

async fn metrics(
    State(state): State<AppState>,
    Extension(caller): Extension<Principal>,
) -> Response {
    if !caller.is_operator() {
        return error(
            StatusCode::FORBIDDEN,
            &format!(
                "token {:?} may not read the metrics: that is the operator's",
                caller.name
            ),
        );
    }
    match state.ops_for(caller).stats().await {
        Ok(stats) => (
            [(
                header::CONTENT_TYPE,
                "application/openmetrics-text; version=1.0.0; charset=utf-8",
            )],
            state.metrics.render(stats.counts.iter().map(|row| {
                (
                    row.namespace.as_str(),
                    row.memory_type.as_str(),
                    row.status.as_str(),
                    row.count,
                )
            })),
        )
            .into_response(),
        Err(e) => {
            tracing::error!(error = %e, "metrics: store unreachable");
            (StatusCode::SERVICE_UNAVAILABLE, "store unreachable\n").into_response()
        }
    }
}

async fn list(State(state): State<AppState>, Extension(caller): Extension<Principal>) -> Response {
    answer(state.ops_for(caller).jobs().await)
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct HistoryParams {
    name: Option<String>,
    limit: Option<i64>,
}

async fn history(
    State(state): State<AppState>,
    Extension(caller): Extension<Principal>,
    params: Result<Query<HistoryParams>, QueryRejection>,
) -> Response {
    match params {
        Ok(Query(p)) => answer(
            state
                .ops_for(caller)
                .job_history(p.name.as_deref(), p.limit.unwrap_or(20))
                .await,
        ),
        Err(e) => bad_query(&e),
    }
}

#[derive(Debug, Deserialize)]
struct RunParams {
    #[serde(default)]
    dry_run: bool,
}

async fn run_job(
    State(state): State<AppState>,
    Extension(caller): Extension<Principal>,
    Path(name): Path<String>,
    Query(params): Query<RunParams>,
) -> Response {
    answer(
        state
            .ops_for(caller)
            .run_job(&name, params.dry_run, None)
            .await,
    )
}

async fn restore(
    State(state): State<AppState>,
    Extension(caller): Extension<Principal>,
    body: Result<Json<RestoreRequest>, JsonRejection>,
) -> Response {
    match body {
        Ok(Json(request)) => answer(state.ops_for(caller).restore(request).await),
        Err(e) => error(
            StatusCode::BAD_REQUEST,
            &format!(
                "body: expected exactly one of {{\"ids\": [...]}}, {{\"namespace\": \"...\"}} \
                 or {{\"batch\": \"...\"}}: {}",
                e.body_text()
            ),
        ),
    }
}

#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
struct PurgeBody {
    #[serde(default)]
    dry_run: bool,
}

async fn purge(
    State(state): State<AppState>,
    Extension(caller): Extension<Principal>,
    body: Result<Json<PurgeBody>, JsonRejection>,
) -> Response {
    match body {
        Ok(Json(body)) => answer(state.ops_for(caller).purge(body.dry_run).await),
        Err(e) => bad_body(&e),
    }
}

/// An import batch of `transfer::MAX_BATCH` lines with 1,536-d vectors is ~30 MB of JSON.
const IMPORT_BODY_LIMIT: usize = 64 * 1024 * 1024;

async fn export(
    State(state): State<AppState>,
    Extension(caller): Extension<Principal>,
    body: Result<Json<crate::transfer::ExportRequest>, JsonRejection>,
) -> Response {
    match body {
        Ok(Json(request)) => answer(state.ops_for(caller).export(request).await),
        Err(e) => bad_body(&e),
    }
}

async fn import(
    State(state): State<AppState>,
    Extension(caller): Extension<Principal>,
    body: Result<Json<crate::transfer::ImportBatch>, JsonRejection>,
) -> Response {
    match body {
        Ok(Json(batch)) => answer(state.ops_for(caller).import(batch).await),
        Err(e) => bad_body(&e),
    }
}

async fn tokens(
    State(state): State<AppState>,
    Extension(caller): Extension<Principal>,
) -> Response {
    answer(state.ops_for(caller).tokens().await)
}

async fn create_token(
    State(state): State<AppState>,
    Extension(caller): Extension<Principal>,
    body: Result<Json<NewToken>, JsonRejection>,
) -> Response {
    match body {
        Ok(Json(request)) => answer(state.ops_for(caller).create_token(request).await),
        Err(e) => bad_body(&e),
    }
}

async fn revoke_token(
    State(state): State<AppState>,
    Extension(caller): Extension<Principal>,
    Path(name): Path<String>,
) -> Response {
    answer(state.ops_for(caller).revoke_token(&name).await)
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct AuditParams {
    since: Option<chrono::DateTime<chrono::Utc>>,
    limit: Option<i64>,
}

async fn audit(
    State(state): State<AppState>,
    Extension(caller): Extension<Principal>,
    params: Result<Query<AuditParams>, QueryRejection>,
) -> Response {
    match params {
        Ok(Query(p)) => {
            let since = p
                .since
                .unwrap_or_else(|| chrono::Utc::now() - chrono::Duration::hours(24));
            answer(
                state
                    .ops_for(caller)
                    .audit(since, p.limit.unwrap_or(1000))
                    .await,
            )
        }
        Err(e) => bad_query(&e),
    }
}
