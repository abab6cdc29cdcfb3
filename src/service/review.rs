//! The human gate: a pending candidate is approved (written as a `semantic` memory through the
//! normal write path, so dedup and the entity/attribute supersede rules apply) or rejected (the
//! record stays, so what it says is not drafted again). The CLI, the REST routes and the
//! distill job's optional auto-approve all come here.
//!
//! Approval writes the memory first and marks the candidate second. A crash in between leaves
//! the candidate pending with its memory stored; approving it again merges into that memory
//! (the write path's dedup) and records the same memory id, so nothing is written twice.

use chrono::{DateTime, Utc};
use serde::Serialize;
use serde_json::json;

use super::{MemoryService, ServiceError, WriteRequest};
use crate::domain::{MemoryId, Status};
use crate::store::{
    Candidate, CandidateId, CandidateStatus, DistillStore, MemoryStore, Review, StoreError,
};

/// Importance of an approved memory unless the reviewer gives one.
pub const DEFAULT_IMPORTANCE: f64 = 0.8;
/// Bound on a reviewer's name and note.
pub const MAX_NOTE_CHARS: usize = 2_000;

#[derive(Debug, Clone, Default, PartialEq, Serialize, serde::Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Approval {
    /// The reviewer's wording, replacing the draft's.
    pub content: Option<String>,
    pub importance: Option<f64>,
    pub reviewer: Option<String>,
}

