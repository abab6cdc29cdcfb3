//! The job runner and its jobs, in-process, on both stores (River-style: one suite, every
//! backend): expire, archive and restore, dry runs, one run per tick, the overlap guards,
//! catch-up and graceful stop, capacity alerts delivered to a real HTTP receiver; forgetting
//! archived and exported memories (`jobs/forget.rs`).

use crate::common;
mod distill;
mod forget;
mod integrity;

pub use distill::*;
pub use forget::*;
pub use integrity::*;

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration as StdDuration;

use async_trait::async_trait;
use axum::Json;
use axum::extract::State;
use axum::routing::post;
use chrono::{DateTime, Duration, Utc};
use hindsight::domain::{
    Content, Importance, Memory, MemoryId, MemoryType, Namespace, NewMemory, Status,
};
use hindsight::embed::{BuiltinEmbedder, Embedder};
use hindsight::jobs::{
    ConfiguredJob, Engine, Job, JobContext, JobError, JobSettings, JobStats, Runner, TickOutcome,
};
use hindsight::metrics::Metrics;
use hindsight::service::{MemoryService, Rules, SearchRequest};
use hindsight::store::{
    CandidateStatus, Database, DistillMethod, MemoryStore, PoolSize, PostgresStore,
    RestoreSelector, Review, RunStatus, SqliteStore,
};
use serde_json::{Value, json};
use tokio::sync::Notify;

/// Fields drop in order: the service (and its index) before the directories under it.
pub struct Fixture {
    service: Arc<MemoryService>,
    db: Arc<dyn Database>,
    dir: tempfile::TempDir,
    _guard: Box<dyn Send>,
    /// PostgreSQL: the test database's URL (for a second replica's pool).
    url: Option<String>,
    /// SQLite: the database file.
    sqlite_path: Option<std::path::PathBuf>,
}

impl Fixture {
    async fn new(
        db: Arc<dyn Database>,
        guard: Box<dyn Send>,
        url: Option<String>,
        sqlite_path: Option<std::path::PathBuf>,
    ) -> Self {
        let dir = tempfile::tempdir().unwrap();
        let embedder: Arc<dyn Embedder> = Arc::new(BuiltinEmbedder::new());
        let index = common::open_index(dir.path(), embedder.dimension()).await;
        let store: Arc<dyn MemoryStore> = db.clone();
        let service = MemoryService::start(store, index, embedder, Rules::default())
            .await
            .unwrap();
        Self {
            _guard: guard,
            url,
            sqlite_path,
            dir,
            service: Arc::new(service),
            db,
        }
    }

    /// A runner with `jobs` (name, job, batch size), each on a never-firing test schedule.
    fn runner(&self, jobs: Vec<(&str, Arc<dyn Job>, usize)>) -> Arc<Runner> {
        let jobs = jobs
            .into_iter()
            .map(|(name, job, batch)| {
                let mut settings =
                    JobSettings::defaults(self.dir.path(), name, "0 0 0 1 1 * 2099").unwrap();
                settings.batch_size = batch;
                ConfiguredJob { settings, job }
            })
            .collect();
        Runner::new(
            jobs,
            self.service.clone(),
            self.db.clone(),
            true,
            self.service.metrics().clone(),
        )
    }

    /// A row written straight to the store (any age, any expiry), then indexed.
    async fn seed(
        &self,
        content: &str,
        age: Duration,
        expires_in: Option<Duration>,
        accesses: i64,
    ) -> Memory {
        self.seed_about(content, age, expires_in, accesses, None)
            .await
    }

    /// `seed`, with the memory about `entity`.
    async fn seed_about(
        &self,
        content: &str,
        age: Duration,
        expires_in: Option<Duration>,
        accesses: i64,
        entity: Option<&str>,
    ) -> Memory {
        let now = Utc::now();
        let embedding = self
            .service
            .embedder()
            .embed(&[content.to_owned()])
            .await
            .unwrap()
            .remove(0);
        let mut memory = NewMemory {
            id: uuid::Uuid::now_v7(),
            namespace: Namespace::parse("jobs").unwrap(),
            memory_type: MemoryType::Episodic,
            content: Content::parse(content, 1000).unwrap(),
            importance: Importance::parse(0.5).unwrap(),
            entity: entity.map(str::to_owned),
            attribute: None,
            source: json!({"test": true}),
            metadata: json!({}),
            created_at: now - age,
            occurred_at: now - age,
            expires_at: expires_in.map(|d| now + d),
            embedding_model: self.service.embedder().id().to_owned(),
            embedding,
        }
        .into_memory();
        memory.access_count = accesses;
        self.db.insert(&memory).await.unwrap();
        memory
    }

