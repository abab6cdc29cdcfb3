//! `hindsight bench import`: N synthetic memories with vectors written as an export file, then
//! this binary's own `import`, `export` and (SQLite) `backup` run on it as child processes,
//! each timed at the wall clock with its peak RSS (VmHWM, polled). What a user's import costs,
//! JSON parsing and the file's two reads included. Then a daemon on the imported data (its
//! memory idle and after searches, their latency), and the index's recall@10 against brute
//! force.

use std::io::Write;
use std::path::Path;
use std::time::{Duration, Instant};

use chrono::Utc;
use serde::Serialize;
use serde_json::json;

use super::cgroup::MemoryCgroup;
use super::daemon::{Daemon, Rss};
use super::{
    BenchBackend, BenchError, RandomEmbedder, ScratchDatabase, Tick, found_in_top_10, percentile,
    status_mb,
};
use crate::domain::{MemoryId, MemoryType, Status};
use crate::embed::{BuiltinEmbedder, Embedder};
use crate::index::{EdgeIndex, HnswParams};
use crate::transfer::{FORMAT_VERSION, Header, MemoryLine};

#[derive(Debug, Clone, Serialize)]
pub struct TransferBenchReport {
    pub bench: &'static str,
    pub backend: &'static str,
    pub n: usize,
    pub embedder: String,
    pub dimension: usize,
    pub file_mb: f64,
    pub import_seconds: f64,
    pub imported_per_second: f64,
    pub import_peak_rss_mb: f64,
    pub import_peak_anon_mb: f64,
    /// `--memory-limit-mb`: the import ran in a memory cgroup of this size (private memory and
    /// page cache together, as a container's limit counts them)...
    pub import_memory_limit_mb: Option<u64>,
    /// ...and the most that cgroup held.
    pub import_cgroup_peak_mb: Option<f64>,
    pub export_seconds: f64,
    pub exported_per_second: f64,
    pub export_peak_rss_mb: f64,
    /// SQLite only (PostgreSQL's is `pg_dump`).
    pub backup_seconds: Option<f64>,
    /// A daemon (`serve`) then started on the imported data: until it answers (an index found
    /// unusable would be rebuilt here), its memory idle once its start-up jobs are done, and
    /// idle again after `daemon_searches` searches over HTTP (the rescored vectors' pages
    /// mapped in).
    pub daemon_ready_seconds: f64,
    pub daemon_idle: Rss,
    pub daemon_searches: usize,
    pub daemon_search_p50_ms: f64,
    pub daemon_search_p99_ms: f64,
    pub daemon_idle_after_searches: Rss,
    /// The imported index's dense search (the daemon stopped, its index opened here) against
    /// brute force over the file's vectors: the share of each query's true 10 nearest (in its
    /// namespace) found, over `recall_queries` queries.
    pub recall_at_10: f64,
    pub recall_queries: usize,
}

/// Queries `recall_at_10` asks, spread over the namespaces.
const RECALL_QUERIES: usize = 50;
/// The file's namespaces: line `i` is in `bench/{i % NAMESPACES}`.
const NAMESPACES: usize = 10;

/// Line `i`'s text.
fn content(i: usize) -> String {
    format!(
        "memory {i}: the user in project {} asked about report {} and sensor {}",
        i % 97,
        i % 13,
        i % 31
    )
}

/// Searches the started daemon answers before its memory is read again.
const DAEMON_SEARCHES: usize = 200;

