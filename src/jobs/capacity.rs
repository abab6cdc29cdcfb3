//! capacity: active memories per namespace and in total against limits. At `warn_ratio` of a
//! limit an alert fires with severity `warning`, at the limit `critical`; each run re-sends
//! what is firing and sends `resolved` for what went back under. Alerts go to a tracing warning
//! always, to an Alertmanager (`POST /api/v2/alerts`) and/or a plain JSON webhook when set.
//! What is firing is kept in the database (`meta`), so a restart or another replica resolves
//! what this one fired. With `evict = true` (off by default), a store over `max_total` first
//! archives its lowest-ranked active memories (importance × recency) to `memories_archive`.
//!
//! The same path carries the integrity alert: while the store lists rows whose signature
//! failed (`tampered`, filled by reads and `hindsight verify`), `HindsightTamperedRows` fires
//! (severity `critical`, one per namespace), resolved once `verify` finds them good or gone.

use std::collections::BTreeMap;
use std::sync::Arc;
use std::time::Duration;

use async_trait::async_trait;
use chrono::{DateTime, Utc};
use serde::{Deserialize, Serialize};
use serde_json::json;

use super::config::{JobConfigError, JobSettings};
use super::{Job, JobContext, JobEnv, JobError, JobSpec, JobStats};
use crate::domain::Status;

pub const SPEC: JobSpec = JobSpec {
    name: "capacity",
    default_cron: "0 */5 * * * *",
    build,
};

pub const ALERT_NAME: &str = "HindsightMemoryCapacity";
/// Rows that failed their signature check.
pub const TAMPERED_ALERT_NAME: &str = "HindsightTamperedRows";
/// The `namespace` label of the store-wide alert.
pub const ALL_NAMESPACES: &str = "_all";
const FIRING_META_KEY: &str = "capacity_alerts_firing";
/// Alertmanager resolves an alert nobody re-sent by its `endsAt`: long enough to outlive a few
/// missed runs, short enough that a dead daemon's alerts clear.
const FIRING_VALIDITY: chrono::Duration = chrono::Duration::hours(1);

/// `[params]` of `jobs/capacity.toml`.
#[derive(Deserialize)]
#[serde(deny_unknown_fields, default)]
struct Params {
    max_total: i64,
    /// 0: no limit per namespace.
    max_per_namespace: i64,
    warn_ratio: f64,
    alertmanager_url: Option<String>,
    webhook_url: Option<String>,
    evict: bool,
}

impl Default for Params {
    fn default() -> Self {
        Self {
            max_total: 500_000,
            max_per_namespace: 0,
            warn_ratio: 0.8,
            alertmanager_url: None,
            webhook_url: None,
            evict: false,
        }
    }
}

/// The limits a capacity job's `[params]` set, defaults filled in (what the console shows).
#[derive(Debug, Clone, PartialEq)]
pub struct Limits {
    pub max_total: i64,
    pub max_per_namespace: Option<i64>,
    pub warn_ratio: f64,
}

pub fn limits(params: &serde_json::Value) -> Limits {
    let p: Params = match params {
        serde_json::Value::Null => Params::default(),
        given => serde_json::from_value(given.clone()).unwrap_or_default(),
    };
    Limits {
        max_total: p.max_total,
        max_per_namespace: (p.max_per_namespace > 0).then_some(p.max_per_namespace),
        warn_ratio: p.warn_ratio,
    }
}

