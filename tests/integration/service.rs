//! The memory rules end to end, in-process, over a real SQLite file and the real embedded index:
//! write → dedup → conflict → search ranking → forget → TTL; index repair after a crash between
//! the row write and the index write; embedder change detection and reindex.

use crate::common;

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};

use async_trait::async_trait;
use chrono::{Duration, Utc};
use hindsight::domain::{Content, Importance, MemoryType, Namespace, NewMemory, Status};
use hindsight::embed::{BuiltinEmbedder, Embedder};
use hindsight::index::{Hit, IndexError, IndexPoint, IndexQuery, VectorIndex};
use hindsight::service::requests::{ForgetFilterRequest, TimeRange};
use hindsight::service::{ForgetRequest, SearchRequest, ServiceError, WriteRequest, WriteStatus};
use hindsight::store::{MemoryStore, SqliteStore};
use serde_json::json;

fn write(content: &str) -> WriteRequest {
    WriteRequest {
        content: content.into(),
        ..WriteRequest::default()
    }
}

fn search(query: &str) -> SearchRequest {
    SearchRequest {
        query: query.into(),
        ..SearchRequest::default()
    }
}

#[tokio::test]
async fn low_importance_is_skipped_and_nothing_is_written() {
    let dir = tempfile::tempdir().unwrap();
    let service = common::service(dir.path()).await;
    let result = service
        .write(&WriteRequest {
            importance: Some(0.2),
            ..write("trivia nobody needs")
        })
        .await
        .unwrap();
    assert_eq!(result.status, WriteStatus::Skipped);
    assert_eq!(result.reason.as_deref(), Some("low_importance"));
    assert_eq!(result.memory_id, None);
    assert!(service.store().counts().await.unwrap().is_empty());
}

#[tokio::test]
async fn near_duplicates_merge_keeping_provenance_and_max_importance() {
    let dir = tempfile::tempdir().unwrap();
    let service = common::service(dir.path()).await;
    let first = service
        .write(&WriteRequest {
            memory_type: Some("episodic".into()),
            importance: Some(0.5),
            source: Some(json!({"conversation": "c-1"})),
            ..write("On Monday the user asked for a report with data sources cited.")
        })
        .await
        .unwrap();
    assert_eq!(first.status, WriteStatus::Stored);
    let id = first.memory_id.unwrap();

    let second = service
        .write(&WriteRequest {
            memory_type: Some("episodic".into()),
            importance: Some(0.9),
            source: Some(json!({"conversation": "c-2"})),
            ..write("on monday the user asked for a report with data sources cited")
        })
        .await
        .unwrap();
    assert_eq!(second.status, WriteStatus::Merged);
    assert_eq!(second.duplicate_of, Some(id));
    assert_eq!(second.memory_id, Some(id));

    let row = service.store().get(id).await.unwrap().unwrap();
    assert_eq!(row.importance, 0.9);
    // Episodic: the newer wording wins, the old one is kept in the provenance trail.
    assert_eq!(
        row.content,
        "on monday the user asked for a report with data sources cited"
    );
    assert_eq!(row.source, json!({"conversation": "c-1"}));
    let merged = row.merged_sources.as_array().unwrap();
    assert_eq!(merged.len(), 1);
    assert_eq!(merged[0]["source"], json!({"conversation": "c-2"}));
    assert_eq!(
        merged[0]["replaced_content"],
        json!("On Monday the user asked for a report with data sources cited.")
    );
    let counts = service.store().counts().await.unwrap();
    assert_eq!(
        counts.iter().map(|c| c.count).sum::<i64>(),
        1,
        "no duplicate row"
    );
}

/// A repeat merges into the row it repeats even where the vector index's walk does not reach
/// that row's point (0.3-0.4 % of real-text lines in a walked 20k-row namespace; here the
/// point is taken out of the index outright): the store finds exact repeats itself.
#[tokio::test]
async fn an_exact_repeat_merges_where_the_index_misses_its_row() {
    let dir = tempfile::tempdir().unwrap();
    let embedder = Arc::new(BuiltinEmbedder::new());
    let index = common::open_index(dir.path(), embedder.dimension()).await;
    let service = common::service_with(dir.path(), index.clone(), embedder).await;
    let text = "On Tuesday the user moved the weekly sync to Thursday afternoons.";
    let episodic = |source: &str| WriteRequest {
        memory_type: Some("episodic".into()),
        source: Some(json!({"conversation": source})),
        ..write(text)
    };
    let first = service.write(&episodic("c-1")).await.unwrap();
    assert_eq!(first.status, WriteStatus::Stored);
    let id = first.memory_id.unwrap();
    index.delete(vec![id]).await.unwrap();

    let second = service.write(&episodic("c-2")).await.unwrap();
    assert_eq!(second.status, WriteStatus::Merged, "{second:?}");
    assert_eq!(second.duplicate_of, Some(id));
    let row = service.store().get(id).await.unwrap().unwrap();
    assert_eq!(
        row.merged_sources[0]["source"],
        json!({"conversation": "c-2"})
    );
    // Only a repeat: another type of the namespace is another scope.
    let semantic = service
        .write(&WriteRequest {
            memory_type: Some("semantic".into()),
            ..write(text)
        })
        .await
        .unwrap();
    assert_eq!(semantic.status, WriteStatus::Stored);
}

#[tokio::test]
async fn semantic_merge_keeps_the_existing_wording_and_other_namespaces_do_not_merge() {
    let dir = tempfile::tempdir().unwrap();
    let service = common::service(dir.path()).await;
    let text = "The user wants data sources cited in every report.";
    let first = service
        .write(&WriteRequest {
            memory_type: Some("semantic".into()),
            ..write(text)
        })
        .await
        .unwrap();
    let second = service
        .write(&WriteRequest {
            memory_type: Some("semantic".into()),
            ..write("the user wants data sources cited in every report")
        })
        .await
        .unwrap();
    assert_eq!(second.status, WriteStatus::Merged);
    let row = service
        .store()
        .get(first.memory_id.unwrap())
        .await
        .unwrap()
        .unwrap();
    assert_eq!(row.content, text);

    let other_ns = service
        .write(&WriteRequest {
            memory_type: Some("semantic".into()),
            namespace: Some("other".into()),
            ..write(text)
        })
        .await
        .unwrap();
    assert_eq!(other_ns.status, WriteStatus::Stored);
    let other_type = service
        .write(&WriteRequest {
            memory_type: Some("episodic".into()),
            ..write(text)
        })
        .await
        .unwrap();
    assert_eq!(other_type.status, WriteStatus::Stored);
}

