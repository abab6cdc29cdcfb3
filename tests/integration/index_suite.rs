//! One backend-agnostic vector-index suite, run against every index: the embedded engine
//! (always) and a Qdrant server (`qdrant_server_tier`: ignored, run by `cargo test --
//! --include-ignored` with `QDRANT_URL` naming a server; without one they fail, never skip).

use crate::common;
use std::sync::Arc;
use std::time::Duration;

use hindsight::domain::{MemoryType, Status};
use hindsight::embed::{cosine, l2_normalize};
use hindsight::index::{
    EdgeIndex, HnswParams, IndexError, IndexPoint, IndexQuery, QdrantIndex, QdrantSettings,
    VectorIndex,
};
use uuid::Uuid;

const DIM: usize = 8;

/// A unit vector pointing mostly along axis `axis`, nudged by `nudge` along the next one.
fn vector(axis: usize, nudge: f32) -> Vec<f32> {
    let mut v = [0.0; DIM];
    v[axis % DIM] = 1.0;
    v[(axis + 1) % DIM] = nudge;
    let mut v = v.to_vec();
    l2_normalize(&mut v);
    v
}

fn point(namespace: &str, memory_type: MemoryType, status: Status, occurred_at: i64) -> IndexPoint {
    IndexPoint {
        id: Uuid::now_v7(),
        vector: vector(0, occurred_at as f32 / 1000.0),
        namespace: namespace.to_owned(),
        memory_type,
        status,
        occurred_at,
        terms: vec![],
    }
}

fn query(namespace: &str) -> IndexQuery {
    IndexQuery {
        vector: vector(0, 0.0),
        namespaces: vec![namespace.to_owned()],
        memory_types: vec![],
        statuses: vec![Status::Active],
        occurred_from: None,
        occurred_to: None,
        limit: 10,
        ef: None,
    }
}

/// Pseudo-random unit vectors of `dimension`, the same for a seed.
fn random_vector_of(seed: u64, dimension: usize) -> Vec<f32> {
    let mut x = seed.wrapping_mul(6_364_136_223_846_793_005).wrapping_add(1);
    let mut v: Vec<f32> = (0..dimension)
        .map(|_| {
            x = x
                .wrapping_mul(6_364_136_223_846_793_005)
                .wrapping_add(1_442_695_040_888_963_407);
            ((x >> 33) as f32 / (1u64 << 31) as f32) - 1.0
        })
        .collect();
    l2_normalize(&mut v);
    v
}

/// `per_scope` active points in each of three scopes ("a" episodic, "a" semantic, "b"
/// episodic), pseudo-random vectors, point `i` of a scope at time `i`.
fn points_in_three_scopes(per_scope: i64) -> Vec<IndexPoint> {
    let scopes = [
        ("a", MemoryType::Episodic),
        ("a", MemoryType::Semantic),
        ("b", MemoryType::Episodic),
    ];
    let mut points = Vec::new();
    for (k, (namespace, memory_type)) in scopes.into_iter().enumerate() {
        for i in 0..per_scope {
            let mut p = point(namespace, memory_type, Status::Active, i);
            p.vector = random_vector_of((k * 10_000 + i as usize) as u64, DIM);
            points.push(p);
        }
    }
    points
}

fn ids(hits: &[hindsight::index::Hit]) -> Vec<Uuid> {
    hits.iter().map(|h| h.id).collect()
}

pub async fn nearest_first_with_cosine_scores(index: &dyn VectorIndex) {
    let mut near = point("a", MemoryType::Episodic, Status::Active, 0);
    near.vector = vector(0, 0.1);
    let mut far = point("a", MemoryType::Episodic, Status::Active, 0);
    far.vector = vector(0, 2.0);
    let mut orthogonal = point("a", MemoryType::Episodic, Status::Active, 0);
    orthogonal.vector = vector(4, 0.0);
    index
        .upsert(vec![far.clone(), orthogonal.clone(), near.clone()])
        .await
        .unwrap();
    index.flush().await.unwrap();
    let hits = index.search(query("a")).await.unwrap();
    assert_eq!(ids(&hits), vec![near.id, far.id, orthogonal.id]);
    let cos_near = 1.0 / (1.0f32 + 0.01).sqrt();
    assert!((hits[0].score - cos_near).abs() < 1e-3, "{hits:?}");
    assert!(hits[2].score.abs() < 1e-3, "orthogonal scores 0: {hits:?}");
    assert_eq!(index.count().await.unwrap(), 3);
}

