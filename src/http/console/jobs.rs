//! Jobs and health: each job's schedule, next run and last runs (durations charted, failures
//! in red), run now or dry-run it (the result shows the sample a dry run would change);
//! capacity per namespace against the capacity job's limits with the alert state it last
//! found, and active memories over time as its runs recorded them.

use std::collections::BTreeMap;

use axum::Extension;
use axum::body::Bytes;
use axum::extract::{Path, State};
use axum::http::StatusCode;
use axum::response::Response;
use maud::{Markup, html};
use serde_json::Value;

use super::chart;
use super::page::{self, Section, csrf_field, memory_link};
use super::session::Session;
use crate::domain::Status;
use crate::http::AppState;
use crate::operations::{Guarded, JobSummary, Operations};
use crate::store::RunRecord;

/// Runs read for the charts: a day of the capacity job's default five-minute schedule.
const HISTORY: i64 = 288;
/// Bars per job in its duration chart.
const BARS: usize = 30;

fn duration(run: &RunRecord) -> Option<f64> {
    run.finished_at
        .map(|f| (f - run.started_at).num_milliseconds() as f64 / 1000.0)
}

pub async fn overview(
    State(state): State<AppState>,
    Extension(session): Extension<Session>,
) -> Response {
    let ops = state.ops_for(session.caller.clone());
    let (jobs, stats, history, capacity_runs) = tokio::join!(
        ops.jobs(),
        ops.stats(),
        ops.job_history(None, HISTORY),
        ops.job_history(Some("capacity"), HISTORY),
    );
    let (jobs, stats) = match (jobs, stats) {
        (Ok(jobs), Ok(stats)) => (jobs, stats),
        (Err(e), _) | (_, Err(e)) => return page::failure_page(&e),
    };
    let mut durations: BTreeMap<String, Vec<(f64, bool)>> = BTreeMap::new();
    for run in history.unwrap_or_default().iter().rev() {
        if let Some(seconds) = duration(run) {
            let bars = durations.entry(run.job.clone()).or_default();
            bars.push((seconds, run.status == crate::store::RunStatus::Failed));
        }
    }
    for bars in durations.values_mut() {
        let skip = bars.len().saturating_sub(BARS);
        bars.drain(..skip);
    }
    let mut active: BTreeMap<String, i64> = BTreeMap::new();
    for row in stats.counts.iter().filter(|r| r.status == Status::Active) {
        *active.entry(row.namespace.clone()).or_default() += row.count;
    }
    let capacity = jobs.iter().find(|j| j.name == "capacity");
    let over_time: Vec<_> = capacity_runs
        .unwrap_or_default()
        .iter()
        .rev()
        .filter_map(|run| {
            let total = run.stats.get("active_total")?.as_f64()?;
            Some((run.finished_at.unwrap_or(run.started_at), total))
        })
        .collect();

    let body = html! {
        h1 { "Jobs & health" }
        h2 { "Jobs" }
        table.jobs {
            thead { tr {
                th { "job" } th { "schedule" } th { "next run" } th { "last run" } th { "recent durations" } th { "run" }
            } }
            tbody {
                @for job in &jobs {
                    (job_row(job, durations.get(&job.name).map(Vec::as_slice).unwrap_or(&[]), &session))
                }
            }
        }
        h2 { "Capacity" }
        (capacity_table(&active, capacity))
        h2 { "Active memories over time" }
        (chart::line(&over_time, "active memories, as each capacity run counted them"))
        p.muted {
            "Store: " (stats.total) " rows in all; embedder "
            code { (stats.embedder.as_deref().unwrap_or("not set yet")) }
            @if let Some(note) = &stats.embedder_note { " (" (note) ")" }
        }
    };
    page::respond(
        StatusCode::OK,
        page::frame("Jobs", Section::Jobs, Some(session.nav()), body),
    )
}

