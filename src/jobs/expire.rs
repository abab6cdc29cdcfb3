//! expire: active memories whose `expires_at` has passed become `expired` and leave the vector
//! index. This is how working memory's default TTL (set at write) is enforced in the store;
//! search also filters expired rows at read, so nothing waits on this job to be correct. It
//! also drops audit entries older than `audit_retention_days`.

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

/// `[params]` of `jobs/expire.toml`.
#[derive(serde::Deserialize)]
#[serde(deny_unknown_fields, default)]
struct Params {
    /// How long the audit trail keeps an entry; older ones go at each run.
    audit_retention_days: i64,
}

impl Default for Params {
    fn default() -> Self {
        Self {
            audit_retention_days: 365,
        }
    }
}

fn build(settings: &JobSettings, _env: &JobEnv) -> Result<Arc<dyn Job>, JobConfigError> {
    let p: Params = settings.params()?;
    let days = settings.int_within("audit_retention_days", p.audit_retention_days, 1..=36_500)?;
    Ok(Arc::new(Expire {
        audit_retention: chrono::Duration::days(days),
    }))
}

/// A dry run lists this many of the rows it would expire.
const SAMPLE: i64 = 20;

pub struct Expire {
    audit_retention: chrono::Duration,
}

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
        let pruned = ctx.db.prune_audit(now - self.audit_retention).await?;
        stats.details.insert("audit_pruned".into(), json!(pruned));
        Ok(stats)
    }
}