    async fn search_ids(&self, query: &str) -> Vec<MemoryId> {
        let result = self
            .service
            .search(&SearchRequest {
                query: query.to_owned(),
                namespace: Some("jobs".into()),
                top_k: Some(20),
                ..SearchRequest::default()
            })
            .await
            .unwrap();
        result.memories.into_iter().map(|h| h.id).collect()
    }
}

fn ran(outcome: TickOutcome) -> (i64, RunStatus, JobStats) {
    match outcome {
        TickOutcome::Ran {
            run,
            status,
            mut stats,
            error,
        } => {
            if let Some(error) = error {
                stats.details.insert("error".into(), json!(error));
            }
            (run, status, stats)
        }
        TickOutcome::Skipped(reason) => panic!("expected a run, skipped: {reason}"),
    }
}

/// Job `name` as `dir` configures it, after writing `dir/<name>.toml` when `text` is given.
fn load_job(dir: &std::path::Path, name: &str, text: Option<&str>) -> ConfiguredJob {
    if let Some(text) = text {
        std::fs::write(dir.join(format!("{name}.toml")), text).unwrap();
    }
    hindsight::jobs::load_jobs(dir, &hindsight::jobs::JobEnv::default())
        .unwrap()
        .into_iter()
        .find(|j| j.settings.name == name)
        .unwrap()
}

/// Job `name` as the repository's `jobs/` ships it.
fn job(name: &str) -> Arc<dyn Job> {
    let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("jobs");
    load_job(&dir, name, None).job
}

pub async fn expire_expires_due_rows_in_batches_and_drops_their_points(f: Fixture) {
    let mut due = Vec::new();
    for i in 0..5 {
        due.push(
            f.seed(
                &format!("scratch note {i}"),
                Duration::hours(2),
                Some(Duration::seconds(-10)),
                0,
            )
            .await,
        );
    }
    let later = f
        .seed("kept note", Duration::hours(2), Some(Duration::days(1)), 0)
        .await;
    f.service.repair_index().await.unwrap();
    let points_before = f.service.index().count().await.unwrap();
    let runner = f.runner(vec![("expire", job("expire"), 2)]);

    let (_, status, dry) = ran(runner.run_now("expire", true, None).await.unwrap());
    assert_eq!(status, RunStatus::Ok);
    assert!(dry.dry_run);
    assert_eq!(dry.examined, 5);
    assert_eq!(dry.changed, 0);
    assert_eq!(dry.details["would_expire"].as_array().unwrap().len(), 5);
    assert_eq!(
        f.db.count_expire_due(Utc::now()).await.unwrap(),
        5,
        "a dry run changes nothing"
    );
    assert!(
        f.db.history(Some("expire"), 10).await.unwrap().is_empty(),
        "a dry run is not recorded"
    );

    let (run, status, stats) = ran(runner.run_now("expire", false, None).await.unwrap());
    assert_eq!(status, RunStatus::Ok);
    assert_eq!((stats.changed, stats.batches), (5, 3), "batches of 2");
    for m in &due {
        assert_eq!(
            f.db.get(m.id).await.unwrap().unwrap().status,
            Status::Expired
        );
    }
    assert_eq!(
        f.db.get(later.id).await.unwrap().unwrap().status,
        Status::Active
    );
    assert_eq!(f.service.index().count().await.unwrap(), points_before - 5);
    f.service.flush().await.unwrap();
    assert!(f.db.index_pending(10).await.unwrap().is_empty());
    let history = f.db.history(Some("expire"), 10).await.unwrap();
    assert_eq!(history.len(), 1);
    assert_eq!(history[0].id, run);
    assert_eq!(history[0].status, RunStatus::Ok);
    assert_eq!(history[0].stats["changed"], json!(5));

    // Idempotent: nothing left to do.
    let (_, _, again) = ran(runner.run_now("expire", false, None).await.unwrap());
    assert_eq!(again.changed, 0);
}

