//! PostgreSQL beyond the store suite: services sharing one database, and the daemon on it.
//! Each test creates its own database on the local server and drops it afterwards.

use crate::common;

use std::sync::Arc;

use common::Daemon;
use common::pg::TestDatabase;
use hindsight::domain::{Namespace, Status};
use hindsight::embed::{BuiltinEmbedder, Embedder};
use hindsight::index::{Hit, IndexError, IndexPoint, IndexQuery, VectorIndex};
use hindsight::service::{MemoryService, Rules, WriteRequest, WriteStatus};
use hindsight::store::{MemoryStore, PoolSize, PostgresStore};
use serde_json::{Value, json};

/// A service with a pool of its own (as another process would have) over `index`.
async fn service_sharing(db: &TestDatabase, index: Arc<dyn VectorIndex>) -> MemoryService {
    let store = Arc::new(
        PostgresStore::connect(&db.url, PoolSize { min: 1, max: 5 }, common::test_signer())
            .await
            .unwrap(),
    );
    MemoryService::start(
        store,
        index,
        Arc::new(BuiltinEmbedder::new()),
        Rules::default(),
    )
    .await
    .unwrap()
}

/// Two services with their own pools (as two replicas would have) write conflicting facts at
/// once: writers of the key queue in the database, exactly one stays active, the rest are
/// superseded, and no write fails.
#[tokio::test]
#[ignore = "needs PostgreSQL (HINDSIGHT_TEST_POSTGRES_URL, default 127.0.0.1:5432): full tier"]
async fn concurrent_writers_on_one_database_leave_one_active_fact() {
    let db = TestDatabase::create().await;
    let dir = tempfile::tempdir().unwrap();
    let index: Arc<dyn VectorIndex> =
        common::open_index(dir.path(), BuiltinEmbedder::new().dimension()).await;
    let services = [
        Arc::new(service_sharing(&db, index.clone()).await),
        Arc::new(service_sharing(&db, index.clone()).await),
    ];
    // Disjoint words, so no two writes are near-duplicates: each must store and supersede.
    const WORDS: [&str; 24] = [
        "amber", "basalt", "cobalt", "dune", "ember", "fjord", "granite", "harbor", "indigo",
        "juniper", "kelp", "lagoon", "marble", "nectar", "obsidian", "prairie", "quartz", "ridge",
        "saffron", "tundra", "umber", "valley", "willow", "zephyr",
    ];
    let mut tasks = Vec::new();
    for i in 0..12 {
        let service = services[i % 2].clone();
        tasks.push(tokio::spawn(async move {
            service
                .write(&WriteRequest {
                    content: format!("{} {}", WORDS[2 * i], WORDS[2 * i + 1]),
                    memory_type: Some("semantic".into()),
                    importance: Some(0.8),
                    entity: Some("team".into()),
                    attribute: Some("deploy_day".into()),
                    ..WriteRequest::default()
                })
                .await
        }));
    }
    let mut stored = 0;
    for task in tasks {
        let result = task.await.unwrap().expect("every write succeeds");
        if result.status == WriteStatus::Stored {
            stored += 1;
        }
    }
    assert_eq!(stored, 12, "distinct facts are all stored");
    let store = services[0].store();
    let active = store
        .active_facts(&Namespace::default(), "team", "deploy_day")
        .await
        .unwrap();
    assert_eq!(active.len(), 1, "exactly one active fact");
    let counts = store.counts().await.unwrap();
    let deprecated: i64 = counts
        .iter()
        .filter(|c| c.status == Status::Deprecated)
        .map(|c| c.count)
        .sum();
    assert_eq!(
        deprecated, 11,
        "every other fact was superseded, none deleted"
    );
}

/// The embedded engine presented as a shared (server) index, as a Qdrant server is to replicas:
/// without its lexical arm (`lexical_search` stays the trait's `None`), so searches take the
/// store's full-text index, as they do beside a Qdrant server.
struct AsShared(Arc<dyn VectorIndex>);