#[tokio::test]
async fn a_newer_fact_supersedes_the_older_one_without_deleting_it() {
    let dir = tempfile::tempdir().unwrap();
    let service = common::service(dir.path()).await;
    let fact = |content: &str| WriteRequest {
        memory_type: Some("semantic".into()),
        entity: Some("user".into()),
        attribute: Some("city".into()),
        importance: Some(0.8),
        ..write(content)
    };
    let old = service
        .write(&fact("The user lives in Paris."))
        .await
        .unwrap()
        .memory_id
        .unwrap();
    let new = service
        .write(&fact("The user moved to Berlin in May."))
        .await
        .unwrap();
    assert_eq!(new.status, WriteStatus::Stored);
    assert_eq!(new.superseded, vec![old]);
    let new_id = new.memory_id.unwrap();

    let old_row = service.store().get(old).await.unwrap().unwrap();
    assert_eq!(old_row.status, Status::Deprecated);
    assert_eq!(old_row.deprecated_by, Some(new_id));
    assert!(old_row.deprecated_at.is_some());

    let found = service
        .search(&search("where does the user live Paris"))
        .await
        .unwrap();
    assert!(
        found.memories.iter().all(|m| m.id != old),
        "deprecated hidden by default"
    );
    assert_found_deprecated(
        &service,
        "where does the user live Paris",
        old,
        new_id,
        "deprecated returned on request",
    )
    .await;
}

/// `query` with `include_deprecated` returns memory `id`, shown as deprecated by `by`.
async fn assert_found_deprecated(
    service: &hindsight::service::MemoryService,
    query: &str,
    id: uuid::Uuid,
    by: uuid::Uuid,
    why: &str,
) {
    let found = service
        .search(&SearchRequest {
            include_deprecated: Some(true),
            ..search(query)
        })
        .await
        .unwrap();
    let hit = found.memories.iter().find(|m| m.id == id).expect(why);
    assert_eq!(hit.status, Status::Deprecated);
    assert_eq!(hit.deprecated_by, Some(by));
}

#[tokio::test]
async fn ranking_combines_similarity_recency_and_importance() {
    let dir = tempfile::tempdir().unwrap();
    let service = common::service(dir.path()).await;
    let relevant = service
        .write(&write("The user's dog is called Biscuit."))
        .await
        .unwrap()
        .memory_id
        .unwrap();
    service
        .write(&write("Quarterly revenue grew four percent."))
        .await
        .unwrap();
    service
        .write(&write("The deployment pipeline runs on Fridays."))
        .await
        .unwrap();
    let result = service
        .search(&search("what is the name of the user's dog"))
        .await
        .unwrap();
    assert_eq!(result.memories.first().map(|m| m.id), Some(relevant));
    for m in &result.memories {
        let expected = 0.7 * m.relevance + 0.2 * m.recency + 0.1 * m.importance;
        assert!(
            (m.score - expected).abs() < 1e-9,
            "score is the documented blend"
        );
    }
    assert!(result.memories.windows(2).all(|w| w[0].score >= w[1].score));

    // Same text, same similarity: the more important memory ranks first …
    let low = service
        .write(&WriteRequest {
            importance: Some(0.4),
            namespace: Some("imp".into()),
            ..write("Alpha project kickoff notes")
        })
        .await
        .unwrap()
        .memory_id
        .unwrap();
    let high = service
        .write(&WriteRequest {
            importance: Some(1.0),
            namespace: Some("imp".into()),
            memory_type: Some("semantic".into()),
            ..write("Alpha project kickoff notes")
        })
        .await
        .unwrap()
        .memory_id
        .unwrap();
    let ranked = service
        .search(&SearchRequest {
            namespace: Some("imp".into()),
            ..search("alpha project kickoff")
        })
        .await
        .unwrap();
    let order: Vec<_> = ranked.memories.iter().map(|m| m.id).collect();
    assert_eq!(order, vec![high, low]);

    // … and an old memory ranks below a fresh one with the same text and importance.
    let store = service.store().clone();
    let old = insert_direct(
        &*store,
        "recency",
        "Weekly sync moved to Tuesday",
        Utc::now() - Duration::days(60),
        None,
    )
    .await;
    let fresh = service
        .write(&WriteRequest {
            namespace: Some("recency".into()),
            memory_type: Some("semantic".into()),
            ..write("Weekly sync moved to Tuesday")
        })
        .await
        .unwrap()
        .memory_id
        .unwrap();
    service.repair_index().await.unwrap();
    let ranked = service
        .search(&SearchRequest {
            namespace: Some("recency".into()),
            ..search("weekly sync")
        })
        .await
        .unwrap();
    let order: Vec<_> = ranked.memories.iter().map(|m| m.id).collect();
    assert_eq!(order, vec![fresh, old]);
    assert!(ranked.memories[1].recency < 0.1);
}

/// Insert a row as an older process would have, then let repair index it.
async fn insert_direct(
    store: &dyn MemoryStore,
    namespace: &str,
    content: &str,
    created_at: chrono::DateTime<Utc>,
    expires_at: Option<chrono::DateTime<Utc>>,
) -> uuid::Uuid {
    let embedder = BuiltinEmbedder::new();
    let memory = NewMemory {
        id: uuid::Uuid::now_v7(),
        namespace: Namespace::parse(namespace).unwrap(),
        memory_type: MemoryType::Episodic,
        content: Content::parse(content, 1000).unwrap(),
        importance: Importance::parse(0.5).unwrap(),
        entity: None,
        attribute: None,
        source: json!(null),
        metadata: json!({}),
        created_at,
        occurred_at: created_at,
        expires_at,
        embedding_model: embedder.id().into(),
        embedding: embedder.embed_one(content),
    }
    .into_memory();
    store.insert(&memory).await.unwrap();
    memory.id
}

