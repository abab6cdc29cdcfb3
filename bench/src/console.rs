//! `hindsight bench console`: what the operator console costs a daemon. A real `hindsight
//! serve` (this binary) in a scratch data dir is loaded with N memories (LoCoMo's turns,
//! repeated) through the HTTP API, plus clusters of alike episodes the distill job drafts into
//! pending candidates; its RSS is read idle, then every console page is fetched many times
//! and its RSS read again. Page times are taken at the client over loopback, so they are an
//! upper bound on the server's rendering time.

use std::path::Path;
use std::time::{Duration, Instant};

use futures::StreamExt;
use serde::Serialize;
use serde_json::{Value, json};

use super::daemon::Daemon;
use super::locomo::Conversation;
use super::{BenchError, Corpus, Tick, percentile, rss_mb_of};

pub struct ConsoleBenchOptions<'a> {
    /// The `hindsight` binary to start as the daemon.
    pub exe: &'a Path,
    pub n: usize,
    /// Fetches of each page.
    pub fetches: usize,
}

#[derive(Debug, Serialize)]
pub struct PageTimes {
    pub page: &'static str,
    pub fetches: usize,
    pub p50_ms: f64,
    pub p99_ms: f64,
    pub max_ms: f64,
    pub bytes: usize,
    /// The daemon's RSS after this page's fetches (pages run in the order listed).
    pub rss_after_mb: f64,
}

#[derive(Debug, Serialize)]
pub struct ConsoleBenchReport {
    pub bench: &'static str,
    pub memories: usize,
    pub pending_candidates: usize,
    /// The daemon's RSS after the load, before any search or console page.
    pub idle_rss_mb: f64,
    /// After the API served the reads the console's pages make (a search per pending
    /// candidate shown, candidate details, memory gets and lists), as agents and the CLI
    /// would: what the daemon holds whoever asks.
    pub after_api_rss_mb: f64,
    /// After every page was fetched `fetches` times.
    pub after_console_rss_mb: f64,
    /// What the console adds on top of the same reads through the API.
    pub console_rss_delta_mb: f64,
    /// What the console adds to a daemon that had served nothing yet.
    pub console_rss_delta_from_idle_mb: f64,
    pub pages: Vec<PageTimes>,
}

/// The memory browser's search.
const SEARCH: &str = "what did the user ask about the report";

/// Topics of the alike episodes the distill job turns into candidates.
const TOPICS: [&str; 8] = [
    "the quarterly sales report with every data source cited",
    "meetings moved to Tuesday afternoons",
    "answers in French rather than English",
    "invoices sent as PDF to the finance address",
    "the staging server restarted before each demo",
    "code reviews finished within one working day",
    "travel booked with an aisle seat",
    "weekly summaries sent on Friday mornings",
];
const PHRASINGS: [&str; 5] = [
    "On Monday the user asked for {}",
    "The user again wanted {}",
    "Once more the user insisted on {}",
    "The user reminded us about {}",
    "As before the user requested {}",
];

pub async fn console_bench(
    conversations: Vec<Conversation>,
    options: &ConsoleBenchOptions<'_>,
    progress: Tick<'_>,
) -> Result<ConsoleBenchReport, BenchError> {
    let data = tempfile::tempdir()?;
    let token = format!("bench-{}", uuid::Uuid::now_v7().simple());
    let envs = [
        ("HINDSIGHT_AUTH_TOKEN", token.clone()),
        (
            "HINDSIGHT_CONFIG",
            data.path().join("no-config.toml").display().to_string(),
        ),
        ("RUST_LOG", "warn".to_owned()),
    ];
    let daemon = Daemon::spawn(options.exe, data.path(), &envs, Duration::from_secs(60)).await?;
    let (base, pid) = (daemon.base.clone(), daemon.pid);
    let result = measure(&base, &token, pid, conversations, options, progress).await;
    daemon.stop().await;
    result
}

