//! The console's page frame and the small pieces every page uses: navigation, notices, times,
//! ids, error pages, form bodies, and the highlighting of the words a candidate rests on.

use std::collections::HashSet;

use axum::http::StatusCode;
use axum::response::{Html, IntoResponse, Response};
use chrono::{DateTime, Utc};
use maud::{DOCTYPE, Markup, PreEscaped, html};
use unicode_segmentation::UnicodeSegmentation;

use crate::operations::OperationError;

/// Which section the navigation marks as current.
#[derive(Clone, Copy, PartialEq, Eq)]
pub enum Section {
    Review,
    Memories,
    Jobs,
    Login,
}

/// Who the navigation bar names, and the CSRF token of its logout form.
pub struct Nav<'a> {
    pub name: &'a str,
    pub csrf: &'a str,
}

/// A whole page: head (the embedded stylesheet and script, nothing from elsewhere),
/// navigation with the caller's name and a logout form, then `body`.
pub fn frame(title: &str, section: Section, session: Option<Nav<'_>>, body: Markup) -> Markup {
    let link = |href: &str, label: &str, this: Section| {
        html! { a href=(href) aria-current=[(section == this).then_some("page")] { (label) } }
    };
    html! {
        (DOCTYPE)
        html lang="en" {
            head {
                meta charset="utf-8";
                meta name="viewport" content="width=device-width, initial-scale=1";
                title { (title) " · hindsight" }
                link rel="stylesheet" href=(super::assets::CSS_PATH);
                script src=(super::assets::JS_PATH) defer {}
            }
            body {
                header.top {
                    a.brand href="/ui" { "hindsight" }
                    @if let Some(session) = session {
                        nav {
                            (link("/ui/review", "Review", Section::Review))
                            (link("/ui/memories", "Memories", Section::Memories))
                            (link("/ui/jobs", "Jobs & health", Section::Jobs))
                        }
                        form.logout method="post" action="/ui/logout" {
                            (csrf_field(session.csrf))
                            span.who { (session.name) }
                            button type="submit" { "Log out" }
                        }
                    }
                }
                main { (body) }
            }
        }
    }
}

/// The hidden field every form of a session carries.
pub fn csrf_field(csrf: &str) -> Markup {
    html! { input type="hidden" name="csrf" value=(csrf); }
}

/// An HTML answer.
pub fn respond(status: StatusCode, markup: Markup) -> Response {
    (status, Html(markup.into_string())).into_response()
}

/// A page saying what went wrong, with the status that says it to machines.
pub fn error_page(status: StatusCode, message: &str) -> Response {
    let body = html! {
        section.error role="alert" {
            h1 { (status.as_u16()) " " (status.canonical_reason().unwrap_or("")) }
            p { (message) }
            p { a href="/ui" { "Back to the console" } }
        }
    };
    respond(status, frame("Error", Section::Login, None, body))
}

/// An operation's failure as a page, with the status the API gives it.
pub fn failure_page(e: &OperationError) -> Response {
    error_page(crate::http::error::status_of(e), &e.to_string())
}

/// A time as the console shows it (UTC, to the minute), with the exact instant on hover.
pub fn time(at: DateTime<Utc>) -> Markup {
    html! { time datetime=(at.to_rfc3339()) title=(at.to_rfc3339()) { (at.format("%Y-%m-%d %H:%M")) } }
}

pub fn maybe_time(at: Option<DateTime<Utc>>) -> Markup {
    match at {
        Some(at) => time(at),
        None => html! { span.muted { "—" } },
    }
}

/// The last eight hex digits of a UUID: enough to tell rows apart on a page (a UUIDv7's first
/// ones are its timestamp, the same for rows written together); the link has it whole.
pub fn short_id(id: &uuid::Uuid) -> String {
    let text = id.simple().to_string();
    text[text.len() - 8..].to_owned()
}

/// A link to a memory's page.
pub fn memory_link(id: &uuid::Uuid) -> Markup {
    html! { a.id href={"/ui/memories/" (id)} title=(id) { code { (short_id(id)) } } }
}

/// A page's query parameters, or the page saying which one is wrong.
pub fn query<T>(
    given: Result<axum::extract::Query<T>, axum::extract::rejection::QueryRejection>,
) -> Result<T, Response> {
    given
        .map(|axum::extract::Query(params)| params)
        .map_err(|e| {
            error_page(
                StatusCode::BAD_REQUEST,
                &format!("query: {}", e.body_text()),
            )
        })
}

