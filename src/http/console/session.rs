//! Who is using the console: the login page takes a token (the operator's or one made by
//! `tokens create`) and keeps it in a cookie the page's scripts cannot read (`HttpOnly`), that
//! is sent only over HTTPS or to localhost (`Secure`) and never with a request another site
//! starts (`SameSite=Strict`). Every console request is authenticated from that cookie exactly
//! as the API authenticates a bearer token, so revoking a token logs its sessions out.
//!
//! CSRF: every form carries a token derived from the session's secret (HMAC-SHA256 of a fixed
//! label under the cookie's token; without authentication, under a key made at start), checked
//! on every POST. Another site can neither read it nor compute it; the browser guard's Origin
//! rule is the second wall. The derivation needs no server-side state, so replicas agree.

use std::sync::Arc;

use axum::extract::{Request, State};
use axum::http::{HeaderMap, HeaderValue, StatusCode, header};
use axum::middleware::Next;
use axum::response::{IntoResponse, Redirect, Response};
use hmac::{Hmac, Mac};
use sha2::Sha256;

use super::page;
use crate::auth::Principal;
use crate::http::Authenticator;

/// The session cookie's name.
pub const COOKIE: &str = "hindsight_console";
/// How long a login lasts without another: a working day.
const MAX_AGE_SECONDS: u64 = 12 * 3600;
const CSRF_LABEL: &[u8] = b"hindsight console csrf v1";

/// What a console handler knows of its caller.
#[derive(Clone)]
pub struct Session {
    pub caller: Principal,
    /// The token every form of this session carries.
    pub csrf: String,
}

impl Session {
    /// What the page frame shows of it.
    pub fn nav(&self) -> page::Nav<'_> {
        page::Nav {
            name: &self.caller.name,
            csrf: &self.csrf,
        }
    }

    /// A posted form, once its CSRF token is found to be this session's.
    pub fn form(&self, body: &[u8]) -> Result<page::FormBody, Response> {
        let form = page::FormBody::parse(body);
        self.check_csrf(form.get("csrf"))?;
        Ok(form)
    }

    /// Whether a posted form's token is this session's.
    pub fn check_csrf(&self, given: Option<&str>) -> Result<(), Response> {
        let given = given.unwrap_or("");
        if crate::http::constant_time_eq(given.as_bytes(), self.csrf.as_bytes()) {
            Ok(())
        } else {
            tracing::warn!(caller = %self.caller.name, "console: refused a form without this session's CSRF token");
            Err(page::error_page(
                StatusCode::FORBIDDEN,
                "This form's CSRF token is missing or belongs to another session. Reload the page and try again.",
            ))
        }
    }
}

/// The CSRF token of a session: keyed by its secret (the token in its cookie), or by the
/// process's own key when authentication is off.
pub fn csrf_token(secret: Option<&str>, process_key: &[u8]) -> String {
    let key = secret.map_or(process_key, str::as_bytes);
    let mut mac = <Hmac<Sha256> as Mac>::new_from_slice(key).expect("HMAC takes any key length");
    mac.update(CSRF_LABEL);
    mac.finalize()
        .into_bytes()
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect()
}

/// The value of cookie `name`, percent-decoded.
pub fn cookie(headers: &HeaderMap, name: &str) -> Option<String> {
    headers
        .get_all(header::COOKIE)
        .iter()
        .filter_map(|v| v.to_str().ok())
        .flat_map(|line| line.split(';'))
        .filter_map(|pair| pair.trim().split_once('='))
        .find(|(key, _)| *key == name)
        .map(|(_, value)| {
            form_urlencoded::parse(format!("v={value}").as_bytes())
                .next()
                .map(|(_, v)| v.into_owned())
                .unwrap_or_default()
        })
        .filter(|value| !value.is_empty())
}

/// The `Set-Cookie` that keeps `token` for the session.
pub fn session_cookie(token: &str) -> HeaderValue {
    let value: String = form_urlencoded::byte_serialize(token.as_bytes()).collect();
    HeaderValue::from_str(&format!(
        "{COOKIE}={value}; Path=/ui; HttpOnly; Secure; SameSite=Strict; Max-Age={MAX_AGE_SECONDS}"
    ))
    .unwrap_or_else(|_| HeaderValue::from_static("hindsight_console=; Path=/ui; Max-Age=0"))
}

/// The `Set-Cookie` that ends it.
pub fn cleared_cookie() -> HeaderValue {
    HeaderValue::from_static(
        "hindsight_console=; Path=/ui; HttpOnly; Secure; SameSite=Strict; Max-Age=0",
    )
}

