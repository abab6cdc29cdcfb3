//! The review queue: pending candidates, most evidence first, each beside the episodes it rests
//! on (the words it shares with them marked), the active semantic memories it resembles and the
//! fact it would supersede; approve (optionally reworded, importance set) or reject with a note,
//! one form each, or reject several at once. Writes the screen held wait in the same queue.

use axum::Extension;
use axum::body::Bytes;
use axum::extract::{Path, Query, State};
use axum::http::StatusCode;
use axum::response::{IntoResponse, Redirect, Response};
use futures::future::join_all;
use maud::{Markup, html};
use serde::Deserialize;

use super::page::{self, FormBody, Section, csrf_field, memory_link};
use super::session::Session;
use crate::http::AppState;
use crate::operations::{CandidateQuery, Guarded, OperationError, Operations, Rejection};
use crate::service::SearchRequest;
use crate::service::requests::ListRequest;
use crate::service::review::{Approval, CandidateDetail, DEFAULT_IMPORTANCE};
use crate::store::{Candidate, CandidateId, Quarantined};

/// Candidates shown in full per page; the rest are counted.
const PAGE: usize = 20;
/// Close memories shown per candidate.
const SIMILAR: i64 = 3;

#[derive(Debug, Default, Deserialize)]
pub struct QueueParams {
    namespace: Option<String>,
    /// What the last decision was, for the notice.
    done: Option<String>,
    memory: Option<String>,
    count: Option<usize>,
}

/// One candidate with what a reviewer needs beside it. The close memories and the fact it
/// would supersede are reads of the namespace: a token that may review it but not read it
/// sees why they are missing, and the card still.
struct Card {
    detail: CandidateDetail,
    similar: Result<Vec<crate::service::SearchHit>, OperationError>,
    supersedes: Result<Vec<crate::domain::Memory>, OperationError>,
}

async fn card(ops: &Guarded, candidate: Candidate) -> Result<Card, OperationError> {
    let detail = ops.candidate(candidate.id).await?;
    let c = &detail.candidate;
    let similar = ops.search(SearchRequest {
        query: c.content.clone(),
        top_k: Some(SIMILAR),
        memory_types: Some(vec!["semantic".to_owned()]),
        namespace: Some(c.namespace.clone()),
        browsing: true,
        ..SearchRequest::default()
    });
    // The keyed fact's active versions, shown only where the approval preview could not be
    // told (it names them itself).
    let supersedes = async {
        match (&c.entity, &c.attribute) {
            (Some(entity), Some(attribute)) if detail.approval_would.is_none() => {
                ops.list(ListRequest {
                    namespace: Some(c.namespace.clone()),
                    entity: Some(entity.clone()),
                    attribute: Some(attribute.clone()),
                    status: Some("active".to_owned()),
                    limit: Some(5),
                    ..ListRequest::default()
                })
                .await
            }
            _ => Ok(Vec::new()),
        }
    };
    let (similar, supersedes) = tokio::join!(similar, supersedes);
    Ok(Card {
        similar: similar.map(|found| found.memories),
        supersedes,
        detail,
    })
}

fn non_empty(value: Option<String>) -> Option<String> {
    value.map(|v| v.trim().to_owned()).filter(|v| !v.is_empty())
}

