//! `hindsight quarantine list|show|approve|reject`: the writes the screen held for review
//! (rules with `action = "quarantine"`), beside the distilled candidates.

use clap::Subcommand;
use hindsight::configuration::Settings;
use hindsight::operations::{CandidateQuery, Rejection};
use serde_json::json;

use super::connection::{print, user, with_operations};

#[derive(Debug, Subcommand)]
pub enum QuarantineCommand {
    /// Held writes, oldest first (default: the pending ones).
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
    /// One held write, as it was asked for, and the rule that held it.
    Show { id: uuid::Uuid },
    /// Let it through: it goes through the write path now (its secrets still redacted).
    Approve {
        id: uuid::Uuid,
        /// Recorded as the reviewer (default: $USER).
        #[arg(long)]
        reviewer: Option<String>,
    },
    /// Keep it out; the record stays, with the note.
    Reject {
        id: uuid::Uuid,
        /// Why (required).
        #[arg(long)]
        note: String,
        #[arg(long)]
        reviewer: Option<String>,
    },
}

pub async fn run(settings: Settings, command: QuarantineCommand) -> anyhow::Result<()> {
    match command {
        QuarantineCommand::List {
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
            let items = with_operations(
                &settings,
                |ops, _| async move { ops.quarantined(query).await },
            )
            .await?;
            super::listing::print_list(format, &json!({ "quarantined": items }), || {
                let mut table = super::listing::Table::new(&[
                    "id",
                    "namespace",
                    "rule",
                    "status",
                    "held",
                    "content",
                ]);
                for q in &items {
                    table.row(vec![
                        q.id.to_string(),
                        q.namespace.clone(),
                        q.rule.clone(),
                        q.status.clone(),
                        super::listing::when(Some(q.created_at)),
                        q.request["content"].as_str().unwrap_or_default().to_owned(),
                    ]);
                }
                table
            })
        }
        QuarantineCommand::Show { id } => print(
            &with_operations(
                &settings,
                |ops, _| async move { ops.quarantined_one(id).await },
            )
            .await?,
        ),
        QuarantineCommand::Approve { id, reviewer } => {
            let reviewer = reviewer.or_else(user);
            print(
                &with_operations(&settings, |ops, _| async move {
                    ops.release(id, reviewer).await
                })
                .await?,
            )
        }
        QuarantineCommand::Reject { id, note, reviewer } => {
            let rejection = Rejection {
                note,
                reviewer: reviewer.or_else(user),
            };
            print(
                &with_operations(&settings, |ops, _| async move {
                    ops.discard(id, rejection).await
                })
                .await?,
            )
        }
    }
}
