//! The memory browser: search as the agents do (the same ranking, each score's parts shown,
//! nothing recorded as accessed), or page through the store by namespace, type, status and
//! time; a memory's page with its provenance chain (source, merged sources, the candidate and
//! episodes it was distilled from), its supersede history both ways, access and expiry; soft
//! or hard forget behind a confirmation.

use axum::Extension;
use axum::body::Bytes;
use axum::extract::{Path, Query, State};
use axum::http::StatusCode;
use axum::response::{IntoResponse, Redirect, Response};
use chrono::{NaiveDate, NaiveTime, TimeZone, Utc};
use maud::{Markup, html};
use serde::Deserialize;

use super::page::{self, Section, csrf_field, memory_link};
use super::session::Session;
use crate::domain::Memory;
use crate::http::AppState;
use crate::operations::{Guarded, Operations};
use crate::service::requests::{ListRequest, TimeRange};
use crate::service::{ForgetRequest, SearchHit, SearchRequest};

const SEARCH_TOP_K: i64 = 50;
const PAGE: i64 = 50;

#[derive(Debug, Default, Deserialize)]
pub struct BrowseParams {
    q: Option<String>,
    namespace: Option<String>,
    #[serde(rename = "type")]
    memory_type: Option<String>,
    status: Option<String>,
    /// Days, `YYYY-MM-DD` (what a date input sends), both inclusive.
    from: Option<String>,
    to: Option<String>,
    before: Option<String>,
    done: Option<String>,
}

fn given(value: &Option<String>) -> Option<String> {
    value
        .as_deref()
        .map(str::trim)
        .filter(|v| !v.is_empty() && *v != "any")
        .map(str::to_owned)
}

/// A day of a date input as the RFC 3339 instant that starts (or ends) it.
fn day(value: &Option<String>, end: bool) -> Result<Option<String>, String> {
    let Some(text) = given(value) else {
        return Ok(None);
    };
    let date = NaiveDate::parse_from_str(&text, "%Y-%m-%d")
        .map_err(|_| format!("must be a day like 2024-06-01, got {text:?}"))?;
    let time = if end {
        NaiveTime::from_hms_milli_opt(23, 59, 59, 999)
    } else {
        NaiveTime::from_hms_opt(0, 0, 0)
    }
    .unwrap_or_default();
    Ok(Some(
        Utc.from_utc_datetime(&date.and_time(time)).to_rfc3339(),
    ))
}

const TYPES: &[&str] = &["working", "episodic", "semantic"];
const STATUSES: &[&str] = &["active", "deprecated", "expired", "forgotten", "archived"];