/// A form body: `application/x-www-form-urlencoded` pairs, repeated keys kept.
pub struct FormBody(Vec<(String, String)>);

impl FormBody {
    pub fn parse(body: &[u8]) -> Self {
        Self(
            form_urlencoded::parse(body)
                .map(|(k, v)| (k.into_owned(), v.into_owned()))
                .collect(),
        )
    }

    /// The first value of `name`.
    pub fn get(&self, name: &str) -> Option<&str> {
        self.0
            .iter()
            .find(|(k, _)| k == name)
            .map(|(_, v)| v.as_str())
    }

    /// The first value of `name`, if it holds more than white space.
    pub fn text(&self, name: &str) -> Option<&str> {
        self.get(name).map(str::trim).filter(|v| !v.is_empty())
    }

    /// Every value of `name`.
    pub fn all(&self, name: &str) -> Vec<&str> {
        self.0
            .iter()
            .filter(|(k, _)| k == name)
            .map(|(_, v)| v.as_str())
            .collect()
    }
}

/// Words too common to be what a statement rests on.
const STOP_WORDS: &[&str] = &[
    "the", "and", "for", "with", "that", "this", "from", "are", "was", "were", "has", "have",
    "had", "not", "but", "you", "your", "they", "their", "its", "into", "about", "when", "what",
    "which", "who", "will", "would", "can", "could", "should", "does", "did", "been", "being",
    "also", "than", "then", "there", "here", "some", "any", "all", "very", "just", "user",
];

/// The stems of the words a statement says (three letters or more, stop words left out).
pub fn key_stems(text: &str) -> HashSet<String> {
    text.unicode_words()
        .map(str::to_lowercase)
        .filter(|w| w.chars().count() >= 3 && !STOP_WORDS.contains(&w.as_str()))
        .map(crate::lexical::stem)
        .collect()
}

/// `text` with every word whose stem is in `stems` marked (`<mark>`), the rest escaped.
pub fn highlighted(text: &str, stems: &HashSet<String>) -> Markup {
    let mut out = String::with_capacity(text.len() + 32);
    for piece in text.split_word_bounds() {
        let is_key = piece.chars().any(char::is_alphanumeric)
            && stems.contains(&crate::lexical::stem(piece.to_lowercase()));
        let escaped = html! { (piece) }.into_string();
        if is_key {
            out.push_str("<mark>");
            out.push_str(&escaped);
            out.push_str("</mark>");
        } else {
            out.push_str(&escaped);
        }
    }
    PreEscaped(out)
}

/// A writer's `source` on one line (`conversation: c-42 · turn: 7`), for beside an episode;
/// empty when there is none.
pub fn source_line(source: &serde_json::Value) -> String {
    match source {
        serde_json::Value::Object(map) => map
            .iter()
            .map(|(k, v)| match v {
                serde_json::Value::String(text) => format!("{k}: {text}"),
                other => format!("{k}: {other}"),
            })
            .collect::<Vec<_>>()
            .join(" · "),
        serde_json::Value::Null => String::new(),
        other => other.to_string(),
    }
}

/// Pretty JSON in a `<pre>`, or a dash for null / empty.
pub fn json_block(value: &serde_json::Value) -> Markup {
    let empty = match value {
        serde_json::Value::Null => true,
        serde_json::Value::Array(a) => a.is_empty(),
        serde_json::Value::Object(o) => o.is_empty(),
        _ => false,
    };
    if empty {
        return html! { span.muted { "—" } };
    }
    let text = serde_json::to_string_pretty(value).unwrap_or_default();
    html! { pre.json { (text) } }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn highlighting_marks_shared_stems_and_escapes_the_rest() {
        let stems = key_stems("The user wants data sources cited in every report");
        let marked = highlighted("Asked for a <b>report</b> citing its sources", &stems);
        let html = marked.into_string();
        assert!(html.contains("<mark>report</mark>"), "{html}");
        assert!(html.contains("<mark>sources</mark>"), "{html}");
        assert!(html.contains("&lt;b&gt;"), "escaped: {html}");
        assert!(!html.contains("<mark>for</mark>"), "{html}");
    }

    #[test]
    fn form_bodies_keep_repeated_keys() {
        let form = FormBody::parse(b"id=a&id=b&note=too+vague&empty=+");
        assert_eq!(form.all("id"), vec!["a", "b"]);
        assert_eq!(form.get("note"), Some("too vague"));
        assert_eq!(form.text("empty"), None);
        assert_eq!(form.get("missing"), None);
    }
}
