//! `hindsight jobs list|run|history` and `hindsight archive restore|purge`, through
//! `Operations`: in-process when the data dir is free, or in the daemon that owns it, so the
//! process holding the data and its index does the work.

use std::sync::Arc;

use clap::Subcommand;
use hindsight::configuration::Settings;
use hindsight::jobs::Progress;
use hindsight::operations::{OperationError, ProgressFn, RestoreRequest};

use super::connection::{print, with_operations};

#[derive(Debug, Subcommand)]
pub enum JobsCommand {
    /// Every job: enabled, schedule, next run, last result.
    List {
        #[command(flatten)]
        format: super::listing::Format,
    },
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
        #[command(flatten)]
        format: super::listing::Format,
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
        JobsCommand::List { format } => {
            let jobs = with_operations(&settings, |ops, _| async move { ops.jobs().await }).await?;
            super::listing::print_list(format, &jobs, || {
                let mut table = super::listing::Table::new(&[
                    "job", "enabled", "cron", "next run", "last", "finished", "error",
                ]);
                for j in &jobs {
                    let last = j.last_run.as_ref();
                    table.row(vec![
                        j.name.clone(),
                        j.enabled.to_string(),
                        j.cron.clone(),
                        super::listing::when(j.next_run),
                        last.map_or("-".to_owned(), |l| l.status.as_str().to_owned()),
                        super::listing::when(last.and_then(|l| l.finished_at)),
                        last.and_then(|l| l.error.clone()).unwrap_or_default(),
                    ]);
                }
                table
            })
        }
        JobsCommand::History {
            name,
            limit,
            format,
        } => {
            let history = with_operations(&settings, |ops, _| async move {
                ops.job_history(name.as_deref(), limit).await
            })
            .await
            .map_err(flag)?;
            super::listing::print_list(format, &history, || {
                let mut table = super::listing::Table::new(&[
                    "run", "job", "tick", "node", "status", "seconds", "error",
                ]);
                for r in &history {
                    let seconds = r.finished_at.map_or("-".to_owned(), |f| {
                        format!(
                            "{:.2}",
                            (f - r.started_at).num_milliseconds() as f64 / 1000.0
                        )
                    });
                    table.row(vec![
                        r.id.to_string(),
                        r.job.clone(),
                        super::listing::when(Some(r.scheduled_for)),
                        r.node.clone(),
                        r.status.as_str().to_owned(),
                        seconds,
                        r.error.clone().unwrap_or_default(),
                    ]);
                }
                table
            })
        }
        JobsCommand::Run { name, dry_run } => {
            let reporter = Arc::new(super::progress::Reporter::new());
            let progress = job_progress(&name, reporter.clone());
            let report = with_operations(&settings, |ops, local| async move {
                // Progress is drawn only where the job runs.
                ops.run_job(&name, dry_run, Some(progress).filter(|_| local))
                    .await
            })
            .await?;
            reporter.finish();
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
            // The restore reports no progress of its own: a spinner (and the time) shows it
            // alive.
            let reporter = super::progress::Reporter::new();
            reporter.tick("restoring", 0, None);
            let report = with_operations(
                &settings,
                |ops, _| async move { ops.restore(request).await },
            )
            .await;
            reporter.finish();
            print(&report?)
        }
        ArchiveCommand::Purge { dry_run } => {
            let report =
                with_operations(&settings, |ops, _| async move { ops.purge(dry_run).await })
                    .await?;
            print(&report)
        }
    }
}

/// The job's rows done, drawn by `reporter`.
fn job_progress(name: &str, reporter: Arc<super::progress::Reporter>) -> ProgressFn {
    let name = name.to_owned();
    Arc::new(move |p: Progress| reporter.tick(&name, p.done, p.total))
}

/// Errors naming the API's `limit` field: on the command line it is a flag.
fn flag(e: anyhow::Error) -> anyhow::Error {
    match e.downcast_ref::<OperationError>() {
        Some(OperationError::Invalid { field, rule }) => anyhow::anyhow!("--{field}: {rule}"),
        _ => e,
    }
}
