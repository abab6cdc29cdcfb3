//! Drafting one cluster into candidates: by the language model when one is configured (its
//! drafts embedded with the memories' embedder, for the dedup), else extractively.

use chrono::{DateTime, Utc};
use uuid::Uuid;

use super::{Budget, Work};
use crate::distill::cluster::centroid_medoid;
use crate::distill::draft::EpisodeLine;
use crate::distill::drafter::{DraftFailure, LlmDrafter};
use crate::domain::Memory;
use crate::embed::cosine;
use crate::jobs::{JobContext, JobError};
use crate::store::{Candidate, CandidateStatus, DistillMethod};

pub(super) enum Drafting {
    /// The run's token budget is spent, or the endpoint is unreachable: the cluster waits for
    /// the next run.
    Deferred,
    Drafted {
        /// The cluster's candidates (none: nothing durable in it), or why drafting failed.
        result: Result<Vec<Candidate>, String>,
        calls: u32,
        tokens_in: u64,
        tokens_out: u64,
    },
}

pub(super) async fn draft(
    ctx: &JobContext,
    llm: Option<&LlmDrafter>,
    work: &Work,
    episodes: &[Memory],
    vectors: &[Vec<f32>],
    budget: &Budget,
    now: DateTime<Utc>,
) -> Drafting {
    let Some(llm) = llm else {
        return Drafting::Drafted {
            result: extractive(episodes, vectors, work, now)
                .map(|c| vec![c])
                .map_err(|e| e.to_string()),
            calls: 0,
            tokens_in: 0,
            tokens_out: 0,
        };
    };
    if budget.exhausted() {
        return Drafting::Deferred;
    }
    let lines: Vec<EpisodeLine<'_>> = work
        .members
        .iter()
        .map(|&i| EpisodeLine {
            id: episodes[i].id,
            occurred_at: episodes[i].occurred_at,
            content: &episodes[i].content,
        })
        .collect();
    let drafted = llm.draft(&lines).await;
    budget.spend(drafted.tokens_in + drafted.tokens_out);
    // A reply that broke the schema still came from a reachable endpoint.
    budget.answered(!matches!(drafted.result, Err(DraftFailure::Llm(_))));
    let result = match drafted.result {
        Ok(drafts) if drafts.is_empty() => Ok(vec![]),
        Ok(drafts) => {
            let texts: Vec<String> = drafts.iter().map(|d| d.content.clone()).collect();
            match ctx.service.embedder().embed(&texts).await {
                Ok(vectors) if vectors.len() == drafts.len() => Ok(drafts
                    .into_iter()
                    .zip(vectors)
                    .map(|(d, embedding)| Candidate {
                        content: d.content,
                        entity: d.entity,
                        attribute: d.attribute,
                        confidence: d.confidence,
                        source_ids: d.source_ids,
                        model: Some(llm.model().to_owned()),
                        prompt_version: Some(llm.prompt_version().to_owned()),
                        embedding,
                        ..pending(work, episodes, DistillMethod::Llm, now)
                    })
                    .collect()),
                Ok(vectors) => Err(format!(
                    "embedding the drafts: {} vectors for {} drafts",
                    vectors.len(),
                    drafts.len()
                )),
                Err(e) => Err(format!("embedding the drafts: {e}")),
            }
        }
        Err(e) => Err(e.to_string()),
    };
    Drafting::Drafted {
        result,
        calls: drafted.calls,
        tokens_in: drafted.tokens_in,
        tokens_out: drafted.tokens_out,
    }
}

/// The cluster's most central episode, as a candidate; its confidence is how tightly the
/// cluster holds together (the members' mean cosine to it), its sources all the members.
fn extractive(
    episodes: &[Memory],
    vectors: &[Vec<f32>],
    work: &Work,
    now: DateTime<Utc>,
) -> Result<Candidate, JobError> {
    let members = &work.members;
    let centre = centroid_medoid(vectors, members)?;
    let cohesion = members
        .iter()
        .map(|&i| cosine(&vectors[i], &vectors[centre]))
        .sum::<f32>()
        / members.len() as f32;
    let medoid = &episodes[centre];
    Ok(Candidate {
        content: medoid.content.clone(),
        confidence: f64::from(cohesion.clamp(0.0, 1.0)),
        source_ids: work.ids.clone(),
        embedding: medoid.embedding.clone(),
        ..pending(work, episodes, DistillMethod::Extractive, now)
    })
}

/// A new pending candidate of `work`'s cluster, before the draft's own fields are filled in.
fn pending(
    work: &Work,
    episodes: &[Memory],
    method: DistillMethod,
    now: DateTime<Utc>,
) -> Candidate {
    Candidate {
        id: Uuid::now_v7(),
        namespace: episodes[work.members[0]].namespace.clone(),
        content: String::new(),
        entity: None,
        attribute: None,
        confidence: 0.0,
        source_ids: vec![],
        fingerprint: work.fingerprint.clone(),
        method,
        model: None,
        prompt_version: None,
        status: CandidateStatus::Pending,
        reviewer: None,
        reviewed_at: None,
        note: None,
        memory_id: None,
        created_at: now,
        updated_at: now,
        embedding: vec![],
    }
}
