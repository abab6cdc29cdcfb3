//! archive: active memories older than `min_age_days` and accessed fewer than
//! `max_access_count` times leave the hot table and the vector index, every column kept, for
//! one of two sinks (`sink` in `jobs/archive.toml`):
//! - `table`: `memories_archive` in the same database, moved one transaction per batch;
//! - `object`: gzip JSON Lines objects at `object_url` (`object.rs`). Each batch is first moved
//!   to `memories_archive` and journalled (`staged`), then written under its deterministic key
//!   and verified, and only then deleted from the table (`exported`). A crash at any point
//!   leaves a staged batch that the next run writes again under the same key.
//!
//! `hindsight archive restore` brings rows back (by id, namespace or batch key), never a
//! forgotten one. Archived rows are never returned by search: they are not in `memories` any
//! more. With the object sink, each run first clears what a killed write left (staging files)
//! and purges forgotten memories from exported objects (`purge.rs`, also `hindsight archive
//! purge`).

pub mod object;
mod operator;
pub mod purge;

pub use operator::ArchiveOperations;

use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};

use async_trait::async_trait;
use chrono::{Duration, Utc};
use serde_json::json;

use super::config::{JobConfigError, JobSettings};
use super::{Job, JobContext, JobEnv, JobError, JobSpec, JobStats};
use crate::domain::MemoryId;
use crate::service::MemoryService;
use crate::store::{ArchiveBatch, BatchState, ColdRows, Database, RestoreSelector};
use object::ObjectSink;

pub const SPEC: JobSpec = JobSpec {
    name: "archive",
    default_cron: "0 30 3 * * *",
    build,
};

/// `[params]` of `jobs/archive.toml`.
#[derive(serde::Deserialize)]
#[serde(deny_unknown_fields, default)]
struct Params {
    min_age_days: i64,
    max_access_count: i64,
    /// `table` or `object`.
    sink: Option<String>,
    object_url: Option<String>,
    workers: i64,
}

impl Default for Params {
    fn default() -> Self {
        Self {
            min_age_days: 90,
            max_access_count: 3,
            sink: None,
            object_url: None,
            workers: 1,
        }
    }
}

fn build(settings: &JobSettings, _env: &JobEnv) -> Result<Arc<dyn Job>, JobConfigError> {
    let p: Params = settings.params()?;
    Ok(Arc::new(Archive {
        min_age: Duration::days(settings.int_within("min_age_days", p.min_age_days, 0..=36_500)?),
        max_access_count: settings.int_within(
            "max_access_count",
            p.max_access_count,
            1..=i64::MAX,
        )?,
        sink: sink_of(settings, p.sink, p.object_url)?,
        workers: settings.int_within("workers", p.workers, 1..=16)? as usize,
    }))
}

/// The sink `jobs/archive.toml` names (also what `hindsight archive restore` reads from).
pub fn sink(settings: &JobSettings) -> Result<Sink, JobConfigError> {
    let p: Params = settings.params()?;
    sink_of(settings, p.sink, p.object_url)
}

fn sink_of(
    settings: &JobSettings,
    sink: Option<String>,
    object_url: Option<String>,
) -> Result<Sink, JobConfigError> {
    use super::config::non_empty;
    match (
        non_empty(sink).as_deref().unwrap_or("table"),
        non_empty(object_url),
    ) {
        ("table", None) => Ok(Sink::Table),
        ("table", Some(_)) => {
            Err(settings.param_error("object_url", "is only used with sink = \"object\""))
        }
        ("object", Some(url)) => ObjectSink::from_url(&url)
            .map(|s| Sink::Object(Arc::new(s)))
            .map_err(|message| settings.param_error("object_url", message)),
        ("object", None) => Err(settings.param_error(
            "object_url",
            "is required with sink = \"object\" (file:///dir or s3://bucket/prefix)",
        )),
        (other, _) => Err(settings.param_error(
            "sink",
            format!("must be \"table\" or \"object\", got {other:?}"),
        )),
    }
}

#[derive(Clone)]
pub enum Sink {
    Table,
    Object(Arc<ObjectSink>),
}

impl Sink {
    fn name(&self) -> &'static str {
        match self {
            Sink::Table => "table",
            Sink::Object(_) => "object",
        }
    }
}

const SAMPLE: i64 = 20;

pub struct Archive {
    pub min_age: Duration,
    /// Rows accessed this many times or more stay hot.
    pub max_access_count: i64,
    pub sink: Sink,
    /// Batches moved at once (each its own transaction).
    pub workers: usize,
}

