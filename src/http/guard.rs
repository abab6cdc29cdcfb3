//! One layer in front of every route: refuse what a web page the user happens to visit could
//! make the browser send to the daemon, before authentication or any handler sees it.
//!
//! - **DNS rebinding.** A page at `rebind.attacker.example` whose name is made to resolve to
//!   127.0.0.1 talks to the daemon as if same-origin, but its requests carry its own name as
//!   `Host`. Only `allowed_hosts` (and the address the daemon listens on) are served.
//! - **Cross-site requests.** Another site's page cannot read the answers (no CORS headers
//!   are ever sent) but could still fire state-changing requests. A request whose `Origin` is
//!   neither this server's own nor in `allowed_origins`, or that a browser marks
//!   `Sec-Fetch-Site: cross-site | same-site` without such an `Origin`, is refused.
//! - **Simple requests.** A form or a `fetch` without a CORS preflight can only send
//!   `text/plain`, `application/x-www-form-urlencoded` or `multipart/form-data`; every route
//!   that takes a body speaks JSON, so `POST`/`PUT`/`PATCH` must say `application/json`.
//!   The one exception is the operator console (`/ui/…`), whose HTML forms post
//!   `application/x-www-form-urlencoded`: each of its forms carries a CSRF token the console
//!   checks (`console/session.rs`), on top of the Origin rule above.
//!
//! Clients that are not browsers (MCP clients, the CLI, curl, Prometheus) send no `Origin`
//! and no `Sec-Fetch-*` headers and are unaffected.

use std::sync::Arc;

use axum::extract::{Request, State};
use axum::http::{HeaderMap, Method, StatusCode, header};
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};
use serde_json::json;

use crate::origin::{HostPort, WebOrigin};

/// The parsed allow-lists.
#[derive(Debug, Clone)]
pub struct BrowserGuard {
    hosts: Vec<HostPort>,
    origins: Vec<WebOrigin>,
}

impl BrowserGuard {
    /// From the `allowed_hosts` and `allowed_origins` settings (already validated, so an
    /// entry that does not parse is skipped rather than trusted).
    pub fn new(allowed_hosts: &[String], allowed_origins: &[String]) -> Self {
        Self {
            hosts: allowed_hosts
                .iter()
                .filter_map(|h| HostPort::parse(h).ok())
                .collect(),
            origins: allowed_origins
                .iter()
                .filter_map(|o| WebOrigin::parse(o).ok())
                .collect(),
        }
    }

    /// Why a request must be refused, if it must. `authority`: the request target's, which is
    /// where HTTP/2 carries the host (no `Host` header).
    fn check(
        &self,
        method: &Method,
        path: &str,
        authority: Option<&str>,
        headers: &HeaderMap,
    ) -> Result<(), Refusal> {
        let given = match headers.get(header::HOST).map(|v| v.to_str()) {
            Some(Err(_)) => return Err(Refusal::forbidden("the Host header is not valid text")),
            Some(Ok(text)) => Some(text),
            None => authority,
        };
        let Some(given) = given else {
            return Err(Refusal::forbidden("the Host header is required"));
        };
        let host = HostPort::parse(given)
            .map_err(|_| Refusal::forbidden("the Host header is not a host name"))?;
        if !self.hosts.iter().any(|allowed| allowed.allows(&host)) {
            tracing::warn!(host = %host.host, "refused a request for a Host not in allowed_hosts (possible DNS rebinding)");
            return Err(Refusal::forbidden(
                "Host is not in allowed_hosts (add the name clients use to allowed_hosts)",
            ));
        }
        match headers.get(header::ORIGIN) {
            Some(origin) => {
                let allowed = origin
                    .to_str()
                    .ok()
                    .and_then(|text| WebOrigin::parse(text).ok())
                    .is_some_and(|origin| {
                        origin.is_same_as(&host) || self.origins.contains(&origin)
                    });
                if !allowed {
                    tracing::warn!("refused a cross-origin browser request");
                    return Err(Refusal::forbidden(
                        "cross-origin requests are refused (Origin is neither this server nor in allowed_origins)",
                    ));
                }
            }
            None => {
                let site = headers
                    .get("sec-fetch-site")
                    .and_then(|v| v.to_str().ok())
                    .unwrap_or("");
                if site.eq_ignore_ascii_case("cross-site") || site.eq_ignore_ascii_case("same-site")
                {
                    tracing::warn!("refused a cross-site browser request");
                    return Err(Refusal::forbidden(
                        "cross-site requests are refused (Sec-Fetch-Site)",
                    ));
                }
            }
        }
        let console_form = path.starts_with(CONSOLE_PREFIX) && is_form(headers);
        if matches!(*method, Method::POST | Method::PUT | Method::PATCH)
            && !is_json(headers)
            && !console_form
        {
            return Err(Refusal {
                status: StatusCode::UNSUPPORTED_MEDIA_TYPE,
                message: "Content-Type must be application/json",
            });
        }
        Ok(())
    }
}

/// Where the console's form posts go (`crate::http::console`).
const CONSOLE_PREFIX: &str = "/ui/";

fn is_json(headers: &HeaderMap) -> bool {
    content_type_is(headers, "application/json")
}

fn is_form(headers: &HeaderMap) -> bool {
    content_type_is(headers, "application/x-www-form-urlencoded")
}

fn content_type_is(headers: &HeaderMap, expected: &str) -> bool {
    headers
        .get(header::CONTENT_TYPE)
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.split(';').next())
        .is_some_and(|essence| essence.trim().eq_ignore_ascii_case(expected))
}

