//! distill: per namespace, the episodic memories of the last `window_days` that no run has
//! distilled are clustered by meaning (`crate::distill::cluster`, DBSCAN over cosine); each
//! cluster of at least `min_points` is drafted into candidate semantic memories for a reviewer
//! (`drafting.rs`): by the configured language model, or without one as the cluster's most
//! central episode (`method = extractive`). A draft that says what a pending or rejected
//! candidate or an active semantic memory already says adds its episodes to that one's
//! evidence instead (`known.rs`). Each cluster is written in one transaction with its
//! episodes' distilled mark and its fingerprint, so a rerun (or a run after a kill) never
//! drafts an episode twice; noise episodes stay unmarked for a later window, and a cluster whose
//! drafting failed (or that the token budget left over) is tried again by the next run.

mod drafting;
mod known;

use std::sync::Arc;
use std::sync::atomic::{AtomicU32, AtomicU64, Ordering};

use async_trait::async_trait;
use chrono::{DateTime, Duration, Utc};
use futures::StreamExt;
use serde_json::json;

use super::config::{JobConfigError, JobSettings};
use super::{Job, JobContext, JobEnv, JobError, JobSpec, JobStats};
use crate::distill::cluster::{ClusterParams, cluster};
use crate::distill::drafter::LlmDrafter;
use crate::distill::grounding::{Refusal, prompt_words};
use crate::domain::MemoryId;
use crate::service::review::{self, Approval};
use crate::store::{Candidate, ClusterOutcome, DistilledCluster, Evidence, EvidenceTo};
use drafting::{Drafting, Failure, Guard};
use known::Known;

pub const SPEC: JobSpec = JobSpec {
    name: "distill",
    default_cron: "0 0 4 * * *",
    build,
};

/// The cluster threshold for an embedder (by its id): `embed::calibration`, measured with
/// `hindsight eval distill` (docs/review.md).
pub fn default_min_cosine(embedder_id: &str) -> f32 {
    crate::embed::calibration(embedder_id).distill_min_cosine
}

/// Who auto-approved a candidate, as its reviewer.
pub const AUTO_REVIEWER: &str = "auto-approve";

/// `[params]` of `jobs/distill.toml`.
#[derive(serde::Deserialize)]
#[serde(deny_unknown_fields, default)]
struct Params {
    window_days: i64,
    /// Unset: the embedder's own (`default_min_cosine`), picked at run time.
    min_cosine: Option<f64>,
    min_points: i64,
    dedup_cosine: f64,
    max_episodes: i64,
    /// Unset: off. Nothing the agent trusts appears without a reviewer by default.
    auto_approve_confidence: Option<f64>,
    ground_drafts: bool,
}

impl Default for Params {
    fn default() -> Self {
        Self {
            window_days: 7,
            min_cosine: None,
            min_points: 3,
            dedup_cosine: 0.9,
            max_episodes: 5000,
            auto_approve_confidence: None,
            ground_drafts: true,
        }
    }
}

fn build(settings: &JobSettings, env: &JobEnv) -> Result<Arc<dyn Job>, JobConfigError> {
    let p: Params = settings.params()?;
    let min_cosine = p
        .min_cosine
        .map(|c| settings.float_within("min_cosine", c, -0.999..=1.0))
        .transpose()?
        .map(|c| c as f32);
    let auto_approve = p
        .auto_approve_confidence
        .map(|c| settings.float_within("auto_approve_confidence", c, 0.5..=1.0))
        .transpose()?;
    Ok(Arc::new(Distill {
        window: Duration::days(settings.int_within("window_days", p.window_days, 1..=3650)?),
        min_cosine,
        min_points: settings.int_within("min_points", p.min_points, 2..=1000)? as usize,
        dedup_cosine: settings.float_within("dedup_cosine", p.dedup_cosine, 0.0..=1.0)? as f32,
        max_episodes: settings.int_within("max_episodes", p.max_episodes, 10..=100_000)?,
        auto_approve,
        ground_drafts: p.ground_drafts,
        llm: env.llm.clone(),
    }))
}

pub struct Distill {
    pub window: Duration,
    /// `None`: the embedder's default (`default_min_cosine`).
    pub min_cosine: Option<f32>,
    pub min_points: usize,
    /// A draft at least this similar to a known candidate or semantic memory is the same
    /// knowledge.
    pub dedup_cosine: f32,
    /// Episodes clustered per namespace per run (the oldest first; the rest wait for the next).
    pub max_episodes: i64,
    /// Candidates at least this confident are approved as they are drafted.
    pub auto_approve: Option<f64>,
    /// Refuse a model's drafts that do not rest on their episodes (`distill::grounding`); off
    /// only to calibrate the thresholds (`hindsight eval distill --no-grounding`).
    pub ground_drafts: bool,
    /// `None`: extractive drafts.
    pub llm: Option<Arc<LlmDrafter>>,
}

