//! Signed rows through the binary and across keys: `hindsight verify` and `resign`, a memory
//! changed in the database refused by `memory get`, the data dir's key, a rotation with the
//! old key kept as a previous one, and a store refusing a process with a foreign key (both
//! stores). The jobs suite (`tests/integration/jobs/integrity.rs`) covers search, the metric and the alert.

use crate::common;

use hindsight::secret::Secret;
use hindsight::signing::Signer;
use hindsight::store::{PoolSize, PostgresStore, SqliteStore, StoreError};
use serde_json::Value;

fn cli(dir: &std::path::Path, envs: &[(&str, &str)], args: &[&str]) -> (bool, String, String) {
    let jobs = dir.join("jobs");
    std::fs::create_dir_all(&jobs).unwrap();
    common::cli_with(dir, &jobs, envs, args)
}

async fn sqlite_exec(dir: &std::path::Path, sql: &str) {
    let url = format!("sqlite://{}", dir.join("hindsight.db").display());
    let pool = sqlx::SqlitePool::connect(&url).await.unwrap();
    sqlx::query(sqlx::AssertSqlSafe(sql.to_owned()))
        .execute(&pool)
        .await
        .unwrap();
    pool.close().await;
}

const OLD: &str = "the-old-signing-key-0123456789abcdef";
const NEW: &str = "the-new-signing-key-fedcba9876543210";

#[tokio::test]
async fn verify_resign_and_a_key_rotation_through_the_cli() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let write = |content: &str| {
        let (ok, out, err) = cli(d, &[], &["memory", "write", content, "--importance", "0.8"]);
        assert!(ok, "{err}");
        let v: Value = serde_json::from_str(&out).unwrap();
        v["memory_id"].as_str().unwrap().to_owned()
    };
    let kept = write("the user prefers metric units");
    let changed = write("the user works from Lisbon");
    // The first start made the data dir's key, owner-only.
    let key = std::fs::read_to_string(d.join("signing.key")).unwrap();
    assert_eq!(key.trim().len(), 64);

    let (ok, out, err) = cli(d, &[], &["verify"]);
    assert!(ok, "{out}{err}");
    let report: Value = serde_json::from_str(&out).unwrap();
    assert_eq!(report["memories"], 2);
    assert_eq!(report["failed"], serde_json::json!([]));

    sqlite_exec(
        d,
        &format!(
            "UPDATE memories SET content = 'the user works from Moscow' WHERE id = '{changed}'"
        ),
    )
    .await;
    let (ok, _, err) = cli(d, &[], &["memory", "get", &changed]);
    assert!(!ok);
    assert!(err.contains("failed its signature check"), "{err}");
    let (ok, out, _) = cli(d, &[], &["memory", "get", &kept]);
    assert!(ok);
    assert!(!out.contains("signature"), "never shown: {out}");
    let (ok, out, err) = cli(d, &[], &["verify"]);
    assert!(!ok, "exit 1 when a row fails");
    assert!(err.contains("1 rows failed"), "{err}");
    let report: Value = serde_json::from_str(&out).unwrap();
    assert_eq!(report["failed"][0]["id"], changed.as_str());
    assert_eq!(report["failed"][0]["reason"], "mismatch");
    let (ok, out, _) = cli(d, &[], &["resign", "--all", "--dry-run"]);
    assert!(ok);
    assert!(out.contains("\"signed\": 1"), "{out}");
    let (ok, _, _) = cli(d, &[], &["verify"]);
    assert!(!ok, "a dry run changes nothing");
    let (ok, _, err) = cli(d, &[], &["resign", "--all"]);
    assert!(ok, "{err}");
    let (ok, out, err) = cli(d, &[], &["verify"]);
    assert!(ok, "accepted as it stands: {out}{err}");
    // Who accepted which row, and what each verify found, stays in the audit trail (the store
    // commands do not go through `Operations`; they record themselves).
    let (ok, out, err) = cli(d, &[], &["audit", "--json"]);
    assert!(ok, "{err}");
    let trail: Vec<Value> = serde_json::from_str(&out).unwrap();
    let of = |action: &str| -> Vec<&Value> {
        trail
            .iter()
            .filter(|e| e["action"] == action && e["actor"] == "cli")
            .collect()
    };
    let resigns = of("resign");
    assert_eq!(resigns.len(), 1, "a dry run records nothing: {trail:?}");
    assert_eq!(resigns[0]["ids"], serde_json::json!([changed]), "{trail:?}");
    assert!(
        resigns[0]["detail"]
            .as_str()
            .unwrap()
            .contains("1 accepted despite a failed check"),
        "{trail:?}"
    );
    let verifies: Vec<(&str, &Value)> = of("verify")
        .iter()
        .map(|e| (e["outcome"].as_str().unwrap(), &e["ids"]))
        .collect();
    let failed_ids = serde_json::json!([changed]);
    let none = serde_json::json!([]);
    assert_eq!(
        verifies,
        [
            ("ok", &none),
            ("failed: 1 rows", &failed_ids),
            ("failed: 1 rows", &failed_ids),
            ("ok", &none)
        ],
        "{trail:?}"
    );

    // Rotation: the data dir's key becomes a previous one, a new key signs.
    std::fs::write(d.join("signing.key"), OLD).unwrap();
    let (ok, _, err) = cli(d, &[], &["resign", "--all"]);
    assert!(ok, "{err}");
    let (ok, _, err) = cli(d, &[("HINDSIGHT_SIGNING_KEY", NEW)], &["verify"]);
    assert!(!ok, "the old rows' key is unknown without the previous key");
    assert!(err.contains("signing_previous_keys"), "{err}");
    let rotating = [
        ("HINDSIGHT_SIGNING_KEY", NEW),
        ("HINDSIGHT_SIGNING_PREVIOUS_KEYS", OLD),
    ];
    let (ok, out, err) = cli(d, &rotating, &["memory", "get", &kept]);
    assert!(ok, "served while rotating: {out}{err}");
    let (ok, out, _) = cli(d, &rotating, &["verify"]);
    assert!(ok);
    let report: Value = serde_json::from_str(&out).unwrap();
    assert_eq!(report["previous_key"], 2);
    let (ok, out, err) = cli(d, &rotating, &["resign"]);
    assert!(ok, "{err}");
    assert!(out.contains("\"signed\": 2"), "{out}");
    let (ok, out, err) = cli(d, &[("HINDSIGHT_SIGNING_KEY", NEW)], &["verify"]);
    assert!(ok, "the old key is no longer needed: {out}{err}");
    let (ok, _, err) = cli(d, &[("HINDSIGHT_SIGNING_KEY", "short")], &["verify"]);
    assert!(!ok);
    assert!(err.contains("signing_key") && err.contains("32"), "{err}");
}