struct Refusal {
    status: StatusCode,
    message: &'static str,
}

impl Refusal {
    fn forbidden(message: &'static str) -> Self {
        Self {
            status: StatusCode::FORBIDDEN,
            message,
        }
    }
}

/// The middleware: `axum::middleware::from_fn_with_state(Arc<BrowserGuard>, guard)`.
pub async fn guard(
    State(guard): State<Arc<BrowserGuard>>,
    request: Request,
    next: Next,
) -> Response {
    let authority = request.uri().authority().map(|a| a.as_str());
    let path = request.uri().path();
    match guard.check(request.method(), path, authority, request.headers()) {
        Ok(()) => next.run(request).await,
        Err(refusal) => (
            refusal.status,
            axum::Json(json!({"error": refusal.message})),
        )
            .into_response(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use axum::http::HeaderValue;

    fn headers(pairs: &[(&'static str, &str)]) -> HeaderMap {
        let mut map = HeaderMap::new();
        for (name, value) in pairs {
            map.insert(*name, HeaderValue::from_str(value).unwrap());
        }
        map
    }

    fn status(guard: &BrowserGuard, method: Method, pairs: &[(&'static str, &str)]) -> u16 {
        match guard.check(&method, "/api/memories", None, &headers(pairs)) {
            Ok(()) => 200,
            Err(refusal) => refusal.status.as_u16(),
        }
    }

    #[test]
    fn host_origin_and_content_type_rules() {
        let guard = BrowserGuard::new(
            &["localhost".into(), "127.0.0.1".into(), "::1".into()],
            &["http://localhost:6274".into()],
        );
        let json = ("content-type", "application/json; charset=utf-8");
        assert_eq!(
            status(&guard, Method::GET, &[("host", "127.0.0.1:8765")]),
            200
        );
        assert_eq!(status(&guard, Method::GET, &[("host", "[::1]:8765")]), 200);
        assert_eq!(status(&guard, Method::GET, &[]), 403, "no Host");
        // HTTP/2: the host is the request target's authority.
        let h2 = |authority| {
            guard
                .check(&Method::GET, "/healthz", Some(authority), &HeaderMap::new())
                .is_ok()
        };
        assert!(h2("127.0.0.1:8765"));
        assert!(!h2("rebind.attacker.example:8765"));
        assert_eq!(
            status(
                &guard,
                Method::GET,
                &[("host", "rebind.attacker.example:8765")]
            ),
            403
        );
        // Origins: the server's own, an allowed one, anything else.
        let own = [
            ("host", "127.0.0.1:8765"),
            ("origin", "http://127.0.0.1:8765"),
            json,
        ];
        assert_eq!(status(&guard, Method::POST, &own), 200);
        let listed = [
            ("host", "localhost:8765"),
            ("origin", "http://localhost:6274"),
            json,
        ];
        assert_eq!(status(&guard, Method::POST, &listed), 200);
        for foreign in [
            "http://attacker.example",
            "http://localhost:3000",
            "null",
            "garbage",
        ] {
            let pairs = [("host", "localhost:8765"), ("origin", foreign), json];
            assert_eq!(status(&guard, Method::POST, &pairs), 403, "{foreign}");
            assert_eq!(status(&guard, Method::GET, &pairs[..2]), 403, "{foreign}");
        }
        // Sec-Fetch-Site without an Origin (a navigation, an <img>).
        for site in ["cross-site", "same-site"] {
            let pairs = [("host", "localhost:8765"), ("sec-fetch-site", site)];
            assert_eq!(status(&guard, Method::GET, &pairs), 403, "{site}");
        }
        for site in ["same-origin", "none"] {
            let pairs = [("host", "localhost:8765"), ("sec-fetch-site", site)];
            assert_eq!(status(&guard, Method::GET, &pairs), 200, "{site}");
        }
        // Bodies must be JSON.
        let host = ("host", "localhost:8765");
        assert_eq!(status(&guard, Method::POST, &[host]), 415);
        for simple in [
            "text/plain",
            "application/x-www-form-urlencoded",
            "multipart/form-data; boundary=x",
        ] {
            assert_eq!(
                status(&guard, Method::POST, &[host, ("content-type", simple)]),
                415,
                "{simple}"
            );
        }
        assert_eq!(status(&guard, Method::POST, &[host, json]), 200);
        assert_eq!(status(&guard, Method::DELETE, &[host]), 200);
        // The console's forms (CSRF-checked there), and nothing else of the simple kinds.
        let console = |content_type: &str, origin: &str| {
            let mut pairs = headers(&[host, ("content-type", content_type)]);
            if !origin.is_empty() {
                pairs.insert("origin", HeaderValue::from_str(origin).unwrap());
            }
            match guard.check(&Method::POST, "/ui/candidates/x/approve", None, &pairs) {
                Ok(()) => 200,
                Err(refusal) => refusal.status.as_u16(),
            }
        };
        assert_eq!(console("application/x-www-form-urlencoded", ""), 200);
        assert_eq!(
            console("application/x-www-form-urlencoded", "http://localhost:8765"),
            200
        );
        assert_eq!(
            console(
                "application/x-www-form-urlencoded",
                "http://attacker.example"
            ),
            403
        );
        assert_eq!(console("text/plain", ""), 415);
        assert_eq!(console("multipart/form-data; boundary=x", ""), 415);
    }
}