/// The synthetic file: UUIDv7 ids in order, ten namespaces, a sentence each, the builtin
/// embedder's id with pseudo-random unit vectors of its dimension (so the import reuses them,
/// as it would a real export's). Returns the lines' ids.
fn write_file(
    path: &Path,
    n: usize,
    embedder: &str,
    dimension: usize,
) -> Result<Vec<MemoryId>, BenchError> {
    let random = RandomEmbedder::new(dimension);
    let mut out = std::io::BufWriter::with_capacity(1 << 20, std::fs::File::create(path)?);
    let now = Utc::now();
    let header = Header {
        hindsight_export: FORMAT_VERSION,
        embedder: embedder.to_owned(),
        dimension,
        exported_at: now,
        with_vectors: true,
    };
    serde_json::to_writer(&mut out, &header)?;
    out.write_all(b"\n")?;
    let mut ids = Vec::with_capacity(n);
    for i in 0..n {
        let content = content(i);
        let id = uuid::Uuid::now_v7();
        ids.push(id);
        let line = MemoryLine {
            id,
            namespace: format!("bench/{}", i % NAMESPACES),
            memory_type: MemoryType::Episodic,
            content: content.clone(),
            importance: 0.5,
            status: Status::Active,
            entity: None,
            attribute: None,
            source: json!({"bench": i}),
            merged_sources: json!([]),
            metadata: json!({}),
            created_at: now,
            occurred_at: now,
            updated_at: now,
            expires_at: None,
            last_accessed_at: None,
            access_count: 0,
            deprecated_at: None,
            deprecated_by: None,
            embedding_model: embedder.to_owned(),
            archived_at: None,
            embedding: Some(random.vector(&content)),
        };
        serde_json::to_writer(&mut out, &line)?;
        out.write_all(b"\n")?;
    }
    out.flush()?;
    Ok(ids)
}

/// Recall@10 of the index in `index_dir` (see `TransferBenchReport::recall_at_10`). The file's
/// vectors are regenerated from its texts in one pass, each scored against its namespace's
/// queries, so no second copy of them is held.
async fn recall_at_10(
    index_dir: &Path,
    ids: &[MemoryId],
    dimension: usize,
) -> Result<f64, BenchError> {
    let random = RandomEmbedder::new(dimension);
    let queries: Vec<Vec<f32>> = (0..RECALL_QUERIES)
        .map(|q| random.vector(&format!("recall query {q}")))
        .collect();
    // Per query, its 10 best (similarity, line) so far.
    let mut best: Vec<Vec<(f32, usize)>> = vec![Vec::new(); RECALL_QUERIES];
    for (i, _) in ids.iter().enumerate() {
        let vector = random.vector(&content(i));
        for q in (i % NAMESPACES..RECALL_QUERIES).step_by(NAMESPACES) {
            let top = &mut best[q];
            let score = crate::embed::cosine(&queries[q], &vector);
            if top.len() < 10 || score > top[top.len() - 1].0 {
                let at = top.partition_point(|(s, _)| *s >= score);
                top.insert(at, (score, i));
                top.truncate(10);
            }
        }
    }
    let index = EdgeIndex::open(index_dir, dimension, HnswParams::default()).await?;
    let (mut found, mut wanted) = (0, 0);
    for (q, vector) in queries.into_iter().enumerate() {
        wanted += best[q].len();
        found += found_in_top_10(
            &index,
            vector,
            &format!("bench/{}", q % NAMESPACES),
            best[q].iter().map(|(_, i)| ids[*i]),
        )
        .await?;
    }
    Ok(found as f64 / wanted.max(1) as f64)
}

/// A child run to completion: its wall time and peak memory (MiB).
struct Timed {
    seconds: f64,
    /// VmHWM: private memory and mapped file pages at their highest.
    peak_rss_mb: f64,
    /// RssAnon at its highest (polled every 20 ms).
    peak_anon_mb: f64,
}