pub async fn filters_namespace_type_status_and_time(index: &dyn VectorIndex) {
    let episodic = point("a", MemoryType::Episodic, Status::Active, 100);
    let semantic = point("a", MemoryType::Semantic, Status::Active, 200);
    let deprecated = point("a", MemoryType::Semantic, Status::Deprecated, 300);
    let other_namespace = point("b", MemoryType::Episodic, Status::Active, 100);
    // Namespaces with a space or a prefix of another must not match by accident.
    let spaced = point("a b", MemoryType::Episodic, Status::Active, 100);
    index
        .upsert(vec![
            episodic.clone(),
            semantic.clone(),
            deprecated.clone(),
            other_namespace.clone(),
            spaced.clone(),
        ])
        .await
        .unwrap();
    index.flush().await.unwrap();
    let sorted = |mut v: Vec<Uuid>| {
        v.sort();
        v
    };

    let all_active = index.search(query("a")).await.unwrap();
    assert_eq!(
        sorted(ids(&all_active)),
        sorted(vec![episodic.id, semantic.id])
    );

    let mut q = query("a");
    q.memory_types = vec![MemoryType::Semantic];
    q.statuses = vec![Status::Active, Status::Deprecated];
    assert_eq!(
        sorted(ids(&index.search(q).await.unwrap())),
        sorted(vec![semantic.id, deprecated.id])
    );

    let mut q = query("a");
    q.occurred_from = Some(150);
    q.occurred_to = Some(250);
    assert_eq!(ids(&index.search(q).await.unwrap()), vec![semantic.id]);

    assert_eq!(
        ids(&index.search(query("a b")).await.unwrap()),
        vec![spaced.id]
    );
    assert_eq!(
        ids(&index.search(query("b")).await.unwrap()),
        vec![other_namespace.id]
    );
    assert!(index.search(query("c")).await.unwrap().is_empty());

    // Several namespaces at once: the union, nothing else ("a b" is not "a" and "b").
    let mut q = query("a");
    q.namespaces = vec!["a".into(), "b".into(), "c".into()];
    assert_eq!(
        sorted(ids(&index.search(q).await.unwrap())),
        sorted(vec![episodic.id, semantic.id, other_namespace.id])
    );
    // A namespace named twice is read once: each hit listed once.
    let mut q = query("a");
    q.namespaces = vec!["a".into(), "b".into(), "a".into()];
    q.memory_types = vec![MemoryType::Episodic, MemoryType::Episodic];
    assert_eq!(
        sorted(ids(&index.search(q).await.unwrap())),
        sorted(vec![episodic.id, other_namespace.id])
    );
}

pub async fn upsert_replaces_payload_and_delete_removes(index: &dyn VectorIndex) {
    let mut p = point("a", MemoryType::Episodic, Status::Active, 0);
    let kept = point("a", MemoryType::Episodic, Status::Active, 0);
    index.upsert(vec![p.clone(), kept.clone()]).await.unwrap();
    p.status = Status::Deprecated;
    index.upsert(vec![p.clone()]).await.unwrap();
    index.flush().await.unwrap();
    assert_eq!(ids(&index.search(query("a")).await.unwrap()), vec![kept.id]);
    assert_eq!(
        index.count().await.unwrap(),
        2,
        "an upsert replaces, never adds"
    );

    index.delete(vec![kept.id, Uuid::now_v7()]).await.unwrap();
    index.flush().await.unwrap();
    assert!(index.search(query("a")).await.unwrap().is_empty());
    assert_eq!(index.count().await.unwrap(), 1);
}

pub async fn wrong_dimension_is_refused_and_reset_changes_it(index: &dyn VectorIndex) {
    assert_eq!(index.dimension(), DIM);
    let mut bad = point("a", MemoryType::Episodic, Status::Active, 0);
    bad.vector = vec![1.0; DIM + 1];
    let err = index.upsert(vec![bad]).await.unwrap_err();
    assert!(
        matches!(err, IndexError::Dimension { expected: DIM, got } if got == DIM + 1),
        "{err}"
    );
    let mut q = query("a");
    q.vector = vec![1.0; 3];
    assert!(matches!(
        index.search(q).await.unwrap_err(),
        IndexError::Dimension { .. }
    ));

    index
        .upsert(vec![point("a", MemoryType::Episodic, Status::Active, 0)])
        .await
        .unwrap();
    index.reset(4).await.unwrap();
    assert_eq!(index.dimension(), 4);
    assert_eq!(index.count().await.unwrap(), 0, "reset drops every point");
    let mut small = point("a", MemoryType::Episodic, Status::Active, 0);
    small.vector = vec![0.5; 4];
    index.upsert(vec![small.clone()]).await.unwrap();
    index.flush().await.unwrap();
    let mut q = query("a");
    q.vector = vec![0.5; 4];
    assert_eq!(ids(&index.search(q).await.unwrap()), vec![small.id]);
}

/// `search_many`'s answer for `vectors`, checked against each vector searched alone: the
/// same points in the same order, the same scores.
async fn search_many_as_alone(
    index: &dyn VectorIndex,
    q: &IndexQuery,
    vectors: &[Vec<f32>],
) -> Vec<Vec<hindsight::index::Hit>> {
    let many = index
        .search_many(q.clone(), vectors.to_vec())
        .await
        .unwrap();
    assert_eq!(many.len(), vectors.len());
    for (vector, hits) in vectors.iter().zip(&many) {
        let one = index
            .search(IndexQuery {
                vector: vector.clone(),
                ..q.clone()
            })
            .await
            .unwrap();
        assert_eq!(ids(hits), ids(&one), "{q:?}");
        for (a, b) in hits.iter().zip(&one) {
            assert!((a.score - b.score).abs() < 1e-5, "{a:?} {b:?}");
        }
    }
    many
}

/// Several vectors asked at once (a batch's dedup probes) answer what each asked alone does,
/// in their order, across scopes, with and without a time range.
pub async fn search_many_answers_as_one_search_each(index: &dyn VectorIndex) {
    index.upsert(points_in_three_scopes(100)).await.unwrap();
    index.flush().await.unwrap();
    let vectors: Vec<Vec<f32>> = (0..12).map(|s| random_vector_of(50_000 + s, DIM)).collect();
    let mut both = query("a");
    both.namespaces = vec!["a".into(), "b".into()];
    both.limit = 5;
    let mut ranged = query("a");
    ranged.occurred_from = Some(20);
    ranged.occurred_to = Some(60);
    for q in [query("a"), both, ranged] {
        let many = search_many_as_alone(index, &q, &vectors).await;
        assert!(many.iter().all(|hits| !hits.is_empty()), "{q:?}");
    }
    assert!(
        index
            .search_many(query("a"), vec![])
            .await
            .unwrap()
            .is_empty()
    );
    let err = index
        .search_many(query("a"), vec![vectors[0].clone(), vec![1.0; DIM + 1]])
        .await
        .unwrap_err();
    assert!(
        matches!(err, IndexError::Dimension { expected: DIM, got } if got == DIM + 1),
        "{err}"
    );
}