pub async fn browse(
    State(state): State<AppState>,
    Extension(session): Extension<Session>,
    params: Result<Query<BrowseParams>, axum::extract::rejection::QueryRejection>,
) -> Response {
    let p = match page::query(params) {
        Ok(params) => params,
        Err(response) => return response,
    };
    let ops = state.ops_for(session.caller.clone());
    let (from, to) = match (day(&p.from, false), day(&p.to, true)) {
        (Ok(from), Ok(to)) => (from, to),
        (Err(e), _) => return page::error_page(StatusCode::BAD_REQUEST, &format!("from: {e}")),
        (_, Err(e)) => return page::error_page(StatusCode::BAD_REQUEST, &format!("to: {e}")),
    };
    let namespaces = super::review::namespaces(&ops).await;
    let query = given(&p.q);
    // A token that is not the operator's browses one namespace at a time: the first it can
    // read, until it picks another. (Its search covers every one it may read.)
    let chosen = given(&p.namespace).or_else(|| {
        (!session.caller.is_operator() && query.is_none())
            .then(|| namespaces.first().cloned())
            .flatten()
    });
    let results = match &query {
        Some(q) => {
            let status = given(&p.status);
            let request = SearchRequest {
                query: q.clone(),
                top_k: Some(SEARCH_TOP_K),
                memory_types: given(&p.memory_type).map(|t| vec![t]),
                // "All namespaces" searches every one the caller can see (as many as one
                // search may name), not the API's default of `default`.
                namespace: given(&p.namespace),
                namespaces: match given(&p.namespace) {
                    Some(_) => None,
                    None if namespaces.is_empty() => None,
                    None => Some(
                        namespaces
                            .iter()
                            .take(crate::service::requests::MAX_SEARCH_NAMESPACES)
                            .cloned()
                            .collect(),
                    ),
                },
                time_range: (from.is_some() || to.is_some()).then(|| TimeRange {
                    from: from.clone(),
                    to: to.clone(),
                }),
                include_deprecated: Some(status.as_deref() == Some("deprecated")),
                browsing: true,
            };
            match ops.search(request).await {
                Ok(result) => {
                    let hits = match status.as_deref() {
                        Some("deprecated") => result
                            .memories
                            .into_iter()
                            .filter(|h| h.status.as_str() == "deprecated")
                            .collect(),
                        _ => result.memories,
                    };
                    Results::Search(hits)
                }
                Err(e) => return page::failure_page(&e),
            }
        }
        // Nothing it may read holds a memory yet.
        None if chosen.is_none() && !session.caller.is_operator() => Results::Listing(Vec::new()),
        None => {
            let request = ListRequest {
                namespace: chosen.clone(),
                memory_type: given(&p.memory_type),
                status: given(&p.status),
                from,
                to,
                before: given(&p.before),
                limit: Some(PAGE),
                ..ListRequest::default()
            };
            match ops.list(request).await {
                Ok(rows) => Results::Listing(rows),
                Err(e) => return page::failure_page(&e),
            }
        }
    };
    let selected = |value: &Option<String>, option: &str| given(value).as_deref() == Some(option);
    let body = html! {
        h1 { "Memories" }
        @if p.done.as_deref() == Some("hard_forgotten") {
            p.notice.good role="status" { "Forgotten for good: the row is deleted." }
        }
        form.filters.search method="get" action="/ui/memories" {
            input type="search" name="q" value=(query.as_deref().unwrap_or("")) placeholder="search as an agent would (empty: browse)" aria-label="search";
            select name="namespace" aria-label="namespace" {
                option value="" { "all namespaces" }
                @for ns in &namespaces { option value=(ns) selected[chosen.as_deref() == Some(ns.as_str())] { (ns) } }
            }
            select name="type" aria-label="type" {
                option value="" { "any type" }
                @for t in TYPES { option value=(t) selected[selected(&p.memory_type, t)] { (t) } }
            }
            select name="status" aria-label="status" {
                option value="" { "any status" }
                @for s in STATUSES { option value=(s) selected[selected(&p.status, s)] { (s) } }
            }
            label { "from " input type="date" name="from" value=(given(&p.from).unwrap_or_default()); }
            label { "to " input type="date" name="to" value=(given(&p.to).unwrap_or_default()); }
            button.primary type="submit" { "Go" }
        }
        @if query.is_some() && matches!(given(&p.status).as_deref(), Some("expired" | "forgotten" | "archived")) {
            p.notice role="status" { "A search finds active and superseded memories only; clear the search box to browse " (given(&p.status).unwrap_or_default()) " ones." }
        }
        @match &results {
            Results::Search(hits) => (search_table(hits)),
            Results::Listing(rows) => (listing_table(rows, &p)),
        }
    };
    page::respond(
        StatusCode::OK,
        page::frame("Memories", Section::Memories, Some(session.nav()), body),
    )
}

enum Results {
    Search(Vec<SearchHit>),
    Listing(Vec<Memory>),
}

fn search_table(hits: &[SearchHit]) -> Markup {
    let rank = |r: Option<usize>| r.map_or("—".to_owned(), |r| (r + 1).to_string());
    html! {
        p.muted { "Ranked as " code { "memory_search" } " ranks: score = weighted relevance (the dense and lexical arms fused) + recency + importance. Browsing records no access." }
        @if hits.is_empty() { p.empty { "No memory matches." } }
        @else {
            table.results {
                thead { tr {
                    th { "#" } th { "memory" } th { "score" } th { "relevance" } th { "cosine" }
                    th { "dense rank" } th { "lexical" } th { "lexical rank" } th { "recency" } th { "importance" }
                } }
                tbody {
                    @for (i, h) in hits.iter().enumerate() {
                        tr {
                            td { (i + 1) }
                            td.content {
                                a href={"/ui/memories/" (h.id)} { (h.content) }
                                br; small.muted { (h.namespace) " · " (h.memory_type.as_str()) " · " (h.status.as_str()) " · " (page::time(h.occurred_at)) }
                            }
                            td.num { strong { (format!("{:.3}", h.score)) } }
                            td.num { (format!("{:.3}", h.relevance)) }
                            td.num { (format!("{:.3}", h.similarity)) }
                            td.num { (rank(h.dense_rank)) }
                            td.num { (h.lexical_score.map_or("—".to_owned(), |s| format!("{s:.2}"))) }
                            td.num { (rank(h.lexical_rank)) }
                            td.num { (format!("{:.3}", h.recency)) }
                            td.num { (format!("{:.2}", h.importance)) }
                        }
                    }
                }
            }
        }
    }
}

