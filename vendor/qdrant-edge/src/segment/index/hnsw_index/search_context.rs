use std::collections::BinaryHeap;

use crate::common::fixed_length_priority_queue::FixedLengthPriorityQueue;
use crate::common::types::{ScoreType, ScoredPointOffset};
use num_traits::float::FloatCore;

/// Structure that holds context of the search
pub struct SearchContext {
    /// Overall nearest points found so far
    pub nearest: FixedLengthPriorityQueue<ScoredPointOffset>,
    /// Current candidates to process
    pub candidates: BinaryHeap<ScoredPointOffset>,
}

impl SearchContext {
    pub fn new(ef: usize) -> Self {
        SearchContext {
            nearest: FixedLengthPriorityQueue::new(ef),
            candidates: BinaryHeap::new(),
        }
    }

    pub fn lower_bound(&self) -> ScoreType {
        match self.nearest.top() {
            None => ScoreType::min_value(),
            Some(worst_of_the_best) => worst_of_the_best.score,
        }
    }

    /// hindsight patch (see vendor/README.md): whether `process_candidate` would take a point
    /// of this score: any while `nearest` is not full, else only one above its worst (in
    /// `FixedLengthPriorityQueue::push`'s order, `ScoredPointOffset`'s).
    pub fn admits(&self, score: ScoreType) -> bool {
        !self.nearest.is_full()
            || ordered_float::OrderedFloat(score) > ordered_float::OrderedFloat(self.lower_bound())
    }

    /// Updates search context with new scored point.
    /// If it is closer than existing - also add it to candidates for further search
    pub fn process_candidate(&mut self, score_point: ScoredPointOffset) {
        let was_added = match self.nearest.push(score_point) {
            None => true,
            Some(removed) => removed.idx != score_point.idx,
        };
        if was_added {
            self.candidates.push(score_point);
        }
    }
}
