//! Operator routes, behind the same bearer token as `/mcp`: what `hindsight jobs` and
//! `hindsight archive` call when a daemon owns the data dir, so the work happens in the process
//! that owns the data (and its index). `GET /metrics` is here too.
//!
//! - `GET  /admin/jobs`, `GET /admin/jobs/history?name=&limit=`
//! - `POST /admin/jobs/{name}/run?dry_run=`
//! - `POST /admin/archive/restore` `{"ids": [...]}`, `{"namespace": "..."}` or `{"batch": "..."}`
//! - `POST /admin/archive/purge` `{"dry_run"?}`

use axum::extract::rejection::{JsonRejection, QueryRejection};
use axum::extract::{Path, Query, State};
use axum::http::{StatusCode, header};
use axum::response::{IntoResponse, Response};
use axum::routing::{get, post};
use axum::{Json, Router};
use serde::Deserialize;

use super::AppState;
use super::error::{answer, bad_body, bad_query, error};
use crate::operations::{Operations, RestoreRequest};

pub fn routes() -> Router<AppState> {
    Router::new()
        .route("/metrics", get(metrics))
        .route("/admin/jobs", get(list))
        .route("/admin/jobs/history", get(history))
        .route("/admin/jobs/{name}/run", post(run_job))
        .route("/admin/archive/restore", post(restore))
        .route("/admin/archive/purge", post(purge))
}

async fn metrics(State(state): State<AppState>) -> Response {
    match state.ops.stats().await {
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

async fn list(State(state): State<AppState>) -> Response {
    answer(state.ops.jobs().await)
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct HistoryParams {
    name: Option<String>,
    limit: Option<i64>,
}

async fn history(
    State(state): State<AppState>,
    params: Result<Query<HistoryParams>, QueryRejection>,
) -> Response {
    match params {
        Ok(Query(p)) => answer(
            state
                .ops
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
    Path(name): Path<String>,
    Query(params): Query<RunParams>,
) -> Response {
    answer(state.ops.run_job(&name, params.dry_run, None).await)
}

async fn restore(
    State(state): State<AppState>,
    body: Result<Json<RestoreRequest>, JsonRejection>,
) -> Response {
    match body {
        Ok(Json(request)) => answer(state.ops.restore(request).await),
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
    body: Result<Json<PurgeBody>, JsonRejection>,
) -> Response {
    match body {
        Ok(Json(body)) => answer(state.ops.purge(body.dry_run).await),
        Err(e) => bad_body(&e),
    }
}