pub async fn archive_takes_cold_rows_out_of_search_and_restore_brings_them_back(f: Fixture) {
    let cold = f
        .seed(
            "quarterly zebra census results",
            Duration::days(120),
            None,
            0,
        )
        .await;
    let popular = f
        .seed("zebra feeding schedule", Duration::days(120), None, 5)
        .await;
    let young = f
        .seed("zebra sighting today", Duration::days(3), None, 0)
        .await;
    f.service.repair_index().await.unwrap();
    assert!(f.search_ids("zebra census").await.contains(&cold.id));
    let runner = f.runner(vec![("archive", job("archive"), 1000)]);

    let (_, _, dry) = ran(runner.run_now("archive", true, None).await.unwrap());
    assert_eq!(dry.examined, 1);
    assert_eq!(dry.details["would_archive"], json!([cold.id]));
    assert_eq!(
        f.db.count_archived().await.unwrap(),
        0,
        "a dry run changes nothing"
    );

    let (_, status, stats) = ran(runner.run_now("archive", false, None).await.unwrap());
    assert_eq!(status, RunStatus::Ok);
    assert_eq!(stats.changed, 1);
    assert_eq!(stats.details["sink"], json!("table"));
    assert_eq!(f.db.count_archived().await.unwrap(), 1);
    assert!(f.db.get(cold.id).await.unwrap().is_none());
    let found = f.search_ids("zebra census").await;
    assert!(
        !found.contains(&cold.id),
        "archived rows are never returned by search"
    );
    assert!(found.contains(&popular.id) && found.contains(&young.id));

    let report = hindsight::jobs::archive::restore(
        &f.service,
        f.db.as_ref(),
        &hindsight::jobs::archive::Sink::Table,
        &RestoreSelector::Ids(vec![cold.id]),
    )
    .await
    .unwrap();
    assert_eq!(report.restored, 1);
    assert!(report.indexed >= 1);
    assert_eq!(f.db.count_archived().await.unwrap(), 0);
    assert!(f.search_ids("zebra census").await.contains(&cold.id));
}

/// Several workers moving small batches at once (SKIP LOCKED on PostgreSQL, the one writer on
/// SQLite): every cold row is archived exactly once, nothing else moves.
pub async fn archive_workers_move_every_cold_row_exactly_once(f: Fixture) {
    let mut cold = Vec::new();
    for i in 0..60 {
        let memory = f
            .seed(
                &format!("old ledger entry {i}"),
                Duration::days(100),
                None,
                0,
            )
            .await;
        cold.push(memory.id);
    }
    let hot = f
        .seed("fresh ledger entry", Duration::days(1), None, 0)
        .await;
    let config = tempfile::tempdir().unwrap();
    let archive = load_job(
        config.path(),
        "archive",
        Some("cron = \"0 30 3 * * *\"\n[params]\nworkers = 3\n"),
    );
    let runner = f.runner(vec![("archive", archive.job, 7)]);
    let (_, status, stats) = ran(runner.run_now("archive", false, None).await.unwrap());
    assert_eq!(status, RunStatus::Ok);
    assert_eq!(stats.changed, 60);
    assert!(stats.batches >= 9, "60 rows in batches of 7: {stats:?}");
    assert_eq!(f.db.count_archived().await.unwrap(), 60);
    let archived = f.db.archived_rows(&cold).await.unwrap();
    let mut ids: Vec<_> = archived.iter().map(|row| row.memory.id).collect();
    ids.sort();
    let mut expected = cold.clone();
    expected.sort();
    assert_eq!(
        ids, expected,
        "each cold row archived once, with its vector"
    );
    assert!(archived.iter().all(|row| !row.embedding.is_empty()));
    assert!(f.db.get_many(&cold).await.unwrap().is_empty());
    assert!(f.db.get(hot.id).await.unwrap().is_some());
}

/// The archive job with the object sink at `url` (and the sink itself, for restores).
fn object_archive(
    dir: &std::path::Path,
    url: &str,
) -> (Arc<dyn Job>, hindsight::jobs::archive::Sink) {
    let archive = load_job(
        dir,
        "archive",
        Some(&format!(
            "cron = \"0 30 3 * * *\"\n[params]\nsink = \"object\"\nobject_url = \"{url}\"\n"
        )),
    );
    let sink = hindsight::jobs::archive::sink(&archive.settings).unwrap();
    (archive.job, sink)
}