pub async fn queue(
    State(state): State<AppState>,
    Extension(session): Extension<Session>,
    params: Result<Query<QueueParams>, axum::extract::rejection::QueryRejection>,
) -> Response {
    let params = match page::query(params) {
        Ok(params) => params,
        Err(response) => return response,
    };
    let namespace = non_empty(params.namespace.clone());
    let ops = state.ops_for(session.caller.clone());
    let query = CandidateQuery {
        namespace: namespace.clone(),
        status: "pending".to_owned(),
        limit: 1000,
    };
    let mut pending = match ops.candidates(query.clone()).await {
        Ok(list) => list,
        Err(e) => return page::failure_page(&e),
    };
    // Most evidence first; among equals, the oldest (it has waited longest).
    pending.sort_by(|a, b| {
        b.source_ids
            .len()
            .cmp(&a.source_ids.len())
            .then(a.created_at.cmp(&b.created_at))
    });
    let total = pending.len();
    let cards = join_all(pending.into_iter().take(PAGE).map(|c| card(&ops, c))).await;
    let held = ops.quarantined(query).await;
    let namespaces = namespaces(&ops).await;

    let body = html! {
        h1 { "Review queue" }
        (notice(&params))
        form.filters method="get" action="/ui/review" {
            label for="ns" { "Namespace" }
            select #ns name="namespace" {
                option value="" selected[namespace.is_none()] { "all" }
                @for ns in &namespaces {
                    option value=(ns) selected[namespace.as_deref() == Some(ns.as_str())] { (ns) }
                }
            }
            button type="submit" { "Show" }
        }
        p.keys.muted {
            kbd { "j" } "/" kbd { "k" } " next/previous · " kbd { "a" } " approve · "
            kbd { "e" } " edit, then approve · " kbd { "r" } " reject (note) · "
            kbd { "x" } " select for bulk reject"
        }
        h2 { "Distilled candidates " span.count { (total) " pending" } }
        @if total == 0 {
            p.empty { "Nothing waits for review." }
        } @else {
            form #bulk.bulk method="post" action="/ui/candidates/reject" {
                (csrf_field(&session.csrf))
                input type="hidden" name="namespace" value=(namespace.as_deref().unwrap_or(""));
                label for="bulk-note" { "Reject the selected candidates, because" }
                input #bulk-note type="text" name="note" required maxlength="2000" placeholder="note (required)";
                button type="submit" { "Reject selected" }
            }
            div.queue {
                @for card in &cards {
                    @match card {
                        Ok(card) => (candidate_card(card, &session, namespace.as_deref())),
                        Err(e) => p.notice.bad { "A candidate could not be loaded: " (e) },
                    }
                }
            }
            @if total > PAGE {
                p.muted { "Showing " (PAGE) " of " (total) "; decide these to see the rest." }
            }
        }
        h2 { "Writes held by the screen" }
        @match &held {
            Ok(held) if held.is_empty() => p.empty { "No write is held." },
            Ok(held) => div.queue { @for h in held { (held_card(h, &session, namespace.as_deref())) } },
            Err(e) => p.muted { "Not shown: " (e) },
        }
    };
    page::respond(
        StatusCode::OK,
        page::frame("Review", Section::Review, Some(session.nav()), body),
    )
}

/// The namespaces the caller can see, for the filter.
pub async fn namespaces(ops: &Guarded) -> Vec<String> {
    let mut names: Vec<String> = match ops.stats().await {
        Ok(stats) => stats.counts.into_iter().map(|r| r.namespace).collect(),
        Err(_) => Vec::new(),
    };
    names.sort();
    names.dedup();
    names
}

fn notice(params: &QueueParams) -> Markup {
    let memory = params
        .memory
        .as_deref()
        .and_then(|m| uuid::Uuid::parse_str(m).ok());
    let text = match params.done.as_deref() {
        Some("approved") => "Approved: written as semantic memory ",
        Some("rejected") => "Rejected.",
        Some("rejected_many") => "Rejected the selected candidates: ",
        Some("released") => "Released: written as memory ",
        Some("discarded") => "Discarded the held write.",
        _ => return html! {},
    };
    html! {
        p.notice.good role="status" {
            (text)
            @if let Some(id) = memory { (memory_link(&id)) }
            @if let Some(n) = params.count { (n) }
        }
    }
}