#[async_trait::async_trait]
impl VectorIndex for AsShared {
    fn dimension(&self) -> usize {
        self.0.dimension()
    }
    fn is_shared(&self) -> bool {
        true
    }
    async fn upsert(&self, points: Vec<IndexPoint>) -> Result<(), IndexError> {
        self.0.upsert(points).await
    }
    async fn delete(&self, ids: Vec<uuid::Uuid>) -> Result<(), IndexError> {
        self.0.delete(ids).await
    }
    async fn search(&self, query: IndexQuery) -> Result<Vec<Hit>, IndexError> {
        self.0.search(query).await
    }
    async fn count(&self) -> Result<usize, IndexError> {
        self.0.count().await
    }
    async fn reset(&self, dimension: usize) -> Result<(), IndexError> {
        self.0.reset(dimension).await
    }
    async fn flush(&self) -> Result<(), IndexError> {
        self.0.flush().await
    }
}

/// Two writers that share the database and one index (as replicas on PostgreSQL + a Qdrant
/// server do) write the same memory at once: the per-scope lock in the database makes each dedup
/// probe see the other's row, so it is stored once and merged into after.
#[tokio::test]
#[ignore = "needs PostgreSQL (HINDSIGHT_TEST_POSTGRES_URL, default 127.0.0.1:5432): full tier"]
async fn concurrent_near_duplicates_across_services_are_stored_once() {
    let db = TestDatabase::create().await;
    let dir = tempfile::tempdir().unwrap();
    let index: Arc<dyn VectorIndex> = Arc::new(AsShared(
        common::open_index(dir.path(), BuiltinEmbedder::new().dimension()).await,
    ));
    let services = [
        Arc::new(service_sharing(&db, index.clone()).await),
        Arc::new(service_sharing(&db, index.clone()).await),
    ];
    let mut tasks = Vec::new();
    for i in 0..12 {
        let service = services[i % 2].clone();
        tasks.push(tokio::spawn(async move {
            service
                .write(&WriteRequest {
                    content: "The staging cluster is rebuilt every Monday night".into(),
                    importance: Some(0.5 + i as f64 / 100.0),
                    source: Some(json!({"writer": i})),
                    ..WriteRequest::default()
                })
                .await
        }));
    }
    let mut stored = Vec::new();
    let mut merged_into = Vec::new();
    for task in tasks {
        let result = task.await.unwrap().expect("every write succeeds");
        match result.status {
            WriteStatus::Stored => stored.push(result.memory_id),
            WriteStatus::Merged => merged_into.push(result.duplicate_of),
            other => panic!("unexpected {other:?}"),
        }
    }
    assert_eq!(stored.len(), 1, "one row for one memory");
    assert!(merged_into.iter().all(|id| *id == stored[0]));
    let row = services[1]
        .store()
        .get(stored[0].unwrap())
        .await
        .unwrap()
        .unwrap();
    assert_eq!(
        row.merged_sources.as_array().map(Vec::len),
        Some(11),
        "every other writer's provenance kept"
    );
    assert!((row.importance - 0.61).abs() < 1e-9, "max importance kept");
}

/// Two replicas (their own pools, one database, one shared index) take two corrections of
/// one unkeyed statement at once, round after round: the scope's database lock makes the
/// second writer read the first's row, so each round ends with exactly one active and the
/// other retired by it.
#[tokio::test]
#[ignore = "needs PostgreSQL (HINDSIGHT_TEST_POSTGRES_URL, default 127.0.0.1:5432): full tier"]
async fn concurrent_corrections_across_services_leave_one_active() {
    let db = TestDatabase::create().await;
    let dir = tempfile::tempdir().unwrap();
    let index: Arc<dyn VectorIndex> = Arc::new(AsShared(
        common::open_index(dir.path(), BuiltinEmbedder::new().dimension()).await,
    ));
    let services = [
        Arc::new(service_sharing(&db, index.clone()).await),
        Arc::new(service_sharing(&db, index.clone()).await),
    ];
    for round in 0..6 {
        let namespace = format!("round-{round}");
        let tasks: Vec<_> = [
            "The release train leaves on Tuesdays",
            "The release train leaves on Thursdays",
        ]
        .into_iter()
        .enumerate()
        .map(|(i, content)| {
            let service = services[i].clone();
            let request = WriteRequest {
                content: content.into(),
                namespace: Some(namespace.clone()),
                occurred_at: Some("2026-11-02T10:00:00Z".into()),
                ..WriteRequest::default()
            };
            tokio::spawn(async move { service.write(&request).await })
        })
        .collect();
        let mut ids = Vec::new();
        for task in tasks {
            let result = task.await.unwrap().expect("every write succeeds");
            assert_eq!(result.status, WriteStatus::Stored, "{result:?}");
            ids.push(result.memory_id.unwrap());
        }
        let rows = services[0].store().get_many(&ids).await.unwrap();
        let active: Vec<_> = rows.iter().filter(|m| m.status == Status::Active).collect();
        let retired: Vec<_> = rows
            .iter()
            .filter(|m| m.status == Status::Deprecated)
            .collect();
        assert_eq!((active.len(), retired.len()), (1, 1), "round {round}");
        assert_eq!(retired[0].deprecated_by, Some(active[0].id));
    }
}

