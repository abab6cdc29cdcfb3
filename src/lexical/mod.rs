//! Terms for the lexical (full-text) arm, computed here so the embedded index (sparse BM25
//! vectors), SQLite (FTS5) and PostgreSQL (tsvector) index exactly the same terms: lower-cased
//! words, and for Chinese, Japanese and Korean — written without spaces — overlapping character
//! bigrams (a lone character stays a unigram), the usual CJK analysis when no dictionary
//! segmenter is at hand. Other words are
//! stemmed (English Snowball): on LoCoMo's dev split that lifts the lexical arm's hit@10 from
//! 0.588 to 0.641 (`hindsight eval retrieval`).

mod stats_cache;

use unicode_segmentation::UnicodeSegmentation;

use crate::domain::MemoryId;

pub use stats_cache::StatsCache;

/// The terms' rules, stored with the data (`meta.lexical_version`): rows indexed under other
/// rules are indexed again when the store opens. 2: English words stemmed.
pub const VERSION: &str = "2";
/// The `meta` key it is stored under.
pub const VERSION_KEY: &str = "lexical_version";

/// Characters of scripts written without spaces between words.
pub fn is_cjk(c: char) -> bool {
    matches!(c as u32,
        0x3040..=0x30FF   // Hiragana, Katakana
        | 0x3400..=0x4DBF // CJK Extension A
        | 0x4E00..=0x9FFF // CJK Unified Ideographs
        | 0xAC00..=0xD7AF // Hangul syllables
        | 0xF900..=0xFAFF // CJK Compatibility Ideographs
        | 0x20000..=0x2A6DF)
}

/// The text's terms, in order, with repeats (term frequency matters to ranking).
pub fn terms(text: &str) -> Vec<String> {
    let lower = text.to_lowercase();
    let mut out = Vec::new();
    let mut run: Vec<char> = Vec::new();
    let flush = |run: &mut Vec<char>, out: &mut Vec<String>| {
        match run.len() {
            0 => {}
            1 => out.push(run[0].to_string()),
            _ => out.extend(run.windows(2).map(|pair| pair.iter().collect())),
        }
        run.clear();
    };
    // Word segmentation splits CJK text per character; adjacent ones form one run, while a
    // space or punctuation between them ends it.
    let mut run_end = 0;
    for (start, word) in lower.unicode_word_indices() {
        if word.chars().all(is_cjk) {
            if start != run_end {
                flush(&mut run, &mut out);
            }
            run.extend(word.chars());
            run_end = start + word.len();
            continue;
        }
        flush(&mut run, &mut out);
        // Keep letters and digits only: both engines' tokenizers split on the rest anyway.
        let cleaned: String = word.chars().filter(|c| c.is_alphanumeric()).collect();
        if !cleaned.is_empty() {
            out.push(stem(cleaned));
        }
    }
    flush(&mut run, &mut out);
    out
}

/// English words reduced to their stem (Snowball), so `researching` finds `research` and
/// `reports` finds `report`; words with digits (codes, numbers) stay as they are.
pub(crate) fn stem(word: String) -> String {
    static STEMMER: std::sync::LazyLock<qdrant_rust_stemmers::Stemmer> =
        std::sync::LazyLock::new(|| {
            qdrant_rust_stemmers::Stemmer::create(qdrant_rust_stemmers::Algorithm::English)
        });
    if word.chars().any(|c| c.is_ascii_digit()) {
        return word;
    }
    STEMMER.stem(&word).into_owned()
}

/// What the store indexes: the terms, space-separated.
pub fn document(text: &str) -> String {
    terms(text).join(" ")
}

/// A search's terms: each distinct term once.
pub fn query_terms(text: &str) -> Vec<String> {
    let mut seen = std::collections::HashSet::new();
    terms(text)
        .into_iter()
        .filter(|t| seen.insert(t.clone()))
        .collect()
}

/// The query terms worth matching, given rarest first: from 1,000 rows on, those `too_common`
/// says more than `max_df` of the rows hold are left out, the two rarest always kept. Common
/// terms touch most rows for almost no ranking signal, and made a query at 100k rows of real
/// text several times slower. Both lexical arms (SQLite's, the embedded index's) go by it.
pub fn selective<T>(
    rarest_first: Vec<T>,
    rows: f64,
    max_df: f64,
    too_common: impl Fn(&T) -> bool,
) -> Vec<T> {
    const MIN_ROWS: f64 = 1_000.0;
    const ALWAYS_KEPT: usize = 2;
    let prune = max_df < 1.0 && rarest_first.len() > ALWAYS_KEPT && rows >= MIN_ROWS;
    rarest_first
        .into_iter()
        .enumerate()
        .filter(|(i, t)| !prune || *i < ALWAYS_KEPT || !too_common(t))
        .map(|(_, t)| t)
        .collect()
}

/// A lexical match; `score` is higher for better matches and comparable only within one search
/// (BM25 in the embedded index and on SQLite, `ts_rank_cd` on PostgreSQL).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct LexicalHit {
    pub id: MemoryId,
    pub score: f64,
}

/// The lexical arm's answer: matches, best first, and the scale to read their scores against.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct LexicalHits {
    pub hits: Vec<LexicalHit>,
    /// What a row holding each query term once, at average length, scores: the sum of the
    /// terms' IDF under BM25 (the embedded index, SQLite). A match on a few common words
    /// scores a small share of it, one on the query's rare words most of it. `None` where the
    /// score has no such scale (PostgreSQL's `ts_rank_cd`): scores are then read against the
    /// best match.
    pub full_match: Option<f64>,
}

impl std::ops::Deref for LexicalHits {
    type Target = [LexicalHit];

    fn deref(&self) -> &[LexicalHit] {
        &self.hits
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn common_terms_are_left_out_from_a_thousand_rows_but_the_two_rarest_stay() {
        let rarest_first = vec![1, 50, 80, 90];
        let common = |df: &i32| *df > 60;
        assert_eq!(
            selective(rarest_first.clone(), 1_000.0, 0.05, common),
            [1, 50]
        );
        assert_eq!(
            selective(vec![70, 80, 90], 1_000.0, 0.05, common),
            [70, 80],
            "the two rarest stay, however common"
        );
        assert_eq!(
            selective(rarest_first.clone(), 999.0, 0.05, common),
            rarest_first
        );
        assert_eq!(
            selective(rarest_first.clone(), 1_000.0, 1.0, common),
            rarest_first
        );
        assert_eq!(selective(vec![80, 90], 1_000.0, 0.05, common), [80, 90]);
    }

    #[test]
    fn english_words_are_lower_cased_without_punctuation() {
        assert_eq!(
            terms("The user's Report, with DATA-sources!"),
            ["the", "user", "report", "with", "data", "sourc"]
        );
        assert_eq!(terms("researching reports"), terms("research report"));
        assert_eq!(
            terms("ticket QX-7731, 2024"),
            ["ticket", "qx", "7731", "2024"]
        );
    }

    #[test]
    fn chinese_runs_become_overlapping_bigrams() {
        assert_eq!(
            terms("用户喜欢咖啡"),
            ["用户", "户喜", "喜欢", "欢咖", "咖啡"]
        );
        assert_eq!(terms("我 和 Rust"), ["我", "和", "rust"]);
        assert_eq!(
            terms("部署在周一 deploying"),
            ["部署", "署在", "在周", "周一", "deploy"]
        );
    }

    #[test]
    fn query_terms_are_distinct() {
        assert_eq!(query_terms("tea teas 茶"), ["tea", "茶"]);
        assert!(query_terms("  ?! ").is_empty());
    }
}
