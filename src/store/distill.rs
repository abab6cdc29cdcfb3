//! What the distill job keeps (`candidates`, `distilled_clusters`, `distilled_episodes`) and the
//! review of its candidates. One trait, implemented by both stores (`sqlite/distill.rs`,
//! `postgres/distill.rs`) and pinned on both by the distill cases of `tests/integration/jobs.rs`.

use async_trait::async_trait;
use chrono::{DateTime, Utc};
use serde::Serialize;
use uuid::Uuid;

use super::StoreError;
use crate::domain::{Memory, MemoryId};

pub type CandidateId = Uuid;

/// How a candidate was drafted.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, serde::Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum DistillMethod {
    /// By a language model, from the cluster's episodes.
    Llm,
    /// Without one: the cluster's most central episode, as it is.
    Extractive,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, serde::Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum CandidateStatus {
    Pending,
    Approved,
    Rejected,
}

/// A drafted semantic memory waiting for (or past) review.
#[derive(Debug, Clone, PartialEq, Serialize, serde::Deserialize)]
pub struct Candidate {
    pub id: CandidateId,
    pub namespace: String,
    pub content: String,
    pub entity: Option<String>,
    pub attribute: Option<String>,
    pub confidence: f64,
    /// The episodes it rests on; later clusters saying the same add theirs.
    pub source_ids: Vec<MemoryId>,
    pub fingerprint: String,
    pub method: DistillMethod,
    pub model: Option<String>,
    pub prompt_version: Option<String>,
    pub status: CandidateStatus,
    pub reviewer: Option<String>,
    pub reviewed_at: Option<DateTime<Utc>>,
    pub note: Option<String>,
    /// The semantic memory its approval wrote.
    pub memory_id: Option<MemoryId>,
    pub created_at: DateTime<Utc>,
    pub updated_at: DateTime<Utc>,
    #[serde(skip)]
    pub embedding: Vec<f32>,
}

/// What became of one cluster.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum ClusterOutcome {
    /// New candidates were stored.
    Created,
    /// Everything it said was known already: its evidence went to existing candidates or
    /// semantic memories.
    Merged,
    /// The model found nothing durable in it.
    Nothing,
}

/// Where a cluster's evidence goes when its draft says what is known already.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum EvidenceTo {
    /// A candidate (pending or rejected: a rejected one stays rejected, and is not drafted
    /// again); its `source_ids` grow.
    Candidate(CandidateId),
    /// An active semantic memory: an entry `{at, source: {distill: {fingerprint, episodes}}}`
    /// is appended to its `merged_sources`, as a merged write's would be.
    Memory(MemoryId),
}

/// Episodes that support something already known.
#[derive(Debug, Clone, PartialEq)]
pub struct Evidence {
    pub to: EvidenceTo,
    pub episodes: Vec<MemoryId>,
}

/// One cluster's result, written in one transaction: its new candidates, the evidence it adds
/// to existing ones, its episodes marked distilled and its fingerprint recorded.
#[derive(Debug, Clone)]
pub struct DistilledCluster {
    pub fingerprint: String,
    pub namespace: String,
    pub episodes: Vec<MemoryId>,
    pub outcome: ClusterOutcome,
    pub created: Vec<Candidate>,
    /// Evidence for what is known already (applied after `created` is inserted, so it may
    /// name a candidate of this very cluster).
    pub evidence: Vec<Evidence>,
    pub at: DateTime<Utc>,
}

/// The `merged_sources` entry a semantic memory gets for a cluster's evidence.
pub(super) fn memory_evidence(
    cluster: &DistilledCluster,
    episodes: &[MemoryId],
) -> serde_json::Value {
    serde_json::json!({
        "at": cluster.at,
        "source": {"distill": {"fingerprint": cluster.fingerprint, "episodes": episodes}},
    })
}

/// `candidates`' columns, in the order both stores bind them (`?1`/`$1` … 19).
pub(super) const CANDIDATE_COLUMNS: &str = "id, namespace, content, entity, attribute, \
     confidence, source_ids, fingerprint, method, model, prompt_version, status, reviewer, \
     reviewed_at, note, memory_id, created_at, updated_at, embedding";

#[async_trait]
pub trait DistillStore: Send + Sync + 'static {
    /// Active episodic memories of `namespace` created at or after `since` that no run has
    /// distilled, oldest first; at most `limit`.
    async fn undistilled_episodes(
        &self,
        namespace: &str,
        since: DateTime<Utc>,
        limit: i64,
    ) -> Result<Vec<Memory>, StoreError>;
    /// Namespaces holding such episodes.
    async fn distill_namespaces(&self, since: DateTime<Utc>) -> Result<Vec<String>, StoreError>;
    /// Record a cluster's result in one transaction. `false` (and nothing written) when its
    /// fingerprint is recorded already: a concurrent or earlier run got there first.
    async fn record_cluster(&self, cluster: &DistilledCluster) -> Result<bool, StoreError>;
    /// Candidates, oldest first, optionally of one namespace and status (the dedup compares new
    /// drafts with a namespace's pending ones).
    async fn candidates(
        &self,
        namespace: Option<&str>,
        status: Option<CandidateStatus>,
        limit: i64,
    ) -> Result<Vec<Candidate>, StoreError>;
    async fn candidate(&self, id: CandidateId) -> Result<Option<Candidate>, StoreError>;
    /// Decide a pending candidate. `None` when it is not pending (or does not exist).
    async fn review_candidate(
        &self,
        id: CandidateId,
        review: &Review,
    ) -> Result<Option<Candidate>, StoreError>;
}

#[derive(Debug, Clone)]
pub struct Review {
    pub status: CandidateStatus,
    pub reviewer: Option<String>,
    pub note: Option<String>,
    /// The edited text an approval wrote, if edited.
    pub content: Option<String>,
    pub memory_id: Option<MemoryId>,
    pub at: DateTime<Utc>,
}

impl DistillMethod {
    pub fn as_str(self) -> &'static str {
        match self {
            DistillMethod::Llm => "llm",
            DistillMethod::Extractive => "extractive",
        }
    }

    pub(crate) fn parse(text: &str) -> Option<Self> {
        Some(match text {
            "llm" => DistillMethod::Llm,
            "extractive" => DistillMethod::Extractive,
            _ => return None,
        })
    }
}

impl CandidateStatus {
    pub fn as_str(self) -> &'static str {
        match self {
            CandidateStatus::Pending => "pending",
            CandidateStatus::Approved => "approved",
            CandidateStatus::Rejected => "rejected",
        }
    }

    pub fn parse(text: &str) -> Option<Self> {
        Some(match text {
            "pending" => CandidateStatus::Pending,
            "approved" => CandidateStatus::Approved,
            "rejected" => CandidateStatus::Rejected,
            _ => return None,
        })
    }
}

impl ClusterOutcome {
    pub fn as_str(self) -> &'static str {
        match self {
            ClusterOutcome::Created => "created",
            ClusterOutcome::Merged => "merged",
            ClusterOutcome::Nothing => "nothing",
        }
    }
}
