//! `hindsight candidates list|show|approve|reject`: the review of what the distill job
//! drafted, through `Operations` (in-process when the data dir is free, or in the daemon that
//! owns it, so the process holding the index does an approval's write).

use clap::Subcommand;
use hindsight::configuration::Settings;
use hindsight::operations::{CandidateQuery, OperationError, Rejection};
use hindsight::service::review::{Approval, ReviewError};
use hindsight::store::CandidateId;
use serde_json::json;

use super::connection::{print, user, with_operations};

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
        #[command(flatten)]
        format: super::listing::Format,
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
            format,
        } => {
            let query = CandidateQuery {
                namespace,
                status,
                limit,
            };
            let candidates =
                with_operations(
                    &settings,
                    |ops, _| async move { ops.candidates(query).await },
                )
                .await
                .map_err(flag)?;
            super::listing::print_list(format, &json!({ "candidates": candidates }), || {
                let mut table = super::listing::Table::new(&[
                    "id",
                    "namespace",
                    "status",
                    "confidence",
                    "episodes",
                    "content",
                ]);
                for c in &candidates {
                    table.row(vec![
                        c.id.to_string(),
                        c.namespace.clone(),
                        c.status.as_str().to_owned(),
                        format!("{:.2}", c.confidence),
                        c.source_ids.len().to_string(),
                        c.content.clone(),
                    ]);
                }
                table
            })
        }
        CandidatesCommand::Show { id } => {
            let detail =
                with_operations(&settings, |ops, _| async move { ops.candidate(id).await }).await?;
            print(&detail)
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
            let candidate = with_operations(&settings, |ops, _| async move {
                ops.approve(id, approval).await
            })
            .await
            .map_err(flag)?;
            print(&candidate)
        }
        CandidatesCommand::Reject { id, note, reviewer } => {
            let rejection = Rejection {
                note,
                reviewer: reviewer.or_else(user),
            };
            let candidate = with_operations(&settings, |ops, _| async move {
                ops.reject(id, rejection).await
            })
            .await
            .map_err(flag)?;
            print(&candidate)
        }
    }
}

/// Review errors name the API's field; on the command line it is a flag.
fn flag(e: anyhow::Error) -> anyhow::Error {
    let Some(OperationError::Review(ReviewError::Invalid { field, rule })) =
        e.downcast_ref::<OperationError>()
    else {
        return e;
    };
    let flag = match *field {
        "content" => "--edit",
        "note" => "--note",
        "reviewer" => "--reviewer",
        "status" => "--status",
        "limit" => "--limit",
        other => other,
    };
    anyhow::anyhow!("{flag}: {rule}")
}
