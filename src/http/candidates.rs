//! The review API, behind the same bearer token as `/mcp`: what `hindsight candidates` calls
//! when a daemon owns the data dir, and what a review UI would call.
//!
//! - `GET  /api/candidates?namespace=&status=pending|approved|rejected|all&limit=`
//! - `GET  /api/candidates/{id}` (with its source episodes)
//! - `POST /api/candidates/{id}/approve` `{"content"?, "importance"?, "reviewer"?}`
//! - `POST /api/candidates/{id}/reject` `{"note", "reviewer"?}`

use std::sync::Arc;

use axum::body::Bytes;
use axum::extract::rejection::{JsonRejection, QueryRejection};
use axum::extract::{Path, Query, State};
use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};
use axum::routing::{get, post};
use axum::{Json, Router};
use serde::Deserialize;
use serde_json::json;

use crate::distill::review::{self, Approval, ReviewError};
use crate::jobs::Runner;
use crate::store::CandidateId;

type ReviewState = Arc<Runner>;

pub fn routes(state: ReviewState) -> Router {
    Router::new()
        .route("/api/candidates", get(list))
        .route("/api/candidates/{id}", get(show))
        .route("/api/candidates/{id}/approve", post(approve))
        .route("/api/candidates/{id}/reject", post(reject))
        .with_state(state)
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct ListParams {
    namespace: Option<String>,
    status: Option<String>,
    limit: Option<i64>,
}

async fn list(
    State(state): State<ReviewState>,
    params: Result<Query<ListParams>, QueryRejection>,
) -> Response {
    let params = match params {
        Ok(Query(params)) => params,
        Err(e) => {
            return error(
                StatusCode::BAD_REQUEST,
                &format!("query: {}", e.body_text()),
            );
        }
    };
    let filter = params.status.as_deref().unwrap_or("pending");
    let (status, limit) = match (
        review::parse_status_filter(filter),
        review::check_limit(params.limit.unwrap_or(100)),
    ) {
        (Ok(status), Ok(limit)) => (status, limit),
        (Err(e), _) | (_, Err(e)) => return failure(&e),
    };
    match state
        .db()
        .candidates(params.namespace.as_deref(), status, limit)
        .await
    {
        Ok(candidates) => Json(json!({ "candidates": candidates })).into_response(),
        Err(e) => failure(&e.into()),
    }
}

async fn show(State(state): State<ReviewState>, Path(id): Path<String>) -> Response {
    let id = match parse_id(&id) {
        Ok(id) => id,
        Err(e) => return failure(&e),
    };
    let candidate = match state.db().candidate(id).await {
        Ok(Some(candidate)) => candidate,
        Ok(None) => return failure(&ReviewError::NotFound(id)),
        Err(e) => return failure(&e.into()),
    };
    match review::detail(state.db().as_ref(), candidate).await {
        Ok(detail) => Json(json!(detail)).into_response(),
        Err(e) => failure(&e.into()),
    }
}

#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
struct ApproveBody {
    content: Option<String>,
    importance: Option<f64>,
    reviewer: Option<String>,
}

async fn approve(
    State(state): State<ReviewState>,
    Path(id): Path<String>,
    body: Bytes,
) -> Response {
    let id = match parse_id(&id) {
        Ok(id) => id,
        Err(e) => return failure(&e),
    };
    // An empty body is an approval as drafted. (The browser guard has already refused any
    // request that is not `Content-Type: application/json`.)
    let body: ApproveBody = if body.iter().all(u8::is_ascii_whitespace) {
        ApproveBody::default()
    } else {
        match serde_json::from_slice(&body) {
            Ok(body) => body,
            Err(e) => return error(StatusCode::BAD_REQUEST, &format!("body: {e}")),
        }
    };
    let approval = Approval {
        content: body.content,
        importance: body.importance,
        reviewer: body.reviewer,
    };
    // On a task of its own: a client that disconnects must not cancel it between the write
    // and the mark.
    let runner = state.clone();
    let outcome = tokio::spawn(async move {
        review::approve(runner.service(), runner.db().as_ref(), id, &approval).await
    })
    .await;
    match outcome {
        Ok(Ok(candidate)) => Json(json!(candidate)).into_response(),
        Ok(Err(e)) => failure(&e),
        Err(e) => error(StatusCode::INTERNAL_SERVER_ERROR, &e.to_string()),
    }
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct RejectBody {
    note: Option<String>,
    reviewer: Option<String>,
}

async fn reject(
    State(state): State<ReviewState>,
    Path(id): Path<String>,
    body: Result<Json<RejectBody>, JsonRejection>,
) -> Response {
    let id = match parse_id(&id) {
        Ok(id) => id,
        Err(e) => return failure(&e),
    };
    let body = match body {
        Ok(Json(body)) => body,
        Err(e) => return bad_body(&e),
    };
    let note = body.note.unwrap_or_default();
    match review::reject(state.db().as_ref(), id, &note, body.reviewer.as_deref()).await {
        Ok(candidate) => Json(json!(candidate)).into_response(),
        Err(e) => failure(&e),
    }
}

fn parse_id(text: &str) -> Result<CandidateId, ReviewError> {
    CandidateId::parse_str(text).map_err(|_| ReviewError::Invalid {
        field: "id",
        rule: format!("must be a candidate id (a UUID), got {text:?}"),
    })
}

fn bad_body(rejection: &JsonRejection) -> Response {
    error(
        StatusCode::BAD_REQUEST,
        &format!("body: {}", rejection.body_text()),
    )
}

fn failure(e: &ReviewError) -> Response {
    let status = match e {
        ReviewError::NotFound(_) => StatusCode::NOT_FOUND,
        ReviewError::NotPending { .. } => StatusCode::CONFLICT,
        e if e.is_client_error() => StatusCode::BAD_REQUEST,
        e => {
            tracing::error!(error = %e, "candidate review failed");
            StatusCode::INTERNAL_SERVER_ERROR
        }
    };
    error(status, &e.to_string())
}

fn error(status: StatusCode, message: &str) -> Response {
    (status, Json(json!({"error": message}))).into_response()
}
