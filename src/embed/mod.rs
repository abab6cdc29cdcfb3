//! Embedders turn text into vectors. One trait; `builtin` (hashed n-grams, no model, no network),
//! `local` (a BERT-family sentence encoder run in-process, its files from the hub cache or a
//! directory) and `openai` (any OpenAI-compatible `/v1/embeddings` endpoint).

mod builtin;
pub mod hub;
pub mod local;
mod openai;

use async_trait::async_trait;

pub use builtin::BuiltinEmbedder;
pub use local::LocalEmbedder;
pub use openai::{OpenAiEmbedder, OpenAiEmbedderConfig, probe_dimension};

#[derive(Debug, thiserror::Error)]
pub enum EmbedError {
    #[error("embedding endpoint failed: {0}")]
    Endpoint(String),
    #[error("embedding endpoint returned {got} vectors for {expected} inputs")]
    Count { expected: usize, got: usize },
    #[error("embedding endpoint returned a {got}-dimensional vector, expected {expected}")]
    Dimension { expected: usize, got: usize },
    #[error("local model {0}")]
    Model(String),
}

#[async_trait]
pub trait Embedder: Send + Sync + 'static {
    /// Identifies the vector space: two embedders with the same id produce comparable vectors.
    /// Stored with the data; a change requires `hindsight reindex`.
    fn id(&self) -> &str;

    fn dimension(&self) -> usize;

    /// One L2-normalised vector per input, in order: texts to store (passages).
    async fn embed(&self, texts: &[String]) -> Result<Vec<Vec<f32>>, EmbedError>;

    /// The vector of a search query. Models trained with query/passage prefixes (e5, bge)
    /// embed the two sides differently; for the others it is `embed` of one text.
    async fn embed_query(&self, text: &str) -> Result<Vec<f32>, EmbedError> {
        let mut vectors = self.embed(&[text.to_owned()]).await?;
        vectors.pop().ok_or(EmbedError::Count {
            expected: 1,
            got: 0,
        })
    }
}

/// An embedder's thresholds for a distill draft that rests on its episodes
/// (`distill::grounding`).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct GroundingThresholds {
    /// Cosine to the centroid of the cited episodes.
    pub min_centroid: f32,
    /// Cosine to the closest cited episode.
    pub min_best: f32,
    /// Cosine every cited episode must reach.
    pub min_source: f32,
    /// Cosine to one of the prompt's own sentences at which a draft repeats the prompt (when
    /// it is also closer to that sentence than to every episode it cites).
    pub copy: f32,
}

/// Thresholds that depend on how an embedder spreads its similarities, by its id. Measured
/// (docs/configuration.md, "Thresholds per embedder"): built-in n-grams score paraphrases 0.5-0.7 and
/// unrelated sentences ~0.1; all-MiniLM-L6-v2 scores near-duplicates 0.98-0.99, paraphrases
/// 0.71-0.87 and unrelated English sentences below 0.26. Dedup (0.92) suits both.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Calibration {
    /// Distill: cosine for two episodes to be neighbours in a cluster.
    pub distill_min_cosine: f32,
    /// Hybrid search, score fusion: the lexical arm's weight. A dense arm that sees meaning
    /// needs less of it. LoCoMo's dev split, hit@10: built-in embedder 0.661 at 0.6, 0.659 at
    /// 0.8, 0.650 at 0.9; MiniLM 0.688 at 0.3, 0.700 at 0.5, 0.696 at 0.7.
    pub lexical_weight: f64,
    /// Distill: when a model's draft rests on the episodes it cites (`distill::grounding`).
    pub grounding: GroundingThresholds,
    /// `eval distill`: cosine at which a candidate states a reference fact (calibrated on the
    /// labelled pairs of `bench/coverage_pairs.json`).
    pub fact_min_cosine: f32,
    /// The write path: cosine above which an active memory is read against a write by the
    /// revision rules (`revision::compare`), which may find the write updates it. Below the
    /// dedup threshold: "The user lives in Porto" after "... in Madrid" is no near-duplicate.
    pub revision_min_cosine: f32,
}

pub fn calibration(embedder_id: &str) -> Calibration {
    if embedder_id.starts_with("builtin-") {
        Calibration {
            distill_min_cosine: 0.55,
            lexical_weight: 0.8,
            grounding: GroundingThresholds {
                min_centroid: 0.25,
                min_best: 0.25,
                min_source: 0.05,
                copy: 0.6,
            },
            // Precision first on the labelled pairs: 0.94 at a recall of 0.79 (the best F1,
            // 0.895, is at 0.25).
            fact_min_cosine: 0.35,
            // A word changed in a three-word sentence scores 0.38-0.46 (`eval updates`),
            // unrelated sentences ~0.1.
            revision_min_cosine: 0.35,
        }
    } else if embedder_id.starts_with("local:") {
        // Measured with all-MiniLM-L6-v2 (`hindsight eval distill`, docs/review.md): at 0.75 a
        // cluster holds 25 turns on average, at 0.8 13, each on one topic.
        Calibration {
            distill_min_cosine: 0.8,
            lexical_weight: 0.5,
            grounding: DENSE_GROUNDING,
            // The labelled pairs' best F1 (0.947); at 0.55 precision was 0.73, recall 1.0.
            fact_min_cosine: 0.67,
            // A name or place swapped in a short sentence scores 0.44-0.59 (`eval updates`),
            // unrelated English sentences below 0.26.
            revision_min_cosine: 0.4,
        }
    } else {
        // An endpoint's model, not measured here: the dense defaults, a little looser
        // (hosted models such as text-embedding-3 score paraphrases lower than MiniLM).
        Calibration {
            distill_min_cosine: 0.75,
            lexical_weight: 0.5,
            grounding: DENSE_GROUNDING,
            fact_min_cosine: 0.67,
            // The benches' random vectors (`bench-random/…`) mean nothing: at 64 dimensions two
            // of them pass 0.4 by chance, and "synthetic memory number 17" / "… 42" would read
            // as an update. Only their planted near-duplicates (0.93-0.97) are look-alikes.
            revision_min_cosine: if embedder_id.starts_with("bench-random/") {
                0.9
            } else {
                0.4
            },
        }
    }
}

/// Grounding for an embedder that sees meaning (measured with all-MiniLM-L6-v2; docs/review.md).
const DENSE_GROUNDING: GroundingThresholds = GroundingThresholds {
    min_centroid: 0.45,
    min_best: 0.4,
    min_source: 0.15,
    copy: 0.7,
};

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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_embedder_kind_has_its_own_thresholds() {
        let builtin = calibration(BuiltinEmbedder::new().id());
        let local = calibration("local:sentence-transformers/all-MiniLM-L6-v2/384");
        let openai = calibration("openai:text-embedding-3-small/1536");
        assert_eq!(
            (builtin.distill_min_cosine, builtin.lexical_weight),
            (0.55, 0.8)
        );
        assert_eq!((local.distill_min_cosine, local.lexical_weight), (0.8, 0.5));
        assert_eq!(
            (openai.distill_min_cosine, openai.lexical_weight),
            (0.75, 0.5)
        );
    }
}
