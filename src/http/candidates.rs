//! The review API, behind the same bearer token as `/mcp`: what `hindsight candidates` calls
//! when a daemon owns the data dir, and what a review UI would call.
//!
//! - `GET  /api/candidates?namespace=&status=pending|approved|rejected|all&limit=`
//! - `GET  /api/candidates/{id}` (with its source episodes)
//! - `POST /api/candidates/{id}/approve` `{"content"?, "importance"?, "reviewer"?}`
//! - `POST /api/candidates/{id}/reject` `{"note", "reviewer"?}`

use axum::Json;
use axum::body::Bytes;
use axum::extract::rejection::{JsonRejection, QueryRejection};
use axum::extract::{Path, Query, State};
use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};
use axum::routing::{get, post};
use axum::{Extension, Router};
use serde::Deserialize;
use serde_json::json;

use super::AppState;
use super::error::{answer, bad_body, bad_query, error, failure};
use crate::auth::Principal;
use crate::operations::{CandidateQuery, OperationError, Operations, Rejection};
use crate::service::review::{Approval, ReviewError};
use crate::store::CandidateId;

pub fn routes() -> Router<AppState> {
    Router::new()
        .route("/api/candidates", get(list))
        .route("/api/candidates/{id}", get(show))
        .route("/api/candidates/{id}/approve", post(approve))
        .route("/api/candidates/{id}/reject", post(reject))
}

/// `?namespace=&status=&limit=` of a review listing (candidates, held writes).
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct ListParams {
    namespace: Option<String>,
    status: Option<String>,
    limit: Option<i64>,
}

impl ListParams {
    /// The query, defaults filled in (pending, 100).
    pub(super) fn query(self) -> CandidateQuery {
        let defaults = CandidateQuery::default();
        CandidateQuery {
            namespace: self.namespace,
            status: self.status.unwrap_or(defaults.status),
            limit: self.limit.unwrap_or(defaults.limit),
        }
    }
}

async fn list(
    State(state): State<AppState>,
    Extension(caller): Extension<Principal>,
    params: Result<Query<ListParams>, QueryRejection>,
) -> Response {
    let params = match params {
        Ok(Query(params)) => params,
        Err(e) => {
            return bad_query(&e);
        }
    };
    match state.ops_for(caller).candidates(params.query()).await {
        Ok(candidates) => Json(json!({ "candidates": candidates })).into_response(),
        Err(e) => failure(&e),
    }
}

async fn show(
    State(state): State<AppState>,
    Extension(caller): Extension<Principal>,
    Path(id): Path<String>,
) -> Response {
    match parse_id(&id) {
        Ok(id) => answer(state.ops_for(caller).candidate(id).await),
        Err(e) => failure(&e),
    }
}

async fn approve(
    State(state): State<AppState>,
    Extension(caller): Extension<Principal>,
    Path(id): Path<String>,
    body: Bytes,
) -> Response {
    let id = match parse_id(&id) {
        Ok(id) => id,
        Err(e) => return failure(&e),
    };
    // An empty body is an approval as drafted. (The browser guard has already refused any
    // request that is not `Content-Type: application/json`.)
    let approval: Approval = if body.iter().all(u8::is_ascii_whitespace) {
        Approval::default()
    } else {
        match serde_json::from_slice(&body) {
            Ok(approval) => approval,
            Err(e) => return error(StatusCode::BAD_REQUEST, &format!("body: {e}")),
        }
    };
    answer(state.ops_for(caller).approve(id, approval).await)
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct RejectBody {
    note: Option<String>,
    reviewer: Option<String>,
}

async fn reject(
    State(state): State<AppState>,
    Extension(caller): Extension<Principal>,
    Path(id): Path<String>,
    body: Result<Json<RejectBody>, JsonRejection>,
) -> Response {
    let id = match parse_id(&id) {
        Ok(id) => id,
        Err(e) => return failure(&e),
    };
    let body = match body {
        Ok(Json(body)) => body,
        Err(e) => {
            return bad_body(&e);
        }
    };
    let rejection = Rejection {
        note: body.note.unwrap_or_default(),
        reviewer: body.reviewer,
    };
    answer(state.ops_for(caller).reject(id, rejection).await)
}

fn parse_id(text: &str) -> Result<CandidateId, OperationError> {
    CandidateId::parse_str(text).map_err(|_| {
        OperationError::Review(ReviewError::Invalid {
            field: "id",
            rule: format!("must be a candidate id (a UUID), got {text:?}"),
        })
    })
}
