//! Embedders turn text into vectors. One trait; `builtin` (hashed n-grams, no model, no network)
//! is the default, `openai` speaks to any OpenAI-compatible `/v1/embeddings` endpoint.

mod builtin;
mod openai;

use async_trait::async_trait;

pub use builtin::BuiltinEmbedder;
pub use openai::{OpenAiEmbedder, OpenAiEmbedderConfig, probe_dimension};

#[derive(Debug, thiserror::Error)]
pub enum EmbedError {
    #[error("embedding endpoint failed: {0}")]
    Endpoint(String),
    #[error("embedding endpoint returned {got} vectors for {expected} inputs")]
    Count { expected: usize, got: usize },
    #[error("embedding endpoint returned a {got}-dimensional vector, expected {expected}")]
    Dimension { expected: usize, got: usize },
}

#[async_trait]
pub trait Embedder: Send + Sync + 'static {
    /// Identifies the vector space: two embedders with the same id produce comparable vectors.
    /// Stored with the data; a change requires `hindsight reindex`.
    fn id(&self) -> &str;

    fn dimension(&self) -> usize;

    /// One L2-normalised vector per input, in order.
    async fn embed(&self, texts: &[String]) -> Result<Vec<Vec<f32>>, EmbedError>;
}

/// Scale `v` to unit length (no-op for the zero vector).
pub fn l2_normalize(v: &mut [f32]) {
    let norm = v.iter().map(|x| x * x).sum::<f32>().sqrt();
    if norm > 0.0 {
        v.iter_mut().for_each(|x| *x /= norm);
    }
}

pub fn cosine(a: &[f32], b: &[f32]) -> f32 {
    let dot: f32 = a.iter().zip(b).map(|(x, y)| x * y).sum();
    let na = a.iter().map(|x| x * x).sum::<f32>().sqrt();
    let nb = b.iter().map(|x| x * x).sum::<f32>().sqrt();
    if na == 0.0 || nb == 0.0 {
        0.0
    } else {
        dot / (na * nb)
    }
}