/// Event time: what the writer says happened when is kept apart from when it was stored; the
/// time range and recency go by it, every hit shows both; a clock a little ahead is accepted.
#[tokio::test]
async fn event_time_drives_the_time_range_and_recency_and_is_shown() {
    let dir = tempfile::tempdir().unwrap();
    let service = common::service(dir.path()).await;
    let at = |content: &str, when: &str| WriteRequest {
        occurred_at: Some(when.into()),
        ..write(content)
    };
    let before = Utc::now();
    let june = service
        .write(&at(
            "Booked the flight to Lisbon",
            "2024-06-10T10:00:00+02:00",
        ))
        .await
        .unwrap()
        .memory_id
        .unwrap();
    let july = service
        .write(&at("Cancelled the hotel in Lisbon", "2024-07-10T10:00:00Z"))
        .await
        .unwrap()
        .memory_id
        .unwrap();
    let today = service
        .write(&write("Asked about the weather in Lisbon"))
        .await
        .unwrap()
        .memory_id
        .unwrap();
    // Two minutes ahead is a clock out of step, not a mistake.
    let ahead = Utc::now() + Duration::minutes(2);
    service
        .write(&at("Checked the Lisbon metro map", &ahead.to_rfc3339()))
        .await
        .unwrap();

    let june_row = service.store().get(june).await.unwrap().unwrap();
    assert_eq!(
        june_row.occurred_at,
        "2024-06-10T08:00:00Z"
            .parse::<chrono::DateTime<Utc>>()
            .unwrap()
    );
    // (Rows keep milliseconds.)
    assert!(
        june_row.created_at > before - Duration::milliseconds(1),
        "stored now, happened then"
    );

    let in_june = service
        .search(&SearchRequest {
            time_range: Some(TimeRange {
                from: Some("2024-06-01T00:00:00Z".into()),
                to: Some("2024-06-30T23:59:59Z".into()),
            }),
            ..search("Lisbon")
        })
        .await
        .unwrap();
    assert_eq!(
        in_june.memories.iter().map(|m| m.id).collect::<Vec<_>>(),
        vec![june],
        "the range reads when it happened, not when it was written (all were written today)"
    );
    let hit = &in_june.memories[0];
    assert_eq!(hit.occurred_at, june_row.occurred_at);
    assert_eq!(hit.created_at, june_row.created_at);

    let all = service.search(&search("Lisbon")).await.unwrap();
    let recency = |id| {
        all.memories
            .iter()
            .find(|m| m.id == id)
            .map(|m| m.recency)
            .unwrap()
    };
    assert!(recency(today) > 0.99, "{}", recency(today));
    assert!(
        recency(june) < recency(july) && recency(july) < 1e-3,
        "old events are not recent however fresh their rows: {} {}",
        recency(june),
        recency(july)
    );
}

/// History written out of order: the fact that happened last holds, whatever order the writes
/// came in; the older one is kept, superseded by it, and says so in the write's result.
#[tokio::test]
async fn a_fact_that_happened_earlier_does_not_supersede_a_later_one() {
    let dir = tempfile::tempdir().unwrap();
    let service = common::service(dir.path()).await;
    let fact = |content: &str, when: &str| WriteRequest {
        memory_type: Some("semantic".into()),
        entity: Some("user".into()),
        attribute: Some("employer".into()),
        importance: Some(0.8),
        occurred_at: Some(when.into()),
        ..write(content)
    };
    let current = service
        .write(&fact(
            "The user works at Acme Robotics.",
            "2025-03-01T00:00:00Z",
        ))
        .await
        .unwrap();
    let earlier = service
        .write(&fact(
            "The user works at Globex Shipping.",
            "2023-01-01T00:00:00Z",
        ))
        .await
        .unwrap();
    let current_id = current.memory_id.unwrap();
    assert_eq!(earlier.status, WriteStatus::Stored);
    assert!(earlier.superseded.is_empty());
    assert_eq!(earlier.superseded_by, Some(current_id));
    assert_eq!(earlier.reason.as_deref(), Some("newer_fact_holds"));
    let earlier_id = earlier.memory_id.unwrap();

    let found = service
        .search(&search("where does the user work Globex Acme"))
        .await
        .unwrap();
    assert_eq!(
        found.memories.iter().map(|m| m.id).collect::<Vec<_>>(),
        vec![current_id],
        "only the fact that holds"
    );
    assert_found_deprecated(
        &service,
        "where does the user work Globex Acme",
        earlier_id,
        current_id,
        "kept for the audit trail, and indexed as deprecated",
    )
    .await;

    let later = service
        .write(&fact("The user works at Initech.", "2026-01-01T00:00:00Z"))
        .await
        .unwrap();
    assert_eq!(later.superseded, vec![current_id]);
    assert_eq!(later.superseded_by, None);
}

#[tokio::test]
async fn search_records_access_filters_time_range_and_types() {
    let dir = tempfile::tempdir().unwrap();
    let service = common::service(dir.path()).await;
    let store = service.store().clone();
    let june = insert_direct(
        &*store,
        "default",
        "Trip to Lisbon booked",
        "2024-06-10T10:00:00Z".parse().unwrap(),
        None,
    )
    .await;
    let july = insert_direct(
        &*store,
        "default",
        "Trip to Lisbon cancelled",
        "2024-07-10T10:00:00Z".parse().unwrap(),
        None,
    )
    .await;
    service.repair_index().await.unwrap();

    let in_june = service
        .search(&SearchRequest {
            time_range: Some(TimeRange {
                from: Some("2024-06-01T00:00:00Z".into()),
                to: Some("2024-06-30T23:59:59Z".into()),
            }),
            ..search("trip to Lisbon")
        })
        .await
        .unwrap();
    assert_eq!(
        in_june.memories.iter().map(|m| m.id).collect::<Vec<_>>(),
        vec![june]
    );

    let semantic_only = service
        .search(&SearchRequest {
            memory_types: Some(vec!["semantic".into()]),
            ..search("trip to Lisbon")
        })
        .await
        .unwrap();
    assert!(semantic_only.memories.is_empty());

    service.search(&search("trip to Lisbon")).await.unwrap();
    // Accesses are buffered and written by the periodic flush.
    service.flush().await.unwrap();
    let june_row = store.get(june).await.unwrap().unwrap();
    let july_row = store.get(july).await.unwrap().unwrap();
    assert_eq!(june_row.access_count, 2);
    assert_eq!(july_row.access_count, 1);
    assert!(july_row.last_accessed_at.is_some());
}

/// Search accesses that could not be written are kept for the next flush (the archive job
/// ranks cold rows by them); a failed flush once dropped them.
#[tokio::test]
async fn accesses_survive_a_failed_flush() {
    let dir = tempfile::tempdir().unwrap();
    let service = common::service(dir.path()).await;
    let id = service
        .write(&write("The staging database lives in eu-west-1"))
        .await
        .unwrap()
        .memory_id
        .unwrap();
    service.flush().await.unwrap();
    // The store refuses every access update, as it would on a full disk or a lost connection.
    let db = sqlx::SqlitePool::connect(&format!(
        "sqlite://{}",
        dir.path().join("hindsight.db").display()
    ))
    .await
    .unwrap();
    sqlx::query(
        "CREATE TRIGGER refuse_access BEFORE UPDATE OF access_count ON memories \
         BEGIN SELECT RAISE(ABORT, 'refused for the test'); END",
    )
    .execute(&db)
    .await
    .unwrap();
    for _ in 0..2 {
        let found = service.search(&search("staging database")).await.unwrap();
        assert_eq!(found.memories[0].id, id);
    }
    assert!(service.flush().await.is_err());
    service.search(&search("staging database")).await.unwrap();
    assert!(service.flush().await.is_err());
    sqlx::query("DROP TRIGGER refuse_access")
        .execute(&db)
        .await
        .unwrap();
    service.flush().await.unwrap();
    let row = service.store().get(id).await.unwrap().unwrap();
    assert_eq!(row.access_count, 3, "every search counted, none lost");
    assert!(row.last_accessed_at.is_some());
}

