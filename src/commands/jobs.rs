//! `hindsight jobs list|run|history` and `hindsight archive restore|purge`. Reads go straight to the
//! database; work runs in-process when the data dir is free, or in the daemon that owns it
//! (through its operator routes), so the process holding the data and its index does it.

use std::io::IsTerminal;
use std::sync::Arc;

use chrono::Utc;
use clap::Subcommand;
use hindsight::configuration::Settings;
use hindsight::jobs::engine::{interrupt_stale_runs, outcome_json};
use hindsight::jobs::{Progress, TickOutcome};
use hindsight::lock::{Acquired, DataDirLock, Endpoint, read_endpoint};
use hindsight::startup;
use hindsight::store::{RestoreSelector, RunStatus};
use serde_json::{Value, json};

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
        JobsCommand::List => list(&settings).await,
        JobsCommand::History { name, limit } => {
            anyhow::ensure!(
                (1..=10_000).contains(&limit),
                "--limit: must be 1..=10000, got {limit}"
            );
            let db = startup::open_database(&settings).await?;
            // Runs whose process died (a killed `jobs run`, with no daemon to notice) show as
            // what they are.
            interrupt_stale_runs(db.as_ref()).await;
            print(&json!(db.history(name.as_deref(), limit).await?))
        }
        JobsCommand::Run { name, dry_run } => run_job(settings, &name, dry_run).await,
    }
}

async fn list(settings: &Settings) -> anyhow::Result<()> {
    let jobs = startup::load_jobs(settings)?;
    let db = startup::open_database(settings).await?;
    interrupt_stale_runs(db.as_ref()).await;
    let now = Utc::now();
    let mut rows = Vec::new();
    for job in jobs {
        let s = &job.settings;
        let last = db.history(Some(&s.name), 1).await?.into_iter().next();
        rows.push(json!({
            "name": s.name,
            "enabled": s.enabled,
            "cron": s.schedule.as_str(),
            "next_run": s.enabled.then(|| s.schedule.next_after(now)).flatten(),
            "batch_size": s.batch_size,
            "params": s.params,
            "last_success": db.last_success(&s.name).await?,
            "last_run": last.map(|r| json!({
                "status": r.status, "scheduled_for": r.scheduled_for,
                "finished_at": r.finished_at, "error": r.error, "stats": r.stats,
            })),
        }));
    }
    print(&Value::Array(rows))
}

async fn run_job(settings: Settings, name: &str, dry_run: bool) -> anyhow::Result<()> {
    let jobs = startup::load_jobs(&settings)?;
    let result = match DataDirLock::try_acquire(&settings.data_dir)? {
        Acquired::Owner(lock) => {
            let runner = local_runner(&settings, jobs).await?;
            let service = runner.service();
            // As the daemon does at start: runs a killed process left `running` are marked.
            runner.interrupt_dead_runs(true).await;
            let outcome = runner.run_now(name, dry_run, terminal_progress(name)).await;
            if std::io::stderr().is_terminal() {
                eprintln!();
            }
            service.flush().await?;
            drop(lock);
            let outcome = outcome?;
            let failed = matches!(
                outcome,
                TickOutcome::Ran {
                    status: RunStatus::Failed,
                    ..
                }
            );
            let result = outcome_json(name, &outcome);
            if failed {
                print(&result)?;
                anyhow::bail!("job {name} failed");
            }
            result
        }
        Acquired::Taken => {
            // The name goes into the daemon's URL: only a known one.
            if !jobs.iter().any(|j| j.settings.name == name) {
                return Err(hindsight::jobs::JobError::Unknown(
                    name.to_owned(),
                    hindsight::jobs::registry::names(),
                )
                .into());
            }
            let endpoint = owner(&settings)?;
            let path = format!("admin/jobs/{name}/run?dry_run={dry_run}");
            let result = post(&endpoint, &path, None).await?;
            if result["status"] == json!("failed") {
                print(&result)?;
                anyhow::bail!("job {name} failed");
            }
            result
        }
    };
    print(&result)
}