/// A cluster's stable name: its sorted episode ids, hashed.
pub fn fingerprint(ids: &[MemoryId]) -> String {
    let mut sorted = ids.to_vec();
    sorted.sort();
    let mut text = String::with_capacity(sorted.len() * 37);
    for id in sorted {
        text.push_str(&id.to_string());
        text.push('\n');
    }
    format!("{:032x}", xxhash_rust::xxh3::xxh3_128(text.as_bytes()))
}

/// One cluster on its way to the store.
struct Work {
    /// Indexes into the namespace's episodes.
    members: Vec<usize>,
    ids: Vec<MemoryId>,
    fingerprint: String,
}

/// What one run may still ask of the model, shared by its concurrent calls: tokens (a run can
/// overshoot by the calls already in flight when the budget runs out, never more), and a
/// circuit breaker: after `UNREACHABLE_AFTER` calls in a row fail at the endpoint (down,
/// refusing, timing out, a bad key), the rest of the run's clusters wait for the next run
/// instead of each waiting out its own timeouts and retries.
struct Budget {
    limit: u64,
    spent: AtomicU64,
    failures_in_a_row: AtomicU32,
}

/// Endpoint failures in a row after which a run stops calling the model.
const UNREACHABLE_AFTER: u32 = 3;

impl Budget {
    fn new(limit: u64) -> Self {
        Self {
            limit,
            spent: AtomicU64::new(0),
            failures_in_a_row: AtomicU32::new(0),
        }
    }

    /// No more calls this run: out of tokens, or the endpoint looks unreachable.
    fn exhausted(&self) -> bool {
        self.spent.load(Ordering::Relaxed) >= self.limit || self.unreachable()
    }

    fn unreachable(&self) -> bool {
        self.failures_in_a_row.load(Ordering::Relaxed) >= UNREACHABLE_AFTER
    }

    fn spend(&self, tokens: u64) {
        self.spent.fetch_add(tokens, Ordering::Relaxed);
    }

    /// The endpoint answered (`true`) or failed (`false`).
    fn answered(&self, ok: bool) {
        if ok {
            self.failures_in_a_row.store(0, Ordering::Relaxed);
        } else {
            self.failures_in_a_row.fetch_add(1, Ordering::Relaxed);
        }
    }
}

#[derive(Default)]
struct Tally {
    episodes: u64,
    clusters: u64,
    noise: u64,
    created: u64,
    merged: u64,
    nothing: u64,
    failed: u64,
    failed_llm: u64,
    failed_schema: u64,
    refused: std::collections::BTreeMap<&'static str, u64>,
    deferred: u64,
    known: u64,
    auto_approved: u64,
    llm_calls: u64,
    tokens_in: u64,
    tokens_out: u64,
}

#[async_trait]
impl Job for Distill {
    async fn run(&self, ctx: &JobContext) -> Result<JobStats, JobError> {
        // Drafts are embedded with the configured embedder and compared with stored vectors:
        // after an embedder change, only `hindsight reindex` makes them comparable again.
        ctx.service.ensure_embedder_matches()?;
        let now = Utc::now();
        let since = now - self.window;
        let mut stats = JobStats {
            dry_run: ctx.dry_run,
            ..JobStats::default()
        };
        let budget = Budget::new(self.llm.as_ref().map_or(u64::MAX, |llm| llm.token_budget));
        let guard = self.guard(ctx).await?;
        let mut tally = Tally::default();
        for namespace in ctx.db.distill_namespaces(since).await? {
            if ctx.cancel.is_cancelled() {
                stats.stopped_early = true;
                break;
            }
            let finished = self
                .namespace(ctx, &namespace, since, now, &budget, &guard, &mut tally)
                .await?;
            stats.batches += 1;
            if !finished {
                stats.stopped_early = true;
                break;
            }
        }
        stats.examined = tally.episodes;
        stats.changed = tally.created + tally.merged;
        for (key, value) in [
            ("episodes", tally.episodes),
            ("clusters", tally.clusters),
            ("noise", tally.noise),
            ("candidates_created", tally.created),
            ("candidates_merged", tally.merged),
            ("clusters_empty", tally.nothing),
            ("clusters_failed", tally.failed),
            ("clusters_failed_llm", tally.failed_llm),
            ("clusters_failed_schema", tally.failed_schema),
            ("drafts_refused", tally.refused.values().sum()),
            ("clusters_deferred", tally.deferred),
            ("clusters_known", tally.known),
            ("auto_approved", tally.auto_approved),
            ("llm_calls", tally.llm_calls),
            ("tokens_in", tally.tokens_in),
            ("tokens_out", tally.tokens_out),
        ] {
            stats.details.insert(key.into(), json!(value));
        }
        for refusal in Refusal::ALL {
            let count = tally.refused.get(refusal.key()).copied().unwrap_or(0);
            stats.details.insert(refusal.key().into(), json!(count));
        }
        stats
            .details
            .insert("llm_unreachable".into(), json!(budget.unreachable()));
        if let Some(llm) = &self.llm {
            stats.details.insert(
                "structured_output".into(),
                json!(llm.format_used().as_str()),
            );
            stats
                .details
                .insert("grounding".into(), json!(guard.thresholds.is_some()));
        }
        stats.details.insert(
            "method".into(),
            json!(if self.llm.is_some() {
                "llm"
            } else {
                "extractive"
            }),
        );
        Ok(stats)
    }
}