fn job_row(job: &JobSummary, bars: &[(f64, bool)], session: &Session) -> Markup {
    html! {
        tr #{"job-" (job.name)} {
            td { a href={"/ui/jobs/" (job.name)} { strong { (job.name) } } @if !job.enabled { " " span.tag { "disabled" } } }
            td { code { (job.cron) } }
            td { (page::maybe_time(job.next_run)) }
            td {
                @match &job.last_run {
                    Some(last) => {
                        span class={"status " (last.status.as_str())} { (last.status.as_str()) }
                        " " (page::maybe_time(last.finished_at))
                        @if let Some(error) = &last.error { br; small.bad { (error) } }
                    }
                    None => span.muted { "never" },
                }
            }
            td { (chart::bars(bars, &format!("{}: durations of its last {} runs", job.name, bars.len()))) }
            td.actions {
                form method="post" action={"/ui/jobs/" (job.name) "/run"} {
                    (csrf_field(&session.csrf))
                    button type="submit" name="dry_run" value="true" { "Dry run" }
                    " "
                    button type="submit" name="dry_run" value="false" { "Run now" }
                }
            }
        }
    }
}

fn capacity_table(active: &BTreeMap<String, i64>, capacity: Option<&JobSummary>) -> Markup {
    let limits = crate::jobs::capacity::limits(capacity.map_or(&Value::Null, |j| &j.params));
    let max_total = limits.max_total as f64;
    let per_namespace = limits.max_per_namespace.map(|l| l as f64);
    let warn = limits.warn_ratio;
    let firing: Vec<(String, String, String)> = capacity
        .and_then(|j| j.last_run.as_ref())
        .and_then(|r| r.stats.get("firing"))
        .and_then(Value::as_array)
        .map(|alerts| {
            alerts
                .iter()
                .map(|a| {
                    let text = |k: &str| a.get(k).and_then(Value::as_str).unwrap_or("").to_owned();
                    (text("namespace"), text("severity"), text("alertname"))
                })
                .collect()
        })
        .unwrap_or_default();
    let state = |namespace: &str| -> Markup {
        let alerts: Vec<_> = firing.iter().filter(|a| a.0 == namespace).collect();
        if alerts.is_empty() {
            return html! { span.status.ok { "ok" } };
        }
        html! { @for (_, severity, name) in alerts { span class={"status " (severity)} title=(name) { (severity) } " " } }
    };
    let total: i64 = active.values().sum();
    let meter = |count: i64, limit: f64| -> Markup {
        if limit <= 0.0 {
            return html! { span.muted { "no limit" } };
        }
        html! {
            meter min="0" max=(limit) low=(warn * limit) high=(limit * 0.999) optimum="0" value=(count) {}
            " " (format!("{:.0}%", count as f64 / limit * 100.0))
        }
    };
    html! {
        @if capacity.is_none() { p.muted { "The capacity job is not configured: no limits to show." } }
        table.capacity {
            thead { tr { th { "namespace" } th { "active" } th { "limit" } th { "use" } th { "alert" } } }
            tbody {
                tr.total {
                    td { strong { "all" } } td.num { (total) } td.num { (format!("{max_total:.0}")) }
                    td { (meter(total, max_total)) } td { (state(crate::jobs::capacity::ALL_NAMESPACES)) }
                }
                @for (namespace, count) in active {
                    tr {
                        td { (namespace) } td.num { (count) }
                        td.num { (per_namespace.map_or("—".to_owned(), |l| format!("{l:.0}"))) }
                        td { (meter(*count, per_namespace.unwrap_or(0.0))) }
                        td { (state(namespace)) }
                    }
                }
            }
        }
        p.muted { "Limits are the capacity job's (" code { "jobs/capacity.toml" } "); the alert column is what its last run found." }
    }
}

