//! The console's stylesheet and script, compiled into the binary: no CDN, no build step, and
//! served without a session so the login page is styled too. The version is in the path, so a
//! browser may keep them for a day and still never run an old script against a new daemon.

use axum::http::{HeaderValue, header};
use axum::response::{IntoResponse, Response};

const CSS: &str = include_str!("assets/console.css");
const JS: &str = include_str!("assets/console.js");

pub const CSS_PATH: &str = concat!("/ui/assets/console-", env!("CARGO_PKG_VERSION"), ".css");
pub const JS_PATH: &str = concat!("/ui/assets/console-", env!("CARGO_PKG_VERSION"), ".js");

fn asset(body: &'static str, content_type: &'static str) -> Response {
    (
        [
            (header::CONTENT_TYPE, HeaderValue::from_static(content_type)),
            (
                header::CACHE_CONTROL,
                HeaderValue::from_static("public, max-age=86400"),
            ),
        ],
        body,
    )
        .into_response()
}

pub async fn css() -> Response {
    asset(CSS, "text/css; charset=utf-8")
}

pub async fn js() -> Response {
    asset(JS, "text/javascript; charset=utf-8")
}
