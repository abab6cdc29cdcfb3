//! The built-in embedder: feature hashing of word unigrams, word bigrams, crude 5-char stems and,
//! for CJK text (no spaces between words), character unigrams and bigrams. Sublinear term
//! frequency, stop words down-weighted (an IDF stand-in that needs no corpus), signed hashing to
//! cancel collisions, L2-normalised. Deterministic across runs and machines: no model, no network.
//!
//! It is a lexical embedding: it finds paraphrases that share words, not synonyms. Configure an
//! `openai` embedder for semantic recall.

use std::collections::HashMap;

use async_trait::async_trait;
use unicode_segmentation::UnicodeSegmentation;
use xxhash_rust::xxh3::xxh3_64_with_seed;

use super::{EmbedError, Embedder, l2_normalize};
use crate::lexical::is_cjk;

pub struct BuiltinEmbedder {
    id: String,
    dimension: usize,
}

const SEED: u64 = 0x6869_6e64_7369_6768; // "hindsigh"
const STOP_WORDS: &[&str] = &[
    "a", "an", "and", "are", "as", "at", "be", "been", "but", "by", "did", "do", "does", "for",
    "from", "had", "has", "have", "he", "her", "his", "i", "in", "is", "it", "its", "me", "my",
    "of", "on", "or", "our", "she", "so", "that", "the", "their", "them", "they", "this", "to",
    "was", "we", "were", "what", "when", "which", "who", "will", "with", "you", "your", "的", "了",
    "是", "在", "和", "也", "就", "都", "而", "及", "与", "着", "或",
];

impl BuiltinEmbedder {
    pub const DIMENSION: usize = 512;

    pub fn new() -> Self {
        Self {
            id: format!("builtin-ngram-v1/{}", Self::DIMENSION),
            dimension: Self::DIMENSION,
        }
    }

    pub fn embed_one(&self, text: &str) -> Vec<f32> {
        let features = features(text);
        let mut vector = vec![0.0f32; self.dimension];
        for (feature, (count, weight)) in &features {
            let h = xxh3_64_with_seed(feature.as_bytes(), SEED);
            let slot = (h % self.dimension as u64) as usize;
            let sign = if (h >> 63) == 0 { 1.0 } else { -1.0 };
            vector[slot] += sign * weight * (1.0 + (*count as f32).ln());
        }
        if vector.iter().all(|x| *x == 0.0) {
            // Only punctuation or symbols: fall back to the raw text, so equal inputs still match.
            let h = xxh3_64_with_seed(text.trim().as_bytes(), SEED);
            vector[(h % self.dimension as u64) as usize] = 1.0;
        }
        l2_normalize(&mut vector);
        vector
    }
}

impl Default for BuiltinEmbedder {
    fn default() -> Self {
        Self::new()
    }
}

/// feature → (count, weight)
fn features(text: &str) -> HashMap<String, (u32, f32)> {
    let lower = text.to_lowercase();
    let mut out: HashMap<String, (u32, f32)> = HashMap::new();
    let mut add = |key: String, weight: f32| {
        let entry = out.entry(key).or_insert((0, weight));
        entry.0 += 1;
    };
    let weight_of = |w: &str| if STOP_WORDS.contains(&w) { 0.15 } else { 1.0 };

    // Latin-like words (and CJK runs, which word segmentation splits per character).
    let mut words: Vec<&str> = Vec::new();
    let mut cjk_run: Vec<char> = Vec::new();
    let flush_cjk = |run: &mut Vec<char>, add: &mut dyn FnMut(String, f32)| {
        for (i, c) in run.iter().enumerate() {
            let s = c.to_string();
            add(format!("c1:{s}"), 0.5 * weight_of(&s));
            if let Some(next) = run.get(i + 1) {
                add(format!("c2:{c}{next}"), 1.0);
            }
        }
        run.clear();
    };
    for word in lower.unicode_words() {
        if word.chars().all(is_cjk) {
            cjk_run.extend(word.chars());
            continue;
        }
        flush_cjk(&mut cjk_run, &mut add);
        words.push(word);
    }
    flush_cjk(&mut cjk_run, &mut add);

    for (i, word) in words.iter().enumerate() {
        let w = weight_of(word);
        add(format!("w:{word}"), w);
        if word.chars().count() > 5 {
            let stem: String = word.chars().take(5).collect();
            add(format!("s:{stem}"), 0.5);
        }
        if let Some(next) = words.get(i + 1) {
            add(format!("b:{word} {next}"), 0.7 * w.max(weight_of(next)));
        }
    }
    out
}

#[async_trait]
impl Embedder for BuiltinEmbedder {
    fn id(&self) -> &str {
        &self.id
    }

    fn dimension(&self) -> usize {
        self.dimension
    }

    async fn embed(&self, texts: &[String]) -> Result<Vec<Vec<f32>>, EmbedError> {
        Ok(texts.iter().map(|t| self.embed_one(t)).collect())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::embed::cosine;

    #[test]
    fn deterministic_and_normalised() {
        let e = BuiltinEmbedder::new();
        let a = e.embed_one("The user prefers dark mode");
        assert_eq!(a, e.embed_one("The user prefers dark mode"));
        let norm: f32 = a.iter().map(|x| x * x).sum::<f32>().sqrt();
        assert!((norm - 1.0).abs() < 1e-5);
    }

    #[test]
    fn related_english_is_closer_than_unrelated() {
        let e = BuiltinEmbedder::new();
        let q = e.embed_one("which editor theme does the user like");
        let near = e.embed_one("The user likes the dark editor theme");
        let far = e.embed_one("Quarterly revenue grew by four percent");
        assert!(cosine(&q, &near) > cosine(&q, &far) + 0.2);
    }

    #[test]
    fn chinese_text_matches_on_character_bigrams() {
        let e = BuiltinEmbedder::new();
        let q = e.embed_one("用户喜欢深色主题");
        let near = e.embed_one("用户更喜欢深色的编辑器主题");
        let far = e.embed_one("季度收入增长了百分之四");
        assert!(cosine(&q, &near) > 0.5, "{}", cosine(&q, &near));
        assert!(cosine(&q, &far) < 0.2, "{}", cosine(&q, &far));
    }

    #[test]
    fn near_duplicates_pass_the_dedup_threshold_and_rewrites_do_not() {
        let e = BuiltinEmbedder::new();
        let a = e.embed_one("The user wants data sources cited in every report.");
        let b = e.embed_one("the user wants data sources cited in every report");
        let c = e.embed_one("The user wants charts in every report.");
        assert!(cosine(&a, &b) > 0.92);
        assert!(cosine(&a, &c) < 0.92);
    }

    #[test]
    fn punctuation_only_is_not_a_zero_vector() {
        let e = BuiltinEmbedder::new();
        let v = e.embed_one("?!");
        assert!(v.iter().any(|x| *x != 0.0));
    }
}