/// Archive to objects at `url`, check what they hold, restore some by id and a namespace.
async fn archive_to_objects_and_back(f: &Fixture, url: &str) {
    let mut cold = Vec::new();
    for i in 0..5 {
        cold.push(
            f.seed(
                &format!("old giraffe observation {i}"),
                Duration::days(100 + i),
                None,
                0,
            )
            .await,
        );
    }
    let keep = f
        .seed("giraffe seen yesterday", Duration::days(1), None, 0)
        .await;
    f.service.repair_index().await.unwrap();
    let config = tempfile::tempdir().unwrap();
    let (job, sink) = object_archive(config.path(), url);
    let runner = f.runner(vec![("archive", job, 2)]);

    let (_, status, stats) = ran(runner.run_now("archive", false, None).await.unwrap());
    assert_eq!(status, RunStatus::Ok, "{stats:?}");
    assert_eq!(stats.changed, 5);
    assert_eq!(stats.batches, 3, "batches of 2");
    assert_eq!(stats.details["sink"], json!("object"));
    assert_eq!(
        f.db.count_archived().await.unwrap(),
        0,
        "the rows live only in the objects"
    );
    let exported =
        f.db.batches(hindsight::store::BatchState::Exported, None)
            .await
            .unwrap();
    assert_eq!(exported.len(), 3);
    let hindsight::jobs::archive::Sink::Object(objects) = &sink else {
        panic!("object sink")
    };
    let mut in_objects = Vec::new();
    for batch in &exported {
        assert!(batch.key.starts_with("jobs/") && batch.key.ends_with(".jsonl.gz"));
        let rows = objects.read(&batch.key).await.unwrap();
        assert_eq!(
            rows.iter().map(|r| r.memory.id).collect::<Vec<_>>().len(),
            batch.ids.len()
        );
        for row in rows {
            let original = cold.iter().find(|m| m.id == row.memory.id).unwrap();
            assert_eq!(row.memory.content, original.content);
            assert_eq!(row.memory.status, Status::Archived);
            assert_eq!(
                row.embedding, original.embedding,
                "vectors kept: no re-embedding"
            );
            in_objects.push(row.memory.id);
        }
    }
    in_objects.sort();
    let mut expected: Vec<MemoryId> = cold.iter().map(|m| m.id).collect();
    expected.sort();
    assert_eq!(
        in_objects, expected,
        "each archived row in exactly one object"
    );
    assert!(f.db.get(keep.id).await.unwrap().is_some());
    assert!(
        !f.search_ids("giraffe observation")
            .await
            .contains(&cold[0].id)
    );

    // By id: only that row comes back; by namespace: the rest.
    let report = hindsight::jobs::archive::restore(
        &f.service,
        f.db.as_ref(),
        &sink,
        &RestoreSelector::Ids(vec![cold[2].id]),
    )
    .await
    .unwrap();
    assert_eq!(report.restored, 1);
    assert_eq!(
        f.db.get(cold[2].id).await.unwrap().unwrap().content,
        cold[2].content
    );
    assert!(f.db.get(cold[3].id).await.unwrap().is_none());
    assert!(
        f.search_ids("giraffe observation")
            .await
            .contains(&cold[2].id)
    );
    let report = hindsight::jobs::archive::restore(
        &f.service,
        f.db.as_ref(),
        &sink,
        &RestoreSelector::Namespace("jobs".into()),
    )
    .await
    .unwrap();
    assert_eq!(report.restored, 4, "the rest, and not the one already back");
    assert!(report.skipped.is_empty());
    for m in &cold {
        assert_eq!(
            f.db.get(m.id).await.unwrap().unwrap().status,
            Status::Active
        );
    }
    assert_eq!(f.db.count_archived().await.unwrap(), 0);
    assert!(
        f.db.batches(hindsight::store::BatchState::Exported, None)
            .await
            .unwrap()
            .is_empty(),
        "fully restored objects are marked restored"
    );
}

pub async fn archive_to_a_local_directory_and_back(f: Fixture) {
    let objects = tempfile::tempdir().unwrap();
    archive_to_objects_and_back(&f, &format!("file://{}", objects.path().display())).await;
}

/// A job that blocks until released, counting its runs.
struct Gate {
    started: Notify,
    release: Notify,
    runs: AtomicUsize,
    saw_cancel: AtomicUsize,
}

impl Gate {
    fn new() -> Arc<Self> {
        Arc::new(Self {
            started: Notify::new(),
            release: Notify::new(),
            runs: AtomicUsize::new(0),
            saw_cancel: AtomicUsize::new(0),
        })
    }
}

#[async_trait]
impl Job for Gate {
    async fn run(&self, ctx: &JobContext) -> Result<JobStats, JobError> {
        self.runs.fetch_add(1, Ordering::SeqCst);
        self.started.notify_one();
        self.release.notified().await;
        if ctx.cancel.is_cancelled() {
            self.saw_cancel.fetch_add(1, Ordering::SeqCst);
        }
        Ok(JobStats {
            changed: 1,
            stopped_early: ctx.cancel.is_cancelled(),
            ..JobStats::default()
        })
    }
}

