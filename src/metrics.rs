//! `GET /metrics`, in the Prometheus/OpenMetrics text format (prometheus-client). Job counters
//! and histograms are updated as runs finish; the memory counts are read from the store at
//! scrape time (one GROUP BY), so they are right whichever replica did the writing.

use std::sync::Mutex;

use prometheus_client::encoding::EncodeLabelSet;
use prometheus_client::metrics::counter::Counter;
use prometheus_client::metrics::family::{Family, MetricConstructor};
use prometheus_client::metrics::gauge::Gauge;
use prometheus_client::metrics::histogram::{Histogram, exponential_buckets};
use prometheus_client::registry::Registry;

use crate::jobs::JobStats;
use crate::store::{CountRow, RunStatus};

#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
struct JobLabels {
    job: String,
}

#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
struct JobResultLabels {
    job: String,
    result: String,
}

#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
struct SinkLabels {
    sink: String,
}

#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
struct MemoryLabels {
    namespace: String,
    memory_type: String,
    status: String,
}

#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
struct ToolLabels {
    tool: String,
    result: String,
}

#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
struct ToolOnly {
    tool: String,
}

#[derive(Clone)]
struct Buckets(Vec<f64>);

impl MetricConstructor<Histogram> for Buckets {
    fn new_metric(&self) -> Histogram {
        Histogram::new(self.0.iter().copied())
    }
}

pub struct Metrics {
    registry: Mutex<Registry>,
    job_runs: Family<JobResultLabels, Counter>,
    job_duration: Family<JobLabels, Histogram, Buckets>,
    job_last_success: Family<JobLabels, Gauge<f64, std::sync::atomic::AtomicU64>>,
    rows_expired: Counter,
    rows_archived: Family<SinkLabels, Counter>,
    memories: Family<MemoryLabels, Gauge>,
    capacity_active: Gauge,
    mcp_requests: Family<ToolLabels, Counter>,
    mcp_latency: Family<ToolOnly, Histogram, Buckets>,
}

impl Default for Metrics {
    fn default() -> Self {
        Self::new()
    }
}

impl Metrics {
    pub fn new() -> Self {
        let mut registry = Registry::with_prefix("hindsight");
        let job_runs = Family::default();
        let job_duration =
            Family::new_with_constructor(Buckets(exponential_buckets(0.01, 4.0, 10).collect()));
        let job_last_success = Family::default();
        let rows_expired = Counter::default();
        let rows_archived = Family::default();
        let memories = Family::default();
        let capacity_active = Gauge::default();
        let mcp_requests = Family::default();
        let mcp_latency =
            Family::new_with_constructor(Buckets(exponential_buckets(0.0005, 2.0, 14).collect()));
        registry.register("job_runs", "Job runs by result", job_runs.clone());
        registry.register(
            "job_duration_seconds",
            "Job run duration",
            job_duration.clone(),
        );
        registry.register(
            "job_last_success_timestamp_seconds",
            "When each job last finished ok (unix seconds, this process)",
            job_last_success.clone(),
        );
        registry.register(
            "rows_expired",
            "Memories expired by the expire job",
            rows_expired.clone(),
        );
        registry.register(
            "rows_archived",
            "Memories moved out by the archive job",
            rows_archived.clone(),
        );
        registry.register(
            "memories",
            "Memories by namespace, type and status",
            memories.clone(),
        );
        registry.register(
            "capacity_active_memories",
            "Active memories counted by the last capacity run",
            capacity_active.clone(),
        );
        registry.register(
            "mcp_requests",
            "MCP tool calls by tool and result",
            mcp_requests.clone(),
        );
        registry.register(
            "mcp_request_duration_seconds",
            "MCP tool call latency",
            mcp_latency.clone(),
        );
        Self {
            registry: Mutex::new(registry),
            job_runs,
            job_duration,
            job_last_success,
            rows_expired,
            rows_archived,
            memories,
            capacity_active,
            mcp_requests,
            mcp_latency,
        }
    }

    pub fn job_finished(&self, job: &str, status: RunStatus, stats: &JobStats) {
        let labels = JobLabels {
            job: job.to_owned(),
        };
        self.job_runs
            .get_or_create(&JobResultLabels {
                job: job.to_owned(),
                result: status.as_str().to_owned(),
            })
            .inc();
        self.job_duration
            .get_or_create(&labels)
            .observe(stats.seconds);
        if status != RunStatus::Ok {
            return;
        }
        self.job_last_success
            .get_or_create(&labels)
            .set(chrono::Utc::now().timestamp_millis() as f64 / 1000.0);
        match job {
            "expire" => {
                self.rows_expired.inc_by(stats.changed);
            }
            "archive" => {
                let sink = stats
                    .details
                    .get("sink")
                    .and_then(|s| s.as_str())
                    .unwrap_or("table");
                self.rows_archived
                    .get_or_create(&SinkLabels {
                        sink: sink.to_owned(),
                    })
                    .inc_by(stats.changed);
            }
            "capacity" => {
                if let Some(total) = stats.details.get("active_total").and_then(|t| t.as_i64()) {
                    self.capacity_active.set(total);
                }
            }
            _ => {}
        }
    }

    pub fn mcp_call(&self, tool: &str, ok: bool, seconds: f64) {
        self.mcp_requests
            .get_or_create(&ToolLabels {
                tool: tool.to_owned(),
                result: if ok { "ok" } else { "error" }.to_owned(),
            })
            .inc();
        self.mcp_latency
            .get_or_create(&ToolOnly {
                tool: tool.to_owned(),
            })
            .observe(seconds);
    }

    /// The exposition text, with the memory counts as of `counts`.
    pub fn render(&self, counts: &[CountRow]) -> String {
        let registry = self.registry.lock().unwrap_or_else(|e| e.into_inner());
        self.memories.clear();
        for row in counts {
            self.memories
                .get_or_create(&MemoryLabels {
                    namespace: row.namespace.clone(),
                    memory_type: row.memory_type.as_str().to_owned(),
                    status: row.status.as_str().to_owned(),
                })
                .set(row.count);
        }
        let mut text = String::new();
        if let Err(e) = prometheus_client::encoding::text::encode(&mut text, &registry) {
            tracing::error!(error = %e, "could not encode metrics");
        }
        text
    }
}
