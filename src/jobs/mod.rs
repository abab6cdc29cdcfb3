//! Scheduled maintenance jobs. Each job is one module behind the small `Job` trait, configured
//! by `jobs/<name>.toml` (`config.rs`); `registry.rs` lists them; `engine.rs` runs them on their
//! schedules (tokio-cron-scheduler ticks, one claimed run per tick across replicas, no
//! overlapping runs, catch-up once at start, graceful stop). Manual runs
//! (`hindsight jobs run`) go through the same `Runner`.

pub mod archive;
pub mod capacity;
pub mod config;
pub mod distill;
pub mod engine;
pub mod expire;
mod heap;
pub mod registry;

use std::sync::Arc;

use async_trait::async_trait;
use serde::Serialize;
use serde_json::{Map, Value};
use tokio_util::sync::CancellationToken;

use crate::service::{MemoryService, ServiceError};
use crate::store::{Database, StoreError};

pub use config::{JobConfigError, JobSettings, Schedule};
pub use engine::{Engine, Runner, TickOutcome};
pub use registry::{ConfiguredJob, load_jobs};

#[derive(Debug, thiserror::Error)]
pub enum JobError {
    #[error(transparent)]
    Store(#[from] StoreError),
    #[error(transparent)]
    Service(#[from] ServiceError),
    #[error("no job named {0:?} (known: {1})")]
    Unknown(String, String),
    #[error("job {0} is already running (here or on another replica); try again when it ends")]
    Busy(String),
    #[error(transparent)]
    Sink(#[from] archive::object::SinkError),
    #[error("{0}: the task running it failed: {1}")]
    Task(String, String),
    #[error("no archive batch with key {0:?}")]
    NoBatch(String),
    #[error(
        "{0} exported archive object(s) hold forgotten memories, but jobs/archive.toml names no \
         object sink: set sink = \"object\" and the object_url they were written to"
    )]
    NoObjectSink(usize),
    #[error(transparent)]
    Config(#[from] JobConfigError),
    #[error("alert delivery to {target} failed: {message}")]
    Alert { target: String, message: String },
    #[error(transparent)]
    Cluster(#[from] crate::distill::cluster::ClusterError),
}

/// Builds a job from its file's settings (its `[params]` read with `JobSettings::params` into
/// the job's own struct) and what jobs share from the daemon's settings.
pub type BuildJob = fn(&JobSettings, &JobEnv) -> Result<Arc<dyn Job>, JobConfigError>;

/// How to make one job: what `registry.rs` lists.
pub struct JobSpec {
    pub name: &'static str,
    /// 6 fields, seconds first, UTC.
    pub default_cron: &'static str,
    pub build: BuildJob,
}

/// What jobs take from the daemon's configuration besides their own `jobs/<name>.toml`.
#[derive(Clone, Default)]
pub struct JobEnv {
    /// The language model the distill job drafts with (`llm_*` settings); `None`: extractive
    /// drafts.
    pub llm: Option<Arc<crate::distill::drafter::LlmDrafter>>,
}

/// What one run did, recorded in `job_runs.stats` and printed by `hindsight jobs run`.
#[derive(Debug, Clone, Default, Serialize, PartialEq)]
pub struct JobStats {
    /// Rows the run looked at (for a dry run: how many it would change).
    pub examined: u64,
    /// Rows it changed (0 for a dry run).
    pub changed: u64,
    pub batches: u64,
    pub dry_run: bool,
    /// The run stopped early because the daemon is shutting down; the next tick goes on.
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub stopped_early: bool,
    pub seconds: f64,
    /// The job's own figures (e.g. a dry run's sample of ids, alert states).
    #[serde(flatten)]
    pub details: Map<String, Value>,
}

/// Progress of a long run, for a terminal.
#[derive(Debug, Clone, Copy)]
pub struct Progress {
    pub done: u64,
    /// When known up front.
    pub total: Option<u64>,
}

/// Everything a run may use.
pub struct JobContext {
    /// The tick this run belongs to (a manual run: when it was asked for).
    pub tick: chrono::DateTime<chrono::Utc>,
    pub service: Arc<MemoryService>,
    pub db: Arc<dyn Database>,
    /// Rows per batch; each batch is its own transaction.
    pub batch_size: i64,
    pub dry_run: bool,
    /// Checked between batches: a stopping daemon lets the current batch finish, then stops.
    pub cancel: CancellationToken,
    pub progress: Option<Arc<dyn Fn(Progress) + Send + Sync>>,
    /// Where each job records its own figures (rows expired, archived, counted).
    pub metrics: Arc<crate::metrics::Metrics>,
}

impl JobContext {
    pub(crate) fn report(&self, done: u64, total: Option<u64>) {
        if let Some(progress) = &self.progress {
            progress(Progress { done, total });
        }
    }
}

#[async_trait]
pub trait Job: Send + Sync + 'static {
    /// Do the work, batch by batch, until nothing is left or `ctx.cancel` fires. A dry run
    /// changes nothing and reports what it would change. Must be idempotent: a run killed at
    /// any instant leaves every batch either done or not, and the next run finishes the rest.
    async fn run(&self, ctx: &JobContext) -> Result<JobStats, JobError>;
}