fn candidate_card(card: &Card, session: &Session, namespace: Option<&str>) -> Markup {
    let c = &card.detail.candidate;
    let stems = page::key_stems(&c.content);
    let id = c.id;
    html! {
        article.card.candidate #{"c-" (id)} tabindex="-1" data-id=(id) {
            header {
                input.pick type="checkbox" name="id" value=(id) form="bulk" aria-label="select for bulk reject";
                p.statement { (c.content) }
                dl.meta {
                    dt { "namespace" } dd { (c.namespace) }
                    dt { "confidence" } dd { (format!("{:.2}", c.confidence)) }
                    dt { "method" } dd { (format!("{:?}", c.method).to_lowercase()) }
                    dt { "model" } dd { (c.model.as_deref().unwrap_or("—")) }
                    dt { "prompt" } dd { (c.prompt_version.as_deref().unwrap_or("—")) }
                    @if let (Some(e), Some(a)) = (&c.entity, &c.attribute) {
                        dt { "fact" } dd { code { (e) " · " (a) } }
                    }
                    dt { "drafted" } dd { (page::time(c.created_at)) }
                }
            }
            section.evidence {
                h3 { "Evidence: " (c.source_ids.len()) " episodes" }
                ol {
                    @for e in &card.detail.episodes {
                        li {
                            p { (page::highlighted(&e.content, &stems)) }
                            small.muted {
                                (page::time(e.occurred_at)) " · " (e.status.as_str())
                                @let source = page::source_line(&e.source);
                                @if !source.is_empty() { " · from " code.source { (source) } }
                                " · " (memory_link(&e.id))
                            }
                        }
                    }
                }
                @if !card.detail.missing_episodes.is_empty() {
                    p.muted { (card.detail.missing_episodes.len()) " more no longer in the store (archived or forgotten)." }
                }
            }
            @if let Some(would) = &card.detail.approval_would {
                section.supersedes {
                    h3 { "Approving it would" }
                    @if let Some(id) = &would.merges_into {
                        p { "merge into the active memory " (memory_link(id)) ", which says the same." }
                    } @else if would.retires.is_empty() {
                        p.muted { "retire no active memory: it is stored beside what is there." }
                    } @else {
                        p { "retire these active memories (kept, deprecated by it):" }
                        ul { @for r in &would.retires { li { (r.content) " " (memory_link(&r.id)) " " small.muted { (r.reason) } } } }
                    }
                }
            } @else if c.entity.is_some() {
                section.supersedes {
                    h3 { "Would supersede" }
                    @match &card.supersedes {
                        Ok(facts) if facts.is_empty() => p.muted { "No active fact of this entity and attribute: nothing is superseded." },
                        Ok(facts) => ul { @for m in facts { li { (m.content) " " (memory_link(&m.id)) } } },
                        Err(e) => p.muted { "Not shown: " (e) },
                    }
                }
            }
            section.similar {
                h3 { "Close active semantic memories" }
                @match &card.similar {
                    Ok(hits) if hits.is_empty() => p.muted { "None in this namespace." },
                    Ok(hits) => ul {
                        @for hit in hits {
                            li { (hit.content) " " small.muted { "cosine " (format!("{:.2}", hit.similarity)) } " " (memory_link(&hit.id)) }
                        }
                    },
                    Err(e) => p.muted { "Not shown: " (e) },
                }
            }
            footer.actions {
                form.approve method="post" action={"/ui/candidates/" (id) "/approve"} {
                    (csrf_field(&session.csrf))
                    input type="hidden" name="namespace" value=(namespace.unwrap_or(""));
                    input type="hidden" name="draft" value=(c.content);
                    details.edit {
                        summary { "Edit wording " kbd { "e" } }
                        textarea name="content" rows="3" maxlength="8000" aria-label="wording to approve" { (c.content) }
                    }
                    label { "importance " input type="number" name="importance" min="0" max="1" step="0.05" value=(DEFAULT_IMPORTANCE); }
                    button.primary type="submit" { "Approve " kbd { "a" } }
                }
                form.reject method="post" action={"/ui/candidates/" (id) "/reject"} {
                    (csrf_field(&session.csrf))
                    input type="hidden" name="namespace" value=(namespace.unwrap_or(""));
                    input type="text" name="note" required maxlength="2000" placeholder="why (required)" aria-label="rejection note";
                    button type="submit" { "Reject " kbd { "r" } }
                }
            }
        }
    }
}

