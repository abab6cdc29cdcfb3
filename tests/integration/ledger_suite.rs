//! The job run ledger (`job_runs`), one suite for every store: a scheduled tick is claimed at
//! most once however many replicas race for it; outcomes, history and stale runs.

use crate::common;

use std::sync::Arc;

use chrono::{Duration, DurationRound, Utc};

use hindsight::store::{PoolSize, PostgresStore, RunLedger, RunStatus, SqliteStore};
use serde_json::json;

/// Ticks `offset` seconds after a fixed whole second, as a scheduler's would be (a fixed base,
/// so a test never straddles a second boundary).
fn tick(offset_secs: i64) -> chrono::DateTime<Utc> {
    chrono::DateTime::from_timestamp(1_780_000_000 + offset_secs, 0).unwrap()
}

pub async fn one_claim_per_tick_among_racing_replicas(ledger: Arc<dyn RunLedger>) {
    let scheduled = tick(0);
    let racers = (0..16).map(|i| {
        let ledger = ledger.clone();
        tokio::spawn(async move {
            ledger
                .claim("expire", scheduled, &format!("node-{i}"), Utc::now())
                .await
                .unwrap()
        })
    });
    let mut won = 0;
    for racer in racers {
        won += usize::from(racer.await.unwrap().is_some());
    }
    assert_eq!(won, 1, "exactly one replica runs the tick");
    // A retry of the same tick (a restarted replica) is refused too; other ticks and other
    // jobs are independent.
    assert!(
        ledger
            .claim("expire", scheduled, "node-0", Utc::now())
            .await
            .unwrap()
            .is_none()
    );
    assert!(
        ledger
            .claim("expire", tick(1), "node-0", Utc::now())
            .await
            .unwrap()
            .is_some()
    );
    assert!(
        ledger
            .claim("archive", scheduled, "node-0", Utc::now())
            .await
            .unwrap()
            .is_some()
    );
}

pub async fn outcomes_history_and_last_success(ledger: Arc<dyn RunLedger>) {
    let first = ledger
        .claim("expire", tick(0), "a", Utc::now())
        .await
        .unwrap()
        .unwrap();
    let finished = Utc::now()
        .duration_trunc(Duration::milliseconds(1))
        .unwrap();
    ledger
        .finish(
            first,
            RunStatus::Ok,
            &json!({"examined": 10, "changed": 3}),
            None,
            finished,
        )
        .await
        .unwrap();
    let second = ledger
        .claim("expire", tick(1), "a", Utc::now())
        .await
        .unwrap()
        .unwrap();
    ledger
        .finish(
            second,
            RunStatus::Failed,
            &json!({}),
            Some("database is locked"),
            Utc::now(),
        )
        .await
        .unwrap();
    ledger
        .claim("archive", tick(0), "a", Utc::now())
        .await
        .unwrap()
        .unwrap();

    assert_eq!(ledger.last_success("expire").await.unwrap(), Some(finished));
    assert_eq!(ledger.last_success("archive").await.unwrap(), None);
    let history = ledger.history(Some("expire"), 10).await.unwrap();
    assert_eq!(
        history.iter().map(|r| r.status).collect::<Vec<_>>(),
        vec![RunStatus::Failed, RunStatus::Ok],
        "newest first"
    );
    assert_eq!(history[0].error.as_deref(), Some("database is locked"));
    assert_eq!(history[1].stats, json!({"examined": 10, "changed": 3}));
    assert_eq!(history[1].scheduled_for, tick(0));
    assert!(history[1].finished_at.is_some());
    assert_eq!(ledger.history(None, 10).await.unwrap().len(), 3);
    assert_eq!(ledger.history(None, 1).await.unwrap().len(), 1);
}

pub async fn runs_with_a_stale_heartbeat_become_interrupted(ledger: Arc<dyn RunLedger>) {
    let long_ago = Utc::now() - chrono::Duration::minutes(5);
    let dead = ledger
        .claim("expire", tick(0), "dead", long_ago)
        .await
        .unwrap()
        .unwrap();
    let done = ledger
        .claim("expire", tick(1), "dead", long_ago)
        .await
        .unwrap()
        .unwrap();
    ledger
        .finish(done, RunStatus::Ok, &json!({}), None, long_ago)
        .await
        .unwrap();
    let beating = ledger
        .claim("archive", tick(0), "alive", long_ago)
        .await
        .unwrap()
        .unwrap();
    ledger.heartbeat(&[beating], Utc::now()).await.unwrap();
    let fresh = ledger
        .claim("expire", tick(2), "fresh", Utc::now())
        .await
        .unwrap()
        .unwrap();

    let cutoff = Utc::now() - chrono::Duration::minutes(1);
    assert_eq!(ledger.interrupt_stale(cutoff, Utc::now()).await.unwrap(), 1);
    assert_eq!(ledger.interrupt_stale(cutoff, Utc::now()).await.unwrap(), 0);
    let statuses: Vec<(i64, String, RunStatus)> = ledger
        .history(None, 10)
        .await
        .unwrap()
        .into_iter()
        .map(|r| (r.id, r.node, r.status))
        .collect();
    assert!(statuses.contains(&(dead, "dead".into(), RunStatus::Interrupted)));
    assert!(
        statuses.contains(&(done, "dead".into(), RunStatus::Ok)),
        "finished runs stay"
    );
    assert!(
        statuses.contains(&(beating, "alive".into(), RunStatus::Running)),
        "a run whose heartbeat is fresh is left alone"
    );
    assert!(statuses.contains(&(fresh, "fresh".into(), RunStatus::Running)));
}

macro_rules! ledger_suite {
    ($backend:ident, $open:expr, $attrs:tt) => {
        mod $backend {
            use super::*;
            ledger_suite!(@tests $open, $attrs;
                one_claim_per_tick_among_racing_replicas,
                outcomes_history_and_last_success,
                runs_with_a_stale_heartbeat_become_interrupted,
            );
        }
    };
    (@tests $open:expr, $attrs:tt; $($test:ident),* $(,)?) => {
        $( ledger_suite!(@one $attrs, $open, $test); )*
    };
    (@one [$($attr:tt)*], $open:expr, $test:ident) => {
        #[tokio::test]
        $($attr)*
        async fn $test() {
            let (_guard, ledger) = $open.await;
            super::$test(ledger).await;
        }
    };
}

async fn sqlite() -> (tempfile::TempDir, Arc<dyn RunLedger>) {
    let dir = tempfile::tempdir().unwrap();
    let store = SqliteStore::open(&dir.path().join("test.db"), common::signer(dir.path()))
        .await
        .unwrap();
    (dir, Arc::new(store))
}

ledger_suite!(sqlite_backend, sqlite(), []);

async fn postgres() -> (common::pg::TestDatabase, Arc<dyn RunLedger>) {
    let db = common::pg::TestDatabase::create().await;
    let store = PostgresStore::connect(&db.url, PoolSize { min: 1, max: 8 }, common::test_signer())
        .await
        .unwrap();
    (db, Arc::new(store))
}

ledger_suite!(postgres_backend, postgres(), [#[ignore = "needs PostgreSQL (HINDSIGHT_TEST_POSTGRES_URL, default 127.0.0.1:5432): full tier"]]);

#[test]
fn every_suite_function_runs_on_every_backend() {
    common::assert_suite_lists_every_function(
        "ledger_suite",
        "ledger_suite.rs",
        &["ledger_suite.rs"],
        "ledger: Arc<dyn RunLedger>",
    );
}
