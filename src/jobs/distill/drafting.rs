//! Drafting one cluster into candidates: by the language model when one is configured (its
//! drafts embedded with the memories' embedder, for the grounding check and the dedup), else
//! extractively.

use chrono::{DateTime, Utc};
use uuid::Uuid;

use super::{Budget, Work};
use crate::distill::cluster::centroid_medoid;
use crate::distill::drafter::{DraftFailure, LlmDrafter};
use crate::distill::grounding::{Grounding, GroundingThresholds, Refusal};
use crate::distill::prompt::EpisodeLine;
use crate::domain::{Memory, MemoryId};
use crate::embed::cosine;
use crate::jobs::{JobContext, JobError};
use crate::screening::Verdict;
use crate::store::{Candidate, CandidateStatus, DistillMethod};

/// How one run checks a model's drafts against their episodes and the prompt.
pub(super) struct Guard {
    /// `None`: every schema-valid draft is kept (`ground_drafts = false`, for calibrating).
    pub thresholds: Option<GroundingThresholds>,
    /// The prompt's own sentences, embedded.
    pub prompt_vectors: Vec<Vec<f32>>,
    /// The prompt without its episodes, normalised (`grounding::prompt_words`).
    pub prompt_words: String,
}

/// Why drafting a cluster failed.
pub(super) enum Failure {
    /// The endpoint failed the call.
    Llm(String),
    /// Two replies broke the schema.
    Schema(String),
    /// The drafts could not be embedded (or, extractive, the cluster's medoid not found).
    Other(String),
}

pub(super) enum Drafting {
    /// The run's token budget is spent, or the endpoint is unreachable: the cluster waits for
    /// the next run.
    Deferred,
    Drafted {
        /// The cluster's candidates (none: nothing durable in it), or why drafting failed.
        result: Result<Vec<Candidate>, Failure>,
        /// Drafts refused as ungrounded, by reason (never stored).
        refused: Vec<Refusal>,
        calls: u32,
        tokens_in: u64,
        tokens_out: u64,
    },
}

#[allow(clippy::too_many_arguments)]
pub(super) async fn draft(
    ctx: &JobContext,
    llm: Option<&LlmDrafter>,
    guard: &Guard,
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
                .map_err(|e| Failure::Other(e.to_string())),
            refused: vec![],
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
    let mut refused = Vec::new();
    let result = match drafted.result {
        Ok(drafts) if drafts.is_empty() => Ok(vec![]),
        Ok(drafts) => {
            let texts: Vec<String> = drafts.iter().map(|d| d.content.clone()).collect();
            match ctx.service.embedder().embed(&texts).await {
                Ok(draft_vectors) if draft_vectors.len() == drafts.len() => {
                    let mut kept = Vec::new();
                    for (d, embedding) in drafts.into_iter().zip(draft_vectors) {
                        let (verdict, measured) =
                            ground(guard, &d.content, &embedding, &d.source_ids, work, vectors);
                        // The measures of every draft, kept or refused, for calibrating the
                        // thresholds (debug: the content is memory content).
                        tracing::debug!(verdict = verdict.err().map_or("kept", Refusal::key),
                            centroid = measured.centroid, best = measured.best,
                            worst = measured.worst, prompt = measured.prompt,
                            content = %d.content, "distill: draft grounding");
                        if let Err(why) = verdict {
                            refused.push(why);
                            continue;
                        }
                        // Drafts go through the same screen as writes: a model can be talked
                        // into repeating an injection, or a secret, from its episodes.
                        let content = match ctx.service.screen().check(&d.content) {
                            Verdict::Pass => d.content,
                            Verdict::Redact { text, .. } => text,
                            Verdict::Reject(_) | Verdict::Quarantine(_) => {
                                refused.push(Refusal::Screened);
                                continue;
                            }
                        };
                        kept.push(Candidate {
                            content,
                            entity: d.entity,
                            attribute: d.attribute,
                            confidence: d.confidence,
                            source_ids: d.source_ids,
                            model: Some(llm.model().to_owned()),
                            prompt_version: Some(llm.prompt_version().to_owned()),
                            embedding,
                            ..pending(work, episodes, DistillMethod::Llm, now)
                        });
                    }
                    Ok(kept)
                }
                Ok(draft_vectors) => Err(Failure::Other(format!(
                    "embedding the drafts: {} vectors for {} drafts",
                    draft_vectors.len(),
                    drafts.len()
                ))),
                Err(e) => Err(Failure::Other(format!("embedding the drafts: {e}"))),
            }
        }
        Err(DraftFailure::Llm(e)) => Err(Failure::Llm(e.to_string())),
        Err(e @ DraftFailure::Schema(_)) => Err(Failure::Schema(e.to_string())),
    };
    Drafting::Drafted {
        result,
        refused,
        calls: drafted.calls,
        tokens_in: drafted.tokens_in,
        tokens_out: drafted.tokens_out,
    }
}

/// The guard's verdict on one draft (always `Ok` with grounding off), and its measures: its vector against its cited episodes' (all members of
/// `work`'s cluster, as `parse_reply` made sure) and the prompt's own sentences.
fn ground(
    guard: &Guard,
    content: &str,
    embedding: &[f32],
    cited: &[MemoryId],
    work: &Work,
    vectors: &[Vec<f32>],
) -> (Result<(), Refusal>, Grounding) {
    let sources: Vec<&[f32]> = cited
        .iter()
        .filter_map(|id| work.ids.iter().position(|m| m == id))
        .map(|i| vectors[work.members[i]].as_slice())
        .collect();
    let measured = Grounding::measure(
        content,
        embedding,
        &sources,
        &guard.prompt_vectors,
        &guard.prompt_words,
    );
    let verdict = match &guard.thresholds {
        Some(thresholds) => measured.verdict(thresholds),
        None => Ok(()),
    };
    (verdict, measured)
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