fn held_card(h: &Quarantined, session: &Session, namespace: Option<&str>) -> Markup {
    let content = h
        .request
        .get("content")
        .and_then(|c| c.as_str())
        .unwrap_or("");
    html! {
        article.card.held #{"h-" (h.id)} tabindex="-1" data-id=(h.id) {
            header {
                p.statement { (content) }
                dl.meta {
                    dt { "namespace" } dd { (h.namespace) }
                    dt { "caught by" } dd { code { (h.rule) } " (" (h.kind) ")" }
                    dt { "held" } dd { (page::time(h.created_at)) }
                }
            }
            details { summary { "The write as asked" } (page::json_block(&h.request)) }
            footer.actions {
                form.approve method="post" action={"/ui/held/" (h.id) "/release"} {
                    (csrf_field(&session.csrf))
                    input type="hidden" name="namespace" value=(namespace.unwrap_or(""));
                    button.primary type="submit" { "Release " kbd { "a" } }
                }
                form.reject method="post" action={"/ui/held/" (h.id) "/discard"} {
                    (csrf_field(&session.csrf))
                    input type="hidden" name="namespace" value=(namespace.unwrap_or(""));
                    input type="text" name="note" required maxlength="2000" placeholder="why (required)" aria-label="discard note";
                    button type="submit" { "Discard " kbd { "r" } }
                }
            }
        }
    }
}

/// Back to the queue (its namespace filter kept) with a notice of what was done.
/// The notice's parameters (`QueueParams`): the memory a decision wrote, how many it covered.
fn back_to_queue(
    form: &FormBody,
    done: &str,
    memory: Option<uuid::Uuid>,
    count: Option<usize>,
) -> Response {
    let mut query = form_urlencoded::Serializer::new(String::new());
    if let Some(ns) = form.text("namespace") {
        query.append_pair("namespace", ns);
    }
    query.append_pair("done", done);
    if let Some(memory) = memory {
        query.append_pair("memory", &memory.to_string());
    }
    if let Some(count) = count {
        query.append_pair("count", &count.to_string());
    }
    Redirect::to(&format!("/ui/review?{}", query.finish())).into_response()
}

fn parse_candidate(id: &str) -> Result<CandidateId, Response> {
    CandidateId::parse_str(id.trim()).map_err(|_| {
        page::error_page(
            StatusCode::NOT_FOUND,
            &format!("id: must be a candidate id (a UUID), got {id:?}"),
        )
    })
}

fn note(form: &FormBody) -> Result<String, Response> {
    form.text("note").map(str::to_owned).ok_or_else(|| {
        page::error_page(
            StatusCode::BAD_REQUEST,
            "note: required (say why, for whoever reads the record)",
        )
    })
}

pub async fn approve(
    State(state): State<AppState>,
    Extension(session): Extension<Session>,
    Path(id): Path<String>,
    body: Bytes,
) -> Response {
    let form = match session.form(&body) {
        Ok(form) => form,
        Err(refused) => return refused,
    };
    let id = match parse_candidate(&id) {
        Ok(id) => id,
        Err(response) => return response,
    };
    let importance = match form.text("importance").map(str::parse::<f64>) {
        None => None,
        Some(Ok(value)) => Some(value),
        Some(Err(_)) => {
            return page::error_page(
                StatusCode::BAD_REQUEST,
                "importance: must be a number from 0 to 1",
            );
        }
    };
    // The reviewer's wording only when it differs from the draft.
    let content = form
        .text("content")
        .filter(|text| Some(*text) != form.text("draft"))
        .map(str::to_owned);
    let approval = Approval {
        content,
        importance,
        reviewer: Some(session.caller.name.clone()),
    };
    match state.ops_for(session.caller).approve(id, approval).await {
        Ok(candidate) => back_to_queue(&form, "approved", candidate.memory_id, None),
        Err(e) => page::failure_page(&e),
    }
}

