//! Logging in and out: the token given once, kept in the session cookie (`session.rs`).

use std::sync::Arc;

use axum::Extension;
use axum::body::Bytes;
use axum::extract::{Query, State};
use axum::http::{StatusCode, header};
use axum::response::{IntoResponse, Redirect, Response};
use maud::{Markup, html};
use serde::Deserialize;

use super::page::{self, FormBody, Section};
use super::session::{self, Session};
use crate::http::Authenticator;

#[derive(Debug, Default, Deserialize)]
pub struct NextParam {
    next: Option<String>,
}

fn login_page(next: &str, problem: Option<&str>) -> Markup {
    let body = html! {
        section.login {
            h1 { "Log in to the hindsight console" }
            p.muted {
                "Paste the operator token (" code { "hindsight token" } " prints it) or a token made with "
                code { "hindsight tokens create" } ". It stays in an HttpOnly cookie for this browser."
            }
            @if let Some(problem) = problem {
                p.notice.bad role="alert" { (problem) }
            }
            form method="post" action="/ui/login" {
                input type="hidden" name="next" value=(next);
                label for="token" { "Token" }
                input #token type="password" name="token" autocomplete="current-password" required autofocus;
                button type="submit" { "Log in" }
            }
        }
    };
    page::frame("Log in", Section::Login, None, body)
}

pub async fn form(
    params: Result<Query<NextParam>, axum::extract::rejection::QueryRejection>,
) -> Response {
    let params = match page::query(params) {
        Ok(params) => params,
        Err(response) => return response,
    };
    let next = session::safe_next(params.next.as_deref());
    page::respond(StatusCode::OK, login_page(next, None))
}

/// Checks the token as the API would; a good one becomes the session cookie.
pub async fn submit(State(auth): State<Arc<Authenticator>>, body: Bytes) -> Response {
    let form = FormBody::parse(&body);
    let next = session::safe_next(form.get("next")).to_owned();
    let Some(token) = form.text("token") else {
        return page::respond(
            StatusCode::BAD_REQUEST,
            login_page(&next, Some("token: required")),
        );
    };
    match auth.caller(Some(token)).await {
        Ok(Some(caller)) => {
            tracing::info!(caller = %caller.name, "console login");
            let mut response = Redirect::to(&next).into_response();
            response
                .headers_mut()
                .insert(header::SET_COOKIE, session::session_cookie(token));
            response
        }
        Ok(None) => {
            tracing::warn!("console login refused: unknown or revoked token");
            page::respond(
                StatusCode::UNAUTHORIZED,
                login_page(&next, Some("That token is not valid (unknown or revoked).")),
            )
        }
        Err(response) => response,
    }
}

pub async fn logout(Extension(session): Extension<Session>, body: Bytes) -> Response {
    if let Err(refused) = session.form(&body) {
        return refused;
    }
    let mut response = Redirect::to("/ui/login").into_response();
    response
        .headers_mut()
        .insert(header::SET_COOKIE, session::cleared_cookie());
    response
}
