//! `hindsight candidates list|show|approve|reject`: the review of what the distill job
//! drafted. Reads and rejections go straight to the database; an approval writes a memory, so
//! it runs in-process when the data dir is free, or in the daemon that owns it (its review API),
//! so the process holding the index does the write.

use std::sync::Arc;

use clap::Subcommand;
use hindsight::configuration::Settings;
use hindsight::distill::review::{self, Approval, ReviewError};
use hindsight::lock::{Acquired, DataDirLock};
use hindsight::startup;
use hindsight::store::CandidateId;
use serde_json::json;

use super::jobs::{owner, post, print};

#[derive(Debug, Subcommand)]
pub enum CandidatesCommand {
    /// Candidates, oldest first (default: the pending ones).
    List {
        #[arg(long)]
        namespace: Option<String>,
        /// pending, approved, rejected or all.
        #[arg(long, default_value = "pending")]
        status: String,
        #[arg(long, default_value_t = 100)]
        limit: i64,
    },
    /// One candidate with the episodes it rests on.
    Show { id: CandidateId },
    /// Write the candidate as a semantic memory (through the normal write path) and mark it
    /// approved.
    Approve {
        id: CandidateId,
        /// Your wording instead of the draft's.
        #[arg(long)]
        edit: Option<String>,
        /// The memory's importance, 0 to 1 (default 0.8).
        #[arg(long)]
        importance: Option<f64>,
        /// Recorded as the reviewer (default: $USER).
        #[arg(long)]
        reviewer: Option<String>,
    },
    /// Mark the candidate rejected; the record stays, so it is not drafted again.
    Reject {
        id: CandidateId,
        /// Why (required).
        #[arg(long)]
        note: String,
        /// Recorded as the reviewer (default: $USER).
        #[arg(long)]
        reviewer: Option<String>,
    },
}

pub async fn run(settings: Settings, command: CandidatesCommand) -> anyhow::Result<()> {
    match command {
        CandidatesCommand::List {
            namespace,
            status,
            limit,
        } => {
            let status = review::parse_status_filter(&status).map_err(flag)?;
            let limit = review::check_limit(limit).map_err(flag)?;
            let db = startup::open_database(&settings).await?;
            let candidates = db.candidates(namespace.as_deref(), status, limit).await?;
            print(&json!({ "candidates": candidates }))
        }
        CandidatesCommand::Show { id } => {
            let db = startup::open_database(&settings).await?;
            let candidate = db.candidate(id).await?.ok_or(ReviewError::NotFound(id))?;
            print(&json!(review::detail(db.as_ref(), candidate).await?))
        }
        CandidatesCommand::Approve {
            id,
            edit,
            importance,
            reviewer,
        } => {
            let approval = Approval {
                content: edit,
                importance,
                reviewer: reviewer.or_else(user),
            };
            approve(settings, id, approval).await
        }
        CandidatesCommand::Reject { id, note, reviewer } => {
            let db = startup::open_database(&settings).await?;
            let reviewer = reviewer.or_else(user);
            let candidate = review::reject(db.as_ref(), id, &note, reviewer.as_deref())
                .await
                .map_err(flag)?;
            print(&json!(candidate))
        }
    }
}

async fn approve(settings: Settings, id: CandidateId, approval: Approval) -> anyhow::Result<()> {
    let candidate = match DataDirLock::try_acquire(&settings.data_dir)? {
        Acquired::Owner(lock) => {
            let (service, db) = startup::build(&settings).await?;
            let service = Arc::new(service);
            let outcome = review::approve(&service, db.as_ref(), id, &approval).await;
            service.flush().await?;
            drop(lock);
            json!(outcome.map_err(flag)?)
        }
        Acquired::Taken => {
            let body = json!({
                "content": approval.content,
                "importance": approval.importance,
                "reviewer": approval.reviewer,
            });
            let path = format!("api/candidates/{id}/approve");
            post(&owner(&settings)?, &path, Some(body)).await?
        }
    };
    print(&candidate)
}

/// Review errors name the API's field; on the command line it is a flag.
fn flag(e: ReviewError) -> anyhow::Error {
    match e {
        ReviewError::Invalid { field, rule } => {
            let flag = match field {
                "content" => "--edit",
                "note" => "--note",
                "reviewer" => "--reviewer",
                "status" => "--status",
                "limit" => "--limit",
                other => other,
            };
            anyhow::anyhow!("{flag}: {rule}")
        }
        other => other.into(),
    }
}

fn user() -> Option<String> {
    std::env::var("USER").ok().filter(|u| !u.is_empty())
}
