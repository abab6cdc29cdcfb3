//! distill: per namespace, the episodic memories of the last `window_days` that no run has
//! distilled are clustered by meaning (`crate::distill::cluster`, DBSCAN over cosine); each
//! cluster of at least `min_points` becomes a candidate semantic memory for a reviewer. Without
//! a language model the candidate is the cluster's most central episode (`method =
//! extractive`). A draft that says what a pending candidate already says adds its episodes to
//! that candidate's evidence instead. Each cluster is written in one transaction with its
//! episodes' distilled mark and its fingerprint, so a rerun (or a run after a kill) never
//! distils an episode twice; noise episodes stay unmarked for a later window.

use std::sync::Arc;

use async_trait::async_trait;
use chrono::{DateTime, Duration, Utc};
use serde_json::json;
use uuid::Uuid;

use super::config::{JobConfigError, JobSettings};
use super::registry::JobSpec;
use super::{Job, JobContext, JobError, JobStats};
use crate::distill::cluster::{ClusterParams, centroid_medoid, cluster};
use crate::domain::{Memory, MemoryId};
use crate::embed::cosine;
use crate::store::{Candidate, CandidateStatus, ClusterOutcome, DistillMethod, DistilledCluster};

pub const SPEC: JobSpec = JobSpec {
    name: "distill",
    default_cron: "0 0 4 * * *",
    params: &[
        "window_days",
        "min_cosine",
        "min_points",
        "dedup_cosine",
        "max_episodes",
    ],
    build,
};

fn build(settings: &JobSettings) -> Result<Arc<dyn Job>, JobConfigError> {
    let params = ClusterParams {
        min_cosine: settings.float("min_cosine", 0.75, -0.999..=1.0)? as f32,
        min_points: settings.int("min_points", 3, 2..=1000)? as usize,
    };
    Ok(Arc::new(Distill {
        window: Duration::days(settings.int("window_days", 7, 1..=3650)?),
        params,
        dedup_cosine: settings.float("dedup_cosine", 0.9, 0.0..=1.0)? as f32,
        max_episodes: settings.int("max_episodes", 5000, 10..=100_000)?,
    }))
}

pub struct Distill {
    pub window: Duration,
    pub params: ClusterParams,
    /// A draft at least this similar to a pending candidate is the same knowledge.
    pub dedup_cosine: f32,
    /// Episodes clustered per namespace per run (the oldest first; the rest wait for the next).
    pub max_episodes: i64,
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

#[derive(Default)]
struct Tally {
    episodes: u64,
    clusters: u64,
    noise: u64,
    created: u64,
    merged: u64,
    known: u64,
}

#[async_trait]
impl Job for Distill {
    async fn run(&self, ctx: &JobContext) -> Result<JobStats, JobError> {
        let now = Utc::now();
        let since = now - self.window;
        let mut stats = JobStats {
            dry_run: ctx.dry_run,
            ..JobStats::default()
        };
        let mut tally = Tally::default();
        for namespace in ctx.db.distill_namespaces(since).await? {
            if ctx.cancel.is_cancelled() {
                stats.stopped_early = true;
                break;
            }
            let finished = self
                .namespace(ctx, &namespace, since, now, &mut tally)
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
            ("clusters_known", tally.known),
            ("llm_calls", 0),
        ] {
            stats.details.insert(key.into(), json!(value));
        }
        Ok(stats)
    }
}

impl Distill {
    /// Distil one namespace's window. `false` when the daemon is stopping and clusters are left.
    async fn namespace(
        &self,
        ctx: &JobContext,
        namespace: &str,
        since: DateTime<Utc>,
        now: DateTime<Utc>,
        tally: &mut Tally,
    ) -> Result<bool, JobError> {
        let episodes = ctx
            .db
            .undistilled_episodes(namespace, since, self.max_episodes)
            .await?;
        tally.episodes += episodes.len() as u64;
        let vectors: Vec<Vec<f32>> = episodes.iter().map(|m| m.embedding.clone()).collect();
        let params = self.params;
        let (clustering, vectors) =
            tokio::task::spawn_blocking(move || (cluster(&vectors, &params), vectors))
                .await
                .map_err(|e| JobError::Task("distill clustering".to_owned(), e.to_string()))?;
        let clustering = clustering?;
        tally.noise += clustering.noise.len() as u64;
        let mut pending = ctx
            .db
            .candidates(Some(namespace), Some(CandidateStatus::Pending), 100_000)
            .await?;
        for members in &clustering.clusters {
            if ctx.cancel.is_cancelled() {
                // The clusters written so far are done; the rest come back next run.
                return Ok(false);
            }
            tally.clusters += 1;
            let ids: Vec<MemoryId> = members.iter().map(|&i| episodes[i].id).collect();
            // No need to look the fingerprint up first: a recorded cluster's episodes carry the
            // distilled mark and are never fetched again, so only a concurrent run can clash,
            // and `record_cluster` refuses that one.
            let fingerprint = fingerprint(&ids);
            let draft = extractive(&episodes, &vectors, members, namespace, &fingerprint, now)?;
            if ctx.dry_run {
                continue;
            }
            let existing = pending
                .iter()
                .map(|c| (c.id, cosine(&c.embedding, &draft.embedding)))
                .filter(|(_, similarity)| *similarity >= self.dedup_cosine)
                .max_by(|a, b| a.1.total_cmp(&b.1));
            let (outcome, created, evidence) = match existing {
                Some((id, _)) => (ClusterOutcome::Merged, vec![], vec![(id, ids.clone())]),
                None => (ClusterOutcome::Created, vec![draft.clone()], vec![]),
            };
            let cluster = DistilledCluster {
                fingerprint,
                namespace: namespace.to_owned(),
                episodes: ids,
                outcome,
                created,
                evidence,
                at: now,
            };
            if ctx.db.record_cluster(&cluster).await? {
                match cluster.outcome {
                    ClusterOutcome::Created => {
                        tally.created += 1;
                        pending.push(draft);
                    }
                    ClusterOutcome::Merged => tally.merged += 1,
                }
            } else {
                tally.known += 1;
            }
        }
        Ok(true)
    }
}

/// The cluster's most central episode, as a candidate; its confidence is how tightly the
/// cluster holds together (the members' mean cosine to it).
fn extractive(
    episodes: &[Memory],
    vectors: &[Vec<f32>],
    members: &[usize],
    namespace: &str,
    fingerprint: &str,
    now: DateTime<Utc>,
) -> Result<Candidate, JobError> {
    let centre = centroid_medoid(vectors, members)?;
    let cohesion = members
        .iter()
        .map(|&i| cosine(&vectors[i], &vectors[centre]))
        .sum::<f32>()
        / members.len() as f32;
    let medoid = &episodes[centre];
    Ok(Candidate {
        id: Uuid::now_v7(),
        namespace: namespace.to_owned(),
        content: medoid.content.clone(),
        entity: None,
        attribute: None,
        confidence: f64::from(cohesion.clamp(0.0, 1.0)),
        source_ids: members.iter().map(|&i| episodes[i].id).collect(),
        fingerprint: fingerprint.to_owned(),
        method: DistillMethod::Extractive,
        model: None,
        prompt_version: None,
        status: CandidateStatus::Pending,
        reviewer: None,
        reviewed_at: None,
        note: None,
        memory_id: None,
        created_at: now,
        updated_at: now,
        embedding: medoid.embedding.clone(),
    })
}