#[async_trait]
impl Job for Archive {
    async fn run(&self, ctx: &JobContext) -> Result<JobStats, JobError> {
        let now = Utc::now();
        let cold = ColdRows {
            created_before: now - self.min_age,
            max_access_count: self.max_access_count,
        };
        let mut stats = JobStats {
            dry_run: ctx.dry_run,
            ..JobStats::default()
        };
        stats.details.insert("sink".into(), json!(self.sink.name()));
        let total = ctx.db.count_cold(&cold).await? as u64;
        if let Sink::Object(sink) = &self.sink {
            // What a killed run left: staging files of writes it never finished (the export
            // rewrites those objects whole), and forgotten memories still in exported objects.
            let partial = sink.partial_files(!ctx.dry_run).await?;
            let purged = purge::purge(ctx.db.as_ref(), sink, ctx.dry_run).await?;
            let (partial_key, purge_key) = if ctx.dry_run {
                ("would_remove_partial_files", "would_purge")
            } else {
                ("partial_files_removed", "purged")
            };
            stats.details.insert(partial_key.into(), json!(partial));
            stats.details.insert(purge_key.into(), json!(purged));
        }
        if ctx.dry_run {
            stats.examined = total;
            stats.details.insert(
                "would_archive".into(),
                json!(ctx.db.cold_ids(&cold, SAMPLE).await?),
            );
            return Ok(stats);
        }
        if let Sink::Object(sink) = &self.sink {
            // Batches a crash left staged go out first, under the keys they already have.
            for batch in ctx.db.batches(BatchState::Staged, None).await? {
                export(ctx, sink, &batch).await?;
                stats.details.insert("resumed_batches".into(), json!(true));
            }
        }
        // `workers` movers at once: on PostgreSQL one takes the next batch (SKIP LOCKED keeps
        // them apart) while another's commit is being flushed; on SQLite they take turns on the
        // one writer, and still gain a little (one prepares while the other commits).
        let progress = Progress {
            done: AtomicU64::new(0),
            total,
        };
        let results = futures::future::try_join_all(
            (0..self.workers).map(|_| self.mover(ctx, &cold, &progress)),
        )
        .await?;
        for worker in results {
            stats.batches += worker.batches;
            stats.stopped_early |= worker.stopped_early;
            if let Some(key) = worker.last_object {
                stats.details.insert("last_object".into(), json!(key));
            }
        }
        stats.changed = progress.done.load(Ordering::Relaxed);
        stats.examined = stats.changed;
        ctx.metrics.rows_archived(self.sink.name(), stats.changed);
        Ok(stats)
    }
}

/// Rows moved so far by all workers, for the progress line.
struct Progress {
    done: AtomicU64,
    total: u64,
}

/// What one worker did.
#[derive(Default)]
struct Mover {
    batches: u64,
    stopped_early: bool,
    last_object: Option<String>,
}

impl Archive {
    /// Move batch after batch until nothing is left or the daemon stops.
    async fn mover(
        &self,
        ctx: &JobContext,
        cold: &ColdRows,
        progress: &Progress,
    ) -> Result<Mover, JobError> {
        let mut done = Mover::default();
        loop {
            if ctx.cancel.is_cancelled() {
                done.stopped_early = true;
                return Ok(done);
            }
            // One transaction moves the batch; then its points leave the index. A crash in
            // between leaves points without rows, which search drops (it re-reads every hit).
            let moved = match &self.sink {
                Sink::Table => {
                    let moved = ctx
                        .db
                        .archive_to_table(cold, ctx.batch_size, Utc::now())
                        .await?;
                    if !moved.is_empty() {
                        drop_points(ctx, moved.clone()).await;
                    }
                    moved.len()
                }
                Sink::Object(sink) => {
                    match ctx.db.stage_batch(cold, ctx.batch_size, Utc::now()).await? {
                        None => 0,
                        Some(batch) => {
                            drop_points(ctx, batch.ids.clone()).await;
                            export(ctx, sink, &batch).await?;
                            done.last_object = Some(batch.key);
                            batch.ids.len()
                        }
                    }
                }
            };
            if moved == 0 {
                return Ok(done);
            }
            done.batches += 1;
            let total = progress.done.fetch_add(moved as u64, Ordering::Relaxed) + moved as u64;
            ctx.report(total, Some(progress.total));
            // A smaller batch means nothing is left (the object sink batches per namespace, so
            // it only stops when nothing matched).
            if matches!(self.sink, Sink::Table) && (moved as i64) < ctx.batch_size {
                return Ok(done);
            }
        }
    }
}

