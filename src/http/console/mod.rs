//! The operator console: server-rendered HTML at `/ui` on the daemon's own port, for the people
//! who review distilled knowledge and look after the store. Pages are written with maud
//! (escaped by default) and call the same `Operations` the API and the MCP tools call, as the
//! logged-in token (`session.rs`), so a scoped token sees and decides only what it may.
//!
//! - `GET /ui/login`, `POST /ui/login` (`token`, `next`), `POST /ui/logout`
//! - `GET /ui/review`: pending candidates (most evidence first) with their episodes, the
//!   memories they resemble and the fact they would supersede; held writes.
//!   `POST /ui/candidates/{id}/approve|reject`, `POST /ui/candidates/reject` (bulk),
//!   `POST /ui/held/{id}/release|discard`
//! - `GET /ui/memories` (search with each score's parts, or browse by filters),
//!   `GET /ui/memories/{id}` (provenance, supersede history), `POST /ui/memories/{id}/forget`
//! - `GET /ui/jobs` (schedules, last runs, capacity, charts), `GET /ui/jobs/{name}`,
//!   `POST /ui/jobs/{name}/run` (`dry_run`)
//!
//! Forms post `application/x-www-form-urlencoded` with the session's CSRF token; the
//! browser guard lets that content type through for `/ui/` only. A small script (assets)
//! adds keyboard shortcuts; every page works without it.

// Handlers answer early with a whole page (`Result<_, Response>`): once per request, so
// boxing the response buys nothing.
mod assets;
mod chart;
mod jobs;
mod login;
mod memories;
#[allow(clippy::result_large_err)]
mod page;
#[allow(clippy::result_large_err)]
mod review;
#[allow(clippy::result_large_err)]
mod session;

use std::sync::Arc;

use axum::Router;
use axum::middleware;
use axum::response::Redirect;
use axum::routing::{get, post};

use super::{AppState, Authenticator};

pub fn routes(authenticator: Arc<Authenticator>) -> Router<AppState> {
    let pages = Router::new()
        .route("/ui", get(|| async { Redirect::to("/ui/review") }))
        .route("/ui/", get(|| async { Redirect::to("/ui/review") }))
        .route("/ui/logout", post(login::logout))
        .route("/ui/review", get(review::queue))
        .route("/ui/candidates/reject", post(review::reject_many))
        .route("/ui/candidates/{id}/approve", post(review::approve))
        .route("/ui/candidates/{id}/reject", post(review::reject))
        .route("/ui/held/{id}/release", post(review::release))
        .route("/ui/held/{id}/discard", post(review::discard))
        .route("/ui/memories", get(memories::browse))
        .route("/ui/memories/{id}", get(memories::show))
        .route("/ui/memories/{id}/forget", post(memories::forget))
        .route("/ui/jobs", get(jobs::overview))
        .route("/ui/jobs/{name}", get(jobs::history))
        .route("/ui/jobs/{name}/run", post(jobs::run))
        .layer(middleware::from_fn_with_state(
            authenticator.clone(),
            session::require,
        ));
    Router::new()
        .route("/ui/login", get(login::form).post(login::submit))
        .route(assets::CSS_PATH, get(assets::css))
        .route(assets::JS_PATH, get(assets::js))
        .with_state(authenticator)
        .merge(pages)
        .layer(middleware::from_fn(session::secure_headers))
}
