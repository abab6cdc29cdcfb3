//! How the search arms' rankings become one relevance in [0, 1]: reciprocal-rank fusion
//! (each arm contributes 1/(k + rank), divided by what a memory ranked first by every arm would
//! get), or a score fusion of the dense cosine and the lexical score as a share of the query's
//! full match (a weighted mean). Which one, and its knob, are settings (`search_fusion`, `search_rrf_k`,
//! `search_lexical_weight`); `hindsight eval retrieval` measures them.

use std::collections::HashMap;

pub use crate::configuration::SearchArms;
use crate::domain::MemoryId;

/// How two arms' results are fused.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Fusion {
    /// Reciprocal-rank fusion with this `k`.
    Rrf { k: f64 },
    /// `(1 − w)·cosine + w·lexical / max(full match, best lexical)`.
    Score { lexical_weight: f64 },
}

/// One candidate's evidence from the arms.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct ArmScores {
    /// Cosine to the query (exact, from the stored vector), whichever arm found it.
    pub similarity: f64,
    /// 1-based place in the dense arm's list, if it was there.
    pub dense_rank: Option<usize>,
    /// The lexical score (BM25 in the embedded index and on SQLite, `ts_rank_cd` on PostgreSQL
    /// beside a Qdrant server) and place, if matched.
    pub lexical_score: Option<f64>,
    pub lexical_rank: Option<usize>,
}

/// The fused relevance of each candidate, in [0, 1]. A hybrid search whose lexical arm matched
/// nothing (a paraphrase sharing no word, a query of punctuation) is ranked by its dense arm
/// alone, and one whose dense arm found nothing by its lexical arm: an arm with no evidence
/// must not squeeze the other into a corner of [0, 1], where recency would outweigh it.
///
/// A lexical score counts as its share of `full_match` (what a row holding every query term
/// would score, when the store knows it), or of the best match when that is higher or unknown.
/// Against the best alone, a match on one common word ("is", "their") got the whole lexical
/// weight whenever nothing better matched, and outranked the dense arm's paraphrase
/// (`tests/integration/local_embedder.rs`). On LoCoMo's dev split it is about even: hit@10 with MiniLM at
/// lexical weight 0.3 / 0.5 / 0.7: 0.688 / 0.700 / 0.696 (against the best: 0.708 at 0.3,
/// 0.697 at 0.5); built-in embedder at 0.8: 0.659 (0.650).
pub fn fuse(
    arms: SearchArms,
    fusion: Fusion,
    candidates: &HashMap<MemoryId, ArmScores>,
    full_match: Option<f64>,
) -> HashMap<MemoryId, f64> {
    let best_lexical = candidates
        .values()
        .filter_map(|c| c.lexical_score)
        .fold(0.0_f64, f64::max);
    let scale = full_match.map_or(best_lexical, |f| f.max(best_lexical));
    let arms = match arms {
        SearchArms::Hybrid if best_lexical <= 0.0 => SearchArms::Dense,
        SearchArms::Hybrid if candidates.values().all(|c| c.dense_rank.is_none()) => {
            SearchArms::Lexical
        }
        arms => arms,
    };
    candidates
        .iter()
        .map(|(id, c)| {
            let relevance = match (arms, fusion) {
                (SearchArms::Dense, _) => c.similarity.max(0.0),
                (SearchArms::Lexical, _) => lexical_share(c, scale),
                (SearchArms::Hybrid, Fusion::Rrf { k }) => {
                    let part = |rank: Option<usize>| rank.map_or(0.0, |r| 1.0 / (k + r as f64));
                    (part(c.dense_rank) + part(c.lexical_rank)) / (2.0 / (k + 1.0))
                }
                (SearchArms::Hybrid, Fusion::Score { lexical_weight }) => {
                    (1.0 - lexical_weight) * c.similarity.max(0.0)
                        + lexical_weight * lexical_share(c, scale)
                }
            };
            (*id, relevance.clamp(0.0, 1.0))
        })
        .collect()
}