fn listing_table(rows: &[Memory], p: &BrowseParams) -> Markup {
    let next = rows
        .last()
        .filter(|_| rows.len() as i64 == PAGE)
        .map(|last| {
            let mut query = form_urlencoded::Serializer::new(String::new());
            for (key, value) in [
                ("namespace", &p.namespace),
                ("type", &p.memory_type),
                ("status", &p.status),
                ("from", &p.from),
                ("to", &p.to),
            ] {
                if let Some(value) = given(value) {
                    query.append_pair(key, &value);
                }
            }
            query.append_pair("before", &last.id.to_string());
            format!("/ui/memories?{}", query.finish())
        });
    html! {
        p.muted { "Newest stored first." }
        @if rows.is_empty() { p.empty { "No memory matches these filters." } }
        @else {
            table.results {
                thead { tr {
                    th { "memory" } th { "namespace" } th { "type" } th { "status" } th { "happened" } th { "importance" } th { "accessed" }
                } }
                tbody {
                    @for m in rows {
                        tr {
                            td.content { a href={"/ui/memories/" (m.id)} { (m.content) } }
                            td { (m.namespace) }
                            td { (m.memory_type.as_str()) }
                            td { (m.status.as_str()) }
                            td { (page::time(m.occurred_at)) }
                            td.num { (format!("{:.2}", m.importance)) }
                            td.num { (m.access_count) }
                        }
                    }
                }
            }
        }
        @if let Some(next) = next { p { a.next href=(next) { "Older →" } } }
    }
}

#[derive(Debug, Default, Deserialize)]
pub struct ShowParams {
    done: Option<String>,
}

pub async fn show(
    State(state): State<AppState>,
    Extension(session): Extension<Session>,
    Path(id): Path<String>,
    params: Result<Query<ShowParams>, axum::extract::rejection::QueryRejection>,
) -> Response {
    let Ok(id) = uuid::Uuid::parse_str(id.trim()) else {
        return page::error_page(
            StatusCode::NOT_FOUND,
            &format!("memory_id: must be a UUID, got {id:?}"),
        );
    };
    let ops = state.ops_for(session.caller.clone());
    let memory = match ops.get(id).await {
        Ok(memory) => memory,
        Err(e) => return page::failure_page(&e),
    };
    let done = match page::query(params) {
        Ok(params) => params.done,
        Err(response) => return response,
    };
    let body = html! {
        (memory_page(&ops, &memory, &session, done.as_deref()).await)
    };
    page::respond(
        StatusCode::OK,
        page::frame("Memory", Section::Memories, Some(session.nav()), body),
    )
}