fn tick(n: i64) -> DateTime<Utc> {
    DateTime::parse_from_rfc3339("2026-06-01T00:00:00Z")
        .unwrap()
        .to_utc()
        + Duration::seconds(n)
}

pub async fn one_run_per_tick_and_never_two_at_once(f: Fixture) {
    let gate = Gate::new();
    let runner = f.runner(vec![("gate", gate.clone() as Arc<dyn Job>, 10)]);
    let first = tokio::spawn({
        let runner = runner.clone();
        async move { runner.tick("gate", tick(0)).await.unwrap() }
    });
    gate.started.notified().await;
    assert_eq!(
        runner.tick("gate", tick(1)).await.unwrap(),
        TickOutcome::Skipped("previous run still going")
    );
    assert!(matches!(
        runner.run_now("gate", false, None).await,
        Err(JobError::Busy(_))
    ));
    gate.release.notify_one();
    let (_, status, _) = ran(first.await.unwrap());
    assert_eq!(status, RunStatus::Ok);

    // The same tick again (a second replica, or a retry): claimed already.
    assert_eq!(
        runner.tick("gate", tick(0)).await.unwrap(),
        TickOutcome::Skipped("tick claimed by another replica")
    );
    assert_eq!(gate.runs.load(Ordering::SeqCst), 1);
    assert!(matches!(
        runner.tick("nope", tick(0)).await,
        Err(JobError::Unknown(..))
    ));
    let history = f.db.history(Some("gate"), 10).await.unwrap();
    assert_eq!(history.len(), 1);
    assert_eq!(history[0].scheduled_for, tick(0));
}

pub async fn a_failed_run_is_recorded_with_its_error(f: Fixture) {
    struct Broken;
    #[async_trait]
    impl Job for Broken {
        async fn run(&self, _: &JobContext) -> Result<JobStats, JobError> {
            Err(JobError::Busy("downstream".into()))
        }
    }
    let runner = f.runner(vec![("broken", Arc::new(Broken) as Arc<dyn Job>, 10)]);
    let outcome = runner.tick("broken", tick(0)).await.unwrap();
    let TickOutcome::Ran { status, error, .. } = outcome else {
        panic!("{outcome:?}")
    };
    assert_eq!(status, RunStatus::Failed);
    assert!(error.unwrap().contains("downstream"));
    let history = f.db.history(Some("broken"), 1).await.unwrap();
    assert_eq!(history[0].status, RunStatus::Failed);
    assert!(history[0].error.as_deref().unwrap().contains("downstream"));
    assert_eq!(f.db.last_success("broken").await.unwrap(), None);
}

pub async fn start_catches_up_once_and_stop_waits_for_the_running_batch(f: Fixture) {
    // A daily job that never succeeded: the engine runs its latest tick once at start.
    let gate = Gate::new();
    let mut settings = JobSettings::defaults(f.dir.path(), "gate", "0 30 3 * * *").unwrap();
    settings.batch_size = 10;
    let runner = Runner::new(
        vec![ConfiguredJob {
            settings: settings.clone(),
            job: gate.clone(),
        }],
        f.service.clone(),
        f.db.clone(),
        true,
        Arc::new(Metrics::new()),
    );
    let engine = Engine::start(runner).await.unwrap();
    tokio::time::timeout(StdDuration::from_secs(10), gate.started.notified())
        .await
        .expect("the missed tick runs at start");
    // Stop while it runs: stop waits for it, and the job sees the stop.
    let stopping = tokio::spawn(engine.shutdown(StdDuration::from_secs(10)));
    tokio::time::sleep(StdDuration::from_millis(300)).await;
    assert!(
        !stopping.is_finished(),
        "shutdown waits for the running job"
    );
    gate.release.notify_one();
    tokio::time::timeout(StdDuration::from_secs(10), stopping)
        .await
        .expect("shutdown returns once the job ends")
        .unwrap();
    assert_eq!(gate.saw_cancel.load(Ordering::SeqCst), 1);
    let history = f.db.history(Some("gate"), 10).await.unwrap();
    assert_eq!(history.len(), 1);
    assert_eq!(history[0].status, RunStatus::Ok);
    assert_eq!(history[0].stats["stopped_early"], json!(true));
    let latest = settings.schedule.latest_at_or_before(Utc::now()).unwrap();
    assert_eq!(history[0].scheduled_for, latest);

    // Started again with that success on record: nothing to catch up.
    let runner = Runner::new(
        vec![ConfiguredJob {
            settings,
            job: gate.clone(),
        }],
        f.service.clone(),
        f.db.clone(),
        true,
        Arc::new(Metrics::new()),
    );
    let engine = Engine::start(runner).await.unwrap();
    tokio::time::sleep(StdDuration::from_millis(1500)).await;
    engine.shutdown(StdDuration::from_secs(5)).await;
    assert_eq!(
        gate.runs.load(Ordering::SeqCst),
        1,
        "no second catch-up run"
    );
}