async fn measure(
    base: &str,
    token: &str,
    pid: u32,
    conversations: Vec<Conversation>,
    options: &ConsoleBenchOptions<'_>,
    progress: Tick<'_>,
) -> Result<ConsoleBenchReport, BenchError> {
    let http = reqwest::Client::builder()
        .redirect(reqwest::redirect::Policy::none())
        .build()?;
    let corpus = Corpus::LocomoOneNamespace(conversations);
    let mut writes: Vec<Value> = (0..options.n)
        .map(|i| {
            let (_, content) = corpus.memory(i, 1);
            json!({"content": content, "namespace": "bench", "memory_type": "episodic"})
        })
        .collect();
    for topic in TOPICS {
        for phrasing in PHRASINGS {
            writes.push(json!({"content": phrasing.replace("{}", topic), "namespace": "bench"}));
        }
    }
    let total = writes.len() as u64;
    let mut done = 0;
    let mut stream = futures::stream::iter(writes.into_iter().map(|body| {
        let http = http.clone();
        async move {
            http.post(format!("{base}/api/memories"))
                .bearer_auth(token)
                .json(&body)
                .send()
                .await?
                .error_for_status()
        }
    }))
    .buffer_unordered(4);
    while let Some(result) = stream.next().await {
        result?;
        done += 1;
        progress("loading", done, Some(total));
    }
    progress("distilling", 0, None);
    http.post(format!("{base}/admin/jobs/distill/run"))
        .bearer_auth(token)
        .json(&json!({}))
        .send()
        .await?
        .error_for_status()?;
    let pending: Value = http
        .get(format!("{base}/api/candidates?limit=1000"))
        .bearer_auth(token)
        .send()
        .await?
        .json()
        .await?;
    let pending_candidates = pending["candidates"].as_array().map_or(0, Vec::len);
    let listed: Value = http
        .post(format!("{base}/api/memories/list"))
        .bearer_auth(token)
        .json(&json!({"namespace": "bench", "limit": 1}))
        .send()
        .await?
        .json()
        .await?;
    let memory_id = listed[0]["id"]
        .as_str()
        .ok_or_else(|| format!("no memory listed: {listed}"))?
        .to_owned();

    // Idle: the load and the distill run are over; let the index settle.
    tokio::time::sleep(Duration::from_secs(2)).await;
    let (idle_rss_mb, _) = rss_mb_of(&pid.to_string());

    // The same reads through the API first, so the console is measured against a daemon
    // that has served searches, not a cold one.
    let shown: Vec<(&str, &str)> = pending["candidates"]
        .as_array()
        .map(|list| {
            list.iter()
                .take(20)
                .filter_map(|c| Some((c["id"].as_str()?, c["content"].as_str()?)))
                .collect()
        })
        .unwrap_or_default();
    for round in 0..options.fetches {
        for (id, content) in &shown {
            http.get(format!("{base}/api/candidates/{id}"))
                .bearer_auth(token)
                .send()
                .await?
                .error_for_status()?;
            http.post(format!("{base}/api/memories/search"))
                .bearer_auth(token)
                .json(&json!({"query": content, "namespace": "bench", "top_k": 3,
                              "memory_types": ["semantic"]}))
                .send()
                .await?
                .error_for_status()?;
        }
        http.get(format!("{base}/api/memories/{memory_id}"))
            .bearer_auth(token)
            .send()
            .await?
            .error_for_status()?;
        http.get(format!("{base}/api/candidates?limit=1000"))
            .bearer_auth(token)
            .send()
            .await?
            .error_for_status()?;
        http.post(format!("{base}/api/memories/search"))
            .bearer_auth(token)
            .json(&json!({"query": SEARCH, "namespaces": ["bench"], "top_k": 50}))
            .send()
            .await?
            .error_for_status()?;
        http.post(format!("{base}/api/memories/list"))
            .bearer_auth(token)
            .json(&json!({"namespace": "bench", "limit": 50}))
            .send()
            .await?
            .error_for_status()?;
        progress("api reads", round as u64 + 1, Some(options.fetches as u64));
    }
    let (after_api_rss_mb, _) = rss_mb_of(&pid.to_string());

    let login = http
        .post(format!("{base}/ui/login"))
        .header("content-type", "application/x-www-form-urlencoded")
        .body(
            form_urlencoded::Serializer::new(String::new())
                .append_pair("token", token)
                .finish(),
        )
        .send()
        .await?;
    let cookie = login
        .headers()
        .get("set-cookie")
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.split(';').next())
        .ok_or("the console's login set no cookie")?
        .to_owned();
    let pages: [(&'static str, String); 5] = [
        ("review queue", "/ui/review".to_owned()),
        ("memory browser", "/ui/memories?namespace=bench".to_owned()),
        (
            "memory search",
            format!(
                "/ui/memories?q={}",
                form_urlencoded::byte_serialize(SEARCH.as_bytes()).collect::<String>()
            ),
        ),
        ("memory page", format!("/ui/memories/{memory_id}")),
        ("jobs & health", "/ui/jobs".to_owned()),
    ];
    let mut report_pages = Vec::new();
    for (name, path) in pages {
        let mut times = Vec::with_capacity(options.fetches);
        let mut bytes = 0;
        for i in 0..options.fetches {
            let started = Instant::now();
            let response = http
                .get(format!("{base}{path}"))
                .header("cookie", &cookie)
                .send()
                .await?;
            if !response.status().is_success() {
                return Err(format!("{path}: HTTP {}", response.status()).into());
            }
            bytes = response.bytes().await?.len();
            times.push(started.elapsed().as_secs_f64() * 1000.0);
            progress(name, i as u64 + 1, Some(options.fetches as u64));
        }
        times.sort_by(f64::total_cmp);
        let round = |v: f64| (v * 100.0).round() / 100.0;
        report_pages.push(PageTimes {
            page: name,
            fetches: options.fetches,
            p50_ms: round(percentile(&times, 50.0)),
            p99_ms: round(percentile(&times, 99.0)),
            max_ms: round(times.last().copied().unwrap_or(0.0)),
            bytes,
            rss_after_mb: round(rss_mb_of(&pid.to_string()).0),
        });
    }
    let (after_console_rss_mb, _) = rss_mb_of(&pid.to_string());
    Ok(ConsoleBenchReport {
        bench: "console",
        memories: options.n + TOPICS.len() * PHRASINGS.len(),
        pending_candidates,
        idle_rss_mb,
        after_api_rss_mb,
        after_console_rss_mb,
        console_rss_delta_mb: ((after_console_rss_mb - after_api_rss_mb) * 10.0).round() / 10.0,
        console_rss_delta_from_idle_mb: ((after_console_rss_mb - idle_rss_mb) * 10.0).round()
            / 10.0,
        pages: report_pages,
    })
}
