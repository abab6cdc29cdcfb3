//! The jobs in the real daemon: a bad job file fails start; scheduled runs, `/metrics`, the
//! CLI through the daemon, and a clean stop; crash safety under repeated SIGKILL (both stores);
//! and two replica processes sharing one PostgreSQL database tick by tick.

use crate::common;

use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;
use std::sync::Arc;
use std::time::Duration as StdDuration;

use chrono::{Duration, Utc};
use common::Daemon;
use hindsight::domain::{Content, Importance, MemoryType, Namespace, NewMemory};
use hindsight::embed::{BuiltinEmbedder, Embedder};
use hindsight::store::{
    Database, MaintenanceStore, MemoryStore, PoolSize, PostgresStore, SqliteStore,
};
use rand::Rng;
use serde_json::{Value, json};

fn write_jobs(dir: &Path, files: &[(&str, &str)]) {
    std::fs::create_dir_all(dir).unwrap();
    for (name, text) in files {
        std::fs::write(dir.join(format!("{name}.toml")), text).unwrap();
    }
}

/// `hindsight ARGS` with this data dir and jobs dir; (exit ok, stdout, stderr).
fn cli(data_dir: &Path, jobs_dir: &Path, args: &[&str]) -> (bool, String, String) {
    common::cli_with(data_dir, jobs_dir, &[], args)
}

#[test]
fn a_bad_job_file_fails_start_naming_the_file_and_the_key() {
    let data = tempfile::tempdir().unwrap();
    let jobs = tempfile::tempdir().unwrap();
    let cases = [
        (
            "archive",
            "cron = \"0 30 3 * * *\"\n[params]\nmin_age_days = -1\n",
            "params.min_age_days: must be an integer 0..=36500, got -1",
        ),
        (
            "capacity",
            "cron = \"0 * * * * *\"\n[params]\nalertmanager_url = \"am:9093\"\n",
            "params.alertmanager_url: must be an http(s) URL",
        ),
        ("expire", "cron = \"* * * * *\"\n", "expire.toml: cron:"),
        (
            "expier",
            "cron = \"0 * * * * *\"\n",
            "no job named \"expier\"",
        ),
    ];
    for (name, text, expected) in cases {
        for entry in std::fs::read_dir(jobs.path()).unwrap() {
            std::fs::remove_file(entry.unwrap().path()).unwrap();
        }
        write_jobs(jobs.path(), &[(name, text)]);
        let (ok, stdout, stderr) = cli(
            data.path(),
            jobs.path(),
            &["serve", "--listen", "127.0.0.1:0"],
        );
        assert!(!ok, "{name}: serve must refuse to start");
        assert!(stdout.is_empty());
        assert!(stderr.contains(&format!("{name}.toml")), "{stderr}");
        assert!(stderr.contains(expected), "{name}: {stderr}");
        assert!(
            !data.path().join("hindsight.db").exists(),
            "nothing is created before the configuration is known good"
        );
    }
}