/// Records every POST body it receives, by path; answers `status`.
#[derive(Clone, Default)]
struct Receiver {
    bodies: Arc<std::sync::Mutex<Vec<(String, Value)>>>,
    fail: Arc<std::sync::atomic::AtomicBool>,
}

impl Receiver {
    async fn start(&self) -> String {
        async fn record(
            State(r): State<Receiver>,
            uri: axum::http::Uri,
            Json(body): Json<Value>,
        ) -> axum::http::StatusCode {
            r.bodies.lock().unwrap().push((uri.path().to_owned(), body));
            if r.fail.load(Ordering::SeqCst) {
                axum::http::StatusCode::INTERNAL_SERVER_ERROR
            } else {
                axum::http::StatusCode::OK
            }
        }
        let app = axum::Router::new()
            .route("/api/v2/alerts", post(record))
            .route("/hook", post(record))
            .with_state(self.clone());
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let addr = listener.local_addr().unwrap();
        tokio::spawn(async move { axum::serve(listener, app).await });
        format!("http://{addr}")
    }

    fn take(&self) -> Vec<(String, Value)> {
        std::mem::take(&mut *self.bodies.lock().unwrap())
    }
}

fn capacity_job(dir: &std::path::Path, base: &str) -> Arc<dyn Job> {
    let text = format!(
        "cron = \"0 */5 * * * *\"\n[params]\nmax_total = 4\nwarn_ratio = 0.5\n\
         alertmanager_url = \"{base}\"\nwebhook_url = \"{base}/hook\"\n"
    );
    load_job(dir, "capacity", Some(&text)).job
}

fn alert_labels(body: &Value) -> Vec<(String, String, bool)> {
    let now = Utc::now();
    body.as_array()
        .unwrap()
        .iter()
        .map(|a| {
            assert_eq!(a["labels"]["alertname"], json!("HindsightMemoryCapacity"));
            let ends = DateTime::parse_from_rfc3339(a["endsAt"].as_str().unwrap()).unwrap();
            (
                a["labels"]["namespace"].as_str().unwrap().to_owned(),
                a["labels"]["severity"].as_str().unwrap().to_owned(),
                ends > now, // firing (ends later) or resolved (ended)
            )
        })
        .collect()
}

pub async fn capacity_alerts_fire_escalate_and_resolve(f: Fixture) {
    let receiver = Receiver::default();
    let base = receiver.start().await;
    let config = tempfile::tempdir().unwrap();
    let runner = f.runner(vec![("capacity", capacity_job(config.path(), &base), 1000)]);
    let mut rows = Vec::new();
    for i in 0..3 {
        rows.push(
            f.seed(&format!("row {i}"), Duration::hours(1), None, 0)
                .await,
        );
    }

    // 3 of 4: over 50 %, a warning fires, to both receivers.
    ran(runner.run_now("capacity", false, None).await.unwrap());
    let got = receiver.take();
    assert_eq!(got.len(), 2, "{got:?}");
    assert_eq!(got[0].0, "/api/v2/alerts");
    assert_eq!(
        alert_labels(&got[0].1),
        vec![("_all".into(), "warning".into(), true)]
    );
    assert_eq!(got[1].0, "/hook");
    assert_eq!(got[1].1["firing"][0]["severity"], json!("warning"));
    assert_eq!(got[1].1["firing"][0]["count"], json!(3));

    // 5 of 4: critical fires, the warning resolves.
    for i in 3..5 {
        rows.push(
            f.seed(&format!("row {i}"), Duration::hours(1), None, 0)
                .await,
        );
    }
    ran(runner.run_now("capacity", false, None).await.unwrap());
    let got = receiver.take();
    assert_eq!(
        alert_labels(&got[0].1),
        vec![
            ("_all".into(), "critical".into(), true),
            ("_all".into(), "warning".into(), false)
        ]
    );
    // Still over: re-sent while firing.
    ran(runner.run_now("capacity", false, None).await.unwrap());
    assert_eq!(
        alert_labels(&receiver.take()[0].1),
        vec![("_all".into(), "critical".into(), true)]
    );

    // Back under, but the receiver is down: the run fails and the resolve is retried.
    let store: &dyn MemoryStore = f.db.as_ref();
    for m in &rows[..4] {
        store
            .forget(
                &hindsight::store::ForgetSelector::Id(m.id),
                true,
                Utc::now(),
            )
            .await
            .unwrap();
    }
    receiver.fail.store(true, Ordering::SeqCst);
    let (_, status, _) = ran(runner.run_now("capacity", false, None).await.unwrap());
    assert_eq!(status, RunStatus::Failed);
    receiver.take();
    receiver.fail.store(false, Ordering::SeqCst);
    ran(runner.run_now("capacity", false, None).await.unwrap());
    let got = receiver.take();
    assert_eq!(
        alert_labels(&got[0].1),
        vec![("_all".into(), "critical".into(), false)]
    );
    assert_eq!(got[1].1["resolved"][0]["severity"], json!("critical"));
    // Nothing firing, nothing resolved: silence.
    ran(runner.run_now("capacity", false, None).await.unwrap());
    assert!(receiver.take().is_empty());
}

