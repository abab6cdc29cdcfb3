//! Input every store must treat alike, on both stores: NUL characters (U+0000), which
//! PostgreSQL's `text` and `jsonb` cannot hold and SQLite would keep, are refused in every
//! field a memory keeps, with an error naming the field, and nothing is written.

use crate::common;

use std::sync::Arc;

use hindsight::embed::{BuiltinEmbedder, Embedder};
use hindsight::service::{MemoryService, Rules, ServiceError, WriteRequest};
use hindsight::store::{MemoryStore, PoolSize, PostgresStore, SqliteStore};
use serde_json::json;

async fn service_on(store: Arc<dyn MemoryStore>, dir: &std::path::Path) -> MemoryService {
    let embedder = Arc::new(BuiltinEmbedder::new());
    let index = common::open_index(dir, embedder.dimension()).await;
    MemoryService::start(store, index, embedder, Rules::default())
        .await
        .unwrap()
}

async fn nul_characters_are_refused_naming_the_field(service: &MemoryService) {
    let base = || WriteRequest {
        content: "The user prefers tea".into(),
        ..WriteRequest::default()
    };
    let cases = [
        (
            "entity",
            WriteRequest {
                entity: Some("us\0er".into()),
                ..base()
            },
        ),
        (
            "attribute",
            WriteRequest {
                entity: Some("user".into()),
                attribute: Some("drink\0".into()),
                ..base()
            },
        ),
        (
            "source",
            WriteRequest {
                source: Some(json!({"conversation": "c\u{0}1"})),
                ..base()
            },
        ),
        (
            "metadata",
            WriteRequest {
                metadata: json!({"tags": ["a", "b\u{0}"]}).as_object().cloned(),
                ..base()
            },
        ),
        (
            "content",
            WriteRequest {
                content: "tea\0".into(),
                ..base()
            },
        ),
        (
            "namespace",
            WriteRequest {
                namespace: Some("ns\0".into()),
                ..base()
            },
        ),
    ];
    for (field, request) in cases {
        match service.write(&request).await {
            Err(ServiceError::Invalid(e)) => {
                assert_eq!(e.field, field, "{e}");
                assert!(e.to_string().contains("NUL") || field == "namespace", "{e}");
            }
            other => panic!("{field}: expected a refusal naming it, got {other:?}"),
        }
    }
    assert!(
        service.store().counts().await.unwrap().is_empty(),
        "nothing was written"
    );
    // The same memory without the NUL is stored.
    let stored = service
        .write(&WriteRequest {
            entity: Some("user".into()),
            attribute: Some("drink".into()),
            source: Some(json!({"conversation": "c1"})),
            ..base()
        })
        .await
        .unwrap();
    assert!(stored.memory_id.is_some());
}

#[tokio::test]
async fn sqlite_refuses_nul_characters() {
    let dir = tempfile::tempdir().unwrap();
    let store = Arc::new(
        SqliteStore::open(&dir.path().join("hindsight.db"), common::signer(dir.path()))
            .await
            .unwrap(),
    );
    nul_characters_are_refused_naming_the_field(&service_on(store, dir.path()).await).await;
}

#[tokio::test]
#[ignore = "needs PostgreSQL (HINDSIGHT_TEST_POSTGRES_URL, default 127.0.0.1:5432): full tier"]
async fn postgres_refuses_nul_characters() {
    let database = common::pg::TestDatabase::create().await;
    let dir = tempfile::tempdir().unwrap();
    let store = Arc::new(
        PostgresStore::connect(
            &database.url,
            PoolSize { min: 1, max: 4 },
            common::signer(dir.path()),
        )
        .await
        .unwrap(),
    );
    nul_characters_are_refused_naming_the_field(&service_on(store, dir.path()).await).await;
}