/// The full-text arm on its own, then fused with the dense one: both apply every filter
/// (namespace, type, time range) where they run, and expired, forgotten, archived and (unless
/// asked) deprecated rows never surface through either; a Chinese query finds Chinese
/// memories; every hit shows the arms' evidence.
#[tokio::test]
async fn both_search_arms_apply_every_filter_and_read_chinese() {
    use hindsight::configuration::SearchArms;
    use hindsight::store::MaintenanceStore;
    let dir = tempfile::tempdir().unwrap();
    let store = Arc::new(
        SqliteStore::open(&dir.path().join("hindsight.db"), common::signer(dir.path()))
            .await
            .unwrap(),
    );
    let embedder = Arc::new(BuiltinEmbedder::new());
    let index = common::open_index(dir.path(), embedder.dimension()).await;
    let service = |arms| {
        let (store, index, embedder) = (store.clone(), index.clone(), embedder.clone());
        async move {
            hindsight::service::MemoryService::start(
                store,
                index,
                embedder,
                hindsight::service::Rules {
                    search_arms: arms,
                    ..hindsight::service::Rules::default()
                },
            )
            .await
            .unwrap()
        }
    };
    let writer = service(SearchArms::Hybrid).await;
    let write_in = |ns: &str, text: &str, kind: &str| WriteRequest {
        namespace: Some(ns.into()),
        memory_type: Some(kind.into()),
        ..write(text)
    };
    let id = |r: hindsight::service::WriteResult| r.memory_id.unwrap();
    let paid = id(writer
        .write(&write_in(
            "acme",
            "Invoice QX-7731 was paid by the finance team",
            "episodic",
        ))
        .await
        .unwrap());
    let old_fact = id(writer
        .write(&WriteRequest {
            entity: Some("invoice QX-7731".into()),
            attribute: Some("status".into()),
            ..write_in("acme", "Invoice QX-7731 status: open", "semantic")
        })
        .await
        .unwrap());
    let new_fact = id(writer
        .write(&WriteRequest {
            entity: Some("invoice QX-7731".into()),
            attribute: Some("status".into()),
            ..write_in("acme", "Invoice QX-7731 status: settled", "semantic")
        })
        .await
        .unwrap());
    let forgotten = id(writer
        .write(&write_in(
            "acme",
            "Invoice QX-7731 reminder email drafted",
            "episodic",
        ))
        .await
        .unwrap());
    writer
        .forget(&ForgetRequest {
            memory_id: Some(forgotten.to_string()),
            ..Default::default()
        })
        .await
        .unwrap();
    let archived = id(writer
        .write(&write_in(
            "acme",
            "Invoice QX-7731 scanned copy filed",
            "episodic",
        ))
        .await
        .unwrap());
    store
        .archive_ids_to_table(&[archived], Utc::now())
        .await
        .unwrap();
    let expired = insert_direct(
        &*store,
        "acme",
        "Invoice QX-7731 payment link, expired",
        Utc::now() - Duration::days(3),
        Some(Utc::now() - Duration::days(1)),
    )
    .await;
    let june = insert_direct(
        &*store,
        "acme",
        "Invoice QX-7731 first sent in June",
        "2024-06-10T10:00:00Z".parse().unwrap(),
        None,
    )
    .await;
    let elsewhere = id(writer
        .write(&write_in(
            "globex",
            "Invoice QX-7731 of another tenant",
            "episodic",
        ))
        .await
        .unwrap());
    let coffee = id(writer
        .write(&write_in("acme", "用户喜欢喝咖啡，不喜欢茶", "semantic"))
        .await
        .unwrap());
    writer.repair_index().await.unwrap();
    writer.flush().await.unwrap();
    drop(writer);

    for arms in [SearchArms::Lexical, SearchArms::Hybrid] {
        let service = service(arms).await;
        let ids = |request: SearchRequest| {
            let service = &service;
            async move {
                let mut ids: Vec<_> = service
                    .search(&request)
                    .await
                    .unwrap()
                    .memories
                    .into_iter()
                    .map(|m| m.id)
                    .collect();
                ids.sort();
                ids
            }
        };
        let query = |text: &str| SearchRequest {
            namespace: Some("acme".into()),
            top_k: Some(20),
            ..search(text)
        };
        // The lexical arm returns exactly the matches; the dense arm adds neighbours too.
        let matches = |found: Vec<_>, wanted: Vec<_>| {
            let mut wanted: Vec<hindsight::domain::MemoryId> = wanted;
            wanted.sort();
            if arms == SearchArms::Lexical {
                found == wanted
            } else {
                wanted.iter().all(|id| found.contains(id))
            }
        };
        assert!(
            matches(ids(query("QX-7731")).await, vec![paid, new_fact, june]),
            "{arms:?}"
        );
        for never in [forgotten, archived, expired, elsewhere, old_fact] {
            assert!(
                !ids(query("invoice QX-7731")).await.contains(&never),
                "{arms:?}"
            );
        }
        let with_old = ids(SearchRequest {
            include_deprecated: Some(true),
            ..query("QX-7731")
        })
        .await;
        assert!(
            with_old.contains(&old_fact),
            "{arms:?}: deprecated when asked"
        );
        let semantic = ids(SearchRequest {
            memory_types: Some(vec!["semantic".into()]),
            ..query("QX-7731")
        })
        .await;
        assert!(matches(semantic.clone(), vec![new_fact]), "{arms:?}");
        assert!(!semantic.contains(&paid) && !semantic.contains(&old_fact));
        let in_june = ids(SearchRequest {
            time_range: Some(TimeRange {
                from: Some("2024-06-01T00:00:00Z".into()),
                to: Some("2024-06-30T23:59:59Z".into()),
            }),
            ..query("QX-7731")
        })
        .await;
        assert_eq!(
            in_june,
            vec![june],
            "{arms:?}: nothing else was created in June"
        );
        let chinese = service.search(&query("咖啡")).await.unwrap().memories;
        assert_eq!(chinese[0].id, coffee, "{arms:?}");
        assert_eq!(chinese[0].lexical_rank, Some(1));
        let hit = &service
            .search(&query("QX-7731 paid"))
            .await
            .unwrap()
            .memories[0];
        assert_eq!(hit.id, paid, "{arms:?}");
        assert_eq!(hit.lexical_rank, Some(1), "{arms:?}: {hit:?}");
        assert!(hit.lexical_score.unwrap() > 0.0 && hit.similarity > 0.0);
        assert!((0.0..=1.0).contains(&hit.relevance));
        assert_eq!(
            hit.dense_rank.is_some(),
            arms == SearchArms::Hybrid,
            "{hit:?}"
        );
    }
}