#[derive(Debug, thiserror::Error)]
pub enum ReviewError {
    #[error("no candidate {0}")]
    NotFound(CandidateId),
    #[error("candidate {id} is {status} already; only pending candidates can be reviewed")]
    NotPending {
        id: CandidateId,
        status: &'static str,
    },
    #[error("invalid {field}: {rule}")]
    Invalid { field: &'static str, rule: String },
    #[error(
        "the memory was not stored: importance {0} is below the configured min_importance; \
         approve with a higher --importance"
    )]
    Skipped(f64),
    #[error(transparent)]
    Service(#[from] ServiceError),
    #[error(transparent)]
    Store(#[from] StoreError),
}

impl ReviewError {
    /// The reviewer can fix it (vs. a server-side failure).
    pub fn is_client_error(&self) -> bool {
        match self {
            ReviewError::Service(e) => e.is_client_error(),
            ReviewError::Store(_) => false,
            _ => true,
        }
    }
}

/// Approve a pending candidate: write it as a semantic memory, then mark it approved with the
/// memory's id. The memory's `source` records the candidate and its episodes. It happened (its
/// `occurred_at`) when approved: the reviewer says it holds now, so a keyed fact supersedes the
/// active one whatever the dates of its episodes.
/// `by_person`: a reviewer approved it, so the screen's hold rules (a contradiction held for
/// review) do not hold it again; the distill job's auto-approve passes `false`.
pub async fn approve(
    service: &MemoryService,
    db: &dyn DistillStore,
    id: CandidateId,
    approval: &Approval,
    by_person: bool,
) -> Result<Candidate, ReviewError> {
    let reviewer = bounded("reviewer", approval.reviewer.as_deref())?;
    let candidate = pending(db, id).await?;
    let importance = approval.importance.unwrap_or(DEFAULT_IMPORTANCE);
    let request = approval_request(
        &candidate,
        approval.content.clone(),
        Some(importance),
        reviewer.clone(),
    );
    let written = if by_person {
        service.write_released(&request).await?
    } else {
        service.write(&request).await?
    };
    let memory_id = written.memory_id.ok_or(ReviewError::Skipped(importance))?;
    let review = Review {
        status: CandidateStatus::Approved,
        reviewer,
        note: None,
        content: approval.content.clone(),
        memory_id: Some(memory_id),
        at: Utc::now(),
    };
    decided(db, id, &review).await
}

/// The write an approval makes: the candidate (or the reviewer's wording) as a semantic
/// memory whose source records the candidate and its episodes.
fn approval_request(
    candidate: &Candidate,
    content: Option<String>,
    importance: Option<f64>,
    reviewer: Option<String>,
) -> WriteRequest {
    WriteRequest {
        content: content.unwrap_or_else(|| candidate.content.clone()),
        memory_type: Some("semantic".to_owned()),
        importance: Some(importance.unwrap_or(DEFAULT_IMPORTANCE)),
        namespace: Some(candidate.namespace.clone()),
        entity: candidate.entity.clone(),
        attribute: candidate.attribute.clone(),
        source: Some(json!({
            "distill": {
                "candidate_id": candidate.id,
                "episode_ids": candidate.source_ids,
                "method": candidate.method,
                "model": candidate.model,
                "prompt_version": candidate.prompt_version,
                "confidence": candidate.confidence,
                "reviewer": reviewer,
            }
        })),
        ..WriteRequest::default()
    }
}

/// Reject a pending candidate, saying why. The record stays: later clusters that say the same
/// add their evidence to it instead of drafting it again.
pub async fn reject(
    db: &dyn DistillStore,
    id: CandidateId,
    note: &str,
    reviewer: Option<&str>,
) -> Result<Candidate, ReviewError> {
    let note = bounded("note", Some(note))?.ok_or_else(|| ReviewError::Invalid {
        field: "note",
        rule: "must say why the candidate is rejected".to_owned(),
    })?;
    let reviewer = bounded("reviewer", reviewer)?;
    pending(db, id).await?;
    let review = Review {
        status: CandidateStatus::Rejected,
        reviewer,
        note: Some(note),
        content: None,
        memory_id: None,
        at: Utc::now(),
    };
    decided(db, id, &review).await
}

/// A candidate with the episodes it rests on, for `show`.
#[derive(Debug, Clone, Serialize, serde::Deserialize)]
pub struct CandidateDetail {
    #[serde(flatten)]
    pub candidate: Candidate,
    pub episodes: Vec<EpisodeView>,
    /// Sources no longer in the hot table (archived or hard-forgotten since).
    pub missing_episodes: Vec<MemoryId>,
    /// What approving it as drafted would do to the active memories that look like it: merge
    /// into one, or retire some (`MemoryService::preview_write`). `None` where it could not
    /// be told (the embedder changed since the data was indexed).
    #[serde(default)]
    pub approval_would: Option<super::Preview>,
}

#[derive(Debug, Clone, Serialize, serde::Deserialize)]
pub struct EpisodeView {
    pub id: MemoryId,
    pub content: String,
    pub occurred_at: DateTime<Utc>,
    pub created_at: DateTime<Utc>,
    pub status: Status,
    /// Where it came from, as its writer said (a conversation, a task, a tool).
    #[serde(default)]
    pub source: serde_json::Value,
}

/// The candidate with its episodes and, given the service, what approving it would do.
pub async fn detail(
    store: &dyn MemoryStore,
    service: Option<&MemoryService>,
    candidate: Candidate,
) -> Result<CandidateDetail, ReviewError> {
    let approval_would = match service {
        Some(service) => {
            let preview = service
                .preview_write(
                    &approval_request(&candidate, None, None, None),
                    Some(candidate.embedding.clone()),
                )
                .await;
            match preview {
                Ok(preview) => Some(preview),
                Err(ServiceError::EmbedderMismatch { .. }) => None,
                Err(e) => return Err(e.into()),
            }
        }
        None => None,
    };
    let found = store.get_many(&candidate.source_ids).await?;
    // A reviewer never sees an episode changed outside hindsight: it counts as missing.
    let found =
        super::integrity::checked(store, None, crate::store::RowTable::Memories, found).await;
    let missing_episodes = candidate
        .source_ids
        .iter()
        .filter(|id| !found.iter().any(|m| m.id == **id))
        .copied()
        .collect();
    let mut episodes: Vec<EpisodeView> = found
        .into_iter()
        .map(|m| EpisodeView {
            id: m.id,
            content: m.content,
            occurred_at: m.occurred_at,
            created_at: m.created_at,
            status: m.status,
            source: m.source,
        })
        .collect();
    episodes.sort_by_key(|e| (e.occurred_at, e.id));
    Ok(CandidateDetail {
        candidate,
        episodes,
        missing_episodes,
        approval_would,
    })
}

/// `--status` / `?status=`: `pending`, `approved`, `rejected`, or `all` (`None`).
pub fn parse_status_filter(text: &str) -> Result<Option<CandidateStatus>, ReviewError> {
    match text {
        "all" => Ok(None),
        other => CandidateStatus::parse(other)
            .map(Some)
            .ok_or_else(|| ReviewError::Invalid {
                field: "status",
                rule: format!("must be pending, approved, rejected or all, got {other:?}"),
            }),
    }
}

/// List sizes the CLI and REST accept.
pub const MAX_LIST: i64 = 10_000;

pub fn check_limit(limit: i64) -> Result<i64, ReviewError> {
    if (1..=MAX_LIST).contains(&limit) {
        Ok(limit)
    } else {
        Err(ReviewError::Invalid {
            field: "limit",
            rule: format!("must be 1..={MAX_LIST}, got {limit}"),
        })
    }
}

async fn pending(db: &dyn DistillStore, id: CandidateId) -> Result<Candidate, ReviewError> {
    let candidate = db.candidate(id).await?.ok_or(ReviewError::NotFound(id))?;
    if candidate.status != CandidateStatus::Pending {
        return Err(ReviewError::NotPending {
            id,
            status: candidate.status.as_str(),
        });
    }
    Ok(candidate)
}

async fn decided(
    db: &dyn DistillStore,
    id: CandidateId,
    review: &Review,
) -> Result<Candidate, ReviewError> {
    match db.review_candidate(id, review).await? {
        Some(candidate) => Ok(candidate),
        // Another reviewer decided it in the meantime.
        None => Err(match db.candidate(id).await? {
            Some(c) => ReviewError::NotPending {
                id,
                status: c.status.as_str(),
            },
            None => ReviewError::NotFound(id),
        }),
    }
}

/// Trimmed, `None` when empty, refused when longer than `MAX_NOTE_CHARS`.
pub(crate) fn bounded(
    field: &'static str,
    value: Option<&str>,
) -> Result<Option<String>, ReviewError> {
    let Some(value) = value.map(str::trim).filter(|v| !v.is_empty()) else {
        return Ok(None);
    };
    if value.chars().count() > MAX_NOTE_CHARS {
        return Err(ReviewError::Invalid {
            field,
            rule: format!("must be at most {MAX_NOTE_CHARS} characters"),
        });
    }
    // PostgreSQL text cannot hold NUL; refused on every store alike.
    if value.contains('\0') {
        return Err(ReviewError::Invalid {
            field,
            rule: "must not contain NUL characters".to_owned(),
        });
    }
    Ok(Some(value.to_owned()))
}