/// Run `exe args` to completion (in `cgroup`, when given).
async fn timed(
    exe: &Path,
    args: &[&str],
    envs: &[(&str, String)],
    cgroup: Option<&MemoryCgroup>,
) -> Result<Timed, BenchError> {
    // Its messages to a file (a pipe nobody reads while it runs could fill and stall it).
    let log = tempfile::NamedTempFile::new()?;
    let started = Instant::now();
    let mut child = tokio::process::Command::new(exe)
        .args(args)
        .envs(envs.iter().map(|(k, v)| (*k, v.as_str())))
        .stdout(std::process::Stdio::null())
        .stderr(log.reopen()?)
        .kill_on_drop(true)
        .spawn()?;
    let pid = child.id().ok_or("the child has no pid")?;
    if let Some(cgroup) = cgroup {
        // Before it has read the file or opened the store: a few MB at most are outside.
        cgroup.add(pid)?;
    }
    let pid = pid.to_string();
    let (mut peak_rss_mb, mut peak_anon_mb) = (0.0_f64, 0.0_f64);
    let status = loop {
        let [hwm, anon] = status_mb(&pid, ["VmHWM:", "RssAnon:"]);
        peak_rss_mb = peak_rss_mb.max(hwm);
        peak_anon_mb = peak_anon_mb.max(anon);
        if let Some(status) = child.try_wait()? {
            break status;
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
    };
    let seconds = started.elapsed().as_secs_f64();
    if !status.success() {
        let err = std::fs::read_to_string(log.path()).unwrap_or_default();
        return Err(format!("hindsight {} failed ({status}): {err}", args[0]).into());
    }
    Ok(Timed {
        seconds,
        peak_rss_mb,
        peak_anon_mb,
    })
}

pub async fn transfer_bench(
    exe: &Path,
    n: usize,
    backend: &BenchBackend,
    memory_limit_mb: Option<u64>,
    progress: Tick<'_>,
) -> Result<TransferBenchReport, BenchError> {
    // Made first: a machine where it cannot be is told before the file is written.
    let cgroup = memory_limit_mb.map(MemoryCgroup::create).transpose()?;
    let dir = tempfile::tempdir()?;
    let builtin = BuiltinEmbedder::new();
    let (embedder, dimension) = (builtin.id().to_owned(), builtin.dimension());
    let file = dir.path().join("bench.jsonl");
    progress("writing the file", 0, Some(n as u64));
    let ids = write_file(&file, n, &embedder, dimension)?;
    let data = dir.path().join("data");
    let scratch = match backend {
        BenchBackend::Sqlite => None,
        BenchBackend::Postgres { server_url } => Some(ScratchDatabase::create(server_url).await?),
    };
    let token = format!("bench-{}", uuid::Uuid::now_v7().simple());
    let mut envs = vec![
        (
            "HINDSIGHT_CONFIG",
            dir.path().join("none.toml").display().to_string(),
        ),
        ("HINDSIGHT_DATA_DIR", data.display().to_string()),
        ("HINDSIGHT_EMBEDDER", "builtin".to_owned()),
        ("RUST_LOG", "warn".to_owned()),
        ("HINDSIGHT_AUTH_TOKEN", token.clone()),
    ];
    if let Some(db) = &scratch {
        envs.push(("HINDSIGHT_DATABASE_URL", db.url()));
    }
    let result = async {
        progress("importing", 0, Some(n as u64));
        let import = timed(
            exe,
            &["import", &file.display().to_string()],
            &envs,
            cgroup.as_ref(),
        )
        .await?;
        progress("exporting", 0, Some(n as u64));
        let out = dir.path().join("out.jsonl");
        let export = timed(
            exe,
            &["export", "--with-vectors", "-o", &out.display().to_string()],
            &envs,
            None,
        )
        .await?;
        let backup_seconds = match backend {
            BenchBackend::Sqlite => {
                progress("backing up", 0, None);
                let target = dir.path().join("backup");
                Some(
                    timed(exe, &["backup", &target.display().to_string()], &envs, None)
                        .await?
                        .seconds,
                )
            }
            BenchBackend::Postgres { .. } => None,
        };
        progress("starting a daemon on it", 0, None);
        let daemon = Daemon::spawn(exe, &data, &envs, Duration::from_secs(1800)).await?;
        let served = serve_searches(&daemon, n, &token, progress).await;
        let ready_seconds = daemon.ready_seconds;
        daemon.stop().await;
        let served = served?;
        progress("recall against brute force", 0, None);
        let recall = recall_at_10(&data.join("index"), &ids, dimension).await?;
        Ok::<_, BenchError>(TransferBenchReport {
            bench: "import",
            backend: backend.name(),
            n,
            embedder: embedder.clone(),
            dimension,
            file_mb: std::fs::metadata(&file)?.len() as f64 / (1024.0 * 1024.0),
            import_seconds: import.seconds,
            imported_per_second: n as f64 / import.seconds,
            import_peak_rss_mb: import.peak_rss_mb,
            import_peak_anon_mb: import.peak_anon_mb,
            import_memory_limit_mb: memory_limit_mb,
            import_cgroup_peak_mb: cgroup.as_ref().and_then(MemoryCgroup::peak_mb),
            export_seconds: export.seconds,
            exported_per_second: n as f64 / export.seconds,
            export_peak_rss_mb: export.peak_rss_mb,
            backup_seconds,
            daemon_ready_seconds: ready_seconds,
            daemon_idle: served.idle,
            daemon_searches: DAEMON_SEARCHES,
            daemon_search_p50_ms: served.p50_ms,
            daemon_search_p99_ms: served.p99_ms,
            daemon_idle_after_searches: served.after_searches,
            recall_at_10: recall,
            recall_queries: RECALL_QUERIES,
        })
    }
    .await;
    if let Some(db) = scratch {
        db.drop_database().await?;
    }
    result
}

/// What `serve_searches` read off the daemon.
struct Served {
    idle: Rss,
    p50_ms: f64,
    p99_ms: f64,
    after_searches: Rss,
}

/// The started daemon idle (after a settling pause), the latencies of `DAEMON_SEARCHES`
/// searches over HTTP, and idle again after them.
async fn serve_searches(
    daemon: &Daemon,
    n: usize,
    token: &str,
    progress: Tick<'_>,
) -> Result<Served, BenchError> {
    let http = reqwest::Client::new();
    // A daemon starting on a store it has not served catches up on missed job ticks (distill
    // over the new episodes: seconds, and its working set); idle is after them.
    let settled = Instant::now();
    loop {
        let jobs: serde_json::Value = http
            .get(format!("{}/admin/jobs", daemon.base))
            .bearer_auth(token)
            .send()
            .await?
            .error_for_status()?
            .json()
            .await?;
        let running = jobs
            .as_array()
            .is_some_and(|jobs| jobs.iter().any(|j| j["last_run"]["status"] == "running"));
        if !running {
            break;
        }
        if settled.elapsed() > Duration::from_secs(600) {
            return Err("the daemon's start-up jobs ran over 10 minutes".into());
        }
        tokio::time::sleep(Duration::from_millis(200)).await;
    }
    tokio::time::sleep(Duration::from_secs(2)).await;
    let idle = daemon.rss();
    let mut latencies = Vec::with_capacity(DAEMON_SEARCHES);
    for q in 0..DAEMON_SEARCHES {
        // The file's own wording (`write_file`), so each search has real matches.
        let i = (q * 7_919) % n.max(1);
        let body = json!({
            "query": format!("project {} report {} sensor {}", i % 97, i % 13, i % 31),
            "namespace": format!("bench/{}", i % NAMESPACES),
            "top_k": 10,
        });
        let started = Instant::now();
        let found: serde_json::Value = http
            .post(format!("{}/api/memories/search", daemon.base))
            .bearer_auth(token)
            .json(&body)
            .send()
            .await?
            .error_for_status()?
            .json()
            .await?;
        latencies.push(started.elapsed().as_secs_f64() * 1e3);
        if found["memories"].as_array().is_none_or(Vec::is_empty) {
            return Err(format!("the daemon found nothing for {body}: {found}").into());
        }
        progress(
            "searching the daemon",
            q as u64 + 1,
            Some(DAEMON_SEARCHES as u64),
        );
    }
    latencies.sort_by(f64::total_cmp);
    tokio::time::sleep(Duration::from_secs(2)).await;
    Ok(Served {
        idle,
        p50_ms: percentile(&latencies, 50.0),
        p99_ms: percentile(&latencies, 99.0),
        after_searches: daemon.rss(),
    })
}