#[tokio::test]
async fn expired_memories_are_never_returned() {
    let dir = tempfile::tempdir().unwrap();
    let service = common::service(dir.path()).await;
    let store = service.store().clone();
    let expired = insert_direct(
        &*store,
        "default",
        "Temporary build token rotated",
        Utc::now() - Duration::hours(30),
        Some(Utc::now() - Duration::hours(6)),
    )
    .await;
    let live = insert_direct(
        &*store,
        "default",
        "Temporary build token issued",
        Utc::now(),
        Some(Utc::now() + Duration::hours(6)),
    )
    .await;
    service.repair_index().await.unwrap();
    let found = service
        .search(&search("temporary build token"))
        .await
        .unwrap();
    let ids: Vec<_> = found.memories.iter().map(|m| m.id).collect();
    assert!(ids.contains(&live));
    assert!(!ids.contains(&expired));

    // Working memory gets the 24 h default TTL.
    let working = service
        .write(&WriteRequest {
            memory_type: Some("working".into()),
            ..write("Scratch: compare three vendors")
        })
        .await
        .unwrap()
        .memory_id
        .unwrap();
    let row = store.get(working).await.unwrap().unwrap();
    let ttl = row.expires_at.unwrap() - row.created_at;
    assert!(
        (ttl - Duration::hours(24)).num_seconds().abs() <= 1,
        "{ttl}"
    );
    // ttl_days is honoured.
    let ttl_row = service
        .write(&WriteRequest {
            ttl_days: Some(2.0),
            ..write("Conference badge pickup code")
        })
        .await
        .unwrap()
        .memory_id
        .unwrap();
    let row = store.get(ttl_row).await.unwrap().unwrap();
    assert_eq!((row.expires_at.unwrap() - row.created_at).num_hours(), 48);
}

/// The index's copy of a row can be out of step with the row (an edit made in the database,
/// a repair still to come): search goes by the row, so the stale copy never widens the result
/// to another namespace or type.
#[tokio::test]
async fn search_goes_by_the_row_not_a_stale_index_copy() {
    let dir = tempfile::tempdir().unwrap();
    let service = common::service(dir.path()).await;
    let moved = service
        .write(&WriteRequest {
            namespace: Some("alice".into()),
            ..write("Quarterly llama census figures for the north pasture")
        })
        .await
        .unwrap()
        .memory_id
        .unwrap();
    let retyped = service
        .write(&WriteRequest {
            namespace: Some("alice".into()),
            memory_type: Some("episodic".into()),
            ..write("Llama shearing happened on the north pasture")
        })
        .await
        .unwrap()
        .memory_id
        .unwrap();
    service.flush().await.unwrap();
    let query = |types: Option<Vec<&str>>| SearchRequest {
        namespace: Some("alice".into()),
        memory_types: types.map(|t| t.into_iter().map(str::to_owned).collect()),
        top_k: Some(10),
        ..search("llama north pasture")
    };
    let ids = |r: hindsight::service::SearchResult| {
        r.memories.into_iter().map(|m| m.id).collect::<Vec<_>>()
    };
    let before = ids(service
        .search(&query(Some(vec!["episodic"])))
        .await
        .unwrap());
    assert!(before.contains(&moved) && before.contains(&retyped));

    // Behind the index's back: one row moves to another namespace, the other changes type.
    let pool = sqlx::SqlitePool::connect(&format!(
        "sqlite://{}",
        dir.path().join("hindsight.db").display()
    ))
    .await
    .unwrap();
    sqlx::query("UPDATE memories SET namespace = 'bob' WHERE id = ?1")
        .bind(moved.to_string())
        .execute(&pool)
        .await
        .unwrap();
    sqlx::query("UPDATE memories SET memory_type = 'semantic' WHERE id = ?1")
        .bind(retyped.to_string())
        .execute(&pool)
        .await
        .unwrap();
    pool.close().await;
    // Changes the server made (signed again), which its index has not seen.
    hindsight::store::IntegrityStore::resign(
        service.store().as_ref(),
        hindsight::store::RowTable::Memories,
        &[moved, retyped],
    )
    .await
    .unwrap();

    let all = service.search(&query(None)).await.unwrap();
    assert!(
        all.memories
            .iter()
            .all(|m| m.id != moved && m.namespace == "alice"),
        "a row now in namespace bob is not returned to a search of alice: {:?}",
        all.memories
            .iter()
            .map(|m| (&m.namespace, &m.content))
            .collect::<Vec<_>>()
    );
    assert!(
        ids(all).contains(&retyped),
        "the retyped row is still alice's"
    );
    let episodic = ids(service
        .search(&query(Some(vec!["episodic"])))
        .await
        .unwrap());
    assert!(
        !episodic.contains(&retyped),
        "a row that is semantic now is not returned to a search for episodic memories"
    );
    assert!(!episodic.contains(&moved));
}

#[tokio::test]
async fn forget_soft_keeps_the_row_and_hard_deletes_it() {
    let dir = tempfile::tempdir().unwrap();
    let service = common::service(dir.path()).await;
    let a = service
        .write(&write("The user's passport number is on file"))
        .await
        .unwrap()
        .memory_id
        .unwrap();
    let b = service
        .write(&WriteRequest {
            entity: Some("bob".into()),
            ..write("Bob prefers email over phone")
        })
        .await
        .unwrap()
        .memory_id
        .unwrap();
    let c = service
        .write(&WriteRequest {
            entity: Some("bob".into()),
            ..write("Bob's birthday is in March")
        })
        .await
        .unwrap()
        .memory_id
        .unwrap();

    let soft = service
        .forget(&ForgetRequest {
            memory_id: Some(a.to_string()),
            ..Default::default()
        })
        .await
        .unwrap();
    assert_eq!((soft.forgotten, soft.ids.clone()), (1, vec![a]));
    assert_eq!(
        service.store().get(a).await.unwrap().unwrap().status,
        Status::Forgotten
    );
    let found = service.search(&search("passport number")).await.unwrap();
    assert!(found.memories.iter().all(|m| m.id != a));

    let hard = service
        .forget(&ForgetRequest {
            filter: Some(ForgetFilterRequest {
                namespace: "default".into(),
                entity: Some("bob".into()),
                ..Default::default()
            }),
            hard: Some(true),
            ..Default::default()
        })
        .await
        .unwrap();
    let mut ids = hard.ids.clone();
    ids.sort();
    let mut expected = vec![b, c];
    expected.sort();
    assert_eq!(ids, expected);
    assert!(service.store().get(b).await.unwrap().is_none());
    assert!(
        service
            .search(&search("Bob email birthday"))
            .await
            .unwrap()
            .memories
            .is_empty()
    );
}