/// `hindsight serve` with `database_url = postgres://…`: memories written over MCP are in
/// PostgreSQL, survive a restart, and `hindsight migrate` / `stats` work against it.
#[tokio::test]
#[ignore = "needs PostgreSQL (HINDSIGHT_TEST_POSTGRES_URL, default 127.0.0.1:5432): full tier"]
async fn the_daemon_serves_from_postgres() {
    let db = TestDatabase::create().await;
    let dir = tempfile::tempdir().unwrap();
    let env = [("HINDSIGHT_DATABASE_URL", db.url.as_str())];

    let daemon = Daemon::start(dir.path(), &env).await;
    let client = common::http_client(&daemon.endpoint).await;
    let written = common::call_ok(
        &client,
        "memory_write",
        json!({"content": "Invoices are archived in the finance bucket", "importance": 0.7}),
    )
    .await;
    assert_eq!(written["status"], "stored");
    client.cancel().await.unwrap();
    assert!(daemon.stop().await.success());

    // The row is in PostgreSQL, not in a SQLite file under the data dir.
    assert!(!dir.path().join("hindsight.db").exists());
    let store = PostgresStore::connect(
        &db.url,
        PoolSize { min: 1, max: 2 },
        common::signer(dir.path()),
    )
    .await
    .unwrap();
    let id = written["memory_id"].as_str().unwrap().parse().unwrap();
    assert!(store.get(id).await.unwrap().is_some());
    drop(store);

    let cli = |args: &[&str]| {
        let output = std::process::Command::new(common::binary())
            .args(args)
            .arg("--data-dir")
            .arg(dir.path())
            .env("HINDSIGHT_DATABASE_URL", &db.url)
            .output()
            .unwrap();
        assert!(
            output.status.success(),
            "{args:?}: {}",
            String::from_utf8_lossy(&output.stderr)
        );
        serde_json::from_slice::<Value>(&output.stdout).unwrap()
    };
    assert_eq!(cli(&["migrate"])["database"], "postgresql");
    let migrations: Vec<Value> = serde_json::from_value(cli(&["audit", "--json"])).unwrap();
    assert!(
        migrations
            .iter()
            .any(|e| e["action"] == "migrate" && e["detail"] == "postgresql"),
        "the migration is in the audit trail: {migrations:?}"
    );
    assert_eq!(cli(&["stats"])["total"], 1);

    let daemon = Daemon::start(dir.path(), &env).await;
    let client = common::http_client(&daemon.endpoint).await;
    assert_eq!(
        common::top_hit_id(&client, json!({"query": "where are invoices archived"})).await,
        written["memory_id"]
    );
    client.cancel().await.unwrap();
    assert!(daemon.stop().await.success());
}

/// `hindsight serve` on `data_dir` that is expected to refuse to start: its stderr.
async fn serve_refused(data_dir: &std::path::Path, envs: &[(&str, &str)]) -> String {
    let mut command = tokio::process::Command::new(common::binary());
    command
        .args(["serve", "--listen", "127.0.0.1:0", "--data-dir"])
        .arg(data_dir)
        .env("HINDSIGHT_CONFIG", data_dir.join("no-such-config.toml"))
        .stdin(std::process::Stdio::null())
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::piped())
        .kill_on_drop(true);
    for (k, v) in envs {
        command.env(k, v);
    }
    let output = tokio::time::timeout(
        std::time::Duration::from_secs(30),
        command.spawn().unwrap().wait_with_output(),
    )
    .await
    .expect("a refused daemon exits promptly")
    .unwrap();
    assert!(!output.status.success(), "the second daemon must not start");
    String::from_utf8_lossy(&output.stderr).into_owned()
}