fn build(settings: &JobSettings, _env: &JobEnv) -> Result<Arc<dyn Job>, JobConfigError> {
    let p: Params = settings.params()?;
    let url = |key: &str, raw: Option<String>| -> Result<Option<reqwest::Url>, JobConfigError> {
        super::config::non_empty(raw)
            .map(|raw| {
                reqwest::Url::parse(&raw)
                    .ok()
                    .filter(|u| matches!(u.scheme(), "http" | "https"))
                    .ok_or_else(|| {
                        settings.param_error(key, format!("must be an http(s) URL, got {raw:?}"))
                    })
            })
            .transpose()
    };
    let max_per_namespace =
        settings.int_within("max_per_namespace", p.max_per_namespace, 0..=i64::MAX)?;
    Ok(Arc::new(Capacity {
        max_total: settings.int_within("max_total", p.max_total, 1..=i64::MAX)?,
        max_per_namespace: (max_per_namespace > 0).then_some(max_per_namespace),
        warn_ratio: settings.float_within("warn_ratio", p.warn_ratio, 0.01..=1.0)?,
        alertmanager: url("alertmanager_url", p.alertmanager_url)?,
        webhook: url("webhook_url", p.webhook_url)?,
        evict: p.evict,
        http: reqwest::Client::builder()
            .timeout(Duration::from_secs(10))
            .build()
            .map_err(|e| settings.param_error("alertmanager_url", e.to_string()))?,
    }))
}

pub struct Capacity {
    pub max_total: i64,
    pub max_per_namespace: Option<i64>,
    pub warn_ratio: f64,
    pub alertmanager: Option<reqwest::Url>,
    pub webhook: Option<reqwest::Url>,
    /// At or over `max_total`, archive (to `memories_archive`) the active memories with the
    /// lowest importance × recency until under it. Off by default; try a dry run first.
    pub evict: bool,
    http: reqwest::Client,
}

/// Rows read per page while ranking for eviction.
const RANK_PAGE: i64 = 5_000;

impl Capacity {
    /// The `count` active memories with the lowest importance × exp(−λ·days since last
    /// touched), lowest first. Pages through the rows keeping only the `count` lowest, so memory
    /// is bounded by what must go, not by the store.
    async fn lowest_ranked(
        ctx: &JobContext,
        count: usize,
    ) -> Result<Vec<crate::domain::MemoryId>, JobError> {
        use std::collections::BinaryHeap;
        #[derive(PartialEq)]
        struct Ranked(f64, crate::domain::MemoryId);
        impl Eq for Ranked {}
        impl PartialOrd for Ranked {
            fn partial_cmp(&self, other: &Self) -> Option<std::cmp::Ordering> {
                Some(self.cmp(other))
            }
        }
        impl Ord for Ranked {
            fn cmp(&self, other: &Self) -> std::cmp::Ordering {
                self.0.total_cmp(&other.0).then(self.1.cmp(&other.1))
            }
        }
        let lambda = ctx.service.rules().recency_lambda;
        let now = Utc::now();
        let mut keep: BinaryHeap<Ranked> = BinaryHeap::with_capacity(count + 1);
        let mut after = None;
        loop {
            let page = ctx.db.active_rank_inputs(after, RANK_PAGE).await?;
            let Some(last) = page.last() else { break };
            after = Some(last.0);
            for (id, importance, touched) in &page {
                let days = (now - *touched).num_milliseconds().max(0) as f64 / 86_400_000.0;
                keep.push(Ranked(importance * (-lambda * days).exp(), *id));
                if keep.len() > count {
                    keep.pop(); // the highest of the kept: it stays in the store
                }
            }
            if (page.len() as i64) < RANK_PAGE {
                break;
            }
        }
        Ok(keep.into_sorted_vec().into_iter().map(|r| r.1).collect())
    }

    /// Eviction, when on and over the limit: returns how many rows were (or, in a dry run,
    /// would be) archived, and a sample of them, lowest ranked first.
    async fn evict_excess(
        &self,
        ctx: &JobContext,
        total: i64,
    ) -> Result<(u64, Vec<crate::domain::MemoryId>), JobError> {
        if !self.evict || total < self.max_total {
            return Ok((0, Vec::new()));
        }
        let excess = (total - self.max_total + 1) as usize;
        let victims = Self::lowest_ranked(ctx, excess).await?;
        let sample: Vec<_> = victims.iter().take(20).copied().collect();
        if ctx.dry_run {
            return Ok((victims.len() as u64, sample));
        }
        let mut evicted = 0;
        for chunk in victims.chunks(ctx.batch_size.max(1) as usize) {
            if ctx.cancel.is_cancelled() {
                break;
            }
            let moved = ctx.db.archive_ids_to_table(chunk, Utc::now()).await?;
            evicted += moved.len() as u64;
            if let Err(e) = ctx.service.index().delete(moved).await {
                tracing::warn!(error = %e, "capacity eviction: index delete failed; search skips the leftover points");
            }
            ctx.report(evicted, Some(excess as u64));
        }
        tracing::warn!(
            evicted,
            limit = self.max_total,
            "capacity: over the limit, archived the lowest-ranked memories (restore with `hindsight archive restore`)"
        );
        Ok((evicted, sample))
    }
}

