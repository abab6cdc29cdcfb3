//! What a namespace knows already, for the dedup of new drafts: its pending and rejected
//! candidates (held in memory for the run, with the drafts it creates) and its active
//! semantic memories (asked of the vector index, confirmed on the stored vectors).

use crate::domain::FactKey;
use crate::domain::{MemoryId, MemoryType};
use crate::embed::cosine;
use crate::jobs::{JobContext, JobError};
use crate::store::{Candidate, CandidateId, CandidateStatus};

/// Candidates loaded per status and namespace.
const MAX_KNOWN: i64 = 100_000;

pub(super) struct Known {
    threshold: f32,
    candidates: Vec<(CandidateId, Vec<f32>)>,
}

impl Known {
    pub(super) async fn load(
        ctx: &JobContext,
        namespace: &str,
        threshold: f32,
    ) -> Result<Self, JobError> {
        let mut candidates = Vec::new();
        // A rejected candidate counts: what a reviewer turned down is not drafted again.
        for status in [CandidateStatus::Pending, CandidateStatus::Rejected] {
            for c in ctx
                .db
                .candidates(Some(namespace), Some(status), MAX_KNOWN)
                .await?
            {
                candidates.push((c.id, c.embedding));
            }
        }
        Ok(Self {
            threshold,
            candidates,
        })
    }

    /// The most similar known candidate at or above the threshold.
    pub(super) fn candidate(&self, embedding: &[f32]) -> Option<CandidateId> {
        self.candidates
            .iter()
            .map(|(id, vector)| (*id, cosine(vector, embedding)))
            .filter(|(_, similarity)| *similarity >= self.threshold)
            .max_by(|a, b| a.1.total_cmp(&b.1))
            .map(|(id, _)| id)
    }

    pub(super) fn add(&mut self, candidate: &Candidate) {
        self.candidates
            .push((candidate.id, candidate.embedding.clone()));
    }

    /// Drafts that were not stored after all (another run recorded their cluster first).
    pub(super) fn forget(&mut self, dropped: &[Candidate]) {
        self.candidates
            .retain(|(id, _)| !dropped.iter().any(|c| c.id == *id));
    }

    /// The most similar active semantic memory at or above the threshold that is not a
    /// different keyed fact (the write path's rule: "user.city" never absorbs "user.hometown").
    pub(super) async fn memory(
        &self,
        ctx: &JobContext,
        namespace: &str,
        draft: &Candidate,
    ) -> Result<Option<MemoryId>, JobError> {
        let threshold = f64::from(self.threshold);
        let key = FactKey::of(draft.entity.as_deref(), draft.attribute.as_deref());
        Ok(ctx
            .service
            .active_neighbours(
                namespace,
                MemoryType::Semantic,
                &draft.embedding,
                threshold - 0.01,
            )
            .await?
            .into_iter()
            .filter(|(similarity, _)| *similarity >= threshold)
            .find(|(_, m)| FactKey::may_merge(key.as_ref(), m))
            .map(|(_, m)| m.id))
    }
}