/// The row-signing key replicas share.
const SHARED_KEY: &str = "replicas-share-this-signing-key-0123456789";

/// A replica with a key of its own is refused, naming the fix, even before any row exists.
#[tokio::test]
#[ignore = "needs PostgreSQL (HINDSIGHT_TEST_POSTGRES_URL, default 127.0.0.1:5432): full tier"]
async fn a_replica_with_another_signing_key_is_refused() {
    let db = TestDatabase::create().await;
    let env = [("HINDSIGHT_DATABASE_URL", db.url.as_str())];
    let dirs = [tempfile::tempdir().unwrap(), tempfile::tempdir().unwrap()];
    let first = Daemon::start(dirs[0].path(), &env).await;
    let stderr = serve_refused(dirs[1].path(), &env).await;
    assert!(
        stderr.contains("signed with key") && stderr.contains("signing_key"),
        "{stderr}"
    );
    first.stop().await;
}

/// Two daemons on one database, each with its own embedded index, would each miss the other's
/// writes: the second is refused with the remedy, and can start once the first is gone — even
/// when the first was killed with SIGKILL (the server drops the dead session's lock).
#[tokio::test]
#[ignore = "needs PostgreSQL (HINDSIGHT_TEST_POSTGRES_URL, default 127.0.0.1:5432): full tier"]
async fn a_second_daemon_with_an_embedded_index_is_refused() {
    let db = TestDatabase::create().await;
    // Replicas share one signing key (each data dir would otherwise make its own, and the
    // second would be refused for that first).
    let env = [
        ("HINDSIGHT_DATABASE_URL", db.url.as_str()),
        ("HINDSIGHT_SIGNING_KEY", SHARED_KEY),
    ];
    let dirs = [tempfile::tempdir().unwrap(), tempfile::tempdir().unwrap()];

    let first = Daemon::start(dirs[0].path(), &env).await;
    let stderr = serve_refused(dirs[1].path(), &env).await;
    assert!(
        stderr.contains("another hindsight process with an embedded vector index")
            && stderr.contains("qdrant_url"),
        "{stderr}"
    );
    first.crash().await;

    // The server notices the dead connection and releases the claim.
    let mut second = None;
    for _ in 0..50 {
        let attempt = tokio::process::Command::new(common::binary())
            .args(["stats", "--data-dir"])
            .arg(dirs[1].path())
            .env("HINDSIGHT_DATABASE_URL", &db.url)
            .env("HINDSIGHT_SIGNING_KEY", SHARED_KEY)
            .output()
            .await
            .unwrap();
        assert!(attempt.status.success(), "stats needs no claim");
        let daemon = Daemon::try_start(dirs[1].path(), &env).await;
        if let Some(daemon) = daemon {
            second = Some(daemon);
            break;
        }
        tokio::time::sleep(std::time::Duration::from_millis(200)).await;
    }
    let second = second.expect("the claim is released after the first daemon died");
    second.stop().await;
}