pub async fn capacity_eviction_archives_the_lowest_ranked_until_under_the_limit(f: Fixture) {
    let config = tempfile::tempdir().unwrap();
    let job = load_job(
        config.path(),
        "capacity",
        Some("cron = \"0 */5 * * * *\"\n[params]\nmax_total = 4\nevict = true\n"),
    )
    .job;
    let runner = f.runner(vec![("capacity", job, 2)]);
    // Same importance; recency decides: the three oldest rank lowest.
    let mut rows = Vec::new();
    for days in [80, 100, 1, 90, 5, 3] {
        rows.push(
            f.seed(&format!("{days} days old"), Duration::days(days), None, 0)
                .await,
        );
    }
    f.service.repair_index().await.unwrap();
    let lowest = vec![rows[1].id, rows[3].id, rows[0].id];

    let (_, _, dry) = ran(runner.run_now("capacity", true, None).await.unwrap());
    assert_eq!(
        dry.details["would_evict"],
        json!(3),
        "6 active, limit 4: down to 3"
    );
    assert_eq!(
        dry.details["evict_sample"],
        json!(lowest),
        "lowest ranked first"
    );
    assert_eq!(
        f.db.count_archived().await.unwrap(),
        0,
        "a dry run changes nothing"
    );

    let (_, status, stats) = ran(runner.run_now("capacity", false, None).await.unwrap());
    assert_eq!(status, RunStatus::Ok);
    assert_eq!(stats.details["evicted"], json!(3));
    assert_eq!(stats.changed, 3);
    assert_eq!(
        stats.details["active_total"],
        json!(3),
        "counted after the eviction"
    );
    for m in &rows {
        let evicted = lowest.contains(&m.id);
        assert_eq!(
            f.db.get(m.id).await.unwrap().is_none(),
            evicted,
            "{}",
            m.content
        );
    }
    assert_eq!(
        f.db.count_archived().await.unwrap(),
        3,
        "evicted rows are restorable"
    );
    // Under the limit now: nothing more to do.
    let (_, _, again) = ran(runner.run_now("capacity", false, None).await.unwrap());
    assert_eq!(again.details["evicted"], json!(0));
}

