//! Running jobs: `Runner` runs one tick or one manual run of a job with every guarantee the
//! daemon promises, and `Engine` drives the runner from tokio-cron-scheduler's ticks.
//!
//! A scheduled tick runs only if, in this order:
//! 1. the daemon is not stopping;
//! 2. the job is not already running in this process (overlap guard);
//! 3. no other replica is running it (a database lock held for the run, not waited for);
//! 4. this process wins the tick's claim in `job_runs` (one INSERT per (job, tick) succeeds).
//!
//! A running run refreshes its heartbeat every few seconds; a run whose heartbeat went stale
//! (its process died) is marked `interrupted` by whichever process notices. At start, each
//! job whose last success is older than its latest tick runs once (catch-up, no backlog).

use std::sync::Arc;
use std::time::{Duration, Instant};

use chrono::{DateTime, Utc};
use serde_json::json;
use tokio_util::sync::CancellationToken;
use tokio_util::task::TaskTracker;

use super::registry::{ConfiguredJob, names};
use super::{JobContext, JobError, JobSettings, JobStats, Progress};
use crate::metrics::Metrics;
use crate::service::MemoryService;
use crate::store::{Database, RunLedger, RunStatus, StoreLock};

/// How often a running run proves it is alive.
pub const HEARTBEAT_EVERY: Duration = Duration::from_secs(5);
/// A running run whose heartbeat is older than this belongs to a dead process.
pub const STALE_AFTER: chrono::Duration = chrono::Duration::seconds(60);

/// What became of a tick.
#[derive(Debug, Clone, PartialEq)]
pub enum TickOutcome {
    Ran {
        run: i64,
        status: RunStatus,
        stats: JobStats,
        error: Option<String>,
    },
    Skipped(&'static str),
}

struct Slot {
    configured: ConfiguredJob,
    /// Held for the whole run: the in-process overlap guard.
    running: tokio::sync::Mutex<()>,
}

pub struct Runner {
    slots: Vec<Slot>,
    service: Arc<MemoryService>,
    db: Arc<dyn Database>,
    node: String,
    /// This process is the database's only writer (it claimed it for its embedded index), so
    /// any run left `running` at start is dead.
    exclusive: bool,
    metrics: Arc<Metrics>,
    /// Fired at shutdown: no new ticks; a running job stops after its current batch.
    stop: CancellationToken,
    /// Every tick in flight, so shutdown can wait for them.
    tracker: TaskTracker,
}

impl Runner {
    pub fn new(
        jobs: Vec<ConfiguredJob>,
        service: Arc<MemoryService>,
        db: Arc<dyn Database>,
        exclusive: bool,
        metrics: Arc<Metrics>,
    ) -> Arc<Self> {
        let host = std::env::var("HOSTNAME")
            .ok()
            .filter(|h| !h.is_empty())
            .unwrap_or_else(|| "localhost".to_owned());
        Arc::new(Self {
            slots: jobs
                .into_iter()
                .map(|configured| Slot {
                    configured,
                    running: tokio::sync::Mutex::new(()),
                })
                .collect(),
            service,
            db,
            node: format!("{host}:{}", std::process::id()),
            exclusive,
            metrics,
            stop: CancellationToken::new(),
            tracker: TaskTracker::new(),
        })
    }

    pub fn jobs(&self) -> impl Iterator<Item = &ConfiguredJob> {
        self.slots.iter().map(|s| &s.configured)
    }

    pub fn db(&self) -> &Arc<dyn Database> {
        &self.db
    }

    pub fn service(&self) -> &Arc<MemoryService> {
        &self.service
    }

    /// Run `work` on `name`'s settings while holding that job's two guards (this process's
    /// overlap guard and the database lock replicas see), as a run of it would: for operator
    /// work on what the job owns (the archive's restore and purge, `archive/operator.rs`).
    /// Busy while the job runs, here or elsewhere.
    pub async fn under_guards<T, F, Fut>(&self, name: &str, work: F) -> Result<T, JobError>
    where
        F: FnOnce(JobSettings) -> Fut,
        Fut: std::future::Future<Output = Result<T, JobError>>,
    {
        let slot = self.slot(name)?;
        let Ok((_running, elsewhere)) = self.guards(slot, name).await? else {
            return Err(JobError::Busy(name.to_owned()));
        };
        let result = work(slot.configured.settings.clone()).await;
        elsewhere.release().await;
        result
    }

