//! `GET /metrics`, in the Prometheus/OpenMetrics text format (prometheus-client). Job counters
//! and histograms are updated as runs finish, each job recording its own figures; the memory
//! counts are read from the store at scrape time (one GROUP BY), so they are right whichever
//! replica did the writing.
//!
//! The bottom floor: it imports nothing of the crate, and its methods take plain numbers and
//! names, so any layer can record into it without a loop back up.

use std::sync::Mutex;

use prometheus_client::encoding::EncodeLabelSet;
use prometheus_client::metrics::counter::Counter;
use prometheus_client::metrics::family::{Family, MetricConstructor};
use prometheus_client::metrics::gauge::Gauge;
use prometheus_client::metrics::histogram::{Histogram, exponential_buckets};
use prometheus_client::registry::Registry;

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
    tampered_rows: Counter,
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
        let tampered_rows = Counter::default();
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
        registry.register(
            "tampered_rows",
            "Rows whose signature failed its check (on a read or by `hindsight verify`)",
            tampered_rows.clone(),
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
            tampered_rows,
        }
    }

    /// A run of `job` ended with `result` (`ok`, `failed`, …) after `seconds`.
    pub fn job_finished(&self, job: &str, result: &str, seconds: f64) {
        let labels = JobLabels {
            job: job.to_owned(),
        };
        self.job_runs
            .get_or_create(&JobResultLabels {
                job: job.to_owned(),
                result: result.to_owned(),
            })
            .inc();
        self.job_duration.get_or_create(&labels).observe(seconds);
        if result == "ok" {
            self.job_last_success
                .get_or_create(&labels)
                .set(chrono::Utc::now().timestamp_millis() as f64 / 1000.0);
        }
    }

    /// The expire job expired `rows`.
    pub fn rows_expired(&self, rows: u64) {
        self.rows_expired.inc_by(rows);
    }

    /// The archive job (or a capacity eviction) moved `rows` out to `sink` (`table`, `object`).
    pub fn rows_archived(&self, sink: &str, rows: u64) {
        self.rows_archived
            .get_or_create(&SinkLabels {
                sink: sink.to_owned(),
            })
            .inc_by(rows);
    }

    /// `rows` rows failed their signature check.
    pub fn tampered_rows(&self, rows: u64) {
        self.tampered_rows.inc_by(rows);
    }

    /// The capacity job counted `total` active memories.
    pub fn capacity_active(&self, total: i64) {
        self.capacity_active.set(total);
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

    /// The exposition text, with the memory counts as of `counts`: (namespace, memory type,
    /// status, count).
    pub fn render<'a>(
        &self,
        counts: impl IntoIterator<Item = (&'a str, &'a str, &'a str, i64)>,
    ) -> String {
        let registry = self.registry.lock().unwrap_or_else(|e| e.into_inner());
        self.memories.clear();
        for (namespace, memory_type, status, count) in counts {
            self.memories
                .get_or_create(&MemoryLabels {
                    namespace: namespace.to_owned(),
                    memory_type: memory_type.to_owned(),
                    status: status.to_owned(),
                })
                .set(count);
        }
        let mut text = String::new();
        if let Err(e) = prometheus_client::encoding::text::encode(&mut text, &registry) {
            tracing::error!(error = %e, "could not encode metrics");
        }
        text
    }
}
