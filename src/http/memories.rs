//! The memory operations over plain HTTP, behind the same bearer token as `/mcp`: what the CLI
//! calls when a daemon owns the data dir. The bodies are the MCP tools' arguments, checked the
//! same way (a bad field is a 400 naming it).
//!
//! - `POST /api/memories` (`memory_write`'s arguments)
//! - `POST /api/memories/batch` (`memory_write_batch`'s: `{"memories": [...]}`, at most
//!   32 MB)
//! - `POST /api/memories/search` (`memory_search`'s)
//! - `POST /api/memories/forget` (`memory_forget`'s)
//! - `POST /api/memories/list` (`{"namespace"?, "memory_type"?, "status"?, "entity"?,
//!   "attribute"?, "deprecated_by"?, "from"?, "to"?, "before"?, "limit"?}`)
//! - `GET  /api/memories/{id}`
//! - `GET  /api/stats`

use axum::body::Bytes;
use axum::extract::{Path, State};
use axum::response::Response;
use axum::routing::{get, post};
use axum::{Extension, Router};
use serde::de::DeserializeOwned;

use super::AppState;
use super::error::{answer, failure};
use crate::auth::Principal;
use crate::domain::ValidationError;
use crate::operations::{OperationError, Operations};
use crate::service::ServiceError;
use crate::service::requests::parse_args;

pub fn routes() -> Router<AppState> {
    Router::new()
        .route("/api/memories", post(write))
        .route(
            "/api/memories/batch",
            post(write_batch).layer(axum::extract::DefaultBodyLimit::max(BATCH_BODY_LIMIT)),
        )
        .route("/api/memories/search", post(search))
        .route("/api/memories/forget", post(forget))
        .route("/api/memories/list", post(list))
        .route("/api/memories/{id}", get(show))
        .route("/api/stats", get(stats))
}

/// A batch of `service::MAX_BATCH` memories of a few hundred characters each is well under
/// a megabyte; this leaves room for long ones with provenance (axum's default is 2 MB).
const BATCH_BODY_LIMIT: usize = 32 * 1024 * 1024;

/// The body as the tool's arguments, or the error naming the field.
fn arguments<T: DeserializeOwned>(body: &Bytes) -> Result<T, OperationError> {
    let value = serde_json::from_slice(body)
        .map_err(|e| ValidationError::new("body".to_owned(), e.to_string()))
        .and_then(parse_args);
    value.map_err(|e| OperationError::Service(ServiceError::Invalid(e)))
}

async fn write(
    State(state): State<AppState>,
    Extension(caller): Extension<Principal>,
    body: Bytes,
) -> Response {
    match arguments(&body) {
        Ok(request) => answer(state.ops_for(caller).write(request).await),
        Err(e) => failure(&e),
    }
}

async fn write_batch(
    State(state): State<AppState>,
    Extension(caller): Extension<Principal>,
    body: Bytes,
) -> Response {
    match arguments(&body) {
        Ok(request) => answer(state.ops_for(caller).write_batch(request).await),
        Err(e) => failure(&e),
    }
}

async fn search(
    State(state): State<AppState>,
    Extension(caller): Extension<Principal>,
    body: Bytes,
) -> Response {
    match arguments(&body) {
        Ok(request) => answer(state.ops_for(caller).search(request).await),
        Err(e) => failure(&e),
    }
}

async fn forget(
    State(state): State<AppState>,
    Extension(caller): Extension<Principal>,
    body: Bytes,
) -> Response {
    match arguments(&body) {
        Ok(request) => answer(state.ops_for(caller).forget(request).await),
        Err(e) => failure(&e),
    }
}

async fn list(
    State(state): State<AppState>,
    Extension(caller): Extension<Principal>,
    body: Bytes,
) -> Response {
    match arguments(&body) {
        Ok(request) => answer(state.ops_for(caller).list(request).await),
        Err(e) => failure(&e),
    }
}

async fn show(
    State(state): State<AppState>,
    Extension(caller): Extension<Principal>,
    Path(id): Path<String>,
) -> Response {
    match uuid::Uuid::parse_str(id.trim()) {
        Ok(id) => answer(state.ops_for(caller).get(id).await),
        Err(_) => failure(&OperationError::Invalid {
            field: "memory_id",
            rule: format!("must be a UUID, got {id:?}"),
        }),
    }
}

async fn stats(State(state): State<AppState>, Extension(caller): Extension<Principal>) -> Response {
    answer(state.ops_for(caller).stats().await)
}