#[tokio::test]
async fn invalid_requests_are_rejected_naming_the_field_and_write_nothing() {
    let dir = tempfile::tempdir().unwrap();
    let service = common::service(dir.path()).await;
    let cases = [
        (
            WriteRequest {
                importance: Some(1.5),
                ..write("x")
            },
            "importance",
        ),
        (
            WriteRequest {
                memory_type: Some("fact".into()),
                ..write("x")
            },
            "memory_type",
        ),
        (write(&"x".repeat(8_001)), "content"),
        (write("   "), "content"),
        (
            WriteRequest {
                namespace: Some("bad ns".into()),
                ..write("x")
            },
            "namespace",
        ),
        (
            WriteRequest {
                ttl_days: Some(-1.0),
                ..write("x")
            },
            "ttl_days",
        ),
        (
            WriteRequest {
                occurred_at: Some("last Tuesday".into()),
                ..write("x")
            },
            "occurred_at",
        ),
        (
            WriteRequest {
                occurred_at: Some((Utc::now() + Duration::minutes(30)).to_rfc3339()),
                ..write("x")
            },
            "occurred_at",
        ),
    ];
    for (request, field) in cases {
        match service.write(&request).await {
            Err(ServiceError::Invalid(e)) => assert_eq!(e.field, field, "{e}"),
            other => panic!("expected invalid {field}, got {other:?}"),
        }
    }
    assert!(service.store().counts().await.unwrap().is_empty());
}

/// An index with faults to order: writes that fail while `broken` is set (the crash window
/// between the row commit and the index write), deletes that fail while `broken_deletes` is,
/// and searches for episodic memories of namespace `held` that wait at `gate` (a write of that
/// scope stops inside its dedup probe, holding its write lock).
struct BrokenIndex {
    inner: Arc<dyn VectorIndex>,
    broken: AtomicBool,
    broken_deletes: AtomicBool,
    /// Notified when a search reaches the gate.
    entered: tokio::sync::Notify,
    /// Closed unless `gated`; each permit lets one gated search through.
    gate: tokio::sync::Semaphore,
    gated: bool,
}

impl BrokenIndex {
    fn new(inner: Arc<dyn VectorIndex>) -> Self {
        Self {
            inner,
            broken: AtomicBool::new(false),
            broken_deletes: AtomicBool::new(false),
            entered: tokio::sync::Notify::new(),
            gate: tokio::sync::Semaphore::new(0),
            gated: false,
        }
    }
}

#[async_trait]
impl VectorIndex for BrokenIndex {
    fn dimension(&self) -> usize {
        self.inner.dimension()
    }
    fn is_shared(&self) -> bool {
        self.inner.is_shared()
    }
    async fn upsert(&self, points: Vec<IndexPoint>) -> Result<(), IndexError> {
        if self.broken.load(Ordering::SeqCst) {
            return Err(IndexError::Engine(
                "simulated crash before the index write".into(),
            ));
        }
        self.inner.upsert(points).await
    }
    async fn delete(&self, ids: Vec<uuid::Uuid>) -> Result<(), IndexError> {
        if self.broken_deletes.load(Ordering::SeqCst) {
            return Err(IndexError::Engine("simulated failed delete".into()));
        }
        self.inner.delete(ids).await
    }
    async fn search(&self, query: IndexQuery) -> Result<Vec<Hit>, IndexError> {
        if self.gated
            && query.namespaces == ["held"]
            && query.memory_types == [MemoryType::Episodic]
        {
            self.entered.notify_one();
            self.gate.acquire().await.unwrap().forget();
        }
        self.inner.search(query).await
    }
    async fn lexical_search(
        &self,
        query: &IndexQuery,
        terms: &[String],
        max_df: f64,
    ) -> Result<Option<hindsight::lexical::LexicalHits>, IndexError> {
        self.inner.lexical_search(query, terms, max_df).await
    }
    async fn count(&self) -> Result<usize, IndexError> {
        self.inner.count().await
    }
    async fn reset(&self, dimension: usize) -> Result<(), IndexError> {
        self.inner.reset(dimension).await
    }
    async fn flush(&self) -> Result<(), IndexError> {
        self.inner.flush().await
    }
}

/// A write waits only for writes of its own (namespace, type): while one of namespace `held`
/// is stuck in its dedup probe, writes to other namespaces and to another type of `held`
/// finish, and a second episodic write to `held` waits its turn (and then merges, since the
/// first one's row is there by then). One process-wide lock used to hold them all.
#[tokio::test]
async fn writes_wait_only_for_their_own_namespace_and_type() {
    let dir = tempfile::tempdir().unwrap();
    let embedder: Arc<dyn Embedder> = Arc::new(BuiltinEmbedder::new());
    let index = Arc::new(BrokenIndex {
        gated: true,
        ..BrokenIndex::new(common::open_index(dir.path(), embedder.dimension()).await)
    });
    let service = Arc::new(common::service_with(dir.path(), index.clone(), embedder).await);
    let in_held = |content: &str| WriteRequest {
        namespace: Some("held".into()),
        ..write(content)
    };
    let first = tokio::spawn({
        let service = service.clone();
        let request = in_held("The deploy freeze starts on Friday at noon");
        async move { service.write(&request).await }
    });
    index.entered.notified().await;
    // The first write holds (held, episodic). Others go on.
    let elsewhere = tokio::time::timeout(
        std::time::Duration::from_secs(30),
        service.write(&WriteRequest {
            namespace: Some("other".into()),
            ..write("The deploy freeze starts on Friday at noon")
        }),
    )
    .await
    .expect("a write to another namespace waited for the held one")
    .unwrap();
    assert_eq!(elsewhere.status, WriteStatus::Stored);
    let other_type = tokio::time::timeout(
        std::time::Duration::from_secs(30),
        service.write(&WriteRequest {
            memory_type: Some("semantic".into()),
            ..in_held("The deploy freeze starts on Friday at noon")
        }),
    )
    .await
    .expect("a semantic write waited for an episodic one")
    .unwrap();
    assert_eq!(other_type.status, WriteStatus::Stored);
    let second = tokio::spawn({
        let service = service.clone();
        let request = in_held("The deploy freeze starts on Friday at noon!");
        async move { service.write(&request).await }
    });
    // The second write of the held scope queues behind the first; it has not reached the
    // index (its search would pass the gate's notification on) while the first is stuck.
    tokio::time::sleep(std::time::Duration::from_millis(300)).await;
    assert!(!second.is_finished(), "the same scope's write did not wait");
    index.gate.add_permits(2);
    let first = first.await.unwrap().unwrap();
    let second = second.await.unwrap().unwrap();
    assert_eq!(first.status, WriteStatus::Stored);
    assert_eq!(
        (second.status, second.duplicate_of),
        (WriteStatus::Merged, first.memory_id),
        "it waited, then found the first one's row"
    );
}

