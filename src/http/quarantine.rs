//! Writes the screen held for review, behind the bearer token (review scopes):
//!
//! - `GET  /api/quarantine?namespace=&status=pending|approved|rejected|all&limit=`
//! - `GET  /api/quarantine/{id}`
//! - `POST /api/quarantine/{id}/approve` `{"reviewer"?}`: the write goes through now
//! - `POST /api/quarantine/{id}/reject` `{"note", "reviewer"?}`

use axum::extract::rejection::{JsonRejection, QueryRejection};
use axum::extract::{Path, Query, State};
use axum::response::{IntoResponse, Response};
use axum::routing::{get, post};
use axum::{Extension, Json, Router};
use serde::Deserialize;
use serde_json::json;

use super::AppState;
use super::candidates::ListParams;
use super::error::{answer, bad_body, bad_query, failure};
use crate::auth::Principal;
use crate::operations::{OperationError, Operations, Rejection};

pub fn routes() -> Router<AppState> {
    Router::new()
        .route("/api/quarantine", get(list))
        .route("/api/quarantine/{id}", get(show))
        .route("/api/quarantine/{id}/approve", post(approve))
        .route("/api/quarantine/{id}/reject", post(reject))
}

async fn list(
    State(state): State<AppState>,
    Extension(caller): Extension<Principal>,
    params: Result<Query<ListParams>, QueryRejection>,
) -> Response {
    let params = match params {
        Ok(Query(params)) => params,
        Err(e) => return bad_query(&e),
    };
    match state.ops_for(caller).quarantined(params.query()).await {
        Ok(items) => Json(json!({ "quarantined": items })).into_response(),
        Err(e) => failure(&e),
    }
}

fn parse_id(text: &str) -> Result<uuid::Uuid, OperationError> {
    uuid::Uuid::parse_str(text).map_err(|_| OperationError::Invalid {
        field: "id",
        rule: format!("must be a held write's id (a UUID), got {text:?}"),
    })
}

async fn show(
    State(state): State<AppState>,
    Extension(caller): Extension<Principal>,
    Path(id): Path<String>,
) -> Response {
    match parse_id(&id) {
        Ok(id) => answer(state.ops_for(caller).quarantined_one(id).await),
        Err(e) => failure(&e),
    }
}

#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
struct ApproveBody {
    reviewer: Option<String>,
}

async fn approve(
    State(state): State<AppState>,
    Extension(caller): Extension<Principal>,
    Path(id): Path<String>,
    body: Result<Json<ApproveBody>, JsonRejection>,
) -> Response {
    let id = match parse_id(&id) {
        Ok(id) => id,
        Err(e) => return failure(&e),
    };
    match body {
        Ok(Json(body)) => answer(state.ops_for(caller).release(id, body.reviewer).await),
        Err(e) => bad_body(&e),
    }
}

async fn reject(
    State(state): State<AppState>,
    Extension(caller): Extension<Principal>,
    Path(id): Path<String>,
    body: Result<Json<Rejection>, JsonRejection>,
) -> Response {
    let id = match parse_id(&id) {
        Ok(id) => id,
        Err(e) => return failure(&e),
    };
    match body {
        Ok(Json(rejection)) => answer(state.ops_for(caller).discard(id, rejection).await),
        Err(e) => bad_body(&e),
    }
}