/// The lexical score as a share of `scale` (0 when unmatched).
fn lexical_share(c: &ArmScores, scale: f64) -> f64 {
    match c.lexical_score {
        Some(score) if scale > 0.0 => (score / scale).max(0.0),
        _ => 0.0,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn candidate(
        similarity: f64,
        dense: Option<usize>,
        lexical: Option<(f64, usize)>,
    ) -> ArmScores {
        ArmScores {
            similarity,
            dense_rank: dense,
            lexical_score: lexical.map(|l| l.0),
            lexical_rank: lexical.map(|l| l.1),
        }
    }

    #[test]
    fn rrf_rewards_agreement_and_stays_in_range() {
        let (a, b, c) = (MemoryId::now_v7(), MemoryId::now_v7(), MemoryId::now_v7());
        let candidates = HashMap::from([
            (a, candidate(0.9, Some(1), Some((7.0, 1)))),
            (b, candidate(0.8, Some(2), None)),
            (c, candidate(0.1, None, Some((3.0, 3)))),
        ]);
        let fused = fuse(
            SearchArms::Hybrid,
            Fusion::Rrf { k: 60.0 },
            &candidates,
            None,
        );
        assert!(
            (fused[&a] - 1.0).abs() < 1e-9,
            "first in both arms: {fused:?}"
        );
        assert!(fused[&b] < 0.5 && fused[&c] < 0.5);
        assert!(
            fused[&b] > fused[&c],
            "second place on one arm beats third on another"
        );
    }

    #[test]
    fn score_fusion_weighs_cosine_and_scaled_lexical() {
        let (a, b) = (MemoryId::now_v7(), MemoryId::now_v7());
        let candidates = HashMap::from([
            (a, candidate(0.2, Some(2), Some((8.0, 1)))),
            (b, candidate(0.6, Some(1), Some((2.0, 2)))),
        ]);
        let fused = fuse(
            SearchArms::Hybrid,
            Fusion::Score {
                lexical_weight: 0.5,
            },
            &candidates,
            None,
        );
        assert!((fused[&a] - 0.6).abs() < 1e-9, "{fused:?}");
        assert!((fused[&b] - 0.425).abs() < 1e-9, "{fused:?}");
        let lexical = fuse(
            SearchArms::Lexical,
            Fusion::Rrf { k: 60.0 },
            &candidates,
            None,
        );
        assert_eq!((lexical[&a], lexical[&b]), (1.0, 0.25));
        let dense = fuse(
            SearchArms::Dense,
            Fusion::Rrf { k: 60.0 },
            &candidates,
            None,
        );
        assert_eq!(dense[&b], 0.6);
    }

    #[test]
    fn a_weak_lexical_match_counts_as_its_share_of_the_full_match() {
        // The only lexical match is on one common word (score 0.5 of a full match of 10):
        // it must not outrank the dense arm's paraphrase as if it had matched everything.
        let (word, paraphrase) = (MemoryId::now_v7(), MemoryId::now_v7());
        let candidates = HashMap::from([
            (word, candidate(0.1, Some(2), Some((0.5, 1)))),
            (paraphrase, candidate(0.45, Some(1), None)),
        ]);
        let fusion = Fusion::Score {
            lexical_weight: 0.3,
        };
        let against_best = fuse(SearchArms::Hybrid, fusion, &candidates, None);
        assert!(
            against_best[&word] > against_best[&paraphrase],
            "{against_best:?}"
        );
        let scaled = fuse(SearchArms::Hybrid, fusion, &candidates, Some(10.0));
        assert!(
            (scaled[&word] - (0.7 * 0.1 + 0.3 * 0.05)).abs() < 1e-9,
            "{scaled:?}"
        );
        assert!(scaled[&paraphrase] > scaled[&word], "{scaled:?}");
        // A match above the estimate is read against itself: shares stay within [0, 1].
        let strong = HashMap::from([(word, candidate(0.1, Some(1), Some((12.0, 1))))]);
        let fused = fuse(SearchArms::Lexical, fusion, &strong, Some(10.0));
        assert_eq!(fused[&word], 1.0);
    }

    #[test]
    fn an_arm_that_found_nothing_leaves_the_other_its_whole_range() {
        let (a, b) = (MemoryId::now_v7(), MemoryId::now_v7());
        let paraphrase = HashMap::from([
            (a, candidate(0.9, Some(1), None)),
            (b, candidate(0.4, Some(2), None)),
        ]);
        for fusion in [
            Fusion::Rrf { k: 60.0 },
            Fusion::Score {
                lexical_weight: 0.8,
            },
        ] {
            let fused = fuse(SearchArms::Hybrid, fusion, &paraphrase, None);
            assert_eq!(
                (fused[&a], fused[&b]),
                (0.9, 0.4),
                "{fusion:?}: as dense alone"
            );
        }
        let words_only = HashMap::from([(a, candidate(0.3, None, Some((5.0, 1))))]);
        let fused = fuse(
            SearchArms::Hybrid,
            Fusion::Rrf { k: 60.0 },
            &words_only,
            None,
        );
        assert_eq!(fused[&a], 1.0, "as lexical alone");
    }
}