macro_rules! index_suite {
    ($backend:ident, $open:expr, $attrs:tt) => {
        mod $backend {
            use super::*;
            index_suite!(@tests $open, $attrs;
                nearest_first_with_cosine_scores,
                filters_namespace_type_status_and_time,
                upsert_replaces_payload_and_delete_removes,
                wrong_dimension_is_refused_and_reset_changes_it,
                search_many_answers_as_one_search_each,
            );
        }
    };
    (@tests $open:expr, $attrs:tt; $($test:ident),* $(,)?) => {
        $( index_suite!(@one $attrs, $open, $test); )*
    };
    (@one [$($attr:tt)*], $open:expr, $test:ident) => {
        #[tokio::test]
        $($attr)*
        async fn $test() {
            let (_guard, index) = $open(stringify!($test)).await;
            super::$test(&*index).await;
        }
    };
}

/// The embedded engine in a temp dir (removed when the guard drops).
async fn embedded(_test: &str) -> (tempfile::TempDir, Arc<dyn VectorIndex>) {
    let dir = tempfile::tempdir().unwrap();
    let index = EdgeIndex::open(&dir.path().join("index"), DIM, HnswParams::default())
        .await
        .unwrap();
    (dir, Arc::new(index))
}

index_suite!(embedded_backend, embedded, []);

/// Deletes the test's collection when the test ends, pass or fail.
struct Collection {
    url: String,
    name: String,
}

impl Drop for Collection {
    fn drop(&mut self) {
        let (url, name) = (self.url.clone(), self.name.clone());
        // Drop runs inside the test's runtime: do the async cleanup on a thread of its own.
        let _ = std::thread::spawn(move || {
            let runtime = tokio::runtime::Builder::new_current_thread()
                .enable_all()
                .build()
                .expect("runtime");
            runtime.block_on(async {
                if let Ok(client) = qdrant_client::Qdrant::from_url(&url)
                    .skip_compatibility_check()
                    .build()
                {
                    let _ = client.delete_collection(&name).await;
                }
            });
        })
        .join();
    }
}

/// A fresh collection per test on the Qdrant server at `QDRANT_URL` (gRPC, e.g.
/// `http://127.0.0.1:6334`). These tests are the scale-out tier (ignored unless asked for, and
/// left out of the full tier by name when `QDRANT_URL` is unset: `scripts/test.sh`); run
/// without a server, each fails saying so.
async fn qdrant_server(test: &str) -> (Collection, Arc<dyn VectorIndex>) {
    let url = std::env::var("QDRANT_URL").unwrap_or_else(|_| {
        panic!(
            "{test}: QDRANT_URL is not set; these tests need a Qdrant server (its gRPC URL, e.g. \
             http://127.0.0.1:6334)"
        )
    });
    let name = format!("hindsight_test_{}", Uuid::new_v4().simple());
    let guard = Collection {
        url: url.clone(),
        name: name.clone(),
    };
    let index = QdrantIndex::connect(
        &QdrantSettings {
            url,
            api_key: std::env::var("QDRANT_API_KEY").ok().map(Into::into),
            collection: name,
            timeout: Duration::from_secs(10),
        },
        DIM,
        HnswParams::default(),
    )
    .await
    .unwrap_or_else(|e| panic!("QDRANT_URL is set but the server is unusable: {e}"));
    (guard, Arc::new(index))
}