/// Replicas: two daemons on one PostgreSQL and one Qdrant server; a write through either is
/// found through both, and a forget through one is honoured by the other. The scale-out tier:
/// needs `QDRANT_URL` (a Qdrant server's gRPC URL); without it, it fails saying so.
#[tokio::test]
#[ignore = "needs PostgreSQL and a Qdrant server (QDRANT_URL): scale-out tier, docs/testing.md"]
async fn qdrant_server_tier_replicas_share_one_database_and_one_qdrant_index() {
    let qdrant_url = std::env::var("QDRANT_URL")
        .expect("QDRANT_URL is not set: this test needs a Qdrant server (its gRPC URL)");
    let db = TestDatabase::create().await;
    let collection = format!("hindsight_test_{}", uuid::Uuid::new_v4().simple());
    let env = [
        ("HINDSIGHT_DATABASE_URL", db.url.as_str()),
        ("HINDSIGHT_QDRANT_URL", qdrant_url.as_str()),
        ("HINDSIGHT_QDRANT_COLLECTION", collection.as_str()),
        ("HINDSIGHT_SIGNING_KEY", SHARED_KEY),
    ];
    let dirs = [tempfile::tempdir().unwrap(), tempfile::tempdir().unwrap()];
    let a = Daemon::start(dirs[0].path(), &env).await;
    let b = Daemon::start(dirs[1].path(), &env).await;
    let clients = [
        common::http_client(&a.endpoint).await,
        common::http_client(&b.endpoint).await,
    ];
    let via_a = common::call_ok(
        &clients[0],
        "memory_write",
        json!({"content": "Replica A heard that backups run at 02:00 UTC", "importance": 0.8}),
    )
    .await;
    let via_b = common::call_ok(
        &clients[1],
        "memory_write",
        json!({"content": "Replica B heard the VPN moved to WireGuard", "importance": 0.8}),
    )
    .await;
    for client in &clients {
        assert_eq!(
            common::top_hit_id(client, json!({"query": "when do backups run"})).await,
            via_a["memory_id"]
        );
        assert_eq!(
            common::top_hit_id(client, json!({"query": "which VPN do we use"})).await,
            via_b["memory_id"]
        );
    }
    common::call_ok(
        &clients[0],
        "memory_forget",
        json!({"memory_id": via_b["memory_id"]}),
    )
    .await;
    let found = common::call_ok(
        &clients[1],
        "memory_search",
        json!({"query": "which VPN do we use"}),
    )
    .await;
    assert!(
        found["memories"]
            .as_array()
            .unwrap()
            .iter()
            .all(|m| m["id"] != via_b["memory_id"]),
        "{found}"
    );
    for client in clients {
        client.cancel().await.unwrap();
    }
    a.stop().await;
    b.stop().await;
    // The collection is this test's alone: drop it.
    if let Ok(client) = qdrant_client::Qdrant::from_url(&qdrant_url)
        .skip_compatibility_check()
        .build()
    {
        let _ = client.delete_collection(&collection).await;
    }
}

/// A starting replica never drops a shared index: it refills one that is empty (a lost
/// collection), once, and leaves a partly filled one alone (other replicas' writes may be in
/// flight) — where an embedded index would be rebuilt.
#[tokio::test]
#[ignore = "needs PostgreSQL (HINDSIGHT_TEST_POSTGRES_URL, default 127.0.0.1:5432): full tier"]
async fn a_starting_replica_refills_an_empty_shared_index_and_never_drops_one() {
    let db = TestDatabase::create().await;
    let dir = tempfile::tempdir().unwrap();
    let index: Arc<dyn VectorIndex> = Arc::new(AsShared(
        common::open_index(dir.path(), BuiltinEmbedder::new().dimension()).await,
    ));
    let first = service_sharing(&db, index.clone()).await;
    let mut ids = Vec::new();
    for text in [
        "Alpha memory about tea",
        "Beta memory about rust",
        "Gamma memory about sails",
    ] {
        let written = first
            .write(&WriteRequest {
                content: text.into(),
                ..WriteRequest::default()
            })
            .await
            .unwrap();
        ids.push(written.memory_id.unwrap());
    }
    first.flush().await.unwrap();
    assert_eq!(index.count().await.unwrap(), 3);

    // The collection is lost: the next replica to start fills it again.
    index.reset(index.dimension()).await.unwrap();
    let second = service_sharing(&db, index.clone()).await;
    assert_eq!(index.count().await.unwrap(), 3);
    let found = second
        .search(&hindsight::service::SearchRequest {
            query: "sails".into(),
            ..Default::default()
        })
        .await
        .unwrap();
    assert_eq!(found.memories[0].id, ids[2]);

    // Fewer points than rows but not empty: left as it is, nothing dropped.
    index.delete(vec![ids[0]]).await.unwrap();
    let _third = service_sharing(&db, index.clone()).await;
    assert_eq!(index.count().await.unwrap(), 2);
}

