//! A memory's terms (`lexical::terms`) as the sparse vector the embedded index keeps beside the
//! dense one, and a query's as the vector it is matched with. The engine multiplies the query's
//! weights by each term's IDF over the whole index (`Modifier::Idf`), so a point's score is BM25:
//! Σ idf(t) · tf·(k1 + 1) / (tf + k1·(1 − b + b·len/AVG_TERMS)).
//!
//! BM25 needs the mean document length; the engine does not keep it, so it is a constant here:
//! a memory is a sentence or two (LoCoMo's turns: 25 terms on average). It only moves the
//! pivot of the length normalisation; a point's weights are written with it, so changing it
//! means rebuilding the index (`LAYOUT_VERSION`).

use std::collections::HashMap;

use xxhash_rust::xxh3::xxh3_64;

const K1: f32 = 1.2;
const B: f32 = 0.75;
const AVG_TERMS: f32 = 20.0;

/// The term's dimension: 32 bits of its hash. Two terms that collide share a weight and an IDF,
/// as in any hashed vocabulary (at 100k distinct terms, about one pair in a million collides).
pub fn dimension(term: &str) -> u32 {
    xxh3_64(term.as_bytes()) as u32
}

/// The BM25 term-frequency part for each distinct term of a document, by dimension, sorted.
pub fn document(terms: &[String]) -> (Vec<u32>, Vec<f32>) {
    let mut counts: HashMap<u32, f32> = HashMap::new();
    for term in terms {
        *counts.entry(dimension(term)).or_default() += 1.0;
    }
    let norm = K1 * (1.0 - B + B * terms.len() as f32 / AVG_TERMS);
    let mut weights: Vec<(u32, f32)> = counts
        .into_iter()
        .map(|(dim, tf)| (dim, tf * (K1 + 1.0) / (tf + norm)))
        .collect();
    weights.sort_unstable_by_key(|(dim, _)| *dim);
    weights.into_iter().unzip()
}

/// BM25's IDF as the engine computes it: ln(1 + (n − df + 0.5) / (df + 0.5)).
pub fn idf(n: f64, df: f64) -> f64 {
    (1.0 + (n - df + 0.5) / (df + 0.5)).ln()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn terms(text: &str) -> Vec<String> {
        crate::lexical::terms(text)
    }

    #[test]
    fn a_term_said_twice_weighs_more_and_a_long_document_less() {
        let (dims, weights) = document(&terms("report report data"));
        assert_eq!(dims.len(), 2);
        let weight = |dims: &[u32], weights: &[f32], term: &str| {
            let at = dims.iter().position(|d| *d == dimension(term)).unwrap();
            weights[at]
        };
        assert!(weight(&dims, &weights, "report") > weight(&dims, &weights, "data"));
        let long = terms(&format!("data {}", "word ".repeat(60)));
        let (long_dims, long_weights) = document(&long);
        assert!(weight(&long_dims, &long_weights, "data") < weight(&dims, &weights, "data"));
        // At the average length a term said once weighs exactly 1: a full match scores Σ idf.
        let average: Vec<String> = (0..AVG_TERMS as usize).map(|i| format!("w{i}")).collect();
        let (_, w) = document(&average);
        assert!(w.iter().all(|w| (w - 1.0).abs() < 1e-6), "{w:?}");
    }

    #[test]
    fn idf_falls_as_a_term_spreads() {
        assert!(idf(1000.0, 1.0) > idf(1000.0, 100.0));
        assert!(idf(1000.0, 1000.0) > 0.0, "never negative, unlike FTS5's");
    }
}