pub async fn history(
    State(state): State<AppState>,
    Extension(session): Extension<Session>,
    Path(name): Path<String>,
) -> Response {
    let ops = state.ops_for(session.caller.clone());
    let jobs = match ops.jobs().await {
        Ok(jobs) => jobs,
        Err(e) => return page::failure_page(&e),
    };
    let Some(job) = jobs.iter().find(|j| j.name == name) else {
        return page::error_page(StatusCode::NOT_FOUND, &format!("no job named {name:?}"));
    };
    let runs = match ops.job_history(Some(&job.name), 100).await {
        Ok(runs) => runs,
        Err(e) => return page::failure_page(&e),
    };
    let body = html! {
        h1 { "Job " (job.name) }
        p { "Schedule " code { (job.cron) } ", next run " (page::maybe_time(job.next_run)) ", batch size " (job.batch_size) "." }
        details { summary { "Parameters" } (page::json_block(&job.params)) }
        table.runs {
            thead { tr { th { "run" } th { "tick" } th { "node" } th { "status" } th { "seconds" } th { "stats" } } }
            tbody {
                @for run in &runs {
                    tr {
                        td.num { (run.id) }
                        td { (page::time(run.scheduled_for)) }
                        td { code { (run.node) } }
                        td { span class={"status " (run.status.as_str())} { (run.status.as_str()) }
                             @if let Some(e) = &run.error { br; small.bad { (e) } } }
                        td.num { (duration(run).map_or("—".to_owned(), |s| format!("{s:.2}"))) }
                        td { details { summary { "stats" } (page::json_block(&run.stats)) } }
                    }
                }
            }
        }
        @if runs.is_empty() { p.empty { "No run recorded yet." } }
    };
    page::respond(
        StatusCode::OK,
        page::frame("Job", Section::Jobs, Some(session.nav()), body),
    )
}

pub async fn run(
    State(state): State<AppState>,
    Extension(session): Extension<Session>,
    Path(name): Path<String>,
    body: Bytes,
) -> Response {
    let form = match session.form(&body) {
        Ok(form) => form,
        Err(refused) => return refused,
    };
    let dry_run = match form.get("dry_run") {
        Some("true") => true,
        Some("false") => false,
        other => {
            return page::error_page(
                StatusCode::BAD_REQUEST,
                &format!("dry_run: must be true or false, got {other:?}"),
            );
        }
    };
    let ops = state.ops_for(session.caller.clone());
    let report = match ops.run_job(&name, dry_run, None).await {
        Ok(report) => report,
        Err(e) => return page::failure_page(&e),
    };
    let stats = report.stats.clone().unwrap_or(Value::Null);
    let samples = sample_memories(&ops, &stats).await;
    let body = html! {
        h1 { (if dry_run { "Dry run of " } else { "Ran " }) (report.job) }
        @if let Some(skipped) = &report.skipped {
            p.notice.bad role="status" { "Did not run: " (skipped) }
        }
        @if let Some(status) = report.status {
            p { "Status " span class={"status " (status.as_str())} { (status.as_str()) }
                @if let Some(run) = report.run { ", run " (run) } }
        }
        @if let Some(error) = &report.error { p.notice.bad role="alert" { (error) } }
        h2 { "Stats" }
        (page::json_block(&stats))
        @for (key, memories) in &samples {
            h2 { (key) ": " (if dry_run { "what it would change" } else { "what it changed" }) }
            ul.sample {
                @for (id, content) in memories {
                    li { (memory_link(id)) " " (content.as_deref().unwrap_or("(not readable now)")) }
                }
            }
        }
        p { a href="/ui/jobs" { "Back to jobs" } }
    };
    page::respond(
        StatusCode::OK,
        page::frame("Job run", Section::Jobs, Some(session.nav()), body),
    )
}

/// The memories a run's stats name (its samples: lists of ids), with their text.
async fn sample_memories(
    ops: &Guarded,
    stats: &Value,
) -> Vec<(String, Vec<(uuid::Uuid, Option<String>)>)> {
    const SHOWN: usize = 20;
    let mut out = Vec::new();
    let Some(map) = stats.as_object() else {
        return out;
    };
    for (key, value) in map {
        let ids: Vec<uuid::Uuid> = value
            .as_array()
            .map(|items| {
                items
                    .iter()
                    .filter_map(|v| v.as_str().and_then(|s| uuid::Uuid::parse_str(s).ok()))
                    .take(SHOWN)
                    .collect()
            })
            .unwrap_or_default();
        if ids.is_empty() {
            continue;
        }
        let mut shown = Vec::with_capacity(ids.len());
        for id in ids {
            shown.push((id, ops.get(id).await.ok().map(|m| m.content)));
        }
        out.push((key.clone(), shown));
    }
    out
}
