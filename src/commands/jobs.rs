//! `hindsight jobs list|run|history` and `hindsight archive restore|purge`, through
//! `Operations`: in-process when the data dir is free, or in the daemon that owns it, so the
//! process holding the data and its index does the work.

use std::io::IsTerminal;
use std::sync::Arc;

use clap::Subcommand;
use hindsight::configuration::Settings;
use hindsight::jobs::Progress;
use hindsight::operations::{OperationError, ProgressFn, RestoreRequest};

use super::connection::{print, with_operations};

#[derive(Debug, Subcommand)]
pub enum JobsCommand {
    /// Every job: enabled, schedule, next run, last result.
    List,
    /// Run a job now (the same code path as a scheduled tick).
    Run {
        name: String,
        /// Report what the job would change; change nothing.
        #[arg(long)]
        dry_run: bool,
    },
    /// Past runs, newest first.
    History {
        /// Only this job.
        name: Option<String>,
        #[arg(long, default_value_t = 20)]
        limit: i64,
    },
}

#[derive(Debug, Subcommand)]
pub enum ArchiveCommand {
    /// Bring archived memories back into the hot table and the index.
    Restore {
        /// Archived memory ids (repeat the flag).
        #[arg(long = "id", required_unless_present_any = ["namespace", "batch"], conflicts_with_all = ["namespace", "batch"])]
        ids: Vec<uuid::Uuid>,
        /// Every archived memory of this namespace.
        #[arg(long, conflicts_with = "batch")]
        namespace: Option<String>,
        /// Every memory of one archive object, by its key
        /// (`<namespace>/<first id>_<last id>_<unix ms>.jsonl.gz`, as the object store lists it).
        #[arg(long)]
        batch: Option<String>,
    },
    /// Rewrite the archive objects that still hold hard-forgotten memories without them
    /// (deleting an object left empty): for privacy requests. The archive job does this at
    /// every run; this does it now.
    Purge {
        /// Report which objects would change; change nothing.
        #[arg(long)]
        dry_run: bool,
    },
}

pub async fn run(settings: Settings, command: JobsCommand) -> anyhow::Result<()> {
    match command {
        JobsCommand::List => {
            print(&with_operations(&settings, |ops, _| async move { ops.jobs().await }).await?)
        }
        JobsCommand::History { name, limit } => {
            let history = with_operations(&settings, |ops, _| async move {
                ops.job_history(name.as_deref(), limit).await
            })
            .await
            .map_err(flag)?;
            print(&history)
        }
        JobsCommand::Run { name, dry_run } => {
            let progress = terminal_progress(&name);
            let report = with_operations(&settings, |ops, local| async move {
                // Progress is drawn only where the job runs.
                let progress = progress.filter(|_| local);
                let drawn = progress.is_some();
                let report = ops.run_job(&name, dry_run, progress).await;
                if drawn {
                    eprintln!();
                }
                report
            })
            .await?;
            print(&report)?;
            if report.failed() {
                anyhow::bail!("job {} failed", report.job);
            }
            Ok(())
        }
    }
}

pub async fn archive(settings: Settings, command: ArchiveCommand) -> anyhow::Result<()> {
    match command {
        ArchiveCommand::Restore {
            ids,
            namespace,
            batch,
        } => {
            let request = match (namespace, batch) {
                (Some(namespace), _) => RestoreRequest::Namespace(namespace),
                (None, Some(key)) => RestoreRequest::Batch(key),
                (None, None) => RestoreRequest::Ids(ids),
            };
            let report = with_operations(
                &settings,
                |ops, _| async move { ops.restore(request).await },
            )
            .await?;
            print(&report)
        }
        ArchiveCommand::Purge { dry_run } => {
            let report =
                with_operations(&settings, |ops, _| async move { ops.purge(dry_run).await })
                    .await?;
            print(&report)
        }
    }
}

/// `done/total` rewritten in place on a terminal; nothing otherwise.
fn terminal_progress(name: &str) -> Option<ProgressFn> {
    if !std::io::stderr().is_terminal() {
        return None;
    }
    let name = name.to_owned();
    Some(Arc::new(move |p: Progress| match p.total {
        Some(total) => eprint!("\r{name}: {}/{total}", p.done),
        None => eprint!("\r{name}: {}", p.done),
    }))
}

/// Errors naming the API's `limit` field: on the command line it is a flag.
fn flag(e: anyhow::Error) -> anyhow::Error {
    match e.downcast_ref::<OperationError>() {
        Some(OperationError::Invalid { field, rule }) => anyhow::anyhow!("--{field}: {rule}"),
        _ => e,
    }
}
