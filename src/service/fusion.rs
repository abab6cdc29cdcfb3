//! How the search arms' rankings become one relevance in [0, 1]: reciprocal-rank fusion
//! (each arm contributes 1/(k + rank), divided by what a memory ranked first by every arm would
//! get), or a score fusion of the dense cosine and the lexical score scaled by the query's best
//! (a weighted mean). Which one, and its knob, are settings (`search_fusion`, `search_rrf_k`,
//! `search_lexical_weight`); `hindsight eval retrieval` measures them.

use std::collections::HashMap;

pub use crate::configuration::SearchArms;
use crate::domain::MemoryId;

/// How two arms' results are fused.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Fusion {
    /// Reciprocal-rank fusion with this `k`.
    Rrf { k: f64 },
    /// `(1 − w)·cosine + w·lexical / best lexical`.
    Score { lexical_weight: f64 },
}

/// One candidate's evidence from the arms.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct ArmScores {
    /// Cosine to the query (exact, from the stored vector), whichever arm found it.
    pub similarity: f64,
    /// 1-based place in the dense arm's list, if it was there.
    pub dense_rank: Option<usize>,
    /// The lexical score (BM25 on SQLite, `ts_rank_cd` on PostgreSQL) and place, if matched.
    pub lexical_score: Option<f64>,
    pub lexical_rank: Option<usize>,
}

/// The fused relevance of each candidate, in [0, 1]. A hybrid search whose lexical arm matched
/// nothing (a paraphrase sharing no word, a query of punctuation) is ranked by its dense arm
/// alone, and one whose dense arm found nothing by its lexical arm: an arm with no evidence
/// must not squeeze the other into a corner of [0, 1], where recency would outweigh it.
pub fn fuse(
    arms: SearchArms,
    fusion: Fusion,
    candidates: &HashMap<MemoryId, ArmScores>,
) -> HashMap<MemoryId, f64> {
    let best_lexical = candidates
        .values()
        .filter_map(|c| c.lexical_score)
        .fold(0.0_f64, f64::max);
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
                (SearchArms::Lexical, _) => lexical_share(c, best_lexical),
                (SearchArms::Hybrid, Fusion::Rrf { k }) => {
                    let part = |rank: Option<usize>| rank.map_or(0.0, |r| 1.0 / (k + r as f64));
                    (part(c.dense_rank) + part(c.lexical_rank)) / (2.0 / (k + 1.0))
                }
                (SearchArms::Hybrid, Fusion::Score { lexical_weight }) => {
                    (1.0 - lexical_weight) * c.similarity.max(0.0)
                        + lexical_weight * lexical_share(c, best_lexical)
                }
            };
            (*id, relevance.clamp(0.0, 1.0))
        })
        .collect()
}

/// The lexical score as a share of the query's best match (0 when unmatched).
fn lexical_share(c: &ArmScores, best: f64) -> f64 {
    match c.lexical_score {
        Some(score) if best > 0.0 => (score / best).max(0.0),
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
        let fused = fuse(SearchArms::Hybrid, Fusion::Rrf { k: 60.0 }, &candidates);
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
        );
        assert!((fused[&a] - 0.6).abs() < 1e-9, "{fused:?}");
        assert!((fused[&b] - 0.425).abs() < 1e-9, "{fused:?}");
        let lexical = fuse(SearchArms::Lexical, Fusion::Rrf { k: 60.0 }, &candidates);
        assert_eq!((lexical[&a], lexical[&b]), (1.0, 0.25));
        let dense = fuse(SearchArms::Dense, Fusion::Rrf { k: 60.0 }, &candidates);
        assert_eq!(dense[&b], 0.6);
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
            let fused = fuse(SearchArms::Hybrid, fusion, &paraphrase);
            assert_eq!(
                (fused[&a], fused[&b]),
                (0.9, 0.4),
                "{fusion:?}: as dense alone"
            );
        }
        let words_only = HashMap::from([(a, candidate(0.3, None, Some((5.0, 1))))]);
        let fused = fuse(SearchArms::Hybrid, Fusion::Rrf { k: 60.0 }, &words_only);
        assert_eq!(fused[&a], 1.0, "as lexical alone");
    }
}