impl Distill {
    /// This run's grounding check: the embedder's thresholds, and the prompt's own sentences
    /// embedded with the memories' embedder.
    async fn guard(&self, ctx: &JobContext) -> Result<Guard, JobError> {
        let embedder = ctx.service.embedder();
        let thresholds = self
            .ground_drafts
            .then(|| crate::embed::calibration(embedder.id()).grounding);
        let (prompt_vectors, prompt_words) = match (&self.llm, thresholds) {
            (Some(llm), Some(_)) => {
                let sentences = llm.prompt().own_sentences();
                let vectors = match sentences.is_empty() {
                    true => vec![],
                    false => embedder.embed(&sentences).await.map_err(|e| {
                        JobError::Task("distill: embedding the prompt".to_owned(), e.to_string())
                    })?,
                };
                (vectors, prompt_words(&llm.prompt().own_text()))
            }
            _ => (vec![], String::new()),
        };
        Ok(Guard {
            thresholds,
            prompt_vectors,
            prompt_words,
        })
    }

    /// Distil one namespace's window. `false` when the daemon is stopping and clusters are left.
    #[allow(clippy::too_many_arguments)]
    async fn namespace(
        &self,
        ctx: &JobContext,
        namespace: &str,
        since: DateTime<Utc>,
        now: DateTime<Utc>,
        budget: &Budget,
        guard: &Guard,
        tally: &mut Tally,
    ) -> Result<bool, JobError> {
        let episodes = ctx
            .db
            .undistilled_episodes(namespace, since, self.max_episodes)
            .await?;
        // An episode changed outside hindsight must not become knowledge.
        let episodes = crate::service::integrity::checked(
            ctx.db.as_ref(),
            Some(ctx.metrics.as_ref()),
            crate::store::RowTable::Memories,
            episodes,
        )
        .await;
        tally.episodes += episodes.len() as u64;
        let vectors: Vec<Vec<f32>> = episodes.iter().map(|m| m.embedding.clone()).collect();
        let params = ClusterParams {
            min_cosine: self
                .min_cosine
                .unwrap_or_else(|| default_min_cosine(ctx.service.embedder().id())),
            min_points: self.min_points,
        };
        let (clustering, vectors) =
            tokio::task::spawn_blocking(move || (cluster(&vectors, &params), vectors))
                .await
                .map_err(|e| JobError::Task("distill clustering".to_owned(), e.to_string()))?;
        let clustering = clustering?;
        tally.noise += clustering.noise.len() as u64;
        tally.clusters += clustering.clusters.len() as u64;
        if ctx.dry_run || clustering.clusters.is_empty() {
            // A dry run reports the clusters; drafting them would spend model tokens. Without
            // clusters there is nothing to compare with what is known.
            return Ok(true);
        }
        let mut known = Known::load(ctx, namespace, self.dedup_cosine).await?;
        let works = clustering.clusters.into_iter().map(|members| {
            let ids: Vec<MemoryId> = members.iter().map(|&i| episodes[i].id).collect();
            // No need to look the fingerprint up first: a recorded cluster's episodes carry
            // the distilled mark and are never fetched again, so only a concurrent run can
            // clash, and `record_cluster` refuses that one.
            Work {
                fingerprint: fingerprint(&ids),
                members,
                ids,
            }
        });
        let llm = self.llm.as_deref();
        let concurrency = llm.map_or(1, |llm| llm.max_concurrency);
        let (episodes, vectors) = (&episodes, &vectors);
        // In cluster order (`buffered`, not `buffer_unordered`): the dedup sees drafts in the
        // same order whatever the model's latency.
        let mut drafting = futures::stream::iter(works)
            .map(|work| async move {
                let drafting =
                    drafting::draft(ctx, llm, guard, &work, episodes, vectors, budget, now).await;
                (work, drafting)
            })
            .buffered(concurrency);
        loop {
            // A stopping daemon does not wait for model calls in flight (up to
            // `llm_timeout_secs`): they are dropped, and their clusters, like the rest, come back
            // next run. The clusters written so far are done.
            let next = tokio::select! {
                biased;
                _ = ctx.cancel.cancelled() => return Ok(false),
                next = drafting.next() => next,
            };
            let Some((work, drafting)) = next else { break };
            let candidates = match drafting {
                Drafting::Deferred => {
                    tally.deferred += 1;
                    continue;
                }
                Drafting::Drafted {
                    result,
                    refused,
                    calls,
                    tokens_in,
                    tokens_out,
                } => {
                    tally.llm_calls += u64::from(calls);
                    tally.tokens_in += tokens_in;
                    tally.tokens_out += tokens_out;
                    for why in refused {
                        *tally.refused.entry(why.key()).or_default() += 1;
                    }
                    match result {
                        Ok(candidates) => candidates,
                        Err(failure) => {
                            tally.failed += 1;
                            let reason = match failure {
                                Failure::Llm(e) => {
                                    tally.failed_llm += 1;
                                    e
                                }
                                Failure::Schema(e) => {
                                    tally.failed_schema += 1;
                                    e
                                }
                                Failure::Other(e) => e,
                            };
                            tracing::warn!(namespace, fingerprint = %work.fingerprint,
                                error = %reason, "distill: cluster failed; the next run tries it again");
                            continue;
                        }
                    }
                }
            };
            self.record(ctx, namespace, work, candidates, &mut known, now, tally)
                .await?;
        }
        Ok(true)
    }

