//! The distill job in the real daemon, killed with SIGKILL at random instants while the model
//! (the scripted OpenAI-compatible server, slow on purpose) drafts: afterwards every cluster has
//! exactly one candidate resting on exactly its episodes, no cluster was sent to the model again
//! once recorded, and at most `llm_max_concurrency` calls were ever in flight. Both stores.

use crate::common;

use std::collections::{BTreeMap, BTreeSet};
use std::sync::Arc;
use std::time::Duration as StdDuration;

use chrono::{Duration, Utc};
use common::Daemon;
use common::openai::Reply;
use hindsight::domain::{Content, Importance, MemoryId, MemoryType, Namespace, NewMemory};
use hindsight::embed::{BuiltinEmbedder, Embedder};
use hindsight::store::{Database, PoolSize, PostgresStore, SqliteStore};
use rand::Rng;
use serde_json::json;

/// Things a user does again and again, each unlike the others.
const THEMES: &[&str] = &[
    "asked for the quarterly sales report with every data source cited",
    "wanted deployment notes written in plain English without jargon",
    "scheduled the weekly sync with the design team on Tuesday afternoon",
    "reviewed pull requests only after running the integration tests locally",
    "ordered vegetarian lunch for the offsite workshop participants",
    "backed up the photo library to the external drive before travelling",
    "booked train tickets instead of flights for trips under five hundred kilometres",
    "translated the onboarding guide into Portuguese for the Lisbon office",
    "muted slack notifications during focused writing mornings",
    "paid the electricity bill through the bank's mobile application",
];
const PER_THEME: usize = 4;
const CONCURRENCY: usize = 2;

/// The episodes of each theme, written straight to the store, 2 hours old.
async fn seed(db: &dyn Database) -> BTreeMap<usize, BTreeSet<MemoryId>> {
    let embedder = BuiltinEmbedder::new();
    let now = Utc::now();
    let mut themes = BTreeMap::new();
    for (t, theme) in THEMES.iter().enumerate() {
        for i in 0..PER_THEME {
            let content = format!("the user {theme} (time {i})");
            let memory = NewMemory {
                id: uuid::Uuid::now_v7(),
                namespace: Namespace::parse("crash").unwrap(),
                memory_type: MemoryType::Episodic,
                content: Content::parse(&content, 1000).unwrap(),
                importance: Importance::parse(0.5).unwrap(),
                entity: None,
                attribute: None,
                source: json!({"theme": t}),
                metadata: json!({}),
                created_at: now - Duration::hours(2),
                occurred_at: now - Duration::hours(2),
                expires_at: None,
                embedding_model: embedder.id().to_owned(),
                embedding: embedder.embed(&[content]).await.unwrap().remove(0),
            }
            .into_memory();
            db.insert(&memory).await.unwrap();
            themes
                .entry(t)
                .or_insert_with(BTreeSet::new)
                .insert(memory.id);
        }
    }
    themes
}

async fn crash_while_distilling(url: &str, db: Arc<dyn Database>, data: &std::path::Path) {
    let themes = seed(db.as_ref()).await;
    let llm = common::openai::start(vec![]).await;
    llm.script.set_fallback(Reply::from_prompt(|prompt| {
        let ids = common::openai::episode_numbers(prompt);
        let theme = THEMES
            .iter()
            .position(|t| prompt.contains(t))
            .expect("a prompt names one theme");
        Reply::Slow(
            StdDuration::from_millis(400),
            json!([{"content": format!("The user habitually {}.", THEMES[theme]),
                    "confidence": 0.8, "sources": ids}])
            .to_string(),
        )
    }));
    let jobs = tempfile::tempdir().unwrap();
    std::fs::write(jobs.path().join("distill.toml"), "cron = \"* * * * * *\"\n").unwrap();
    let concurrency = CONCURRENCY.to_string();
    let env = [
        ("HINDSIGHT_JOBS_DIR", jobs.path().to_str().unwrap()),
        ("HINDSIGHT_DATABASE_URL", url),
        ("HINDSIGHT_LLM_BASE_URL", llm.base_url.as_str()),
        ("HINDSIGHT_LLM_MODEL", "scripted-model"),
        ("HINDSIGHT_LLM_MAX_CONCURRENCY", concurrency.as_str()),
    ];
    let mut kills = 0;
    for round in 0..10 {
        let daemon = Daemon::start(data, &env).await;
        let wait = rand::rng().random_range(150..1_500);
        tokio::time::sleep(StdDuration::from_millis(wait)).await;
        daemon.crash().await;
        kills += 1;
        let done = db.candidates(None, None, 1000).await.unwrap().len();
        eprintln!("round {round}: killed after {wait} ms; {done} candidates so far");
    }
    let daemon = Daemon::start(data, &env).await;
    for _ in 0..600 {
        if db.candidates(None, None, 1000).await.unwrap().len() >= THEMES.len() {
            break;
        }
        tokio::time::sleep(StdDuration::from_millis(100)).await;
    }
    // One more tick after the last candidate: nothing left to send.
    tokio::time::sleep(StdDuration::from_millis(1500)).await;
    assert!(daemon.stop().await.success());

    let candidates = db.candidates(None, None, 1000).await.unwrap();
    assert_eq!(
        candidates.len(),
        THEMES.len(),
        "one candidate per cluster, whatever the kills: {:?}",
        candidates.iter().map(|c| &c.content).collect::<Vec<_>>()
    );
    for (t, episodes) in &themes {
        let theirs: Vec<_> = candidates
            .iter()
            .filter(|c| c.content.contains(THEMES[*t]))
            .collect();
        assert_eq!(theirs.len(), 1, "theme {t}");
        let sources: BTreeSet<MemoryId> = theirs[0].source_ids.iter().copied().collect();
        assert_eq!(
            &sources, episodes,
            "theme {t} rests on exactly its episodes"
        );
    }
    // A recorded cluster is never sent again: beyond one call per cluster, only calls that a
    // kill cut short (at most CONCURRENCY per kill) were repeated.
    let prompts = llm.script.prompts();
    eprintln!(
        "{kills} kills, {} model calls for {} clusters",
        prompts.len(),
        THEMES.len()
    );
    assert!(prompts.len() >= THEMES.len());
    assert!(
        prompts.len() <= THEMES.len() + kills * CONCURRENCY,
        "{} calls",
        prompts.len()
    );
    assert!(
        llm.script.max_in_flight() <= CONCURRENCY,
        "llm_max_concurrency is respected: {}",
        llm.script.max_in_flight()
    );
    let history = db.history(Some("distill"), 10_000).await.unwrap();
    let interrupted = history
        .iter()
        .filter(|r| r.status == hindsight::store::RunStatus::Interrupted)
        .count();
    eprintln!("{} distill runs, {interrupted} interrupted", history.len());
    assert!(interrupted >= 1, "the kills interrupted runs");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn sqlite_distill_survives_repeated_sigkill() {
    let data = tempfile::tempdir().unwrap();
    let path = data.path().join("hindsight.db");
    let db: Arc<dyn Database> = Arc::new(
        SqliteStore::open(&path, common::signer(data.path()))
            .await
            .unwrap(),
    );
    let url = format!("sqlite://{}", path.display());
    crash_while_distilling(&url, db, data.path()).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
#[ignore = "needs PostgreSQL (HINDSIGHT_TEST_POSTGRES_URL, default 127.0.0.1:5432): full tier"]
async fn postgres_distill_survives_repeated_sigkill() {
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
    crash_while_distilling(&database.url, db, data.path()).await;
}
