//! archive: active memories older than `min_age_days` and accessed fewer than
//! `max_access_count` times leave the hot table and the vector index for `memories_archive`
//! (same database, every column kept). `hindsight archive restore` brings them back. Archived
//! rows are never returned by search: they are not in `memories` any more.

use std::sync::Arc;

use async_trait::async_trait;
use chrono::{Duration, Utc};
use serde_json::json;

use super::config::{JobConfigError, JobSettings};
use super::registry::JobSpec;
use super::{Job, JobContext, JobError, JobStats};
use crate::domain::MemoryId;
use crate::service::MemoryService;
use crate::store::{ColdRows, Database, RestoreSelector};

pub const SPEC: JobSpec = JobSpec {
    name: "archive",
    default_cron: "0 30 3 * * *",
    params: &["min_age_days", "max_access_count", "sink"],
    build,
};

fn build(settings: &JobSettings) -> Result<Arc<dyn Job>, JobConfigError> {
    let sink = settings.string("sink")?.unwrap_or_else(|| "table".to_owned());
    if sink != "table" {
        return Err(settings.param_error(
            "sink",
            format!("must be \"table\" (the memories_archive table), got {sink:?}"),
        ));
    }
    Ok(Arc::new(Archive {
        min_age: Duration::days(settings.int("min_age_days", 90, 0..=36_500)?),
        max_access_count: settings.int("max_access_count", 3, 1..=i64::MAX)?,
    }))
}

const SAMPLE: i64 = 20;

pub struct Archive {
    pub min_age: Duration,
    /// Rows accessed this many times or more stay hot.
    pub max_access_count: i64,
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
        stats.details.insert("sink".into(), json!("table"));
        let total = ctx.db.count_cold(&cold).await? as u64;
        if ctx.dry_run {
            stats.examined = total;
            stats.details.insert(
                "would_archive".into(),
                json!(ctx.db.cold_ids(&cold, SAMPLE).await?),
            );
            return Ok(stats);
        }
        loop {
            if ctx.cancel.is_cancelled() {
                stats.stopped_early = true;
                break;
            }
            // One transaction moves the batch; then its points leave the index. A crash in
            // between leaves points without rows, which search drops (it re-reads every hit).
            let moved = ctx
                .db
                .archive_to_table(&cold, ctx.batch_size, Utc::now())
                .await?;
            if moved.is_empty() {
                break;
            }
            let n = moved.len();
            if let Err(e) = ctx.service.index().delete(moved).await {
                tracing::warn!(error = %e, rows = n, "archive: index delete failed; search skips the leftover points");
            }
            stats.batches += 1;
            stats.changed += n as u64;
            ctx.report(stats.changed, Some(total));
            if (n as i64) < ctx.batch_size {
                break;
            }
        }
        stats.examined = stats.changed;
        Ok(stats)
    }
}

/// What `hindsight archive restore` did.
#[derive(Debug, Clone, Default, serde::Serialize, PartialEq)]
pub struct RestoreReport {
    pub restored: usize,
    /// Left in the archive: an active memory holds the same (namespace, entity, attribute).
    pub skipped: Vec<MemoryId>,
    /// Restored rows put back into the vector index.
    pub indexed: usize,
}

/// Move the selected archived rows back into `memories`, batch by batch, then index them.
pub async fn restore(
    service: &MemoryService,
    db: &dyn Database,
    selector: &RestoreSelector,
) -> Result<RestoreReport, JobError> {
    const BATCH: i64 = 1_000;
    let mut report = RestoreReport::default();
    let mut after = None;
    loop {
        let batch = db
            .restore_from_table(selector, after, BATCH, Utc::now())
            .await?;
        report.restored += batch.restored.len();
        report.skipped.extend(batch.skipped);
        after = batch.next_after;
        if after.is_none() {
            break;
        }
    }
    // Restored rows are `index_pending`: the repair that runs at every start would index them
    // too, but a restore should be searchable when it returns.
    report.indexed = service.repair_index().await?;
    Ok(report)
}
