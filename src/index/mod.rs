//! The vector index: derived from the store, rebuildable from it. One trait; the embedded
//! implementation is Qdrant's in-process engine (qdrant-edge), the scale-out one a Qdrant server
//! (qdrant-client, gRPC) that every replica shares. Points carry just enough payload to filter (namespace, type, status, event time);
//! the row in the store stays the truth and search results are re-checked against it.

mod edge;
mod qdrant;

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
}

#[derive(Debug, Clone)]
pub struct IndexQuery {
    pub vector: Vec<f32>,
    pub namespace: String,
    /// Empty: any type.
    pub memory_types: Vec<MemoryType>,
    /// Non-empty.
    pub statuses: Vec<Status>,
    /// Unix seconds, inclusive.
    pub occurred_from: Option<i64>,
    pub occurred_to: Option<i64>,
    pub limit: usize,
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

    /// Remove points; unknown ids are ignored.
    async fn delete(&self, ids: Vec<MemoryId>) -> Result<(), IndexError>;

    async fn search(&self, query: IndexQuery) -> Result<Vec<Hit>, IndexError>;

    async fn count(&self) -> Result<usize, IndexError>;

    /// Drop every point and start over with vectors of `dimension` (for a rebuild).
    async fn reset(&self, dimension: usize) -> Result<(), IndexError>;

    /// Make everything written so far durable and build pending search structures.
    async fn flush(&self) -> Result<(), IndexError>;
}