    /// Stop now: no new ticks, and a running job stops after its current batch (the signal
    /// handler calls this, so an operator request in progress does not hold up shutdown).
    pub fn stop_now(&self) {
        self.stop.cancel();
    }

    pub fn node(&self) -> &str {
        &self.node
    }

    fn slot(&self, name: &str) -> Result<&Slot, JobError> {
        self.slots
            .iter()
            .find(|s| s.configured.settings.name == name)
            .ok_or_else(|| JobError::Unknown(name.to_owned(), names()))
    }

    /// Take the job's two guards for a run, without waiting: this process's overlap guard,
    /// then the database lock other replicas see (release it when done). `Err` says which
    /// one is taken.
    async fn guards<'s>(
        &self,
        slot: &'s Slot,
        name: &str,
    ) -> Result<Result<(tokio::sync::MutexGuard<'s, ()>, StoreLock), &'static str>, JobError> {
        let Ok(running) = slot.running.try_lock() else {
            return Ok(Err("previous run still going"));
        };
        Ok(match self.db.try_lock(&job_lock_key(name)).await? {
            Some(elsewhere) => Ok((running, elsewhere)),
            None => Err("running on another replica"),
        })
    }

    /// Run the tick `scheduled_for` of job `name`, unless one of the guards says no.
    pub async fn tick(
        &self,
        name: &str,
        scheduled_for: DateTime<Utc>,
    ) -> Result<TickOutcome, JobError> {
        let slot = self.slot(name)?;
        if self.stop.is_cancelled() {
            return Ok(TickOutcome::Skipped("shutting down"));
        }
        let (_running, elsewhere) = match self.guards(slot, name).await? {
            Ok(held) => held,
            Err(taken) => {
                tracing::info!(job = name, %scheduled_for, "tick skipped: {taken}");
                return Ok(TickOutcome::Skipped(taken));
            }
        };
        let claimed = self
            .db
            .claim(name, scheduled_for, &self.node, Utc::now())
            .await;
        let outcome = match claimed {
            Ok(Some(run)) => Ok(self.execute(slot, run, scheduled_for, None).await),
            Ok(None) => {
                tracing::debug!(job = name, %scheduled_for, "tick already claimed");
                Ok(TickOutcome::Skipped("tick claimed by another replica"))
            }
            Err(e) => Err(e.into()),
        };
        elsewhere.release().await;
        outcome
    }

    /// `hindsight jobs run NAME`: run now, under the same guards (a busy job is an error, not a
    /// skip). A real run is recorded in `job_runs` like a tick; a dry run changes nothing and
    /// is not recorded.
    pub async fn run_now(
        &self,
        name: &str,
        dry_run: bool,
        progress: Option<Arc<dyn Fn(Progress) + Send + Sync>>,
    ) -> Result<TickOutcome, JobError> {
        let slot = self.slot(name)?;
        if dry_run {
            let ctx = self.context(slot, Utc::now(), true, progress);
            let started = Instant::now();
            let mut stats = slot.configured.job.run(&ctx).await?;
            stats.seconds = started.elapsed().as_secs_f64();
            return Ok(TickOutcome::Ran {
                run: 0,
                status: RunStatus::Ok,
                stats,
                error: None,
            });
        }
        let busy = || JobError::Busy(name.to_owned());
        let Ok((_running, elsewhere)) = self.guards(slot, name).await? else {
            return Err(busy());
        };
        let now = Utc::now();
        let outcome = match self
            .db
            .claim(name, now, &format!("{} (manual)", self.node), now)
            .await
        {
            Ok(Some(run)) => Ok(self.execute(slot, run, now, progress).await),
            Ok(None) => Err(busy()),
            Err(e) => Err(e.into()),
        };
        elsewhere.release().await;
        outcome
    }

    fn context(
        &self,
        slot: &Slot,
        tick: DateTime<Utc>,
        dry_run: bool,
        progress: Option<Arc<dyn Fn(Progress) + Send + Sync>>,
    ) -> JobContext {
        JobContext {
            tick,
            service: self.service.clone(),
            db: self.db.clone(),
            batch_size: slot.configured.settings.batch_size as i64,
            dry_run,
            cancel: self.stop.child_token(),
            progress,
            metrics: self.metrics.clone(),
        }
    }

    /// Run a claimed run and record how it ended. Never returns early: the ledger always learns
    /// the outcome (unless the process dies, which the heartbeat covers).
    async fn execute(
        &self,
        slot: &Slot,
        run: i64,
        tick: DateTime<Utc>,
        progress: Option<Arc<dyn Fn(Progress) + Send + Sync>>,
    ) -> TickOutcome {
        let name = slot.configured.settings.name.as_str();
        // The run's own heartbeat, wherever it runs (a tick, the CLI, an operator request).
        // If this future is dropped mid-run, the guard stops the heartbeat too, so the run goes
        // stale and is marked interrupted instead of looking alive forever.
        let beating = CancellationToken::new();
        let heartbeat = tokio::spawn(beat(self.db.clone(), run, beating.clone()));
        let stop_beating = beating.drop_guard();
        let ctx = self.context(slot, tick, false, progress);
        let started = Instant::now();
        tracing::info!(job = name, run, "job started");
        let result = slot.configured.job.run(&ctx).await;
        drop(stop_beating);
        let _ = heartbeat.await;
        let seconds = started.elapsed().as_secs_f64();
        let _ = tokio::task::spawn_blocking(super::heap::release_freed_memory).await;
        let (status, stats, error) = match result {
            Ok(mut stats) => {
                stats.seconds = seconds;
                tracing::info!(
                    job = name,
                    run,
                    examined = stats.examined,
                    changed = stats.changed,
                    seconds,
                    stopped_early = stats.stopped_early,
                    "job finished"
                );
                (RunStatus::Ok, stats, None)
            }
            Err(e) => {
                tracing::error!(job = name, run, error = %e, seconds, "job failed");
                let stats = JobStats {
                    seconds,
                    ..JobStats::default()
                };
                (RunStatus::Failed, stats, Some(e.to_string()))
            }
        };
        self.metrics
            .job_finished(name, status.as_str(), stats.seconds);
        let recorded = serde_json::to_value(&stats).unwrap_or_else(|_| json!({}));
        if let Err(e) = self
            .db
            .finish(run, status, &recorded, error.as_deref(), Utc::now())
            .await
        {
            tracing::error!(job = name, run, error = %e, "could not record the run's outcome; it will show as interrupted");
        }
        TickOutcome::Ran {
            run,
            status,
            stats,
            error,
        }
    }

    /// Mark runs of dead processes `interrupted`. At start (the daemon's, or a CLI run's in a
    /// process that just took the data dir), an exclusive process knows every `running` row is
    /// dead; otherwise only stale heartbeats are.
    pub async fn interrupt_dead_runs(&self, at_start: bool) {
        if at_start && self.exclusive {
            let now = Utc::now();
            report_interrupted(self.db.interrupt_stale(now, now).await);
        } else {
            interrupt_stale_runs(self.db.as_ref()).await;
        }
    }

    /// Each enabled job whose last success is older than its latest tick runs that tick now.
    async fn catch_up(self: Arc<Self>) {
        let now = Utc::now();
        for slot in self.slots.iter().filter(|s| s.configured.settings.enabled) {
            let settings = &slot.configured.settings;
            let Some(latest) = settings.schedule.latest_at_or_before(now) else {
                continue;
            };
            let missed = match self.db.last_success(&settings.name).await {
                Ok(last) => last.is_none_or(|last| last < latest),
                Err(e) => {
                    tracing::warn!(job = %settings.name, error = %e, "catch-up check failed");
                    false
                }
            };
            if missed {
                tracing::info!(job = %settings.name, tick = %latest, "catching up on a missed tick");
                self.spawn_tick(settings.name.clone(), latest);
            }
        }
    }

    fn spawn_tick(self: &Arc<Self>, name: String, scheduled_for: DateTime<Utc>) {
        let runner = self.clone();
        self.tracker.spawn(async move {
            if let Err(e) = runner.tick(&name, scheduled_for).await {
                tracing::error!(job = %name, error = %e, "tick failed before the job ran");
            }
        });
    }

    /// Every `HEARTBEAT_EVERY`: mark the runs of dead processes (any node's).
    async fn reaper_loop(self: Arc<Self>, done: CancellationToken) {
        let mut every = tokio::time::interval(HEARTBEAT_EVERY);
        loop {
            tokio::select! {
                _ = done.cancelled() => return,
                _ = every.tick() => {}
            }
            self.interrupt_dead_runs(false).await;
        }
    }
}

/// The stale-heartbeat rule, for any reader of the ledger (the daemon's reaper, a CLI run,
/// `jobs history`): a `running` run whose heartbeat is `STALE_AFTER` old belongs to a dead
/// process and is marked `interrupted`.
pub async fn interrupt_stale_runs(ledger: &dyn RunLedger) {
    let now = Utc::now();
    report_interrupted(ledger.interrupt_stale(now - STALE_AFTER, now).await);
}

fn report_interrupted(result: Result<u64, crate::store::StoreError>) {
    match result {
        Ok(0) => {}
        Ok(n) => tracing::warn!(runs = n, "job runs of a dead process marked interrupted"),
        Err(e) => tracing::warn!(error = %e, "could not check for interrupted job runs"),
    }
}

/// Refresh `run`'s heartbeat every `HEARTBEAT_EVERY` until `done`. If the task running the job
/// is dropped mid-run, this stops with it, and the run is marked interrupted once stale.
async fn beat(db: Arc<dyn Database>, run: i64, done: CancellationToken) {
    let mut every = tokio::time::interval(HEARTBEAT_EVERY);
    every.tick().await; // the claim just set it
    loop {
        tokio::select! {
            _ = done.cancelled() => return,
            _ = every.tick() => {}
        }
        if let Err(e) = db.heartbeat(&[run], Utc::now()).await {
            tracing::warn!(run, error = %e, "job heartbeat failed");
        }
    }
}

fn job_lock_key(name: &str) -> String {
    format!("job\u{1f}{name}")
}

#[derive(Debug, thiserror::Error)]
#[error("job scheduler: {0}")]
pub struct SchedulerError(String);

/// The scheduled side: tokio-cron-scheduler activations feeding `Runner::tick`.
pub struct Engine {
    runner: Arc<Runner>,
    scheduler: tokio_cron_scheduler::JobScheduler,
    reaper_done: CancellationToken,
    reaper: tokio::task::JoinHandle<()>,
}

impl Engine {
    /// Start ticking every enabled job, after marking dead runs and catching up missed ticks.
    pub async fn start(runner: Arc<Runner>) -> Result<Self, SchedulerError> {
        let err = |e: tokio_cron_scheduler::JobSchedulerError| SchedulerError(e.to_string());
        runner.interrupt_dead_runs(true).await;
        let scheduler = tokio_cron_scheduler::JobScheduler::new()
            .await
            .map_err(err)?;
        for slot in runner
            .slots
            .iter()
            .filter(|s| s.configured.settings.enabled)
        {
            let name = slot.configured.settings.name.clone();
            let schedule = slot.configured.settings.schedule.clone();
            // Weak: the scheduler's own tasks may outlive `shutdown`; they must not keep the
            // runner (and with it the service and its index) alive.
            let owner = Arc::downgrade(&runner);
            let cron = schedule.as_str().to_owned();
            let job = tokio_cron_scheduler::Job::new_async(cron, move |_, _| {
                let runner = owner.upgrade();
                let name = name.clone();
                // An activation comes up to ~0.5 s after its tick; the tick it belongs to is
                // the latest at or before now, the same instant on every replica.
                let tick = schedule.latest_at_or_before(Utc::now());
                Box::pin(async move {
                    if let (Some(runner), Some(tick)) = (runner, tick) {
                        runner.spawn_tick(name, tick);
                    }
                })
            })
            .map_err(err)?;
            scheduler.add(job).await.map_err(err)?;
        }
        scheduler.start().await.map_err(err)?;
        let reaper_done = CancellationToken::new();
        let reaper = tokio::spawn(runner.clone().reaper_loop(reaper_done.clone()));
        runner.tracker.spawn(runner.clone().catch_up());
        Ok(Self {
            runner,
            scheduler,
            reaper_done,
            reaper,
        })
    }

    pub fn runner(&self) -> &Arc<Runner> {
        &self.runner
    }

    /// Stop ticking; let running jobs finish their current batch, waiting at most `grace`.
    pub async fn shutdown(mut self, grace: Duration) {
        if let Err(e) = self.scheduler.shutdown().await {
            tracing::warn!(error = %e, "job scheduler did not stop cleanly");
        }
        self.runner.stop.cancel();
        self.runner.tracker.close();
        if tokio::time::timeout(grace, self.runner.tracker.wait())
            .await
            .is_err()
        {
            tracing::warn!(
                ?grace,
                "jobs still running at shutdown; their runs will show as interrupted"
            );
        }
        self.reaper_done.cancel();
        let _ = self.reaper.await;
    }
}
