//! Operator routes, behind the same bearer token as `/mcp`: what `hindsight jobs run`,
//! `hindsight archive restore` and `hindsight archive purge` call when a daemon owns the data
//! dir, so the work happens in the process that owns the data (and its index). `GET /metrics`
//! is here too.

use std::sync::Arc;

use axum::extract::{Path, Query, State};
use axum::http::{StatusCode, header};
use axum::response::{IntoResponse, Response};
use axum::routing::{get, post};
use axum::{Json, Router};
use serde::Deserialize;
use serde_json::json;

use crate::jobs::{JobError, Runner};
use crate::store::RestoreSelector;

type AdminState = Arc<Runner>;

pub fn routes(state: AdminState) -> Router {
    Router::new()
        .route("/metrics", get(metrics))
        .route("/admin/jobs/{name}/run", post(run_job))
        .route("/admin/archive/restore", post(restore))
        .route("/admin/archive/purge", post(purge))
        .with_state(state)
}

async fn metrics(State(state): State<AdminState>) -> Response {
    match state.db().counts().await {
        Ok(counts) => (
            [(
                header::CONTENT_TYPE,
                "application/openmetrics-text; version=1.0.0; charset=utf-8",
            )],
            state.service().metrics().render(counts.iter().map(|row| {
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

#[derive(Debug, Deserialize)]
struct RunParams {
    #[serde(default)]
    dry_run: bool,
}

async fn run_job(
    State(state): State<AdminState>,
    Path(name): Path<String>,
    Query(params): Query<RunParams>,
) -> Response {
    // On a task of its own: a client that disconnects must not cancel a run halfway.
    let runner = state.clone();
    let job = name.clone();
    let outcome = tokio::spawn(async move { runner.run_now(&job, params.dry_run, None).await })
        .await
        .unwrap_or_else(|e| Err(JobError::Task(name.clone(), e.to_string())));
    match outcome {
        Ok(outcome) => Json(crate::jobs::engine::outcome_json(&name, &outcome)).into_response(),
        Err(e @ JobError::Unknown(..)) => error(StatusCode::NOT_FOUND, &e.to_string()),
        Err(e @ JobError::Busy(_)) => error(StatusCode::CONFLICT, &e.to_string()),
        Err(e) => error(StatusCode::INTERNAL_SERVER_ERROR, &e.to_string()),
    }
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct RestoreBody {
    #[serde(default)]
    ids: Vec<uuid::Uuid>,
    namespace: Option<String>,
    batch: Option<String>,
}

async fn restore(State(state): State<AdminState>, body: Option<Json<RestoreBody>>) -> Response {
    let Some(Json(body)) = body else {
        return error(
            StatusCode::BAD_REQUEST,
            "body: expected JSON {\"ids\": [...]}, {\"namespace\": \"...\"} or {\"batch\": \"...\"}",
        );
    };
    let selector = match (body.ids.is_empty(), body.namespace, body.batch) {
        (false, None, None) => RestoreSelector::Ids(body.ids),
        (true, Some(namespace), None) => RestoreSelector::Namespace(namespace),
        (true, None, Some(key)) => {
            match crate::jobs::archive::batch_ids(state.db().as_ref(), &key).await {
                Ok(ids) => RestoreSelector::Ids(ids),
                Err(e) => return error(StatusCode::NOT_FOUND, &e.to_string()),
            }
        }
        _ => {
            return error(
                StatusCode::BAD_REQUEST,
                "give exactly one of ids (non-empty), namespace or batch",
            );
        }
    };
    let runner = state.clone();
    let restore = tokio::spawn(async move { runner.restore(&selector).await })
        .await
        .unwrap_or_else(|e| Err(JobError::Task("archive restore".into(), e.to_string())));
    match restore {
        Ok(report) => Json(json!(report)).into_response(),
        Err(e @ JobError::Busy(_)) => error(StatusCode::CONFLICT, &e.to_string()),
        Err(e) => error(StatusCode::INTERNAL_SERVER_ERROR, &e.to_string()),
    }
}

#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
struct PurgeBody {
    #[serde(default)]
    dry_run: bool,
}

async fn purge(State(state): State<AdminState>, body: Option<Json<PurgeBody>>) -> Response {
    let dry_run = body.map(|Json(b)| b.dry_run).unwrap_or_default();
    let runner = state.clone();
    let purge = tokio::spawn(async move { runner.purge(dry_run).await })
        .await
        .unwrap_or_else(|e| Err(JobError::Task("archive purge".into(), e.to_string())));
    match purge {
        Ok(report) => Json(json!(report)).into_response(),
        Err(e @ JobError::Busy(_)) => error(StatusCode::CONFLICT, &e.to_string()),
        Err(e @ JobError::NoObjectSink(_)) => error(StatusCode::CONFLICT, &e.to_string()),
        Err(e) => error(StatusCode::INTERNAL_SERVER_ERROR, &e.to_string()),
    }
}

fn error(status: StatusCode, message: &str) -> Response {
    (status, Json(json!({"error": message}))).into_response()
}