    /// Store one cluster's drafts: new candidates, or evidence for what is known already.
    #[allow(clippy::too_many_arguments)]
    async fn record(
        &self,
        ctx: &JobContext,
        namespace: &str,
        work: Work,
        drafts: Vec<Candidate>,
        known: &mut Known,
        now: DateTime<Utc>,
        tally: &mut Tally,
    ) -> Result<(), JobError> {
        let mut created: Vec<Candidate> = Vec::new();
        let mut evidence: Vec<Evidence> = Vec::new();
        for draft in drafts {
            // Drafts of this very cluster count as known too: a model that says one thing
            // twice makes one candidate.
            let same = match known.candidate(&draft.embedding) {
                Some(id) => Some(EvidenceTo::Candidate(id)),
                None => known
                    .memory(ctx, namespace, &draft)
                    .await?
                    .map(EvidenceTo::Memory),
            };
            match same {
                Some(to) => evidence.push(Evidence {
                    to,
                    episodes: draft.source_ids,
                }),
                None => {
                    known.add(&draft);
                    created.push(draft);
                }
            }
        }
        let outcome = match (created.is_empty(), evidence.is_empty()) {
            (false, _) => ClusterOutcome::Created,
            (true, false) => ClusterOutcome::Merged,
            (true, true) => ClusterOutcome::Nothing,
        };
        let cluster = DistilledCluster {
            fingerprint: work.fingerprint,
            namespace: namespace.to_owned(),
            episodes: work.ids,
            outcome,
            created,
            evidence,
            at: now,
        };
        if !ctx.db.record_cluster(&cluster).await? {
            tally.known += 1;
            known.forget(&cluster.created);
            return Ok(());
        }
        tally.created += cluster.created.len() as u64;
        tally.merged += cluster.evidence.len() as u64;
        if outcome == ClusterOutcome::Nothing {
            tally.nothing += 1;
        }
        let Some(threshold) = self.auto_approve else {
            return Ok(());
        };
        for candidate in cluster.created.iter().filter(|c| c.confidence >= threshold) {
            let approval = Approval {
                reviewer: Some(AUTO_REVIEWER.to_owned()),
                ..Approval::default()
            };
            match review::approve(
                &ctx.service,
                ctx.db.as_ref(),
                candidate.id,
                &approval,
                false,
            )
            .await
            {
                Ok(_) => tally.auto_approved += 1,
                // It stays pending for a human.
                Err(e) => tracing::warn!(candidate = %candidate.id, error = %e,
                    "distill: auto-approve failed; the candidate stays pending"),
            }
        }
        Ok(())
    }
}