fn signer(key: &str, previous: &[&str]) -> Signer {
    Signer::new(
        Secret::new(key),
        previous.iter().map(|k| Secret::new(*k)).collect(),
    )
    .unwrap()
}

/// A second process (a replica) with another key is refused at open, naming the fix; with the
/// old key as a previous one it opens and verifies the old rows.
async fn foreign_keys_are_refused<F, Fut>(open: F)
where
    F: Fn(Signer) -> Fut,
    Fut: std::future::Future<
            Output = Result<std::sync::Arc<dyn hindsight::store::Database>, StoreError>,
        >,
{
    let first = open(signer(OLD, &[])).await.unwrap();
    let row = common::store_row("a row signed with the old key");
    first.insert(&row).await.unwrap();
    let stored = first.get(row.id).await.unwrap().unwrap();
    assert!(first.signer().verify(&stored).is_ok());
    drop(first);
    match open(signer(NEW, &[])).await {
        Err(e @ StoreError::ForeignSigningKey { .. }) => {
            assert!(e.to_string().contains("signing_previous_keys"), "{e}")
        }
        Err(e) => panic!("{e}"),
        Ok(_) => panic!("opened with a foreign key"),
    }
    let rotating = open(signer(NEW, &[OLD])).await.unwrap();
    let stored = rotating.get(row.id).await.unwrap().unwrap();
    assert_eq!(
        rotating.signer().verify(&stored),
        Ok(hindsight::signing::Verified::Previous)
    );
}

#[tokio::test]
async fn sqlite_refuses_a_foreign_key() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("hindsight.db");
    foreign_keys_are_refused(|signer| {
        let path = path.clone();
        async move {
            Ok(std::sync::Arc::new(SqliteStore::open(&path, signer).await?)
                as std::sync::Arc<dyn hindsight::store::Database>)
        }
    })
    .await;
}

#[tokio::test]
#[ignore = "needs PostgreSQL (HINDSIGHT_TEST_POSTGRES_URL, default 127.0.0.1:5432): full tier"]
async fn postgres_refuses_a_foreign_key() {
    let db = common::pg::TestDatabase::create().await;
    let url = db.url.clone();
    foreign_keys_are_refused(|signer| {
        let url = url.clone();
        async move {
            Ok(std::sync::Arc::new(
                PostgresStore::connect(&url, PoolSize { min: 1, max: 2 }, signer).await?,
            )
                as std::sync::Arc<dyn hindsight::store::Database>)
        }
    })
    .await;
}