/// A bulk import renews the planner's statistics of the tables it fills once it has added
/// 5,000 rows (a generic plan made on the empty table would scan it for every id lookup):
/// `pg_class.reltuples` is -1 until a table is first analysed.
/// `n` rows of namespace `bulk` as an import gives them, `imported row {from}` onwards.
fn imported_rows(from: usize, n: usize) -> Vec<hindsight::store::StoredRow> {
    use hindsight::domain::{Content, Importance, MemoryType, NewMemory};
    (from..from + n)
        .map(|i| hindsight::store::StoredRow {
            memory: NewMemory {
                id: uuid::Uuid::now_v7(),
                namespace: Namespace::parse("bulk").unwrap(),
                memory_type: MemoryType::Episodic,
                content: Content::parse(&format!("imported row {i}"), 100).unwrap(),
                importance: Importance::parse(0.5).unwrap(),
                entity: None,
                attribute: None,
                source: json!(null),
                metadata: json!({}),
                created_at: chrono::Utc::now(),
                occurred_at: chrono::Utc::now(),
                expires_at: None,
                embedding_model: "test/2".into(),
                embedding: vec![0.6, 0.8],
            }
            .into_memory(),
            archived_at: None,
        })
        .collect()
}

#[tokio::test]
#[ignore = "needs PostgreSQL (HINDSIGHT_TEST_POSTGRES_URL, default 127.0.0.1:5432): full tier"]
async fn an_import_analyses_the_tables_it_fills() {
    use hindsight::store::TransferStore;
    let db = TestDatabase::create().await;
    let store = PostgresStore::connect(&db.url, PoolSize { min: 1, max: 2 }, common::test_signer())
        .await
        .unwrap();
    let reltuples = || async {
        let admin = sqlx::PgPool::connect(&db.url).await.unwrap();
        let n: f32 =
            sqlx::query_scalar("SELECT reltuples FROM pg_class WHERE relname = 'memories'")
                .fetch_one(&admin)
                .await
                .unwrap();
        admin.close().await;
        n
    };
    for from in [0, 2_000] {
        let rows = imported_rows(from, 2_000);
        assert_eq!(store.import_rows(&rows).await.unwrap().len(), 2_000);
    }
    assert!(reltuples().await < 0.0, "analysed before 5,000 rows");
    let rows = imported_rows(4_000, 2_000);
    assert_eq!(store.import_rows(&rows).await.unwrap().len(), 2_000);
    assert_eq!(
        reltuples().await,
        6_000.0,
        "analysed once 5,000 rows were in"
    );
}

/// The write path asks this on every write: on a scope of 6,000 analysed rows it must seek
/// the md5 key (`memories_active_content`), not read the scope's rows. The server's own
/// count of the key's scans says which it did.
#[tokio::test]
#[ignore = "needs PostgreSQL (HINDSIGHT_TEST_POSTGRES_URL, default 127.0.0.1:5432): full tier"]
async fn the_repeat_lookup_seeks_its_index() {
    use hindsight::domain::MemoryType;
    use hindsight::store::TransferStore;
    let db = TestDatabase::create().await;
    let store = PostgresStore::connect(&db.url, PoolSize { min: 1, max: 2 }, common::test_signer())
        .await
        .unwrap();
    for from in [0, 3_000] {
        store
            .import_rows(&imported_rows(from, 3_000))
            .await
            .unwrap();
    }
    for i in [17, 4_321] {
        let found = store
            .active_repeats("bulk", MemoryType::Episodic, &format!("imported row {i}"))
            .await
            .unwrap();
        assert_eq!(found.len(), 1);
    }
    // Counts reach the view once the asking backend has been idle a moment (≤ 10 s).
    let admin = sqlx::PgPool::connect(&db.url).await.unwrap();
    let mut scans = 0_i64;
    for _ in 0..60 {
        scans = sqlx::query_scalar(
            "SELECT idx_scan FROM pg_stat_user_indexes \
             WHERE indexrelname = 'memories_active_content'",
        )
        .fetch_one(&admin)
        .await
        .unwrap();
        if scans >= 2 {
            break;
        }
        tokio::time::sleep(std::time::Duration::from_millis(500)).await;
    }
    admin.close().await;
    assert!(
        scans >= 2,
        "the key was scanned {scans} times for 2 lookups"
    );
}
