//! The HTTP face of the daemon: MCP (Streamable HTTP) at `/mcp`, `GET /healthz`, bearer auth;
//! the memory routes (`memories.rs`), `GET /metrics` and the operator routes (`admin.rs`), the
//! review API (`candidates.rs`), the operator console at `/ui` (`console/`). Every route
//! answers through the daemon's `Operations` (`AppState::ops`) and sits behind the browser
//! guard (`guard.rs`: Host allow-list, cross-site refusal, JSON bodies).

mod admin;
mod candidates;
mod console;
mod error;
pub mod guard;
mod memories;
mod quarantine;

pub use guard::BrowserGuard;

use std::sync::Arc;

use axum::extract::{Request, State};
use axum::http::{HeaderMap, StatusCode, header};
use axum::middleware::{self, Next};
use axum::response::{IntoResponse, Response};
use axum::routing::get;
use axum::{Json, Router};
use rmcp::transport::streamable_http_server::session::local::LocalSessionManager;
use rmcp::transport::streamable_http_server::{StreamableHttpServerConfig, StreamableHttpService};
use serde_json::json;
use tokio_util::sync::CancellationToken;

use crate::auth::Principal;
use crate::mcp::HindsightMcp;
use crate::metrics::Metrics;
use crate::operations::{Guarded, LocalOperations};
use crate::service::Rules;

/// What every handler may use: the daemon's operations, its metrics, and the rules in force
/// (which the MCP tools describe to agents).
#[derive(Clone)]
pub struct AppState {
    pub ops: Arc<LocalOperations>,
    pub metrics: Arc<Metrics>,
    pub rules: Arc<Rules>,
}

impl AppState {
    /// The operations as `caller` may use them.
    pub fn ops_for(&self, caller: Principal) -> Guarded {
        self.ops.guarded(caller)
    }
}

/// Build the router. `auth_token`: the operator's token; with it, every route but `/healthz`
/// requires `Authorization: Bearer <token>` (the operator's or a stored token); without it
/// (`auth = "none"`), a request with no token is the operator's. `guard`: what every route,
/// `/healthz` included, checks first (the Host allow-list, cross-site requests, JSON bodies).
pub fn router(
    state: AppState,
    auth_token: Option<crate::secret::Secret>,
    guard: BrowserGuard,
    shutdown: CancellationToken,
) -> Router {
    let for_mcp = state.clone();
    let mcp = StreamableHttpService::new(
        move || {
            // No caller of its own: each request's is the one the bearer layer found.
            Ok(HindsightMcp::new(
                for_mcp.ops.clone(),
                None,
                &for_mcp.rules,
                for_mcp.metrics.clone(),
            ))
        },
        Arc::new(LocalSessionManager::default()),
        // The guard layer checks Host and Origin for every route, this one included.
        StreamableHttpServerConfig::default()
            .disable_allowed_hosts()
            .with_cancellation_token(shutdown.child_token()),
    );
    let authenticator = Arc::new(Authenticator {
        operator_token: auth_token,
        ops: state.ops.clone(),
        console_key: rand::random(),
    });
    let protected = Router::new()
        .nest_service("/mcp", mcp)
        .merge(memories::routes())
        .merge(admin::routes())
        .merge(candidates::routes())
        .merge(quarantine::routes())
        .layer(middleware::from_fn_with_state(
            authenticator.clone(),
            authenticate,
        ));
    Router::new()
        .route("/healthz", get(healthz))
        .merge(protected)
        .merge(console::routes(authenticator))
        .with_state(state)
        .layer(middleware::from_fn_with_state(
            Arc::new(guard),
            guard::guard,
        ))
}

async fn healthz(State(state): State<AppState>) -> Response {
    match state.ops.ping().await {
        Ok(()) => {
            Json(json!({"status": "ok", "version": env!("CARGO_PKG_VERSION")})).into_response()
        }
        Err(e) => {
            tracing::error!(error = %e, "health check: store unreachable");
            (
                StatusCode::SERVICE_UNAVAILABLE,
                Json(json!({"status": "unavailable"})),
            )
                .into_response()
        }
    }
}

/// Who a request's bearer token (or the console's session cookie) stands for.
pub(crate) struct Authenticator {
    /// The operator's token (`auth_token`, or the private endpoint's); `None`: authentication
    /// is off and a request without a token is the operator's.
    operator_token: Option<crate::secret::Secret>,
    /// For the tokens an operator created (`tokens create`).
    ops: Arc<LocalOperations>,
    /// The console's CSRF key when there is no token to derive it from (made at start).
    console_key: [u8; 32],
}

impl Authenticator {
    pub(crate) fn console_key(&self) -> &[u8] {
        &self.console_key
    }

    pub(crate) async fn caller(&self, given: Option<&str>) -> Result<Option<Principal>, Response> {
        let expected = self
            .operator_token
            .as_ref()
            .map(crate::secret::Secret::expose);
        match (given, expected) {
            (Some(given), Some(expected))
                if constant_time_eq(given.as_bytes(), expected.as_bytes()) =>
            {
                Ok(Some(Principal::operator("operator")))
            }
            (Some(given), _) => self.ops.principal_for_token(given).await.map_err(|e| {
                tracing::error!(error = %e, "token lookup failed");
                (
                    StatusCode::SERVICE_UNAVAILABLE,
                    Json(json!({"error": "cannot check the token now"})),
                )
                    .into_response()
            }),
            (None, None) => Ok(Some(Principal::operator("anonymous"))),
            (None, Some(_)) => Ok(None),
        }
    }
}

async fn authenticate(
    State(auth): State<Arc<Authenticator>>,
    headers: HeaderMap,
    mut request: Request,
    next: Next,
) -> Response {
    let given = headers
        .get(header::AUTHORIZATION)
        .and_then(|v| v.to_str().ok())
        .and_then(bearer_token);
    match auth.caller(given).await {
        Ok(Some(caller)) => {
            request.extensions_mut().insert(caller);
            next.run(request).await
        }
        Ok(None) => (
            StatusCode::UNAUTHORIZED,
            [(header::WWW_AUTHENTICATE, "Bearer")],
            Json(json!({"error": "missing or invalid bearer token"})),
        )
            .into_response(),
        Err(response) => response,
    }
}

/// The token of an `Authorization: Bearer <token>` value; the scheme is case-insensitive
/// (RFC 9110 §11.1), so `bearer` and `BEARER` work too.
fn bearer_token(value: &str) -> Option<&str> {
    let (scheme, token) = value.trim().split_once(' ')?;
    scheme
        .eq_ignore_ascii_case("bearer")
        .then(|| token.trim_start_matches(' '))
}

pub(crate) fn constant_time_eq(a: &[u8], b: &[u8]) -> bool {
    a.len() == b.len() && a.iter().zip(b).fold(0u8, |acc, (x, y)| acc | (x ^ y)) == 0
}

#[cfg(test)]
mod tests {
    use super::bearer_token;

    #[test]
    fn the_bearer_scheme_is_case_insensitive() {
        for value in ["Bearer t0k", "bearer t0k", "BEARER t0k", "Bearer   t0k"] {
            assert_eq!(bearer_token(value), Some("t0k"), "{value}");
        }
        for value in ["Basic t0k", "Bearert0k", "t0k", ""] {
            assert_eq!(bearer_token(value), None, "{value}");
        }
    }
}