#[tokio::test]
async fn rows_written_before_a_failed_index_write_are_indexed_on_restart() {
    let dir = tempfile::tempdir().unwrap();
    let embedder: Arc<dyn Embedder> = Arc::new(BuiltinEmbedder::new());
    let id = {
        let index = Arc::new(BrokenIndex {
            broken: AtomicBool::new(true),
            ..BrokenIndex::new(common::open_index(dir.path(), embedder.dimension()).await)
        });
        let service = common::service_with(dir.path(), index, embedder.clone()).await;
        let result = service
            .write(&write("The staging database lives in eu-west-1"))
            .await
            .unwrap();
        assert_eq!(
            result.status,
            WriteStatus::Stored,
            "the row is committed even if the index fails"
        );
        let found = service
            .search(&search("staging database region"))
            .await
            .unwrap();
        assert!(
            found.memories.iter().all(|m| m.dense_rank.is_none()),
            "not in the vector index yet (the full-text index, written with the row, finds it)"
        );
        result.memory_id.unwrap()
    };
    let pending = SqliteStore::open(&dir.path().join("hindsight.db"), common::signer(dir.path()))
        .await
        .unwrap()
        .index_pending(10)
        .await
        .unwrap();
    assert_eq!(pending.iter().map(|m| m.id).collect::<Vec<_>>(), vec![id]);

    let service = common::service(dir.path()).await;
    let found = service
        .search(&search("staging database region"))
        .await
        .unwrap();
    assert_eq!(found.memories.first().map(|m| m.id), Some(id));
    service.flush().await.unwrap();
    assert!(service.store().index_pending(10).await.unwrap().is_empty());
}

/// A hard forget whose index delete fails leaves no vector behind for long: the rows are gone,
/// so the tombstone keeps the delete pending, a repair while the index still fails keeps it,
/// and the repair at the next start finishes it (it was once never retried).
#[tokio::test]
async fn a_hard_forget_whose_index_delete_failed_is_finished_by_repair() {
    let dir = tempfile::tempdir().unwrap();
    let embedder: Arc<dyn Embedder> = Arc::new(BuiltinEmbedder::new());
    let id = {
        let inner = common::open_index(dir.path(), embedder.dimension()).await;
        let index = Arc::new(BrokenIndex {
            broken_deletes: AtomicBool::new(true),
            ..BrokenIndex::new(inner.clone())
        });
        let service = common::service_with(dir.path(), index, embedder.clone()).await;
        let id = service
            .write(&write("The user's bank PIN is 4921"))
            .await
            .unwrap()
            .memory_id
            .unwrap();
        service.flush().await.unwrap();
        assert_eq!(inner.count().await.unwrap(), 1);
        let forgotten = service
            .forget(&ForgetRequest {
                memory_id: Some(id.to_string()),
                hard: Some(true),
                ..Default::default()
            })
            .await
            .unwrap();
        assert_eq!(forgotten.ids, vec![id]);
        assert!(service.store().get(id).await.unwrap().is_none());
        assert_eq!(
            inner.count().await.unwrap(),
            1,
            "the delete failed: the vector is still in the index"
        );
        assert_eq!(
            service.store().index_deletes_pending(10).await.unwrap(),
            vec![id]
        );
        assert!(
            service.repair_index().await.is_err(),
            "the index still fails"
        );
        assert_eq!(
            service.store().index_deletes_pending(10).await.unwrap(),
            vec![id]
        );
        id
    };
    let service = common::service(dir.path()).await;
    assert_eq!(
        service.index().count().await.unwrap(),
        0,
        "the repair at start deleted it"
    );
    assert!(
        service
            .store()
            .index_deletes_pending(10)
            .await
            .unwrap()
            .is_empty()
    );
    assert!(service.store().get(id).await.unwrap().is_none());
}

#[tokio::test]
async fn a_deleted_index_is_rebuilt_from_the_store() {
    let dir = tempfile::tempdir().unwrap();
    let id = {
        let service = common::service(dir.path()).await;
        let id = service
            .write(&write("The VPN config lives in the ops wiki"))
            .await
            .unwrap()
            .memory_id
            .unwrap();
        service.flush().await.unwrap();
        id
    };
    std::fs::remove_dir_all(dir.path().join("index")).unwrap();
    let service = common::service(dir.path()).await;
    assert_eq!(service.index().count().await.unwrap(), 1);
    let found = service
        .search(&search("where is the VPN config"))
        .await
        .unwrap();
    assert_eq!(found.memories.first().map(|m| m.id), Some(id));
}

/// Put a point the store does not know into the index on disk, so a later count tells whether
/// the index was kept (the stray point is still there) or rebuilt from the store (it is gone).
async fn add_stray_point(dir: &std::path::Path) {
    let index = common::open_index(dir, BuiltinEmbedder::default().dimension()).await;
    index
        .upsert(vec![IndexPoint {
            id: uuid::Uuid::now_v7(),
            vector: BuiltinEmbedder::default()
                .embed(&["stray".to_owned()])
                .await
                .unwrap()
                .remove(0),
            namespace: "default".into(),
            memory_type: MemoryType::Semantic,
            status: Status::Active,
            occurred_at: 0,
            terms: vec!["stray".into()],
        }])
        .await
        .unwrap();
    index.flush().await.unwrap();
}

#[tokio::test]
async fn an_index_with_another_payload_layout_is_rebuilt_from_the_store() {
    let dir = tempfile::tempdir().unwrap();
    let id = {
        let service = common::service(dir.path()).await;
        let id = service
            .write(&write("Backups run nightly at 02:00 UTC"))
            .await
            .unwrap()
            .memory_id
            .unwrap();
        service.flush().await.unwrap();
        id
    };
    // Control: with the current layout the index on disk is kept as it is.
    add_stray_point(dir.path()).await;
    assert_eq!(
        common::service(dir.path())
            .await
            .index()
            .count()
            .await
            .unwrap(),
        2
    );

    // An index written by an older hindsight (its points lack the `scope` payload the filters
    // use) would answer every search with nothing: it must be dropped and rebuilt.
    let layout = dir.path().join("index").join("hindsight-layout");
    std::fs::write(&layout, "1").unwrap();
    let service = common::service(dir.path()).await;
    assert_eq!(
        service.index().count().await.unwrap(),
        1,
        "rebuilt from the one row"
    );
    let found = service
        .search(&search("when do backups run"))
        .await
        .unwrap();
    assert_eq!(found.memories.first().map(|m| m.id), Some(id));
    assert_ne!(std::fs::read_to_string(&layout).unwrap(), "1");
}

