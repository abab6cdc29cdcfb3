//! Two replica processes on one PostgreSQL database, four jobs on per-second schedules, for a
//! few hundred ticks: every tick ran exactly once. Each replica is this test binary run again
//! as a child (`replica_child`), with the real `Engine` and `Runner` over its own pool; a job
//! that records every execution (not just every claim) is what the check counts.

use crate::common;

use std::sync::Arc;
use std::time::Duration as StdDuration;

use async_trait::async_trait;
use hindsight::embed::{BuiltinEmbedder, Embedder};
use hindsight::jobs::{ConfiguredJob, Engine, Job, JobContext, JobError, JobSettings, JobStats};
use hindsight::metrics::Metrics;
use hindsight::service::{MemoryService, Rules};
use hindsight::store::{Database, MemoryStore, PoolSize, PostgresStore, RunStatus, StoreError};

const CHILD_DB: &str = "HINDSIGHT_TEST_REPLICA_DB";
const CHILD_SECONDS: &str = "HINDSIGHT_TEST_REPLICA_SECONDS";
/// The child's full test name, as libtest's `--exact` wants it (this module's path in the one
/// integration binary, then the function).
const CHILD_TEST: &str = "jobs_replicas::replica_child";
const JOBS: [&str; 4] = ["tally-a", "tally-b", "tally-c", "tally-d"];

/// Records each execution: (job, tick, process).
struct Tally {
    name: &'static str,
    pool: sqlx::PgPool,
}

#[async_trait]
impl Job for Tally {
    async fn run(&self, ctx: &JobContext) -> Result<JobStats, JobError> {
        sqlx::query("INSERT INTO tally (job, tick, pid) VALUES ($1, $2, $3)")
            .bind(self.name)
            .bind(ctx.tick)
            .bind(std::process::id() as i64)
            .execute(&self.pool)
            .await
            .map_err(|e| JobError::Store(StoreError::Database(e)))?;
        Ok(JobStats {
            changed: 1,
            ..JobStats::default()
        })
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
#[ignore = "not a test on its own: a replica process started by replicas_run_every_tick_exactly_once"]
async fn replica_child() {
    let url = std::env::var(CHILD_DB).expect("started by replicas_run_every_tick_exactly_once");
    let seconds: u64 = std::env::var(CHILD_SECONDS).unwrap().parse().unwrap();
    let db: Arc<dyn Database> = Arc::new(
        PostgresStore::connect(&url, PoolSize { min: 1, max: 6 }, common::test_signer())
            .await
            .unwrap(),
    );
    let pool = sqlx::PgPool::connect(&url).await.unwrap();
    let dir = tempfile::tempdir().unwrap();
    let embedder: Arc<dyn Embedder> = Arc::new(BuiltinEmbedder::new());
    let index = common::open_index(dir.path(), embedder.dimension()).await;
    let store: Arc<dyn MemoryStore> = db.clone();
    let service = Arc::new(
        MemoryService::start(store, index, embedder, Rules::default())
            .await
            .unwrap(),
    );
    let jobs = JOBS
        .iter()
        .map(|name| ConfiguredJob {
            settings: JobSettings::defaults(dir.path(), name, "* * * * * *").unwrap(),
            job: Arc::new(Tally {
                name,
                pool: pool.clone(),
            }),
        })
        .collect();
    let runner = hindsight::jobs::Runner::new(jobs, service, db, false, Arc::new(Metrics::new()));
    let engine = Engine::start(runner).await.unwrap();
    tokio::time::sleep(StdDuration::from_secs(seconds)).await;
    engine.shutdown(StdDuration::from_secs(5)).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
#[ignore = "needs PostgreSQL (HINDSIGHT_TEST_POSTGRES_URL, default 127.0.0.1:5432): full tier"]
async fn replicas_run_every_tick_exactly_once() {
    const SECONDS: u64 = 60;
    let database = common::pg::TestDatabase::create().await;
    let db = PostgresStore::connect(
        &database.url,
        PoolSize { min: 1, max: 2 },
        common::test_signer(),
    )
    .await
    .unwrap();
    sqlx::query(
        "CREATE TABLE tally (job TEXT NOT NULL, tick TIMESTAMPTZ NOT NULL, pid BIGINT NOT NULL)",
    )
    .execute(db.pool())
    .await
    .unwrap();
    let replicas: Vec<_> = (0..2)
        .map(|_| {
            tokio::process::Command::new(std::env::current_exe().unwrap())
                .args(["--ignored", "--exact", CHILD_TEST, "--nocapture"])
                .env(CHILD_DB, &database.url)
                .env(CHILD_SECONDS, SECONDS.to_string())
                .env("RUST_LOG", "warn")
                .kill_on_drop(true)
                .spawn()
                .unwrap()
        })
        .collect();
    for mut replica in replicas {
        let status = tokio::time::timeout(StdDuration::from_secs(SECONDS + 60), replica.wait())
            .await
            .expect("replica ends")
            .unwrap();
        assert!(status.success(), "replica failed: {status}");
    }

    let twice: Vec<(String, chrono::DateTime<chrono::Utc>, i64)> = sqlx::query_as(
        "SELECT job, tick, COUNT(*) FROM tally GROUP BY job, tick HAVING COUNT(*) > 1",
    )
    .fetch_all(db.pool())
    .await
    .unwrap();
    assert!(twice.is_empty(), "ticks run more than once: {twice:?}");
    let mut total = 0;
    for job in JOBS {
        let (n, first, last): (
            i64,
            chrono::DateTime<chrono::Utc>,
            chrono::DateTime<chrono::Utc>,
        ) = sqlx::query_as("SELECT COUNT(*), MIN(tick), MAX(tick) FROM tally WHERE job = $1")
            .bind(job)
            .fetch_one(db.pool())
            .await
            .unwrap();
        let span = (last - first).num_seconds() + 1;
        eprintln!("{job}: {n} ticks run over {span} s");
        // A tick is lost only if both replicas' schedulers were late past it at once (a loaded
        // CI machine); never silently many.
        assert!(
            n as f64 >= 0.95 * span as f64,
            "{job}: {n} of {span} ticks ran"
        );
        assert!(span >= SECONDS as i64 - 5, "{job}: ran for {span} s only");
        total += n;
    }
    let per_replica: Vec<(i64, i64)> =
        sqlx::query_as("SELECT pid, COUNT(*) FROM tally GROUP BY pid ORDER BY pid")
            .fetch_all(db.pool())
            .await
            .unwrap();
    eprintln!("{total} ticks in all; per replica (pid, ticks): {per_replica:?}");
    assert!(total >= 4 * (SECONDS as i64 - 5));

    let history = hindsight::store::RunLedger::history(&db, None, 100_000)
        .await
        .unwrap();
    let ok = history.iter().filter(|r| r.status == RunStatus::Ok).count();
    assert_eq!(
        ok as i64, total,
        "every execution is a recorded, finished run"
    );
    assert!(history.iter().all(|r| r.status == RunStatus::Ok));
}