async fn memory_page(ops: &Guarded, m: &Memory, session: &Session, done: Option<&str>) -> Markup {
    let later = match m.deprecated_by {
        Some(by) => ops.get(by).await.ok(),
        None => None,
    };
    let earlier = ops
        .list(ListRequest {
            namespace: Some(m.namespace.clone()),
            deprecated_by: Some(m.id.to_string()),
            limit: Some(50),
            ..ListRequest::default()
        })
        .await
        .unwrap_or_default();
    let candidate_id = m
        .source
        .pointer("/distill/candidate_id")
        .and_then(|v| v.as_str())
        .and_then(|v| uuid::Uuid::parse_str(v).ok());
    let candidate = match candidate_id {
        Some(cid) => Some(ops.candidate(cid).await),
        None => None,
    };
    html! {
        @if done == Some("forgotten") {
            p.notice.good role="status" { "Forgotten: the row is kept for audit and no longer served." }
        }
        article.memory {
            h1.statement { (m.content) }
            dl.meta.wide {
                dt { "id" } dd { code { (m.id) } }
                dt { "namespace" } dd { (m.namespace) }
                dt { "type" } dd { (m.memory_type.as_str()) }
                dt { "status" } dd { span class={"status " (m.status.as_str())} { (m.status.as_str()) } }
                dt { "importance" } dd { (format!("{:.2}", m.importance)) }
                @if let (Some(e), Some(a)) = (&m.entity, &m.attribute) {
                    dt { "fact" } dd { code { (e) " · " (a) } }
                } @else if let Some(e) = &m.entity {
                    dt { "entity" } dd { code { (e) } }
                }
                dt { "happened" } dd { (page::time(m.occurred_at)) }
                dt { "stored" } dd { (page::time(m.created_at)) }
                dt { "updated" } dd { (page::time(m.updated_at)) }
                dt { "expires" } dd { (page::maybe_time(m.expires_at)) }
                dt { "accessed" } dd { (m.access_count) " times, last " (page::maybe_time(m.last_accessed_at)) }
                dt { "embedder" } dd { code { (m.embedding_model) } }
            }
            section.provenance {
                h2 { "Provenance" }
                @if let Some(candidate) = &candidate {
                    h3 { "Distilled from" }
                    @match candidate {
                        Ok(detail) => {
                            p {
                                "Candidate " code { (detail.candidate.id) } ", " (detail.candidate.status.as_str())
                                @if let Some(r) = &detail.candidate.reviewer { " by " (r) }
                                @if let Some(at) = detail.candidate.reviewed_at { " on " (page::time(at)) }
                                ", confidence " (format!("{:.2}", detail.candidate.confidence))
                                ", method " (format!("{:?}", detail.candidate.method).to_lowercase())
                                @if let Some(model) = &detail.candidate.model { ", model " code { (model) } }
                                @if let Some(v) = &detail.candidate.prompt_version { ", prompt " code { (v) } }
                            }
                            @if detail.candidate.content != m.content {
                                p.muted { "Drafted as: " (detail.candidate.content) }
                            }
                            h4 { "Episodes (" (detail.episodes.len()) ")" }
                            ol.episodes {
                                @for e in &detail.episodes {
                                    li { (e.content) " " small.muted { (page::time(e.occurred_at)) " · " (memory_link(&e.id)) } }
                                }
                            }
                            @if !detail.missing_episodes.is_empty() {
                                p.muted { (detail.missing_episodes.len()) " episodes are no longer in the store." }
                            }
                        }
                        Err(e) => p.muted { "The candidate could not be loaded: " (e) },
                    }
                }
                details open[candidate.is_none()] {
                    summary { "Source and merged sources, as stored" }
                    h3 { "Source" } (page::json_block(&m.source))
                    h3 { "Merged sources (near-duplicates folded into it)" } (page::json_block(&m.merged_sources))
                }
            }
            section.history {
                h2 { "Supersede history" }
                @match (&m.deprecated_by, &later) {
                    (Some(_), Some(later)) => p { "Superseded " (page::maybe_time(m.deprecated_at)) " by: " (later.content) " " (memory_link(&later.id)) },
                    (Some(by), None) => p { "Superseded by " (memory_link(by)) " (not readable now)." },
                    (None, _) => p.muted { "Not superseded." },
                }
                @if earlier.is_empty() {
                    p.muted { "It superseded nothing." }
                } @else {
                    p { "It superseded:" }
                    ul { @for e in &earlier { li { (e.content) " " small.muted { (page::maybe_time(e.deprecated_at)) } " " (memory_link(&e.id)) } } }
                }
            }
            section.metadata { h2 { "Metadata" } (page::json_block(&m.metadata)) }
            @if matches!(m.status.as_str(), "active" | "deprecated" | "expired" | "archived") {
                section.danger {
                    h2 { "Forget" }
                    form.forget method="post" action={"/ui/memories/" (m.id) "/forget"} {
                        (csrf_field(&session.csrf))
                        label { input type="radio" name="mode" value="soft" checked; " soft: stop serving it, keep the row for audit" }
                        label { input type="radio" name="mode" value="hard"; " hard: delete the row for good (privacy requests)" }
                        label { input type="checkbox" name="confirm" value="yes" required; " I mean it" }
                        button.danger type="submit" { "Forget this memory" }
                    }
                }
            }
        }
    }
}

pub async fn forget(
    State(state): State<AppState>,
    Extension(session): Extension<Session>,
    Path(id): Path<String>,
    body: Bytes,
) -> Response {
    let form = match session.form(&body) {
        Ok(form) => form,
        Err(refused) => return refused,
    };
    let Ok(id) = uuid::Uuid::parse_str(id.trim()) else {
        return page::error_page(
            StatusCode::NOT_FOUND,
            &format!("memory_id: must be a UUID, got {id:?}"),
        );
    };
    if form.get("confirm") != Some("yes") {
        return page::error_page(
            StatusCode::BAD_REQUEST,
            "confirm: tick the confirmation to forget a memory",
        );
    }
    let hard = match form.get("mode") {
        Some("hard") => true,
        Some("soft") | None => false,
        Some(other) => {
            return page::error_page(
                StatusCode::BAD_REQUEST,
                &format!("mode: must be soft or hard, got {other:?}"),
            );
        }
    };
    let request = ForgetRequest {
        memory_id: Some(id.to_string()),
        hard: Some(hard),
        ..ForgetRequest::default()
    };
    match state.ops_for(session.caller).forget(request).await {
        Ok(result) if result.forgotten == 0 => page::error_page(
            StatusCode::CONFLICT,
            "Nothing was forgotten: the memory is forgotten already or gone.",
        ),
        Ok(_) if hard => Redirect::to("/ui/memories?done=hard_forgotten").into_response(),
        Ok(_) => Redirect::to(&format!("/ui/memories/{id}?done=forgotten")).into_response(),
        Err(e) => page::failure_page(&e),
    }
}
