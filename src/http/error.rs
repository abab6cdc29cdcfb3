//! How the routes answer a failure: `{"error": "..."}` with the status its kind calls for.

use axum::Json;
use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};
use serde_json::json;

use crate::operations::{ErrorKind, OperationError};

pub fn failure(e: &OperationError) -> Response {
    error(status_of(e), &e.to_string())
}

/// The status a failure answers with, by its kind (the console's pages too); a server-side
/// failure is logged here.
pub fn status_of(e: &OperationError) -> StatusCode {
    match e.kind() {
        ErrorKind::Invalid => StatusCode::BAD_REQUEST,
        ErrorKind::NotFound => StatusCode::NOT_FOUND,
        ErrorKind::Conflict => StatusCode::CONFLICT,
        ErrorKind::Forbidden => StatusCode::FORBIDDEN,
        ErrorKind::Internal => {
            tracing::error!(error = %e, "request failed");
            StatusCode::INTERNAL_SERVER_ERROR
        }
    }
}

pub fn error(status: StatusCode, message: &str) -> Response {
    (status, Json(json!({"error": message}))).into_response()
}

/// A result as JSON, or its failure.
pub fn answer<T: serde::Serialize>(result: Result<T, OperationError>) -> Response {
    match result {
        Ok(value) => Json(value).into_response(),
        Err(e) => failure(&e),
    }
}

/// A query string axum could not read into the route's parameters.
pub fn bad_query(rejection: &axum::extract::rejection::QueryRejection) -> Response {
    error(
        StatusCode::BAD_REQUEST,
        &format!("query: {}", rejection.body_text()),
    )
}

/// A JSON body axum could not read into the route's type.
pub fn bad_body(rejection: &axum::extract::rejection::JsonRejection) -> Response {
    error(
        StatusCode::BAD_REQUEST,
        &format!("body: {}", rejection.body_text()),
    )
}