async fn get_text(url: &str, token: Option<&str>) -> (u16, String) {
    let mut request = reqwest::Client::new().get(url);
    if let Some(token) = token {
        request = request.bearer_auth(token);
    }
    let response = request.send().await.unwrap();
    (response.status().as_u16(), response.text().await.unwrap())
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_daemon_runs_its_schedule_serves_metrics_and_stops_cleanly() {
    let data = tempfile::tempdir().unwrap();
    let jobs = tempfile::tempdir().unwrap();
    write_jobs(
        jobs.path(),
        &[
            ("expire", "cron = \"* * * * * *\"\n"),
            ("archive", "enabled = false\ncron = \"0 30 3 * * *\"\n"),
            (
                "capacity",
                "cron = \"0 0 * * * *\"\n[params]\nmax_total = 10\n",
            ),
        ],
    );
    // Written before the daemon starts: expires a moment later.
    let (ok, _, stderr) = cli(
        data.path(),
        jobs.path(),
        &[
            "memory",
            "write",
            "scratch: draft the intro",
            "--type",
            "working",
            "--ttl-days",
            "0.00002",
        ],
    );
    assert!(ok, "{stderr}");
    let jobs_dir = jobs.path().to_str().unwrap().to_owned();
    let daemon = Daemon::start(
        data.path(),
        &[
            ("HINDSIGHT_JOBS_DIR", &jobs_dir),
            ("HINDSIGHT_AUTH_TOKEN", "s3cret-token-for-tests"),
        ],
    )
    .await;
    let base = daemon.base_url();

    // The per-second expire job picks the row up. One scrape reads the memory counts from the
    // store before it reads the counters, so a run that commits in between shows the counter
    // without the count: wait for both.
    let expired_count =
        "hindsight_memories{namespace=\"default\",memory_type=\"working\",status=\"expired\"} 1";
    let mut metrics = String::new();
    for _ in 0..100 {
        metrics = get_text(&format!("{base}/metrics"), Some("s3cret-token-for-tests"))
            .await
            .1;
        if metrics.contains("hindsight_rows_expired_total 1") && metrics.contains(expired_count) {
            break;
        }
        tokio::time::sleep(StdDuration::from_millis(200)).await;
    }
    assert!(
        metrics.contains("hindsight_rows_expired_total 1"),
        "{metrics}"
    );
    assert!(
        metrics.contains("hindsight_job_runs_total{job=\"expire\",result=\"ok\"}"),
        "{metrics}"
    );
    assert!(
        metrics.contains("hindsight_job_duration_seconds_bucket{"),
        "{metrics}"
    );
    assert!(metrics.contains("hindsight_job_last_success_timestamp_seconds{job=\"expire\"}"));
    assert!(metrics.contains(expired_count), "{metrics}");
    // Behind the token like /mcp.
    assert_eq!(get_text(&format!("{base}/metrics"), None).await.0, 401);

    // The CLI goes through the daemon that owns the data dir.
    let (ok, stdout, stderr) = cli(data.path(), jobs.path(), &["jobs", "run", "capacity"]);
    assert!(ok, "{stderr}");
    let result: Value = serde_json::from_str(&stdout).unwrap();
    assert_eq!(result["status"], json!("ok"));
    assert_eq!(result["stats"]["active_total"], json!(0));
    let (ok, _, stderr) = cli(data.path(), jobs.path(), &["jobs", "run", "nope"]);
    assert!(!ok);
    assert!(stderr.contains("no job named \"nope\""), "{stderr}");
    let (ok, stdout, stderr) = cli(data.path(), jobs.path(), &["archive", "purge", "--dry-run"]);
    assert!(ok, "{stderr}");
    let purge: Value = serde_json::from_str(&stdout).unwrap();
    assert_eq!(
        (purge["dry_run"].clone(), purge["rows_removed"].clone()),
        (json!(true), json!(0)),
        "{purge}"
    );
    let (ok, stdout, _) = cli(data.path(), jobs.path(), &["jobs", "list"]);
    assert!(ok);
    let list: Value = serde_json::from_str(&stdout).unwrap();
    let expire = list
        .as_array()
        .unwrap()
        .iter()
        .find(|j| j["name"] == "expire")
        .unwrap();
    assert_eq!(expire["cron"], json!("* * * * * *"));
    assert_eq!(expire["last_run"]["status"], json!("ok"));
    let archive = list
        .as_array()
        .unwrap()
        .iter()
        .find(|j| j["name"] == "archive")
        .unwrap();
    assert_eq!(archive["enabled"], json!(false));
    assert_eq!(archive["next_run"], Value::Null);
    // MCP calls are counted and timed per tool.
    let client = common::http_client(&daemon.endpoint).await;
    common::call_ok(&client, "memory_search", json!({"query": "intro"})).await;
    let _ = client.cancel().await;
    let metrics = get_text(&format!("{base}/metrics"), Some("s3cret-token-for-tests"))
        .await
        .1;
    assert!(
        metrics.contains("hindsight_mcp_requests_total{tool=\"memory_search\",result=\"ok\"} 1"),
        "{metrics}"
    );
    assert!(
        metrics.contains("hindsight_mcp_request_duration_seconds_count{tool=\"memory_search\"} 1"),
        "{metrics}"
    );

    let status = daemon.stop().await;
    assert!(status.success(), "clean exit on SIGTERM: {status}");
    let (_, stdout, _) = cli(
        data.path(),
        jobs.path(),
        &["jobs", "history", "--limit", "1000"],
    );
    let history: Vec<Value> = serde_json::from_str(&stdout).unwrap();
    assert!(
        history
            .iter()
            .any(|r| r["job"] == "capacity" && r["node"].as_str().unwrap().ends_with("(manual)"))
    );
    assert!(
        history.iter().all(|r| r["status"] != "running"),
        "a clean stop leaves no run behind"
    );
    assert!(
        history.iter().all(|r| r["job"] != "archive"),
        "a disabled job never runs"
    );
}

/// The crash test's data: cold rows (to archive), due rows (to expire), live rows (to keep).
struct Seeded {
    cold: BTreeSet<String>,
    due: BTreeSet<String>,
    live: BTreeSet<String>,
    content: BTreeMap<String, String>,
}

async fn seed(db: &dyn Database, cold: usize, due: usize, live: usize) -> Seeded {
    let embedder = BuiltinEmbedder::new();
    let now = Utc::now();
    let mut seeded = Seeded {
        cold: BTreeSet::new(),
        due: BTreeSet::new(),
        live: BTreeSet::new(),
        content: BTreeMap::new(),
    };
    for i in 0..cold + due + live {
        let (kind, age, expires) = if i < cold {
            ("cold", Duration::days(200), None)
        } else if i < cold + due {
            ("due", Duration::hours(1), Some(now - Duration::minutes(1)))
        } else {
            ("live", Duration::hours(1), None)
        };
        let content = format!("{kind} memory number {i} about topic {}", i % 97);
        let memory = NewMemory {
            id: uuid::Uuid::now_v7(),
            namespace: Namespace::parse(&format!("ns-{}", i % 3)).unwrap(),
            memory_type: MemoryType::Episodic,
            content: Content::parse(&content, 1000).unwrap(),
            importance: Importance::parse(0.5).unwrap(),
            entity: None,
            attribute: None,
            source: json!({"seed": i}),
            metadata: json!({}),
            created_at: now - age,
            occurred_at: now - age,
            expires_at: expires,
            embedding_model: embedder.id().to_owned(),
            embedding: embedder
                .embed(std::slice::from_ref(&content))
                .await
                .unwrap()
                .remove(0),
        }
        .into_memory();
        db.insert(&memory).await.unwrap();
        let id = memory.id.to_string();
        match kind {
            "cold" => seeded.cold.insert(id.clone()),
            "due" => seeded.due.insert(id.clone()),
            _ => seeded.live.insert(id.clone()),
        };
        seeded.content.insert(id, content);
    }
    seeded
}

/// (id, status, content) of every row in `table`.
async fn rows(url: &str, table: &str) -> Vec<(String, String, String)> {
    let sql = format!("SELECT CAST(id AS TEXT), status, content FROM {table}");
    if url.starts_with("postgres") {
        let pool = sqlx::PgPool::connect(url).await.unwrap();
        let rows = sqlx::query_as(sqlx::AssertSqlSafe(sql))
            .fetch_all(&pool)
            .await
            .unwrap();
        pool.close().await;
        rows
    } else {
        let pool = sqlx::SqlitePool::connect(url).await.unwrap();
        let rows = sqlx::query_as(sqlx::AssertSqlSafe(sql))
            .fetch_all(&pool)
            .await
            .unwrap();
        pool.close().await;
        rows
    }
}

/// Every row the object sink wrote under `dir`: (id, status, content), and how many objects.
async fn rows_in_objects(dir: &Path) -> (Vec<(String, String, String)>, usize) {
    let sink = hindsight::jobs::archive::object::ObjectSink::from_url(&format!(
        "file://{}",
        dir.display()
    ))
    .unwrap();
    let mut rows = Vec::new();
    let mut objects = 0;
    for path in files_under(dir) {
        if path.to_string_lossy().ends_with(".jsonl.gz") {
            let key = path
                .strip_prefix(dir)
                .unwrap()
                .to_string_lossy()
                .into_owned();
            objects += 1;
            for row in sink.read(&key).await.unwrap() {
                rows.push((
                    row.memory.id.to_string(),
                    row.memory.status.as_str().to_owned(),
                    row.memory.content,
                ));
            }
        }
    }
    (rows, objects)
}

/// Every file below `dir`.
fn files_under(dir: &Path) -> Vec<std::path::PathBuf> {
    let mut files = Vec::new();
    let mut pending = vec![dir.to_path_buf()];
    while let Some(next) = pending.pop() {
        for entry in std::fs::read_dir(&next).unwrap() {
            let path = entry.unwrap().path();
            if path.is_dir() {
                pending.push(path);
            } else {
                files.push(path);
            }
        }
    }
    files
}

/// `hindsight jobs run` killed (SIGKILL) in the middle of a run, with no daemon to notice: the
/// run's heartbeat goes stale, and `jobs history` and `jobs list` apply the same rule the
/// daemon does (marked `interrupted` once the heartbeat is `STALE_AFTER` old); the next
/// in-process `jobs run` marks it at once, as the daemon does at start (it owns the data dir,
/// so no run it finds `running` can be alive).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn runs_killed_under_the_cli_are_marked_interrupted_without_a_daemon() {
    // A model that takes its time: the run is surely in the middle of a call when killed.
    let llm = common::openai::start(vec![]).await;
    llm.script.set_fallback(common::openai::Reply::Slow(
        StdDuration::from_secs(120),
        "[]".into(),
    ));
    let data = tempfile::tempdir().unwrap();
    let jobs = tempfile::tempdir().unwrap();
    let path = data.path().join("hindsight.db");
    let db = SqliteStore::open(&path, common::signer(data.path()))
        .await
        .unwrap();
    let embedder = BuiltinEmbedder::new();
    for i in 0..4 {
        let content = format!("the user asked for the weekly metrics digest by email (time {i})");
        let memory = NewMemory {
            id: uuid::Uuid::now_v7(),
            namespace: Namespace::parse("cli").unwrap(),
            memory_type: MemoryType::Episodic,
            content: Content::parse(&content, 1000).unwrap(),
            importance: Importance::parse(0.5).unwrap(),
            entity: None,
            attribute: None,
            source: json!(null),
            metadata: json!({}),
            created_at: Utc::now() - Duration::hours(1),
            occurred_at: Utc::now() - Duration::hours(1),
            expires_at: None,
            embedding_model: embedder.id().to_owned(),
            embedding: embedder.embed(&[content]).await.unwrap().remove(0),
        }
        .into_memory();
        db.insert(&memory).await.unwrap();
    }
    drop(db);
    let envs = [
        ("HINDSIGHT_LLM_BASE_URL", llm.base_url.as_str()),
        ("HINDSIGHT_LLM_MODEL", "scripted-model"),
    ];
    // Start `jobs run distill`, wait until its model call is in flight, SIGKILL it.
    let kill_mid_run = |calls_before: usize| {
        let mut child = std::process::Command::new(common::binary())
            .args(["jobs", "run", "distill", "--data-dir"])
            .arg(data.path())
            .env("HINDSIGHT_CONFIG", data.path().join("no-such-config.toml"))
            .env("HINDSIGHT_JOBS_DIR", jobs.path())
            .envs(envs)
            .stdout(std::process::Stdio::null())
            .spawn()
            .unwrap();
        let script = llm.script.clone();
        async move {
            for _ in 0..600 {
                if script.request_count() > calls_before {
                    break;
                }
                tokio::time::sleep(StdDuration::from_millis(50)).await;
            }
            assert!(
                script.request_count() > calls_before,
                "the run reached the model"
            );
            child.kill().unwrap();
            child.wait().unwrap();
        }
    };
    let history = || {
        let (ok, out, err) = cli(data.path(), jobs.path(), &["jobs", "history", "distill"]);
        assert!(ok, "{err}");
        serde_json::from_str::<Value>(&out).unwrap()
    };

    kill_mid_run(0).await;
    let runs = history();
    assert_eq!(
        runs[0]["status"],
        json!("running"),
        "fresh heartbeat: {runs}"
    );
    // A minute and more later (the heartbeat moved back, as time passing would leave it).
    let pool = sqlx::SqlitePool::connect(&format!("sqlite://{}", path.display()))
        .await
        .unwrap();
    sqlx::query("UPDATE job_runs SET heartbeat_at = heartbeat_at - 120000")
        .execute(&pool)
        .await
        .unwrap();
    let runs = history();
    assert_eq!(runs.as_array().unwrap().len(), 1);
    assert_eq!(runs[0]["status"], json!("interrupted"), "{runs}");
    let (ok, out, err) = cli(data.path(), jobs.path(), &["jobs", "list"]);
    assert!(ok, "{err}");
    let listed: Value = serde_json::from_str(&out).unwrap();
    let distill = listed
        .as_array()
        .unwrap()
        .iter()
        .find(|j| j["name"] == json!("distill"))
        .unwrap();
    assert_eq!(
        distill["last_run"]["status"],
        json!("interrupted"),
        "{distill}"
    );

    // Killed again; this time the next in-process run (another job) notices at once.
    kill_mid_run(llm.script.request_count()).await;
    assert_eq!(history()[0]["status"], json!("running"));
    let (ok, _, err) = cli(data.path(), jobs.path(), &["jobs", "run", "expire"]);
    assert!(ok, "{err}");
    let (ok, out, err) = cli(data.path(), jobs.path(), &["jobs", "history"]);
    assert!(ok, "{err}");
    let runs: Value = serde_json::from_str(&out).unwrap();
    let statuses: Vec<(&str, &str)> = runs
        .as_array()
        .unwrap()
        .iter()
        .map(|r| (r["job"].as_str().unwrap(), r["status"].as_str().unwrap()))
        .collect();
    assert_eq!(
        statuses,
        vec![
            ("expire", "ok"),
            ("distill", "interrupted"),
            ("distill", "interrupted")
        ]
    );
    pool.close().await;
}