async fn drop_points(ctx: &JobContext, ids: Vec<MemoryId>) {
    let n = ids.len();
    if let Err(e) = ctx.service.index().delete(ids).await {
        tracing::warn!(error = %e, rows = n, "archive: index delete failed; search skips the leftover points");
    }
}

/// Write a staged batch's object, verify it, then let its rows go from the table.
async fn export(ctx: &JobContext, sink: &ObjectSink, batch: &ArchiveBatch) -> Result<(), JobError> {
    let rows = ctx.db.archived_rows(&batch.ids).await?;
    sink.write(&batch.key, &rows).await?;
    ctx.db.finish_export(&batch.key, Utc::now()).await?;
    Ok(())
}

/// What `hindsight archive restore` did.
#[derive(Debug, Clone, Default, serde::Serialize, serde::Deserialize, PartialEq)]
pub struct RestoreReport {
    pub restored: usize,
    /// Left in the archive: an active memory holds the same (namespace, entity, attribute).
    pub skipped: Vec<MemoryId>,
    /// Not brought back: forgotten since they were archived.
    pub forgotten: Vec<MemoryId>,
    /// Restored rows put back into the vector index.
    pub indexed: usize,
}

/// The ids of the archive object `key` (for `restore --batch`).
pub async fn batch_ids(db: &dyn Database, key: &str) -> Result<Vec<MemoryId>, JobError> {
    for state in [
        BatchState::Exported,
        BatchState::Staged,
        BatchState::Restored,
    ] {
        if let Some(batch) = db
            .batches(state, None)
            .await?
            .into_iter()
            .find(|b| b.key == key)
        {
            return Ok(batch.ids);
        }
    }
    Err(JobError::NoBatch(key.to_owned()))
}

/// Move the selected archived rows back into `memories`, batch by batch, then index them.
/// With the object sink, the objects holding them are read back into `memories_archive`
/// first (newest first, so the latest copy of a row wins).
pub async fn restore(
    service: &MemoryService,
    db: &dyn Database,
    sink: &Sink,
    selector: &RestoreSelector,
) -> Result<RestoreReport, JobError> {
    const BATCH: i64 = 1_000;
    let mut report = RestoreReport::default();
    let mut batches = Vec::new();
    if let Sink::Object(objects) = sink {
        batches = db.batches(BatchState::Exported, Some(selector)).await?;
        for batch in batches.iter().rev() {
            let rows = objects.read(&batch.key).await?;
            let mut wanted: Vec<_> = rows
                .into_iter()
                .filter(|r| match selector {
                    RestoreSelector::Ids(ids) => ids.contains(&r.memory.id),
                    RestoreSelector::Namespace(ns) => &r.memory.namespace == ns,
                })
                .collect();
            // A forgotten memory's copy stays where it is (`unpack` would skip it too).
            let ids: Vec<_> = wanted.iter().map(|r| r.memory.id).collect();
            let forgotten = db.forgotten_among(&ids).await?;
            wanted.retain(|r| !forgotten.contains(&r.memory.id));
            report.forgotten.extend(forgotten);
            db.unpack(&wanted).await?;
        }
    }
    let mut after = None;
    loop {
        let batch = db
            .restore_from_table(selector, after, BATCH, Utc::now())
            .await?;
        report.restored += batch.restored.len();
        report.skipped.extend(batch.skipped);
        report.forgotten.extend(batch.forgotten);
        after = batch.next_after;
        if after.is_none() {
            break;
        }
    }
    report.forgotten.sort();
    report.forgotten.dedup();
    // An object whose every row is back (or forgotten for good) is done with.
    for batch in batches {
        let mut settled: std::collections::HashSet<_> = db
            .get_many(&batch.ids)
            .await?
            .iter()
            .map(|m| m.id)
            .collect();
        settled.extend(db.forgotten_among(&batch.ids).await?);
        if settled.len() >= batch.ids.len() {
            db.set_batch_state(&batch.key, BatchState::Restored).await?;
        }
    }
    // Restored rows are `index_pending`: the repair that runs at every start would index them
    // too, but a restore should be searchable when it returns.
    report.indexed = service.repair_index().await?;
    Ok(report)
}