/// One alert: a namespace (or `_all`) at a severity.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize)]
pub struct AlertKey {
    /// `HindsightMemoryCapacity` (what a state saved before the integrity alert holds) or
    /// `HindsightTamperedRows`.
    #[serde(default = "capacity_alert_name")]
    pub alertname: String,
    pub namespace: String,
    pub severity: String,
}

fn capacity_alert_name() -> String {
    ALERT_NAME.to_owned()
}

#[derive(Debug, Clone, Serialize)]
struct Alert {
    #[serde(flatten)]
    key: AlertKey,
    count: i64,
    limit: i64,
}

impl Capacity {
    /// The alerts the counts call for: one per namespace (or the total) at its highest severity.
    fn evaluate(&self, active: &BTreeMap<String, i64>) -> Vec<Alert> {
        let total: i64 = active.values().sum();
        let mut alerts = Vec::new();
        let mut check = |namespace: &str, count: i64, limit: i64| {
            let severity = if count >= limit {
                "critical"
            } else if count as f64 >= self.warn_ratio * limit as f64 {
                "warning"
            } else {
                return;
            };
            alerts.push(Alert {
                key: AlertKey {
                    alertname: ALERT_NAME.to_owned(),
                    namespace: namespace.to_owned(),
                    severity: severity.to_owned(),
                },
                count,
                limit,
            });
        };
        check(ALL_NAMESPACES, total, self.max_total);
        if let Some(limit) = self.max_per_namespace {
            for (namespace, count) in active {
                check(namespace, *count, limit);
            }
        }
        alerts
    }

    fn alertmanager_payload(
        firing: &[Alert],
        resolved: &[AlertKey],
        now: DateTime<Utc>,
    ) -> serde_json::Value {
        let alert = |key: &AlertKey, ends: DateTime<Utc>, description: String| {
            let summary = if key.alertname == TAMPERED_ALERT_NAME {
                format!(
                    "hindsight rows failed their signature check ({})",
                    key.namespace
                )
            } else {
                format!("hindsight memory store near capacity ({})", key.namespace)
            };
            json!({
                "labels": {"alertname": key.alertname, "namespace": key.namespace, "severity": key.severity},
                "annotations": {
                    "summary": summary,
                    "description": description,
                },
                "endsAt": ends.to_rfc3339(),
            })
        };
        let mut alerts: Vec<_> = firing
            .iter()
            .map(|a| {
                let description = if a.key.alertname == TAMPERED_ALERT_NAME {
                    format!(
                        "{} rows changed outside hindsight are not served; see `hindsight verify`",
                        a.count
                    )
                } else {
                    format!("{} active memories, limit {}", a.count, a.limit)
                };
                alert(&a.key, now + FIRING_VALIDITY, description)
            })
            .collect();
        alerts.extend(
            resolved
                .iter()
                .map(|k| alert(k, now, "back under the limit".to_owned())),
        );
        serde_json::Value::Array(alerts)
    }

    async fn post(&self, url: &reqwest::Url, body: &serde_json::Value) -> Result<(), JobError> {
        let failed = |message: String| JobError::Alert {
            target: url.to_string(),
            message,
        };
        let response = self
            .http
            .post(url.clone())
            .json(body)
            .send()
            .await
            .map_err(|e| failed(e.to_string()))?;
        if response.status().is_success() {
            Ok(())
        } else {
            Err(failed(format!("HTTP {}", response.status())))
        }
    }
}