index_suite!(qdrant_server_tier, qdrant_server, [#[ignore = "needs a Qdrant server (QDRANT_URL): scale-out tier, docs/testing.md"]]);

/// What an operator sees when `qdrant_url` points at nothing: start fails, naming the server,
/// and nothing reaches stdout (under `hindsight mcp` stdout is the MCP stream). A malformed URL
/// fails config validation naming the key.
#[test]
fn a_daemon_configured_for_an_absent_qdrant_server_fails_clearly() {
    let dir = tempfile::tempdir().unwrap();
    let run = |url: &str| {
        std::process::Command::new(env!("CARGO_BIN_EXE_hindsight"))
            .args(["mcp", "--data-dir"])
            .arg(dir.path())
            .env("HINDSIGHT_QDRANT_URL", url)
            .stdin(std::process::Stdio::null())
            .output()
            .unwrap()
    };
    // Port 9 (discard) has no listener here: connection refused.
    let output = run("http://127.0.0.1:9");
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(!output.status.success());
    assert!(
        stderr.contains("qdrant server at http://127.0.0.1:9 is not reachable"),
        "{stderr}"
    );
    assert!(
        output.stdout.is_empty(),
        "stdout must stay clean: {:?}",
        output.stdout
    );

    let output = run("127.0.0.1:6334");
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(!output.status.success());
    assert!(stderr.contains("qdrant_url"), "{stderr}");
    assert!(output.stdout.is_empty());
}

/// The embedded engine's lexical arm (a server keeps no terms: its `lexical_search` is `None`
/// and the store's full-text index answers).
mod embedded_lexical {
    use super::*;
    use hindsight::index::sparse;

    fn with_terms(namespace: &str, status: Status, occurred_at: i64, text: &str) -> IndexPoint {
        let mut p = point(namespace, MemoryType::Episodic, status, occurred_at);
        p.terms = text.split(' ').map(str::to_owned).collect();
        p
    }

    fn terms(text: &str) -> Vec<String> {
        text.split(' ').map(str::to_owned).collect()
    }

    async fn open() -> (tempfile::TempDir, Arc<dyn VectorIndex>) {
        embedded("lexical").await
    }

    #[tokio::test]
    async fn bm25_under_the_same_filters_as_the_dense_arm() {
        let (_dir, index) = open().await;
        let both = with_terms("a", Status::Active, 100, "invoice zebra");
        let one = with_terms("a", Status::Active, 200, "invoice paid");
        let elsewhere = with_terms("b", Status::Active, 100, "invoice zebra");
        let old = with_terms("a", Status::Deprecated, 100, "invoice zebra");
        let unrelated = with_terms("a", Status::Active, 100, "weather today");
        index
            .upsert(vec![
                both.clone(),
                one.clone(),
                elsewhere.clone(),
                old.clone(),
                unrelated,
            ])
            .await
            .unwrap();
        let found = index
            .lexical_search(&query("a"), &terms("invoice zebra"), 1.0)
            .await
            .unwrap()
            .expect("the embedded index keeps a lexical arm");
        let ids: Vec<Uuid> = found.iter().map(|h| h.id).collect();
        assert_eq!(ids, vec![both.id, one.id], "{found:?}");
        // The engine's IDF over all five points (whatever the filter): invoice in 4, zebra in 3.
        let full = sparse::idf(5.0, 4.0) + sparse::idf(5.0, 3.0);
        let full_match = found.full_match.unwrap();
        assert!((full_match - full).abs() < 1e-4, "{full_match} vs {full}");
        // A two-term point is shorter than the average memory, so it scores above a full match.
        assert!(found.hits[0].score > full_match, "{found:?}");

        let mut with_deprecated = query("a");
        with_deprecated.statuses.push(Status::Deprecated);
        with_deprecated.occurred_to = Some(150);
        let found = index
            .lexical_search(&with_deprecated, &terms("invoice"), 1.0)
            .await
            .unwrap()
            .unwrap();
        let mut ids: Vec<Uuid> = found.iter().map(|h| h.id).collect();
        ids.sort();
        let mut expected = vec![both.id, old.id];
        expected.sort();
        assert_eq!(ids, expected, "status and event time filter it too");

        let nowhere = index
            .lexical_search(&query("a"), &terms("nowhere"), 1.0)
            .await
            .unwrap()
            .unwrap();
        assert!(nowhere.is_empty());
        let idf = nowhere.full_match.unwrap();
        assert!(
            (idf - sparse::idf(5.0, 0.0)).abs() < 1e-4,
            "a term no point holds counts at the highest IDF: {idf}"
        );
        let nothing = index
            .lexical_search(&query("a"), &[], 1.0)
            .await
            .unwrap()
            .unwrap();
        assert!(nothing.is_empty() && nothing.full_match.is_none());
    }

    #[tokio::test]
    async fn common_terms_are_left_out_but_the_two_rarest_stay() {
        let (_dir, index) = open().await;
        let mut points: Vec<IndexPoint> = (0..1_000)
            .map(|i| with_terms("a", Status::Active, 0, &format!("the filler{i}")))
            .collect();
        let target = with_terms("a", Status::Active, 0, "the alpha beta gamma");
        points.push(target.clone());
        for _ in 0..10 {
            points.push(with_terms("a", Status::Active, 0, "the gamma"));
        }
        index.upsert(points).await.unwrap();
        let n = 1_011.0;
        let mut wide = query("a");
        wide.limit = 20;
        let found = index
            .lexical_search(&wide, &terms("the alpha beta gamma"), 0.05)
            .await
            .unwrap()
            .unwrap();
        let rare = sparse::idf(n, 1.0) * 2.0 + sparse::idf(n, 11.0);
        let full_match = found.full_match.unwrap();
        assert!(
            (full_match - rare).abs() < 1e-3,
            "`the` (in every point) is left out: {full_match} vs {rare}"
        );
        assert_eq!(found.hits[0].id, target.id);
        assert_eq!(found.len(), 11, "only points with a kept term match");

        let two = index
            .lexical_search(&wide, &terms("the gamma"), 0.05)
            .await
            .unwrap()
            .unwrap();
        let both = sparse::idf(n, n) + sparse::idf(n, 11.0);
        let full_match = two.full_match.unwrap();
        assert!(
            (full_match - both).abs() < 1e-3,
            "two terms are both kept, however common: {full_match} vs {both}"
        );
        assert_eq!(two.len(), 20, "`the` matches every point");
    }

    /// The engine scores a sparse search 10,000 point offsets at a time; between batches it
    /// skips the longest posting list up to the other lists' next entry when that list's
    /// `max_next_weight` says nothing ahead can enter the top ten. The vendored qdrant-edge
    /// patch (vendor/README.md) maintains those values with an early stop; one left too low
    /// would skip real matches. So, in one appendable segment (a bulk load: no optimisation),
    /// after appends, weight changes and deletes, the top ten must be an exhaustive BM25's —
    /// with the heaviest `alpha` points past the first batch and `beta` only at the very end.
    #[tokio::test]
    async fn pruned_ranking_after_appends_updates_and_deletes_is_exhaustive_bm25() {
        const N: usize = 25_000;
        let (_dir, index) = open().await;
        // Light: `alpha` once in 20–56 words. Heavy: `alpha` six times in 8 words.
        let light = |i: usize| {
            let mut words = vec!["alpha".to_owned()];
            words.extend((0..20 + i % 37).map(|k| format!("f{i}x{k}")));
            words
        };
        let heavy = |i: usize| {
            let mut words = vec!["alpha".to_owned(); 6];
            words.extend((0..2).map(|k| format!("f{i}x{k}")));
            words
        };
        let mut docs: Vec<(IndexPoint, Vec<String>)> = (0..N)
            .map(|i| {
                let mut p = point("a", MemoryType::Episodic, Status::Active, 0);
                p.terms = if i >= 10_000 && i % 1_000 == 500 {
                    heavy(i)
                } else {
                    light(i)
                };
                if i >= N - 3 {
                    p.terms.push("beta".to_owned());
                }
                (p.clone(), p.terms)
            })
            .collect();
        for chunk in docs.chunks(500) {
            let points = chunk.iter().map(|(p, _)| p.clone()).collect();
            index.upsert_bulk(points).await.unwrap();
        }
        // Weight changes in place: two heavy points turn light, two light ones heavy.
        let mut changed = Vec::new();
        for (i, terms) in [
            (12_500, light(12_500)),
            (20_500, light(20_500)),
            (17_001, heavy(17_001)),
            (24_100, heavy(24_100)),
        ] {
            docs[i].0.terms = terms.clone();
            docs[i].1 = terms;
            changed.push(docs[i].0.clone());
        }
        index.upsert_bulk(changed).await.unwrap();
        // And three heavy points deleted.
        let gone: Vec<Uuid> = [11_500, 18_500, 24_500]
            .iter()
            .map(|i| docs[*i].0.id)
            .collect();
        index.delete(gone.clone()).await.unwrap();
        docs.retain(|(p, _)| !gone.contains(&p.id));

        let weight = |terms: &[String], term: &str| {
            let (dims, weights) = sparse::document(terms);
            dims.iter()
                .position(|d| *d == sparse::dimension(term))
                .map_or(0.0, |at| f64::from(weights[at]))
        };
        // The engine's IDFs, as the lexical arm reads them (a one-term query's full match).
        let idf = async |term: &str| {
            let one = index
                .lexical_search(&query("a"), &terms(term), 1.0)
                .await
                .unwrap();
            one.unwrap().full_match.unwrap()
        };
        let (idf_a, idf_b) = (idf("alpha").await, idf("beta").await);
        let mut expected: Vec<(Uuid, f64)> = docs
            .iter()
            .map(|(p, t)| (p.id, idf_a * weight(t, "alpha") + idf_b * weight(t, "beta")))
            .collect();
        expected.sort_by(|a, b| b.1.total_cmp(&a.1));
        let found = index
            .lexical_search(&query("a"), &terms("alpha beta"), 1.0)
            .await
            .unwrap()
            .unwrap();
        assert_eq!(found.len(), 10);
        let score_of: std::collections::HashMap<Uuid, f64> = expected.iter().copied().collect();
        for (k, hit) in found.iter().enumerate() {
            let want = expected[k].1;
            assert!(
                (hit.score - want).abs() < 1e-3 * want,
                "rank {k}: engine {} vs exhaustive {want}",
                hit.score
            );
            let own = *score_of
                .get(&hit.id)
                .unwrap_or_else(|| panic!("rank {k} is a deleted point"));
            assert!(
                (own - want).abs() < 1e-3 * want,
                "rank {k} holds a point scoring {own}"
            );
        }
    }
}

/// Scopes large enough to be walked. The embedded index has no graph over all points, only each
/// large scope's own links, so a search reads its scopes one by one: a walk started in one
/// scope could never reach another, and one whose entry points all fall outside a time range
/// finds nothing at all unless the points in range are scanned instead.
mod embedded_graph {
    use super::*;

    /// Pseudo-random unit vectors, the same for a seed.
    fn random_vector(seed: u64) -> Vec<f32> {
        random_vector_of(seed, DIM)
    }

    /// An index whose full-scan threshold, and the size at which a segment is built into a
    /// graph at all, is 512 points of `dimension` floats: a scope larger than that gets links
    /// of its own and is walked.
    async fn walked_index(dir: &std::path::Path, dimension: usize) -> EdgeIndex {
        let kb = 512 * dimension * std::mem::size_of::<f32>() / 1024;
        let params = HnswParams {
            full_scan_kb: kb,
            indexing_threshold_kb: kb,
            ..HnswParams::default()
        };
        EdgeIndex::open(&dir.join("index"), dimension, params)
            .await
            .unwrap()
    }

    /// `n` active episodic points of namespace "a", pseudo-random vectors of `dimension`,
    /// point `i` at time `i`.
    fn random_points(n: i64, dimension: usize) -> Vec<IndexPoint> {
        (0..n)
            .map(|i| {
                let mut p = point("a", MemoryType::Episodic, Status::Active, i);
                p.vector = random_vector_of(i as u64, dimension);
                p
            })
            .collect()
    }

    /// The ids of the 10 points `passes` lets through nearest to `vector`, by brute force.
    fn exact_top_10(
        points: &[IndexPoint],
        vector: &[f32],
        passes: &dyn Fn(&IndexPoint) -> bool,
    ) -> Vec<Uuid> {
        let mut best: Vec<(f32, Uuid)> = points
            .iter()
            .filter(|p| passes(p))
            .map(|p| (cosine(vector, &p.vector), p.id))
            .collect();
        best.sort_by(|a, b| b.0.total_cmp(&a.0));
        best.into_iter().take(10).map(|(_, id)| id).collect()
    }

    #[tokio::test]
    async fn searches_walk_every_scope_and_find_points_in_a_time_range() {
        let dir = tempfile::tempdir().unwrap();
        // Each scope of 1,500 gets links of its own and is walked.
        let index = walked_index(dir.path(), DIM).await;
        let points = points_in_three_scopes(1_500);
        for chunk in points.chunks(1_000) {
            index.upsert_bulk(chunk.to_vec()).await.unwrap();
        }
        index.optimize().await.unwrap();

        // Each query against brute force over the points its filter passes.
        let (mut found, mut wanted) = (0, 0);
        let mut check = async |q: IndexQuery, passes: &dyn Fn(&IndexPoint) -> bool| {
            let best = exact_top_10(&points, &q.vector, passes);
            let hits = index.search(q).await.unwrap();
            assert_eq!(hits.len(), 10, "every search has 10 points to find");
            let got = ids(&hits);
            // A walk scores a neighbour before it reads the filter (a vendor patch,
            // vendor/README.md): whatever it turns away unchecked, no hit fails the filter.
            for hit in &got {
                let p = points.iter().find(|p| p.id == *hit).unwrap();
                assert!(passes(p), "a hit the filter does not pass: {p:?}");
            }
            wanted += 10;
            found += best.iter().filter(|id| got.contains(id)).count();
        };
        for seed in 0..20 {
            let vector = random_vector(1_000_000 + seed);
            // Both namespaces, every type: three scopes walked.
            let mut q = query("a");
            q.namespaces = vec!["a".into(), "b".into()];
            q.vector = vector.clone();
            check(q, &|_| true).await;
            // Two complementary halves of the time range, each more than the threshold in
            // each scope: every scope's entry point falls outside one of them.
            for (from, to) in [(0, 749), (750, 1_499)] {
                let mut q = query("a");
                q.vector = vector.clone();
                q.occurred_from = Some(from);
                q.occurred_to = Some(to);
                check(q, &|p| {
                    p.namespace == "a" && (from..=to).contains(&p.occurred_at)
                })
                .await;
            }
        }
        let recall = found as f64 / wanted as f64;
        assert!(recall >= 0.9, "recall@10 {recall} against brute force");
    }

    /// A batch's dedup probes asked together over a walked scope (its links in a built
    /// segment) and the points appended since (scanned): what each probe alone finds, in order.
    #[tokio::test]
    async fn many_probes_at_once_walk_and_scan_as_each_alone() {
        let dir = tempfile::tempdir().unwrap();
        const DIMENSION: usize = 64;
        let index = walked_index(dir.path(), DIMENSION).await;
        let points = random_points(2_300, DIMENSION);
        index.upsert_bulk(points[..2_000].to_vec()).await.unwrap();
        index.optimize().await.unwrap();
        index.upsert(points[2_000..].to_vec()).await.unwrap();
        let vectors: Vec<Vec<f32>> = points
            .iter()
            .step_by(50)
            .map(|p| p.vector.clone())
            .collect();
        let mut q = query("a");
        q.limit = 5;
        q.ef = Some(128);
        let many = search_many_as_alone(&index, &q, &vectors).await;
        let own_found = many
            .iter()
            .zip(points.iter().step_by(50))
            .filter(|(hits, p)| hits.first().map(|h| h.id) == Some(p.id))
            .count();
        // Both halves are there: the walked points and the appended ones.
        assert!(
            own_found >= vectors.len() - 1,
            "{own_found} of {}",
            vectors.len()
        );
    }

    /// The write path's dedup probe walks with a narrow beam (`ef` 32, searches 128): in a
    /// walked scope it still finds the point a near-duplicate re-says (cosine ~0.95), and a
    /// beam below the limit is widened to it.
    #[tokio::test]
    async fn a_narrow_beam_finds_the_point_a_near_duplicate_re_says() {
        let dir = tempfile::tempdir().unwrap();
        const DIMENSION: usize = 64;
        let index = walked_index(dir.path(), DIMENSION).await;
        let points = random_points(2_000, DIMENSION);
        index.upsert_bulk(points.clone()).await.unwrap();
        index.optimize().await.unwrap();
        for p in points.iter().step_by(40) {
            // The point plus a third of a random unit vector: cosine ~0.95.
            let noise = random_vector_of(p.occurred_at as u64 + 1_000_000, DIMENSION);
            let mut near: Vec<f32> = p
                .vector
                .iter()
                .zip(&noise)
                .map(|(x, n)| x + n / 3.0)
                .collect();
            l2_normalize(&mut near);
            let similarity = cosine(&near, &p.vector);
            assert!(similarity > 0.92, "{similarity}");
            let mut q = query("a");
            q.vector = near;
            q.limit = 5;
            q.ef = Some(32);
            let hits = index.search(q.clone()).await.unwrap();
            assert_eq!(hits.first().map(|h| h.id), Some(p.id), "{hits:?}");
            q.ef = Some(1);
            assert_eq!(index.search(q).await.unwrap().len(), 5);
        }
    }

    /// A store that grows a thousand points at a time and is optimised after each step, as a
    /// daemon's is, with points updated and deleted in between. Each merge keeps the links its
    /// old segment had within a scope and links only the points new to it or changed (a vendor
    /// patch, vendor/README.md): searches must still find what brute force over the current
    /// points finds, and never a deleted point or an updated one's old vector.
    #[tokio::test]
    async fn a_store_merged_step_by_step_keeps_its_recall() {
        let dir = tempfile::tempdir().unwrap();
        // 64 dimensions, where a graph walk can miss (at 8 every walk was exact).
        const DIMENSION: usize = 64;
        let index = walked_index(dir.path(), DIMENSION).await;
        let scopes = [("a", MemoryType::Episodic), ("b", MemoryType::Semantic)];
        let mut current: Vec<IndexPoint> = Vec::new();
        let mut seed = 0u64;
        for step in 0..6 {
            let mut batch = Vec::new();
            for (namespace, memory_type) in scopes {
                for i in 0..500 {
                    let mut p = point(namespace, memory_type, Status::Active, step * 500 + i);
                    seed += 1;
                    p.vector = random_vector_of(seed, DIMENSION);
                    batch.push(p);
                }
            }
            // From the second step on, 40 earlier points get new vectors and 40 are deleted.
            if step > 0 {
                for p in current.iter_mut().skip(step as usize).step_by(25).take(40) {
                    seed += 1;
                    p.vector = random_vector_of(seed, DIMENSION);
                    batch.push(p.clone());
                }
                let gone: Vec<Uuid> = current
                    .iter()
                    .skip(step as usize + 7)
                    .step_by(25)
                    .take(40)
                    .map(|p| p.id)
                    .collect();
                index.delete(gone.clone()).await.unwrap();
                current.retain(|p| !gone.contains(&p.id));
            }
            let updated: Vec<Uuid> = batch.iter().map(|p| p.id).collect();
            current.retain(|p| !updated.contains(&p.id));
            current.extend(batch.iter().cloned());
            index.upsert_bulk(batch).await.unwrap();
            index.optimize().await.unwrap();
        }
        assert_eq!(index.count().await.unwrap(), current.len());

        let (mut found, mut wanted) = (0, 0);
        for (namespace, memory_type) in scopes {
            for q in 0..20 {
                let mut query = query(namespace);
                query.vector = random_vector_of(1_000_000 + q, DIMENSION);
                let best = exact_top_10(&current, &query.vector, &|p| {
                    p.namespace == namespace && p.memory_type == memory_type
                });
                let hits = index.search(query.clone()).await.unwrap();
                assert_eq!(hits.len(), 10, "every search has 10 points to find");
                for hit in &hits {
                    let p = current
                        .iter()
                        .find(|p| p.id == hit.id)
                        .unwrap_or_else(|| panic!("hit {} is a deleted point", hit.id));
                    let exact = cosine(&query.vector, &p.vector);
                    assert!(
                        (hit.score - exact).abs() < 1e-3,
                        "hit {} scored {} against its current vector's {exact}",
                        hit.id,
                        hit.score
                    );
                }
                let got = ids(&hits);
                wanted += 10;
                found += best.iter().filter(|id| got.contains(id)).count();
            }
        }
        let recall = found as f64 / wanted as f64;
        assert!(recall >= 0.9, "recall@10 {recall} against brute force");
    }
}

/// The embedded engine maps each of its files once: by default it maps a file twice (a second
/// map for sequential reads), and every page read through both counted twice in RSS.
#[cfg(target_os = "linux")]
mod embedded_maps {
    use super::*;
    use std::collections::HashMap;

    #[tokio::test]
    async fn every_index_file_is_mapped_once() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().canonicalize().unwrap().join("index");
        // 16 KiB of 8-d vectors: 512 points make a segment worth building.
        let params = HnswParams {
            indexing_threshold_kb: 16,
            ..HnswParams::default()
        };
        let index = EdgeIndex::open(&path, DIM, params).await.unwrap();
        let points: Vec<IndexPoint> = (0..3_000)
            .map(|i| point("a", MemoryType::Episodic, Status::Active, i))
            .collect();
        // An optimised segment (its vectors in one file) and an appendable one (in chunks).
        index.upsert_bulk(points[..2_000].to_vec()).await.unwrap();
        index.optimize().await.unwrap();
        index.upsert_bulk(points[2_000..].to_vec()).await.unwrap();
        index.flush().await.unwrap();
        assert_eq!(index.search(query("a")).await.unwrap().len(), 10);

        let maps = std::fs::read_to_string("/proc/self/maps").unwrap();
        let mut mapped: HashMap<&str, usize> = HashMap::new();
        for line in maps.lines() {
            if let Some(file) = line.split_whitespace().nth(5)
                && file.starts_with(path.to_str().unwrap())
            {
                *mapped.entry(file).or_default() += 1;
            }
        }
        assert!(
            mapped.keys().any(|f| f.ends_with("matrix.dat")) && mapped.len() > 3,
            "the index's vectors are memory-mapped: {mapped:?}"
        );
        let twice: Vec<_> = mapped.iter().filter(|(_, n)| **n > 1).collect();
        assert!(twice.is_empty(), "files mapped more than once: {twice:?}");
    }

    /// KiB resident of the mapped files under `dir` whose path contains `part`, and KiB
    /// mapped (`/proc/self/smaps`).
    fn resident_kib(dir: &std::path::Path, part: &str) -> (usize, usize) {
        let smaps = std::fs::read_to_string("/proc/self/smaps").unwrap();
        let (mut rss, mut size, mut ours) = (0, 0, false);
        for line in smaps.lines() {
            let mut fields = line.split_whitespace();
            match fields.next() {
                Some(first) if first.contains('-') && !first.ends_with(':') => {
                    ours = fields
                        .nth(4)
                        .is_some_and(|f| f.starts_with(dir.to_str().unwrap()) && f.contains(part));
                }
                Some("Rss:") if ours => rss += fields.next().unwrap().parse::<usize>().unwrap(),
                Some("Size:") if ours => size += fields.next().unwrap().parse::<usize>().unwrap(),
                _ => {}
            }
        }
        (rss, size)
    }

    /// KiB of the files under `dir` whose path contains `part` that the kernel's page cache
    /// holds, whether or not any process maps them (`mincore` on a fresh map of each).
    fn cached_kib(dir: &std::path::Path, part: &str) -> usize {
        let mut kib = 0;
        for entry in std::fs::read_dir(dir).unwrap() {
            let path = entry.unwrap().path();
            if path.is_dir() {
                kib += cached_kib(&path, part);
                continue;
            }
            let len = std::fs::metadata(&path).unwrap().len() as usize;
            if len == 0 || !path.to_str().unwrap().contains(part) {
                continue;
            }
            let file = std::fs::File::open(&path).unwrap();
            let page = 4_096;
            let mut resident = vec![0u8; len.div_ceil(page)];
            // SAFETY: a read-only shared map of a file we hold open, unmapped before return;
            // `resident` has one byte per page of it, as `mincore` requires.
            unsafe {
                use std::os::fd::AsRawFd;
                let map = libc::mmap(
                    std::ptr::null_mut(),
                    len,
                    libc::PROT_READ,
                    libc::MAP_SHARED,
                    file.as_raw_fd(),
                    0,
                );
                assert_ne!(map, libc::MAP_FAILED, "mmap {}", path.display());
                let rc = libc::mincore(map, len, resident.as_mut_ptr());
                libc::munmap(map, len);
                assert_eq!(rc, 0, "mincore {}", path.display());
            }
            kib += resident.iter().filter(|b| *b & 1 == 1).count() * page / 1_024;
        }
        kib
    }

    /// A bulk load's flushed vectors are given back to the kernel (only the build at the
    /// load's end reads them again), and reading them again finds them intact. Given back
    /// means out of the process's resident set, not out of the page cache: a later read (a
    /// merge's copy, a scan) then costs no disk read (`vendor/README.md`, seventh change).
    #[tokio::test]
    async fn a_bulk_load_gives_back_its_flushed_vector_pages() {
        const WIDE: usize = 256;
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().canonicalize().unwrap().join("index");
        let index = EdgeIndex::open(&path, WIDE, HnswParams::default())
            .await
            .unwrap();
        let mut target = None;
        let points: Vec<IndexPoint> = (0..4_000)
            .map(|i| {
                let mut p = point("a", MemoryType::Episodic, Status::Active, i);
                // Distinct vectors: a pattern of period 101 in `i`, and one axis of 256 raised.
                p.vector = (0..WIDE)
                    .map(|d| ((i as usize * 31 + d * 17) % 101) as f32 + 1.0)
                    .collect();
                p.vector[i as usize % WIDE] += 1_000.0;
                if i == 1_234 {
                    target = Some((p.id, p.vector.clone()));
                }
                p
            })
            .collect();
        index.upsert_bulk(points).await.unwrap();
        let (written, mapped) = resident_kib(&path, "vector_storage/");
        // 4,000 × 256 floats: 4,000 KiB of vectors, all written through the map.
        assert!(
            written >= 3_900,
            "the appended vectors are resident before the flush: {written} of {mapped} KiB"
        );
        index.flush().await.unwrap();
        let (left, _) = resident_kib(&path, "vector_storage/");
        assert!(
            left < written / 4,
            "after the flush {left} of {written} KiB are still resident"
        );
        let cached = cached_kib(&path, "vector_storage/");
        assert!(
            cached >= written * 3 / 4,
            "after the flush only {cached} of the {written} KiB given back are still cached"
        );

        let (id, vector) = target.unwrap();
        let hits = index
            .search(IndexQuery {
                vector,
                limit: 1,
                ..query("a")
            })
            .await
            .unwrap();
        assert_eq!(ids(&hits), vec![id]);
        assert!(hits[0].score > 0.999, "{hits:?}");
    }
}

/// The embedded engine's WAL, which it reads in full at each load but never truncates: the
/// index trims it at open, keeping the newest closed segment so operation numbers go on.
mod embedded_wal {
    use super::*;
    use std::path::Path;

    fn closed_segments(index_dir: &Path) -> usize {
        std::fs::read_dir(index_dir.join("wal"))
            .unwrap()
            .filter(|e| {
                let name = e.as_ref().unwrap().file_name();
                name.to_string_lossy().starts_with("closed-")
            })
            .count()
    }

    #[tokio::test]
    async fn a_reopened_index_keeps_one_closed_wal_segment_and_takes_later_updates() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("index");
        let open = async || {
            EdgeIndex::open(&path, DIM, HnswParams::default())
                .await
                .unwrap()
        };
        let index = open().await;
        // Forty terms each: 40k points write several 4 MB WAL segments.
        let points: Vec<IndexPoint> = (0..40_000)
            .map(|i| {
                let mut p = point("a", MemoryType::Episodic, Status::Active, i);
                p.terms = (0..40)
                    .map(|k| format!("t{}", (i * 7 + k) % 5_000))
                    .collect();
                p
            })
            .collect();
        for chunk in points.chunks(2_000) {
            index.upsert_bulk(chunk.to_vec()).await.unwrap();
        }
        index.flush().await.unwrap();
        drop(index);
        let written = closed_segments(&path);
        assert!(
            written >= 3,
            "the load should fill several segments: {written}"
        );

        let index = open().await;
        assert_eq!(
            closed_segments(&path),
            1,
            "all but the newest closed segment go"
        );
        assert_eq!(index.count().await.unwrap(), 40_000);
        // The last points carry the highest versions: were operation numbers restarted, the
        // engine would skip these as older than the points.
        let mut moved = points[39_999].clone();
        moved.namespace = "b".to_owned();
        moved.vector = vector(3, 0.0);
        index.upsert(vec![moved.clone()]).await.unwrap();
        index.delete(vec![points[39_998].id]).await.unwrap();
        index.flush().await.unwrap();
        drop(index);

        let index = open().await;
        let mut in_b = query("b");
        in_b.vector = vector(3, 0.0);
        assert_eq!(ids(&index.search(in_b).await.unwrap()), vec![moved.id]);
        assert_eq!(index.count().await.unwrap(), 39_999);
        let a = index.search(query("a")).await.unwrap();
        assert!(!ids(&a).contains(&moved.id) && !ids(&a).contains(&points[39_998].id));
    }
}

#[test]
fn every_suite_function_runs_on_every_backend() {
    common::assert_suite_lists_every_function(
        "index_suite",
        "index_suite.rs",
        &["index_suite.rs"],
        "index: &dyn VectorIndex",
    );
}