#[tokio::test]
async fn a_changed_embedder_refuses_to_search_until_reindexed() {
    let dir = tempfile::tempdir().unwrap();
    let id = {
        let service = common::service(dir.path()).await;
        let id = service
            .write(&write("The user's favourite colour is teal"))
            .await
            .unwrap()
            .memory_id
            .unwrap();
        service.flush().await.unwrap();
        id
    };
    let other: Arc<dyn Embedder> = Arc::new(Another64);
    let index = common::open_index(dir.path(), other.dimension()).await;
    let mut service = common::service_with(dir.path(), index, other.clone()).await;
    let err = service
        .search(&search("favourite colour"))
        .await
        .unwrap_err();
    let message = err.to_string();
    assert!(matches!(err, ServiceError::EmbedderMismatch { .. }));
    assert!(
        message.contains("hindsight reindex") && message.contains("builtin-ngram-v1/512"),
        "{message}"
    );
    assert!(
        service.write(&write("another fact")).await.is_err(),
        "writes refuse too"
    );

    let reindexed = service.reindex(|_| {}).await.unwrap();
    assert_eq!(reindexed, 1);
    assert_eq!(service.index().dimension(), 64);
    let row = service.store().get(id).await.unwrap().unwrap();
    assert_eq!(row.embedding_model, other.id());
    assert_eq!(row.embedding.len(), 64);
    // Random vectors carry no meaning, but the exact text maps to the exact vector.
    let found = service
        .search(&search("The user's favourite colour is teal"))
        .await
        .unwrap();
    assert_eq!(found.memories.first().map(|m| m.id), Some(id));
    assert!(found.memories[0].similarity > 0.99);
}

#[tokio::test]
async fn concurrent_writers_of_one_fact_leave_exactly_one_active() {
    let dir = tempfile::tempdir().unwrap();
    let service = Arc::new(common::service(dir.path()).await);
    let mut tasks = Vec::new();
    for i in 0..8 {
        let service = service.clone();
        tasks.push(tokio::spawn(async move {
            service
                .write(&WriteRequest {
                    memory_type: Some("semantic".into()),
                    entity: Some("user".into()),
                    attribute: Some("editor".into()),
                    ..write(&format!("The user switched to editor number {i} this week"))
                })
                .await
                .unwrap()
        }));
    }
    for t in tasks {
        t.await.unwrap();
    }
    let active = service
        .store()
        .active_facts(&Namespace::default(), "user", "editor")
        .await
        .unwrap();
    assert_eq!(active.len(), 1);
}

#[tokio::test]
async fn one_search_covers_several_namespaces_ranked_together() {
    let dir = tempfile::tempdir().unwrap();
    let service = common::service(dir.path()).await;
    for (namespace, content) in [
        ("private/ana", "Ana prefers tea in the morning"),
        ("team/analytics", "The analytics team drinks tea at standup"),
        ("global", "Tea and coffee are in the kitchen"),
        ("private/bob", "Bob prefers tea without sugar"),
    ] {
        service
            .write(&WriteRequest {
                namespace: Some(namespace.into()),
                ..write(content)
            })
            .await
            .unwrap();
    }
    let found = service
        .search(&SearchRequest {
            namespaces: Some(vec![
                "private/ana".into(),
                "team/analytics".into(),
                "global".into(),
                "global".into(),
            ]),
            top_k: Some(10),
            ..search("tea")
        })
        .await
        .unwrap();
    let mut namespaces: Vec<&str> = found
        .memories
        .iter()
        .map(|m| m.namespace.as_str())
        .collect();
    namespaces.sort();
    assert_eq!(namespaces, ["global", "private/ana", "team/analytics"]);
    // Ranked together: scores never rise down the list.
    assert!(found.memories.windows(2).all(|w| w[0].score >= w[1].score));

    for (request, field) in [
        (
            SearchRequest {
                namespace: Some("global".into()),
                namespaces: Some(vec!["private/ana".into()]),
                ..search("tea")
            },
            "namespaces",
        ),
        (
            SearchRequest {
                namespaces: Some(vec![]),
                ..search("tea")
            },
            "namespaces",
        ),
        (
            SearchRequest {
                namespaces: Some(vec!["global".into(), "has space".into()]),
                ..search("tea")
            },
            "namespaces[1]",
        ),
    ] {
        let err = service.search(&request).await.unwrap_err().to_string();
        assert!(err.contains(field), "{err}");
    }
}

/// An embedder of another vector space (64 dimensions), for the mismatch refusal.
struct Another64;

#[async_trait]
impl Embedder for Another64 {
    fn id(&self) -> &str {
        "another-space/64"
    }

    fn dimension(&self) -> usize {
        64
    }

    async fn embed(&self, texts: &[String]) -> Result<Vec<Vec<f32>>, hindsight::embed::EmbedError> {
        Ok(texts
            .iter()
            .map(|text| {
                let mut v = vec![0.0; 64];
                v[text.len() % 64] = 1.0;
                v
            })
            .collect())
    }
}

/// A query asked again is not embedded again: its vector comes from the recent queries', and
/// the answer is the same. `search_staged` says where the time went.
#[tokio::test]
async fn a_repeated_query_is_embedded_once_and_answered_the_same() {
    let dir = tempfile::tempdir().unwrap();
    let embedder = Arc::new(common::CountingEmbedder::new(Default::default()));
    let index = common::open_index(dir.path(), embedder.dimension()).await;
    let service = common::service_with(dir.path(), index, embedder.clone()).await;
    for text in [
        "The user's dog is called Biscuit",
        "The deploy runs every Friday at noon",
    ] {
        service.write(&write(text)).await.unwrap();
    }

    let (first, stages) = service
        .search_staged(&search("what is the dog called"))
        .await
        .unwrap();
    assert_eq!(embedder.embedded("what is the dog called"), 1);
    assert!(first.memories[0].content.contains("Biscuit"), "{first:?}");
    assert!(stages.embed > std::time::Duration::ZERO && stages.dense > std::time::Duration::ZERO);
    assert!(
        stages.arms >= stages.dense.max(stages.lexical),
        "{stages:?}"
    );

    let (again, stages) = service
        .search_staged(&search("what is the dog called"))
        .await
        .unwrap();
    assert_eq!(
        embedder.embedded("what is the dog called"),
        1,
        "embedded again"
    );
    let ids =
        |r: &hindsight::service::SearchResult| r.memories.iter().map(|m| m.id).collect::<Vec<_>>();
    assert_eq!(ids(&again), ids(&first));
    assert!(stages.dense > std::time::Duration::ZERO, "{stages:?}");

    service
        .search(&search("when does the deploy run"))
        .await
        .unwrap();
    assert_eq!(embedder.embedded("when does the deploy run"), 1);
}
