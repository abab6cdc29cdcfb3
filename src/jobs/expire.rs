//! expire: active memories whose `expires_at` has passed become `expired` and leave the vector
//! index. This is how working memory's default TTL (set at write) is enforced in the store;
//! search also filters expired rows at read, so nothing waits on this job to be correct.

use std::sync::Arc;

use async_trait::async_trait;
use chrono::Utc;
use serde_json::json;

use super::config::{JobConfigError, JobSettings};
use super::{Job, JobContext, JobEnv, JobError, JobSpec, JobStats};

pub const SPEC: JobSpec = JobSpec {
    name: "expire",
    default_cron: "0 * * * * *",
    build,
};

/// The expire job takes no parameters.
#[derive(serde::Deserialize)]
#[serde(deny_unknown_fields)]
struct Params {}

fn build(settings: &JobSettings, _env: &JobEnv) -> Result<Arc<dyn Job>, JobConfigError> {
    let Params {} = settings.params()?;
    Ok(Arc::new(Expire))
}

/// A dry run lists this many of the rows it would expire.
const SAMPLE: i64 = 20;

pub struct Expire;

#[async_trait]
impl Job for Expire {
    async fn run(&self, ctx: &JobContext) -> Result<JobStats, JobError> {
        let now = Utc::now();
        let mut stats = JobStats {
            dry_run: ctx.dry_run,
            ..JobStats::default()
        };
        let total = ctx.db.count_expire_due(now).await? as u64;
        if ctx.dry_run {
            let sample = ctx.db.expire_due(now, SAMPLE, true).await?;
            stats.examined = total;
            stats.details.insert(
                "would_expire".into(),
                json!(sample.iter().map(|m| m.id).collect::<Vec<_>>()),
            );
            return Ok(stats);
        }
        // Each batch is one UPDATE; its rows are then dropped from the index (they stay
        // `index_pending` until the index has flushed, so a crash in between is repaired).
        loop {
            if ctx.cancel.is_cancelled() {
                stats.stopped_early = true;
                break;
            }
            let rows = ctx.db.expire_due(now, ctx.batch_size, false).await?;
            if rows.is_empty() {
                break;
            }
            ctx.service.sync_index(&rows).await;
            stats.batches += 1;
            stats.changed += rows.len() as u64;
            ctx.report(stats.changed, Some(total));
            if (rows.len() as i64) < ctx.batch_size {
                break;
            }
        }
        stats.examined = stats.changed;
        ctx.metrics.rows_expired(stats.changed);
        Ok(stats)
    }
}