macro_rules! jobs_suite {
    ($backend:ident, $open:expr, $attrs:tt) => {
        mod $backend {
            use super::*;
            jobs_suite!(@tests $open, $attrs;
                a_candidate_that_corrects_a_memory_says_so_before_approval,
                expire_expires_due_rows_in_batches_and_drops_their_points,
                archive_takes_cold_rows_out_of_search_and_restore_brings_them_back,
                archive_workers_move_every_cold_row_exactly_once,
                distill_turns_repeated_episodes_into_candidates_once,
                distill_drafts_with_a_language_model_and_survives_its_failures,
                distill_budget_dedup_against_memories_and_auto_approve,
                candidates_are_approved_through_the_write_path_and_rejected_with_a_note,
                distill_stops_without_waiting_for_the_model,
                distill_refuses_drafts_that_do_not_rest_on_their_episodes,
                distill_refuses_a_draft_citing_an_episode_that_does_not_support_it,
                distill_refuses_to_run_after_an_embedder_change,
                distill_stops_calling_an_unreachable_model,
                one_run_per_tick_and_never_two_at_once,
                a_failed_run_is_recorded_with_its_error,
                start_catches_up_once_and_stop_waits_for_the_running_batch,
                capacity_alerts_fire_escalate_and_resolve,
                archive_to_a_local_directory_and_back,
                forget_reaches_archived_rows_and_restore_never_brings_them_back,
                forget_reaches_exported_objects_and_purge_rewrites_them,
                a_killed_writes_staging_files_are_removed_by_the_next_run,
                capacity_eviction_archives_the_lowest_ranked_until_under_the_limit,
                tampered_rows_are_never_served_and_are_alerted,
                archived_rows_keep_their_signatures,
            );
        }
    };
    (@tests $open:expr, $attrs:tt; $($test:ident),* $(,)?) => {
        $( jobs_suite!(@one $attrs, $open, $test); )*
    };
    (@one [$($attr:tt)*], $open:expr, $test:ident) => {
        #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
        $($attr)*
        async fn $test() {
            super::$test($open.await).await;
        }
    };
}

async fn sqlite() -> Fixture {
    let dir = tempfile::tempdir().unwrap();
    let db = SqliteStore::open(&dir.path().join("hindsight.db"), common::signer(dir.path()))
        .await
        .unwrap();
    let path = dir.path().join("hindsight.db");
    Fixture::new(Arc::new(db), Box::new(dir), None, Some(path)).await
}

async fn postgres() -> Fixture {
    let database = common::pg::TestDatabase::create().await;
    let db = PostgresStore::connect(
        &database.url,
        PoolSize { min: 1, max: 8 },
        common::test_signer(),
    )
    .await
    .unwrap();
    let url = database.url.clone();
    Fixture::new(Arc::new(db), Box::new(database), Some(url), None).await
}

jobs_suite!(sqlite_backend, sqlite(), []);
jobs_suite!(postgres_backend, postgres(), [#[ignore = "needs PostgreSQL (HINDSIGHT_TEST_POSTGRES_URL, default 127.0.0.1:5432): full tier"]]);

/// Two replicas on one PostgreSQL database: while one runs a job, the other's tick of the same
/// job is skipped (the database lock), and the same tick is never run twice (the claim).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
#[ignore = "needs PostgreSQL (HINDSIGHT_TEST_POSTGRES_URL, default 127.0.0.1:5432): full tier"]
async fn postgres_replicas_never_run_one_job_twice_at_once() {
    let f = postgres().await;
    let gate = Gate::new();
    let one = f.runner(vec![("gate", gate.clone() as Arc<dyn Job>, 10)]);
    // The second replica: its own pool on the same database.
    let other_db: Arc<dyn Database> = Arc::new(
        PostgresStore::connect(
            f.url.as_deref().unwrap(),
            PoolSize { min: 1, max: 4 },
            common::test_signer(),
        )
        .await
        .unwrap(),
    );
    let other = Runner::new(
        vec![ConfiguredJob {
            settings: JobSettings::defaults(f.dir.path(), "gate", "0 0 0 1 1 * 2099").unwrap(),
            job: gate.clone(),
        }],
        f.service.clone(),
        other_db,
        false,
        Arc::new(Metrics::new()),
    );
    let first = tokio::spawn({
        let one = one.clone();
        async move { one.tick("gate", tick(0)).await.unwrap() }
    });
    gate.started.notified().await;
    assert_eq!(
        other.tick("gate", tick(1)).await.unwrap(),
        TickOutcome::Skipped("running on another replica")
    );
    gate.release.notify_one();
    ran(first.await.unwrap());
    assert_eq!(
        other.tick("gate", tick(0)).await.unwrap(),
        TickOutcome::Skipped("tick claimed by another replica")
    );
    let outcome = other.tick("gate", tick(1));
    let release = async {
        gate.started.notified().await;
        gate.release.notify_one();
    };
    let (outcome, ()) = tokio::join!(outcome, release);
    ran(outcome.unwrap());
    assert_eq!(gate.runs.load(Ordering::SeqCst), 2);
}

#[test]
fn every_suite_function_runs_on_every_backend() {
    common::assert_suite_lists_every_function(
        "jobs_suite",
        "jobs.rs",
        &[
            "jobs.rs",
            "jobs/distill.rs",
            "jobs/forget.rs",
            "jobs/integrity.rs",
        ],
        "f: Fixture",
    );
}