pub async fn reject(
    State(state): State<AppState>,
    Extension(session): Extension<Session>,
    Path(id): Path<String>,
    body: Bytes,
) -> Response {
    let form = match session.form(&body) {
        Ok(form) => form,
        Err(refused) => return refused,
    };
    let (id, note) = match (parse_candidate(&id), note(&form)) {
        (Ok(id), Ok(note)) => (id, note),
        (Err(response), _) | (_, Err(response)) => return response,
    };
    let rejection = Rejection {
        note,
        reviewer: Some(session.caller.name.clone()),
    };
    match state.ops_for(session.caller).reject(id, rejection).await {
        Ok(_) => back_to_queue(&form, "rejected", None, None),
        Err(e) => page::failure_page(&e),
    }
}

/// Reject every selected candidate with one note; stops at the first that fails (those before
/// it stay rejected, and the page says which one failed).
pub async fn reject_many(
    State(state): State<AppState>,
    Extension(session): Extension<Session>,
    body: Bytes,
) -> Response {
    let form = match session.form(&body) {
        Ok(form) => form,
        Err(refused) => return refused,
    };
    let note = match note(&form) {
        Ok(note) => note,
        Err(response) => return response,
    };
    let ids = form.all("id");
    if ids.is_empty() {
        return page::error_page(StatusCode::BAD_REQUEST, "id: select at least one candidate");
    }
    let ops = state.ops_for(session.caller.clone());
    let mut done = 0;
    for id in ids {
        let id = match parse_candidate(id) {
            Ok(id) => id,
            Err(response) => return response,
        };
        let rejection = Rejection {
            note: note.clone(),
            reviewer: Some(session.caller.name.clone()),
        };
        if let Err(e) = ops.reject(id, rejection).await {
            return page::failure_page(&e);
        }
        done += 1;
    }
    back_to_queue(&form, "rejected_many", None, Some(done))
}

fn parse_held(id: &str) -> Result<uuid::Uuid, Response> {
    uuid::Uuid::parse_str(id.trim()).map_err(|_| {
        page::error_page(
            StatusCode::NOT_FOUND,
            &format!("id: must be a held write's id (a UUID), got {id:?}"),
        )
    })
}

pub async fn release(
    State(state): State<AppState>,
    Extension(session): Extension<Session>,
    Path(id): Path<String>,
    body: Bytes,
) -> Response {
    let form = match session.form(&body) {
        Ok(form) => form,
        Err(refused) => return refused,
    };
    let id = match parse_held(&id) {
        Ok(id) => id,
        Err(response) => return response,
    };
    let reviewer = Some(session.caller.name.clone());
    match state.ops_for(session.caller).release(id, reviewer).await {
        Ok(held) => back_to_queue(&form, "released", held.memory_id, None),
        Err(e) => page::failure_page(&e),
    }
}

pub async fn discard(
    State(state): State<AppState>,
    Extension(session): Extension<Session>,
    Path(id): Path<String>,
    body: Bytes,
) -> Response {
    let form = match session.form(&body) {
        Ok(form) => form,
        Err(refused) => return refused,
    };
    let (id, note) = match (parse_held(&id), note(&form)) {
        (Ok(id), Ok(note)) => (id, note),
        (Err(response), _) | (_, Err(response)) => return response,
    };
    let rejection = Rejection {
        note,
        reviewer: Some(session.caller.name.clone()),
    };
    match state.ops_for(session.caller).discard(id, rejection).await {
        Ok(_) => back_to_queue(&form, "discarded", None, None),
        Err(e) => page::failure_page(&e),
    }
}