#[async_trait]
impl Job for Capacity {
    async fn run(&self, ctx: &JobContext) -> Result<JobStats, JobError> {
        let now = Utc::now();
        let active_counts = || async {
            let mut active = BTreeMap::<String, i64>::new();
            for row in ctx.db.counts().await? {
                if row.status == Status::Active {
                    *active.entry(row.namespace).or_default() += row.count;
                }
            }
            Ok::<_, JobError>(active)
        };
        let mut active = active_counts().await?;
        let mut total: i64 = active.values().sum();
        let (evicted, evict_sample) = self.evict_excess(ctx, total).await?;
        if evicted > 0 && !ctx.dry_run {
            active = active_counts().await?;
            total = active.values().sum();
        }
        let mut firing = self.evaluate(&active);
        let mut tampered = BTreeMap::<String, i64>::new();
        for row in ctx.db.tampered().await? {
            *tampered.entry(row.namespace).or_default() += 1;
        }
        for (namespace, count) in &tampered {
            tracing::error!(%namespace, rows = count, "rows failed their signature check");
            firing.push(Alert {
                key: AlertKey {
                    alertname: TAMPERED_ALERT_NAME.to_owned(),
                    namespace: namespace.clone(),
                    severity: "critical".to_owned(),
                },
                count: *count,
                limit: 0,
            });
        }
        let previous: Vec<AlertKey> = ctx
            .db
            .meta_get(FIRING_META_KEY)
            .await?
            .and_then(|text| serde_json::from_str(&text).ok())
            .unwrap_or_default();
        let resolved: Vec<AlertKey> = previous
            .into_iter()
            .filter(|k| !firing.iter().any(|a| &a.key == k))
            .collect();
        for alert in firing.iter().filter(|a| a.key.alertname == ALERT_NAME) {
            tracing::warn!(namespace = %alert.key.namespace, severity = %alert.key.severity,
                count = alert.count, limit = alert.limit, "memory store near capacity");
        }

        let mut stats = JobStats {
            examined: total as u64,
            dry_run: ctx.dry_run,
            batches: 1,
            ..JobStats::default()
        };
        stats.details.insert("active_total".into(), json!(total));
        stats.details.insert(
            "tampered_rows".into(),
            json!(tampered.values().sum::<i64>()),
        );
        ctx.metrics.capacity_active(total);
        if self.evict {
            let key = if ctx.dry_run {
                "would_evict"
            } else {
                "evicted"
            };
            stats.details.insert(key.into(), json!(evicted));
            stats
                .details
                .insert("evict_sample".into(), json!(evict_sample));
            stats.changed = if ctx.dry_run { 0 } else { evicted };
        }
        stats.details.insert("firing".into(), json!(firing));
        stats.details.insert("resolved".into(), json!(resolved));
        if ctx.dry_run {
            return Ok(stats);
        }
        if !firing.is_empty() || !resolved.is_empty() {
            let mut failure = None;
            if let Some(url) = &self.alertmanager {
                // The server's base URL (`http://alertmanager:9093`), or the full API path.
                let base = url.as_str().trim_end_matches('/');
                let url = if base.ends_with("/api/v2/alerts") {
                    url.clone()
                } else {
                    reqwest::Url::parse(&format!("{base}/api/v2/alerts"))
                        .unwrap_or_else(|_| url.clone())
                };
                let body = Self::alertmanager_payload(&firing, &resolved, now);
                failure = self.post(&url, &body).await.err();
            }
            if let Some(url) = &self.webhook {
                let body = json!({
                    "source": "hindsight", "alertname": ALERT_NAME,
                    "firing": firing, "resolved": resolved, "at": now.to_rfc3339(),
                });
                if let Err(e) = self.post(url, &body).await {
                    failure = Some(e);
                }
            }
            // Keep the old state when delivery failed, so the next run sends `resolved` again.
            if let Some(e) = failure {
                return Err(e);
            }
        }
        let keys: Vec<&AlertKey> = firing.iter().map(|a| &a.key).collect();
        ctx.db
            .meta_set(
                FIRING_META_KEY,
                &serde_json::to_string(&keys).unwrap_or_default(),
            )
            .await?;
        Ok(stats)
    }
}
