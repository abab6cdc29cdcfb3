//! The vector index: derived from the store, rebuildable from it. One trait; the embedded
//! implementation is Qdrant's in-process engine (qdrant-edge), the scale-out one a Qdrant server
//! (qdrant-client, gRPC) that every replica shares. Points carry just enough payload to filter (namespace, type, status, event time);
//! the row in the store stays the truth and search results are re-checked against it. The
//! embedded engine also keeps each point's terms as a sparse BM25 vector and answers the
//! lexical arm itself (`lexical_search`); a server leaves that arm to the store's full-text index.

mod edge;
mod qdrant;
pub mod sparse;

use async_trait::async_trait;

use crate::domain::{MemoryId, MemoryType, Status};

pub use edge::{EdgeIndex, HnswParams};
pub use qdrant::{QdrantIndex, QdrantSettings};

#[derive(Debug, thiserror::Error)]
pub enum IndexError {
    #[error("vector index: {0}")]
    Engine(String),
    #[error("vector index expects {expected}-dimensional vectors, got {got}")]
    Dimension { expected: usize, got: usize },
    #[error("vector index task failed: {0}")]
    Task(String),
}

#[derive(Debug, Clone, PartialEq)]
pub struct IndexPoint {
    pub id: MemoryId,
    pub vector: Vec<f32>,
    pub namespace: String,
    pub memory_type: MemoryType,
    pub status: Status,
    /// When what the memory tells of happened (its row's `occurred_at`), Unix seconds.
    pub occurred_at: i64,
    /// Its terms (`lexical::terms` of the content), for an index that keeps a lexical arm.
    pub terms: Vec<String>,
}

#[derive(Debug, Clone)]
pub struct IndexQuery {
    pub vector: Vec<f32>,
    /// Non-empty: the hit's namespace is any of these.
    pub namespaces: Vec<String>,
    /// Empty: any type.
    pub memory_types: Vec<MemoryType>,
    /// Non-empty.
    pub statuses: Vec<Status>,
    /// Unix seconds, inclusive.
    pub occurred_from: Option<i64>,
    pub occurred_to: Option<i64>,
    pub limit: usize,
    /// The graph walk's beam (HNSW `ef`, at least `limit`); `None`: the index's own
    /// (`HnswParams::ef`), what searches use.
    pub ef: Option<usize>,
}

#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Hit {
    pub id: MemoryId,
    /// Cosine similarity, higher is closer.
    pub score: f32,
}

#[async_trait]
pub trait VectorIndex: Send + Sync + 'static {
    fn dimension(&self) -> usize;

    /// Whether other processes can use this same index (a server) or it lives in this
    /// process alone (embedded).
    fn is_shared(&self) -> bool;

    /// Insert or replace points (vector and payload).
    async fn upsert(&self, points: Vec<IndexPoint>) -> Result<(), IndexError>;

    /// `upsert` as one part of a bulk load (an import, a rebuild): the search structures are
    /// left for one `optimize` at its end instead of being rebuilt as the points arrive.
    async fn upsert_bulk(&self, points: Vec<IndexPoint>) -> Result<(), IndexError> {
        self.upsert(points).await
    }

    /// Build the search structures for what has been written (HNSW graphs, merged segments)
    /// now, and return when done and durable (as after `flush`): the end of a bulk load. A
    /// server index builds its own.
    async fn optimize(&self) -> Result<(), IndexError> {
        Ok(())
    }

    /// Remove points; unknown ids are ignored.
    async fn delete(&self, ids: Vec<MemoryId>) -> Result<(), IndexError>;

    async fn search(&self, query: IndexQuery) -> Result<Vec<Hit>, IndexError>;

    /// `search` for each of `vectors`, the rest of `query` shared (its own `vector` is not
    /// read); the results in `vectors`' order. An index that can answer them together does (a
    /// scanned scope read once for all of them); by default, one search each.
    async fn search_many(
        &self,
        query: IndexQuery,
        vectors: Vec<Vec<f32>>,
    ) -> Result<Vec<Vec<Hit>>, IndexError> {
        let mut found = Vec::with_capacity(vectors.len());
        for vector in vectors {
            found.push(
                self.search(IndexQuery {
                    vector,
                    ..query.clone()
                })
                .await?,
            );
        }
        Ok(found)
    }

    /// The lexical arm over the points' terms, with `query`'s filters and limit (its vector is
    /// not read), leaving out terms held by more than `max_df` of the points (the two rarest
    /// always stay); BM25 scores, and the full match to read them against. `None`: this index
    /// keeps no terms, and the store's full-text index answers instead.
    async fn lexical_search(
        &self,
        _query: &IndexQuery,
        _terms: &[String],
        _max_df: f64,
    ) -> Result<Option<crate::lexical::LexicalHits>, IndexError> {
        Ok(None)
    }

    async fn count(&self) -> Result<usize, IndexError>;

    /// Drop every point and start over with vectors of `dimension` (for a rebuild).
    async fn reset(&self, dimension: usize) -> Result<(), IndexError>;

    /// Make everything written so far durable and build pending search structures.
    async fn flush(&self) -> Result<(), IndexError>;
}