pub async fn archive(settings: Settings, command: ArchiveCommand) -> anyhow::Result<()> {
    let (ids, namespace, batch) = match command {
        ArchiveCommand::Restore {
            ids,
            namespace,
            batch,
        } => (ids, namespace, batch),
        ArchiveCommand::Purge { dry_run } => return purge(settings, dry_run).await,
    };
    let jobs = startup::load_jobs(&settings)?;
    let result = match DataDirLock::try_acquire(&settings.data_dir)? {
        Acquired::Owner(lock) => {
            let runner = local_runner(&settings, jobs).await?;
            let selector = match (namespace, batch) {
                (Some(namespace), _) => RestoreSelector::Namespace(namespace),
                (None, Some(key)) => RestoreSelector::Ids(
                    hindsight::jobs::archive::batch_ids(runner.db().as_ref(), &key).await?,
                ),
                (None, None) => RestoreSelector::Ids(ids),
            };
            let report = runner.restore(&selector).await?;
            runner.service().flush().await?;
            drop(lock);
            json!(report)
        }
        Acquired::Taken => {
            let body = match (namespace, batch) {
                (Some(namespace), _) => json!({ "namespace": namespace }),
                (None, Some(key)) => json!({ "batch": key }),
                (None, None) => json!({ "ids": ids }),
            };
            post(&owner(&settings)?, "admin/archive/restore", Some(body)).await?
        }
    };
    print(&result)
}

async fn purge(settings: Settings, dry_run: bool) -> anyhow::Result<()> {
    let jobs = startup::load_jobs(&settings)?;
    let result = match DataDirLock::try_acquire(&settings.data_dir)? {
        Acquired::Owner(lock) => {
            let report = local_runner(&settings, jobs).await?.purge(dry_run).await?;
            drop(lock);
            json!(report)
        }
        Acquired::Taken => {
            let body = json!({ "dry_run": dry_run });
            post(&owner(&settings)?, "admin/archive/purge", Some(body)).await?
        }
    };
    print(&result)
}

/// This process owns the data dir: the service over it, and a runner of `jobs` on both.
async fn local_runner(
    settings: &Settings,
    jobs: Vec<hindsight::jobs::ConfiguredJob>,
) -> anyhow::Result<Arc<hindsight::jobs::Runner>> {
    let (service, db) = startup::build(settings).await?;
    Ok(startup::job_runner(jobs, &Arc::new(service), db))
}

/// `done/total` rewritten in place on a terminal; nothing otherwise.
fn terminal_progress(name: &str) -> Option<Arc<dyn Fn(Progress) + Send + Sync>> {
    if !std::io::stderr().is_terminal() {
        return None;
    }
    let name = name.to_owned();
    Some(Arc::new(move |p: Progress| match p.total {
        Some(total) => eprint!("\r{name}: {}/{total}", p.done),
        None => eprint!("\r{name}: {}", p.done),
    }))
}

pub(super) fn owner(settings: &Settings) -> anyhow::Result<Endpoint> {
    read_endpoint(&settings.data_dir).ok_or_else(|| {
        anyhow::anyhow!(
            "data dir {} is locked by a process that publishes no endpoint",
            settings.data_dir.display()
        )
    })
}

/// POST to the owning daemon's operator route `path` (relative to its base URL).
pub(super) async fn post(
    endpoint: &Endpoint,
    path: &str,
    body: Option<Value>,
) -> anyhow::Result<Value> {
    let base = endpoint.url.trim_end_matches("/mcp");
    let url = format!("{base}/{path}");
    let mut request = reqwest::Client::new().post(&url);
    if let Some(token) = &endpoint.token {
        request = request.bearer_auth(token.expose());
    }
    // Always a JSON body: the daemon refuses any other kind of POST (its browser guard).
    request = request.json(&body.unwrap_or_else(|| json!({})));
    let response = request
        .send()
        .await
        .map_err(|e| anyhow::anyhow!("daemon (pid {}) at {url}: {e}", endpoint.pid))?;
    let status = response.status();
    let value: Value = response.json().await.unwrap_or(Value::Null);
    if !status.is_success() {
        let message = value["error"].as_str().unwrap_or("no details");
        anyhow::bail!("daemon (pid {}): HTTP {status}: {message}", endpoint.pid);
    }
    Ok(value)
}

pub(super) fn print(value: &Value) -> anyhow::Result<()> {
    println!("{}", serde_json::to_string_pretty(value)?);
    Ok(())
}