/// Middleware for every console page but the login page and the assets: the caller from the
/// cookie, or a redirect to the login page (a form post without a session is refused).
pub async fn require(
    State(auth): State<Arc<Authenticator>>,
    mut request: Request,
    next: Next,
) -> Response {
    let token = cookie(request.headers(), COOKIE);
    match auth.caller(token.as_deref()).await {
        Ok(Some(caller)) => {
            let csrf = csrf_token(token.as_deref(), auth.console_key());
            request.extensions_mut().insert(Session { caller, csrf });
            next.run(request).await
        }
        Ok(None) if request.method() == axum::http::Method::GET => {
            let here = request
                .uri()
                .path_and_query()
                .map_or("/ui", |p| p.as_str())
                .to_owned();
            let next_param: String = form_urlencoded::byte_serialize(here.as_bytes()).collect();
            Redirect::to(&format!("/ui/login?next={next_param}")).into_response()
        }
        Ok(None) => page::error_page(
            StatusCode::UNAUTHORIZED,
            "Not logged in (or the token was revoked). Log in again.",
        ),
        Err(response) => response,
    }
}

/// Headers every console answer carries: its pages hold memory content (never cached), load
/// nothing from anywhere else and run no inline script (CSP), and are never framed. The
/// referrer policy is `same-origin`, not `no-referrer`: under `no-referrer` a browser sends
/// `Origin: null` with a form post, which the guard (rightly) refuses.
pub async fn secure_headers(request: Request, next: Next) -> Response {
    let mut response = next.run(request).await;
    let headers = response.headers_mut();
    headers.insert(
        header::CONTENT_SECURITY_POLICY,
        HeaderValue::from_static(
            "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; \
             form-action 'self'; frame-ancestors 'none'; base-uri 'none'",
        ),
    );
    headers.insert(
        header::X_CONTENT_TYPE_OPTIONS,
        HeaderValue::from_static("nosniff"),
    );
    headers.insert(
        header::REFERRER_POLICY,
        HeaderValue::from_static("same-origin"),
    );
    headers.insert(header::X_FRAME_OPTIONS, HeaderValue::from_static("DENY"));
    if !headers.contains_key(header::CACHE_CONTROL) {
        headers.insert(header::CACHE_CONTROL, HeaderValue::from_static("no-store"));
    }
    response
}

/// Where a login may send the browser next: a console page of this server, nothing else.
pub fn safe_next(next: Option<&str>) -> &str {
    match next {
        Some(path)
            if (path == "/ui" || path.starts_with("/ui/") || path.starts_with("/ui?"))
                && !path.contains("//")
                && !path.contains('\\')
                && path.bytes().all(|b| b.is_ascii_graphic()) =>
        {
            path
        }
        _ => "/ui",
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cookies_round_trip_through_percent_encoding() {
        let set = session_cookie("hs_a b;c=d");
        let value = set.to_str().unwrap();
        assert!(value.contains("HttpOnly") && value.contains("Secure"));
        assert!(value.contains("SameSite=Strict"));
        let pair = value.split(';').next().unwrap();
        let mut headers = HeaderMap::new();
        headers.insert(
            header::COOKIE,
            HeaderValue::from_str(&format!("other=1; {pair}")).unwrap(),
        );
        assert_eq!(cookie(&headers, COOKIE).as_deref(), Some("hs_a b;c=d"));
        assert_eq!(cookie(&headers, "missing"), None);
    }

    #[test]
    fn csrf_tokens_differ_per_secret_and_need_it() {
        let key = [7u8; 32];
        let a = csrf_token(Some("token-a"), &key);
        assert_eq!(
            a,
            csrf_token(Some("token-a"), &[1u8; 32]),
            "stable across replicas"
        );
        assert_ne!(a, csrf_token(Some("token-b"), &key));
        assert_ne!(csrf_token(None, &key), csrf_token(None, &[8u8; 32]));
        assert_eq!(a.len(), 64);
    }

    #[test]
    fn a_login_only_sends_the_browser_to_console_pages() {
        assert_eq!(safe_next(Some("/ui/memories?q=x")), "/ui/memories?q=x");
        assert_eq!(safe_next(Some("/ui")), "/ui");
        for bad in [
            "https://attacker.example",
            "//attacker.example",
            "/ui//attacker.example",
            "/uifoo",
            "/admin/jobs",
            "/ui/\\attacker",
            "/ui/x\r\nSet-Cookie: a=b",
        ] {
            assert_eq!(safe_next(Some(bad)), "/ui", "{bad}");
        }
        assert_eq!(safe_next(None), "/ui");
    }
}