/// Files under `dir` named like the local object store's staging files (`<key>#<n>`).
fn staging_files(dir: &Path) -> Vec<std::path::PathBuf> {
    files_under(dir)
        .into_iter()
        .filter(|path| {
            path.to_string_lossy()
                .rsplit_once('#')
                .is_some_and(|(_, n)| !n.is_empty() && n.bytes().all(|b| b.is_ascii_digit()))
        })
        .collect()
}

/// `objects`: archive to this directory (the object sink) instead of the table.
async fn crash_repeatedly_then_check(
    url: &str,
    db: Arc<dyn Database>,
    data: &Path,
    objects: Option<&Path>,
) {
    let seeded = seed(db.as_ref(), 8_000, 6_000, 6_000).await;
    let jobs = tempfile::tempdir().unwrap();
    let archive = match objects {
        None => "cron = \"* * * * * *\"\nbatch_size = 20\n".to_owned(),
        Some(dir) => format!(
            "cron = \"* * * * * *\"\nbatch_size = 20\n[params]\nsink = \"object\"\n\
             object_url = \"file://{}\"\n",
            dir.display()
        ),
    };
    // Small batches: many transactions per run, so the kills land mid-run.
    write_jobs(
        jobs.path(),
        &[
            ("expire", "cron = \"* * * * * *\"\nbatch_size = 20\n"),
            ("archive", &archive),
            ("capacity", "enabled = false\ncron = \"0 0 * * * *\"\n"),
        ],
    );
    let jobs_dir = jobs.path().to_str().unwrap().to_owned();
    let env = [
        ("HINDSIGHT_JOBS_DIR", jobs_dir.as_str()),
        ("HINDSIGHT_DATABASE_URL", url),
    ];
    let mut kills = 0;
    for round in 0..22 {
        let daemon = Daemon::start(data, &env).await;
        let wait = rand::rng().random_range(100..1_500);
        tokio::time::sleep(StdDuration::from_millis(wait)).await;
        daemon.crash().await;
        kills += 1;
        let left = db
            .count_cold(&hindsight::store::ColdRows {
                created_before: Utc::now() - Duration::days(90),
                max_access_count: 3,
            })
            .await
            .unwrap();
        eprintln!("crash round {round}: killed after {wait} ms, {left} cold rows left");
    }
    // Object writes the kills cut short leave staging files (`<key>#<n>`).
    let left_by_kills = objects.map(|dir| staging_files(dir).len()).unwrap_or(0);
    // A last clean run finishes what the kills left.
    let daemon = Daemon::start(data, &env).await;
    for _ in 0..600 {
        let cold = db
            .count_cold(&hindsight::store::ColdRows {
                created_before: Utc::now() - Duration::days(90),
                max_access_count: 3,
            })
            .await
            .unwrap();
        if cold == 0 && db.count_expire_due(Utc::now()).await.unwrap() == 0 {
            break;
        }
        tokio::time::sleep(StdDuration::from_millis(100)).await;
    }
    assert!(daemon.stop().await.success());
    if let Some(dir) = objects {
        eprintln!("{left_by_kills} staging files were left by the kills");
        assert!(
            staging_files(dir).is_empty(),
            "the runs after the kills removed every partial object"
        );
    }

    let live = rows(url, "memories").await;
    let mut archived = rows(url, "memories_archive").await;
    if let Some(dir) = objects {
        assert!(archived.is_empty(), "every staged batch was exported");
        let (in_objects, count) = rows_in_objects(dir).await;
        eprintln!("{} rows in {count} objects", in_objects.len());
        archived = in_objects;
    }
    let live_ids: BTreeSet<String> = live.iter().map(|r| r.0.clone()).collect();
    let archived_ids: BTreeSet<String> = archived.iter().map(|r| r.0.clone()).collect();
    assert_eq!(live_ids.len(), live.len(), "no row twice in memories");
    assert_eq!(
        archived_ids.len(),
        archived.len(),
        "no row twice in the archive"
    );
    assert!(
        live_ids.is_disjoint(&archived_ids),
        "nothing both live and archived"
    );
    let all: BTreeSet<String> = live_ids.union(&archived_ids).cloned().collect();
    let original: BTreeSet<String> = seeded.content.keys().cloned().collect();
    assert_eq!(all, original, "live ∪ archive is exactly the original set");
    assert_eq!(
        archived_ids, seeded.cold,
        "every cold row archived, nothing else"
    );
    for (id, status, content) in live.iter().chain(&archived) {
        assert_eq!(&seeded.content[id], content, "row {id} kept its content");
        let expected = if seeded.cold.contains(id) {
            "archived"
        } else if seeded.due.contains(id) {
            "expired"
        } else {
            "active"
        };
        assert_eq!(status, expected, "row {id}");
    }
    let history = db.history(None, 100_000).await.unwrap();
    let interrupted = history
        .iter()
        .filter(|r| r.status == hindsight::store::RunStatus::Interrupted)
        .count();
    assert!(
        history
            .iter()
            .all(|r| r.status != hindsight::store::RunStatus::Running),
        "every killed run is marked interrupted"
    );
    eprintln!(
        "{kills} kills, {} runs, {interrupted} interrupted",
        history.len()
    );
    assert!(interrupted >= 1, "the kills interrupted runs");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn sqlite_crash_safety_under_repeated_sigkill() {
    let data = tempfile::tempdir().unwrap();
    let path = data.path().join("hindsight.db");
    let db: Arc<dyn Database> = Arc::new(
        SqliteStore::open(&path, common::signer(data.path()))
            .await
            .unwrap(),
    );
    let url = format!("sqlite://{}", path.display());
    crash_repeatedly_then_check(&url, db.clone(), data.path(), None).await;
    // The full-text index followed every move.
    let pool = sqlx::SqlitePool::connect(&url).await.unwrap();
    sqlx::query("INSERT INTO memories_fts (memories_fts, rank) VALUES ('integrity-check', 1)")
        .execute(&pool)
        .await
        .expect("FTS5 index consistent with its rows");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
#[ignore = "needs PostgreSQL (HINDSIGHT_TEST_POSTGRES_URL, default 127.0.0.1:5432): full tier"]
async fn postgres_crash_safety_under_repeated_sigkill() {
    let database = common::pg::TestDatabase::create().await;
    let data = tempfile::tempdir().unwrap();
    let db: Arc<dyn Database> = Arc::new(
        PostgresStore::connect(
            &database.url,
            PoolSize { min: 1, max: 4 },
            common::signer(data.path()),
        )
        .await
        .unwrap(),
    );
    crash_repeatedly_then_check(&database.url, db, data.path(), None).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn sqlite_object_sink_crash_safety_under_repeated_sigkill() {
    let data = tempfile::tempdir().unwrap();
    let objects = tempfile::tempdir().unwrap();
    let path = data.path().join("hindsight.db");
    let db: Arc<dyn Database> = Arc::new(
        SqliteStore::open(&path, common::signer(data.path()))
            .await
            .unwrap(),
    );
    let url = format!("sqlite://{}", path.display());
    crash_repeatedly_then_check(&url, db, data.path(), Some(objects.path())).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
#[ignore = "needs PostgreSQL (HINDSIGHT_TEST_POSTGRES_URL, default 127.0.0.1:5432): full tier"]
async fn postgres_object_sink_crash_safety_under_repeated_sigkill() {
    let database = common::pg::TestDatabase::create().await;
    let data = tempfile::tempdir().unwrap();
    let objects = tempfile::tempdir().unwrap();
    let db: Arc<dyn Database> = Arc::new(
        PostgresStore::connect(
            &database.url,
            PoolSize { min: 1, max: 4 },
            common::signer(data.path()),
        )
        .await
        .unwrap(),
    );
    crash_repeatedly_then_check(&database.url, db, data.path(), Some(objects.path())).await;
}

/// The object sink against a real S3-compatible server, through the CLI (a process of its own,
/// configured by the standard `AWS_*` variables): archive to a bucket, list it, restore.
/// `HINDSIGHT_TEST_S3_ENDPOINT` names the server (.ci/run starts moto's); without it, this fails.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
#[ignore = "needs an S3-compatible server (HINDSIGHT_TEST_S3_ENDPOINT): full tier"]
async fn archive_to_s3_and_restore_through_the_cli() {
    let endpoint = std::env::var("HINDSIGHT_TEST_S3_ENDPOINT").expect(
        "HINDSIGHT_TEST_S3_ENDPOINT must name an S3-compatible server (.ci/run starts moto_server)",
    );
    let bucket = format!("hindsight-test-{}", uuid::Uuid::new_v4().simple());
    let http = reqwest::Client::new();
    let created = http
        .put(format!("{endpoint}/{bucket}"))
        .send()
        .await
        .unwrap();
    assert!(
        created.status().is_success(),
        "create bucket: {}",
        created.status()
    );

    let data = tempfile::tempdir().unwrap();
    let db = SqliteStore::open(
        &data.path().join("hindsight.db"),
        common::signer(data.path()),
    )
    .await
    .unwrap();
    let seeded = seed(&db, 7, 0, 2).await;
    drop(db);
    let jobs = tempfile::tempdir().unwrap();
    write_jobs(
        jobs.path(),
        &[(
            "archive",
            &format!(
                "cron = \"0 30 3 * * *\"\nbatch_size = 3\n[params]\nsink = \"object\"\n\
                 object_url = \"s3://{bucket}/cold\"\n"
            ),
        )],
    );
    let s3 = |args: &[&str]| {
        let output = std::process::Command::new(common::binary())
            .args(args)
            .arg("--data-dir")
            .arg(data.path())
            .env("HINDSIGHT_CONFIG", data.path().join("no-such-config.toml"))
            .env("HINDSIGHT_JOBS_DIR", jobs.path())
            .env("AWS_ENDPOINT", &endpoint)
            .env("AWS_ALLOW_HTTP", "true")
            .env("AWS_ACCESS_KEY_ID", "test")
            .env("AWS_SECRET_ACCESS_KEY", "test")
            .env("AWS_REGION", "us-east-1")
            .output()
            .unwrap();
        let stdout = String::from_utf8_lossy(&output.stdout).into_owned();
        let stderr = String::from_utf8_lossy(&output.stderr);
        assert!(output.status.success(), "{args:?}: {stderr}");
        serde_json::from_str::<Value>(&stdout).unwrap()
    };

    let run = s3(&["jobs", "run", "archive"]);
    assert_eq!(run["status"], json!("ok"), "{run}");
    assert_eq!(run["stats"]["changed"], json!(7));
    assert_eq!(run["stats"]["sink"], json!("object"));
    let listing = http
        .get(format!("{endpoint}/{bucket}?list-type=2&prefix=cold/"))
        .send()
        .await
        .unwrap()
        .text()
        .await
        .unwrap();
    // 7 cold rows over 3 namespaces, batches of at most 3 within one namespace.
    let keys = listing.matches("<Key>cold/ns-").count();
    assert!((3..=5).contains(&keys), "{keys} objects: {listing}");
    let db = SqliteStore::open(
        &data.path().join("hindsight.db"),
        common::signer(data.path()),
    )
    .await
    .unwrap();
    for id in &seeded.cold {
        let id = uuid::Uuid::parse_str(id).unwrap();
        assert!(
            db.get(id).await.unwrap().is_none(),
            "archived rows leave the hot table"
        );
    }
    assert_eq!(
        db.count_archived().await.unwrap(),
        0,
        "and live only in the bucket"
    );
    drop(db);

    let restored = s3(&["archive", "restore", "--namespace", "ns-1"]);
    let in_ns1 = seeded
        .cold
        .iter()
        .filter(|id| {
            let n: usize = seeded.content[*id]
                .split("number ")
                .nth(1)
                .unwrap()
                .split(' ')
                .next()
                .unwrap()
                .parse()
                .unwrap();
            n % 3 == 1
        })
        .count();
    assert_eq!(restored["restored"], json!(in_ns1), "{restored}");
    // By batch: the key of one object, as the bucket lists it.
    let ns0_key = listing
        .split("<Key>cold/")
        .skip(1)
        .map(|rest| rest.split('<').next().unwrap())
        .find(|key| key.starts_with("ns-0/"))
        .unwrap()
        .to_owned();
    let restored = s3(&["archive", "restore", "--batch", &ns0_key]);
    assert_eq!(restored["restored"], json!(3), "{restored}");
    let db = SqliteStore::open(
        &data.path().join("hindsight.db"),
        common::signer(data.path()),
    )
    .await
    .unwrap();
    let back = db
        .get_many(
            &seeded
                .cold
                .iter()
                .map(|id| uuid::Uuid::parse_str(id).unwrap())
                .collect::<Vec<_>>(),
        )
        .await
        .unwrap();
    assert!(
        back.iter()
            .all(|m| m.status == hindsight::domain::Status::Active)
    );
    assert!(
        back.iter()
            .all(|m| seeded.content[&m.id.to_string()] == m.content)
    );

    // A privacy request for one of the restored memories: its hot row goes at once, its copy
    // in the bucket when `archive purge` rewrites that object.
    let batch = db
        .batches(hindsight::store::BatchState::Restored, None)
        .await
        .unwrap()
        .into_iter()
        .find(|b| b.key == ns0_key)
        .unwrap();
    drop(db);
    let victim = batch.ids[0].to_string();
    let forgotten = s3(&["memory", "forget", "--id", &victim, "--hard"]);
    assert_eq!(forgotten["forgotten"], json!(1), "{forgotten}");
    assert_eq!(forgotten["exported"], json!(1), "{forgotten}");
    // The object as the bucket holds it, read with credentials of its own.
    let bucket_store = object_store::aws::AmazonS3Builder::new()
        .with_endpoint(&endpoint)
        .with_allow_http(true)
        .with_access_key_id("test")
        .with_secret_access_key("test")
        .with_region("us-east-1")
        .with_bucket_name(&bucket)
        .build()
        .unwrap();
    let object_ids = || async {
        use object_store::ObjectStoreExt;
        let path = object_store::path::Path::from(format!("cold/{ns0_key}"));
        let bytes = bucket_store
            .get(&path)
            .await
            .unwrap()
            .bytes()
            .await
            .unwrap();
        let mut text = String::new();
        std::io::Read::read_to_string(&mut flate2::read::GzDecoder::new(&bytes[..]), &mut text)
            .unwrap();
        text.lines()
            .map(|line| serde_json::from_str::<Value>(line).unwrap()["id"].clone())
            .collect::<Vec<_>>()
    };
    assert!(object_ids().await.contains(&json!(victim)));
    let dry = s3(&["archive", "purge", "--dry-run"]);
    assert_eq!(
        (dry["rows_removed"].clone(), dry["objects"].clone()),
        (json!(1), json!([ns0_key])),
        "{dry}"
    );
    assert!(
        object_ids().await.contains(&json!(victim)),
        "a dry run changes nothing"
    );
    let purged = s3(&["archive", "purge"]);
    assert_eq!(purged["objects_rewritten"], json!(1), "{purged}");
    let left = object_ids().await;
    assert_eq!(left.len(), 2, "{left:?}");
    assert!(!left.contains(&json!(victim)));
    assert_eq!(s3(&["archive", "purge"])["rows_removed"], json!(0));
}
