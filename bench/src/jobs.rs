//! `hindsight bench jobs`: expire and archive throughput (rows/s) over a bulk-loaded store, and
//! the process's peak RSS, as JSON. Rows are generated inside the database (one INSERT … SELECT),
//! so loading a million rows costs seconds, not the write path's minutes; the vector index
//! holds no points for them (its deletes are no-ops), so the figures are the store's work plus
//! each job's own loop. A quarter of the rows are due to expire, half are cold enough to
//! archive, a quarter stay.

use std::sync::Arc;
use std::time::Instant;

use chrono::{Duration, Utc};
use serde::Serialize;

use super::{BenchBackend, BenchError, RandomEmbedder, ScratchDatabase, rss_mb};
use hindsight::index::{EdgeIndex, HnswParams};
use hindsight::jobs::{ConfiguredJob, Runner, TickOutcome};
use hindsight::service::{MemoryService, Rules};
use hindsight::store::{Database, MemoryStore, PoolSize, PostgresStore, SqliteStore};

#[derive(Debug, Serialize)]
pub struct JobsBenchReport {
    pub bench: &'static str,
    pub backend: &'static str,
    pub rows: usize,
    pub dimension: usize,
    pub batch_size: usize,
    pub workers: usize,
    pub sink: String,
    pub load_seconds: f64,
    pub expired: u64,
    pub expire_seconds: f64,
    pub expire_rows_per_sec: f64,
    pub archived: u64,
    pub archive_seconds: f64,
    pub archive_rows_per_sec: f64,
    /// Resident set size after the runs, and its peak over the whole process, MiB.
    pub rss_mb: f64,
    pub peak_rss_mb: f64,
    /// Peak RSS before the jobs ran: the difference is what the jobs added.
    pub peak_rss_before_jobs_mb: f64,
}

/// What to load and how to run the jobs over it.
#[derive(Debug, Clone)]
pub struct JobsBenchOptions {
    pub rows: usize,
    pub dimension: usize,
    pub batch_size: usize,
    /// The archive job's `workers`.
    pub workers: usize,
    /// `table`, or an object URL (`file:///dir`, `s3://bucket/prefix`).
    pub sink: String,
}

pub async fn jobs_bench(
    dir: &std::path::Path,
    backend: &BenchBackend,
    options: &JobsBenchOptions,
    progress: super::Tick<'_>,
) -> Result<JobsBenchReport, BenchError> {
    match backend {
        BenchBackend::Sqlite => {
            let db = Arc::new(
                SqliteStore::open(
                    &dir.join("bench.db"),
                    hindsight::signing::Signer::ephemeral(),
                )
                .await?,
            );
            let loader = Loader::Sqlite(db.clone());
            run(dir, db, loader, backend, options, progress).await
        }
        BenchBackend::Postgres { server_url } => {
            let scratch = ScratchDatabase::create(server_url).await?;
            let result = async {
                let db = Arc::new(
                    PostgresStore::connect(
                        &scratch.url(),
                        PoolSize { min: 2, max: 10 },
                        hindsight::signing::Signer::ephemeral(),
                    )
                    .await?,
                );
                let loader = Loader::Postgres(db.clone());
                run(dir, db, loader, backend, options, progress).await
            }
            .await;
            scratch.drop_database().await?;
            result
        }
    }
}

/// The concrete store, for the bulk load's own SQL.
enum Loader {
    Sqlite(Arc<SqliteStore>),
    Postgres(Arc<PostgresStore>),
}

async fn run(
    dir: &std::path::Path,
    db: Arc<dyn Database>,
    loader: Loader,
    backend: &BenchBackend,
    options: &JobsBenchOptions,
    progress: super::Tick<'_>,
) -> Result<JobsBenchReport, BenchError> {
    let JobsBenchOptions {
        rows,
        dimension,
        batch_size,
        workers,
        ref sink,
    } = *options;
    // The service first, on an empty store: its start-up repair has nothing to do.
    let embedder = Arc::new(RandomEmbedder::new(dimension));
    let index =
        Arc::new(EdgeIndex::open(&dir.join("index"), dimension, HnswParams::default()).await?);
    let store: Arc<dyn MemoryStore> = db.clone();
    let service = Arc::new(MemoryService::start(store, index, embedder, Rules::default()).await?);

    let started = Instant::now();
    progress("loading", 0, Some(rows as u64));
    bulk_load(&loader, rows, dimension).await?;
    progress("loading", rows as u64, Some(rows as u64));
    let load_seconds = started.elapsed().as_secs_f64();

    let jobs_dir = dir.join("jobs");
    std::fs::create_dir_all(&jobs_dir)?;
    let mut archive = format!(
        "cron = \"0 30 3 * * *\"\nbatch_size = {batch_size}\n[params]\nworkers = {workers}\n"
    );
    if sink != "table" {
        archive.push_str(&format!("sink = \"object\"\nobject_url = \"{sink}\"\n"));
    }
    std::fs::write(jobs_dir.join("archive.toml"), archive)?;
    std::fs::write(
        jobs_dir.join("expire.toml"),
        format!("cron = \"0 * * * * *\"\nbatch_size = {batch_size}\n"),
    )?;
    let jobs: Vec<ConfiguredJob> =
        hindsight::jobs::load_jobs(&jobs_dir, &hindsight::jobs::JobEnv::default())?;
    let runner = Runner::new(
        jobs,
        service.clone(),
        db.clone(),
        true,
        service.metrics().clone(),
    );
    let peak_before = rss_mb().1;

    progress("expire", 0, None);
    let (expired, expire_seconds) = timed_run(&runner, "expire").await?;
    service.flush().await?;
    progress("archive", 0, None);
    let (archived, archive_seconds) = timed_run(&runner, "archive").await?;
    let (rss, peak) = rss_mb();
    Ok(JobsBenchReport {
        bench: "jobs",
        backend: backend.name(),
        rows,
        dimension,
        batch_size,
        workers,
        sink: sink.clone(),
        load_seconds,
        expired,
        expire_seconds,
        expire_rows_per_sec: expired as f64 / expire_seconds.max(1e-9),
        archived,
        archive_seconds,
        archive_rows_per_sec: archived as f64 / archive_seconds.max(1e-9),
        rss_mb: rss,
        peak_rss_mb: peak,
        peak_rss_before_jobs_mb: peak_before,
    })
}

