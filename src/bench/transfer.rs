//! `hindsight bench import`: N synthetic memories with vectors written as an export file, then
//! this binary's own `import`, `export` and (SQLite) `backup` run on it as child processes,
//! each timed at the wall clock with its peak RSS (VmHWM, polled). What a user's import costs,
//! JSON parsing and the file's two reads included.

use std::io::Write;
use std::path::Path;
use std::time::{Duration, Instant};

use chrono::Utc;
use serde::Serialize;
use serde_json::json;

use super::daemon::{Daemon, Rss};
use super::{
    BenchBackend, BenchError, RandomEmbedder, ScratchDatabase, Tick, percentile, rss_mb_of,
};
use crate::domain::{MemoryType, Status};
use crate::embed::{BuiltinEmbedder, Embedder};
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
    pub daemon_idle_after_searches: Rss,
}

/// Searches the started daemon answers before its memory is read again.
const DAEMON_SEARCHES: usize = 200;

/// The synthetic file: UUIDv7 ids in order, ten namespaces, a sentence each, the builtin
/// embedder's id with pseudo-random unit vectors of its dimension (so the import reuses them,
/// as it would a real export's).
fn write_file(path: &Path, n: usize, embedder: &str, dimension: usize) -> Result<(), BenchError> {
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
    for i in 0..n {
        let content = format!(
            "memory {i}: the user in project {} asked about report {} and sensor {}",
            i % 97,
            i % 13,
            i % 31
        );
        let line = MemoryLine {
            id: uuid::Uuid::now_v7(),
            namespace: format!("bench/{}", i % 10),
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
    Ok(())
}

/// Run `exe args` to completion: its wall time and peak RSS in MiB.
async fn timed(
    exe: &Path,
    args: &[&str],
    envs: &[(&str, String)],
) -> Result<(f64, f64), BenchError> {
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
    let pid = child.id().ok_or("the child has no pid")?.to_string();
    let mut peak: f64 = 0.0;
    let status = loop {
        peak = peak.max(rss_mb_of(&pid).1);
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
    Ok((seconds, peak))
}

pub async fn transfer_bench(
    exe: &Path,
    n: usize,
    backend: &BenchBackend,
    progress: Tick<'_>,
) -> Result<TransferBenchReport, BenchError> {
    let dir = tempfile::tempdir()?;
    let builtin = BuiltinEmbedder::new();
    let (embedder, dimension) = (builtin.id().to_owned(), builtin.dimension());
    let file = dir.path().join("bench.jsonl");
    progress("writing the file", 0, Some(n as u64));
    write_file(&file, n, &embedder, dimension)?;
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
        let (import_seconds, import_peak) =
            timed(exe, &["import", &file.display().to_string()], &envs).await?;
        progress("exporting", 0, Some(n as u64));
        let out = dir.path().join("out.jsonl");
        let (export_seconds, export_peak) = timed(
            exe,
            &["export", "--with-vectors", "-o", &out.display().to_string()],
            &envs,
        )
        .await?;
        let backup_seconds = match backend {
            BenchBackend::Sqlite => {
                progress("backing up", 0, None);
                let target = dir.path().join("backup");
                Some(
                    timed(exe, &["backup", &target.display().to_string()], &envs)
                        .await?
                        .0,
                )
            }
            BenchBackend::Postgres { .. } => None,
        };
        progress("starting a daemon on it", 0, None);
        let daemon = Daemon::spawn(exe, &data, &envs, Duration::from_secs(1800)).await?;
        let served = serve_searches(&daemon, n, &token, progress).await;
        let ready_seconds = daemon.ready_seconds;
        daemon.stop().await;
        let (idle, search_p50_ms, after_searches) = served?;
        Ok::<_, BenchError>(TransferBenchReport {
            bench: "import",
            backend: backend.name(),
            n,
            embedder: embedder.clone(),
            dimension,
            file_mb: std::fs::metadata(&file)?.len() as f64 / (1024.0 * 1024.0),
            import_seconds,
            imported_per_second: n as f64 / import_seconds,
            import_peak_rss_mb: import_peak,
            export_seconds,
            exported_per_second: n as f64 / export_seconds,
            export_peak_rss_mb: export_peak,
            backup_seconds,
            daemon_ready_seconds: ready_seconds,
            daemon_idle: idle,
            daemon_searches: DAEMON_SEARCHES,
            daemon_search_p50_ms: search_p50_ms,
            daemon_idle_after_searches: after_searches,
        })
    }
    .await;
    if let Some(db) = scratch {
        db.drop_database().await?;
    }
    result
}

/// The started daemon idle (after a settling pause), the median of `DAEMON_SEARCHES` searches
/// over HTTP, and idle again after them.
async fn serve_searches(
    daemon: &Daemon,
    n: usize,
    token: &str,
    progress: Tick<'_>,
) -> Result<(Rss, f64, Rss), BenchError> {
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
            "namespace": format!("bench/{}", i % 10),
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
    Ok((idle, percentile(&latencies, 50.0), daemon.rss()))
}