async fn timed_run(runner: &Runner, job: &str) -> Result<(u64, f64), BenchError> {
    let started = Instant::now();
    match runner.run_now(job, false, None).await? {
        TickOutcome::Ran {
            stats, error: None, ..
        } => Ok((stats.changed, started.elapsed().as_secs_f64())),
        TickOutcome::Ran {
            error: Some(error), ..
        } => Err(format!("{job} failed: {error}").into()),
        TickOutcome::Skipped(reason) => Err(format!("{job} skipped: {reason}").into()),
    }
}

/// `rows` rows generated by the database itself: i % 4 = 0, 1 cold (200 days old), 2 due to
/// expire, 3 recent and live. Four namespaces; timestamps a millisecond apart, as real rows'.
async fn bulk_load(loader: &Loader, rows: usize, dimension: usize) -> Result<(), BenchError> {
    let now = Utc::now();
    let cold = now - Duration::days(200);
    let recent = now - Duration::hours(1);
    let due = now - Duration::minutes(1);
    let rows = rows as i64;
    let postgres = match loader {
        Loader::Postgres(postgres) => postgres,
        Loader::Sqlite(sqlite) => {
            sqlx::query(
                "WITH RECURSIVE c(i) AS (SELECT 0 UNION ALL SELECT i + 1 FROM c WHERE i < ?1 - 1) \
             INSERT INTO memories (id, namespace, memory_type, content, importance, status, \
               source, merged_sources, metadata, created_at, updated_at, expires_at, \
               access_count, embedding_model, embedding, index_pending, lexical, occurred_at) \
             SELECT printf('00000000-0000-7000-8000-%012x', i), 'ns-' || (i % 4), 'episodic', \
               'bench memory ' || i, 0.5, 'active', 'null', '[]', '{}', \
               (CASE WHEN i % 4 < 2 THEN ?2 ELSE ?3 END) - i, \
               (CASE WHEN i % 4 < 2 THEN ?2 ELSE ?3 END) - i, \
               CASE WHEN i % 4 = 2 THEN ?4 - i END, 0, 'bench', zeroblob(?5), 0, \
               'bench memory ' || i, (CASE WHEN i % 4 < 2 THEN ?2 ELSE ?3 END) - i \
             FROM c",
            )
            .bind(rows)
            .bind(cold.timestamp_millis())
            .bind(recent.timestamp_millis())
            .bind(due.timestamp_millis())
            .bind((dimension * 4) as i64)
            .execute(sqlite.writer())
            .await?;
            return Ok(());
        }
    };
    sqlx::query(
        "INSERT INTO memories (id, namespace, memory_type, content, importance, status, \
           source, merged_sources, metadata, created_at, updated_at, expires_at, access_count, \
           embedding_model, index_pending, lexical, occurred_at) \
         SELECT ('00000000-0000-7000-8000-' || lpad(to_hex(i), 12, '0'))::uuid, 'ns-' || (i % 4), \
           'episodic', 'bench memory ' || i, 0.5, 'active', 'null', '[]', '{}', \
           (CASE WHEN i % 4 < 2 THEN $2 ELSE $3 END) - i * interval '1 millisecond', \
           (CASE WHEN i % 4 < 2 THEN $2 ELSE $3 END) - i * interval '1 millisecond', \
           CASE WHEN i % 4 = 2 THEN $4 - i * interval '1 millisecond' END, 0, 'bench', \
           FALSE, 'bench memory ' || i, \
           (CASE WHEN i % 4 < 2 THEN $2 ELSE $3 END) - i * interval '1 millisecond' \
         FROM generate_series(0, $1 - 1) AS i",
    )
    .bind(rows)
    .bind(cold)
    .bind(recent)
    .bind(due)
    .execute(postgres.pool())
    .await?;
    // The vectors beside the rows (they stay there whichever table holds the row).
    sqlx::query(
        "INSERT INTO memory_vectors (id, embedding) \
         SELECT ('00000000-0000-7000-8000-' || lpad(to_hex(i), 12, '0'))::uuid, \
           array_fill(0.5::real, ARRAY[$2::int]) \
         FROM generate_series(0, $1 - 1) AS i",
    )
    .bind(rows)
    .bind(dimension as i32)
    .execute(postgres.pool())
    .await?;
    sqlx::query("ANALYZE memories")
        .execute(postgres.pool())
        .await?;
    Ok(())
}
