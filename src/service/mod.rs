//! The memory service: the write / search / forget rules over a store, a vector index and an
//! embedder. Transports reach it only through `operations` (the one way in).
//!
//! Invariant: a row change commits first with `index_pending = 1`, then the index is updated,
//! and the flag is cleared only after the index engine has flushed that change to disk
//! (`flush`, about once a second). A crash anywhere in between leaves the flag set, and
//! `repair_index` (run at start and periodically) finishes the job. Search re-reads every hit from the store, so a stale
//! point can never surface a forgotten or expired memory.

mod forget;
pub mod fusion;
pub mod integrity;
mod maintenance;
mod model_calls;
pub mod requests;
mod responses;
pub mod review;
mod search;
pub mod triage_model;
pub mod update_model;
mod write;
mod write_batch;
mod write_locks;

use std::sync::Arc;

use crate::configuration::Settings;
use chrono::{DateTime, Utc};

use crate::domain::{Memory, MemoryId, ValidationError};
use crate::embed::{EmbedError, Embedder};
use crate::index::{IndexError, IndexPoint, VectorIndex};
use crate::metrics::Metrics;
use crate::screening::Screen;
use crate::store::{MemoryStore, StoreError, StoreLock};

pub use maintenance::{EMBEDDER_META_KEY, EMBEDDER_NOTE_META_KEY, ReindexProgress};
pub use requests::{Args, ForgetRequest, SearchRequest, WriteBatchRequest, WriteRequest};
pub use responses::{
    ForgetResult, SearchHit, SearchResult, WriteBatchResult, WriteResult, WriteStatus,
};
pub use search::SearchStages;
pub use write::probe_query;
pub use write::{Preview, Retired};
pub use write_batch::{BatchWrite, MAX_BATCH};

#[derive(Debug, thiserror::Error)]
pub enum ServiceError {
    #[error("invalid arguments: {0}")]
    Invalid(#[from] ValidationError),
    #[error(
        "the stored memories were embedded with `{stored}` but `{configured}` is configured; \
         searching would return wrong results. Run `hindsight reindex` to re-embed them with \
         `{configured}`, or configure `{stored}` again"
    )]
    EmbedderMismatch { stored: String, configured: String },
    #[error("refused by the write screen: rule `{rule}` ({kind}) matched; nothing was stored")]
    Screened { rule: String, kind: String },
    /// A `quarantine` rule matched: the write is for a reviewer (`operations` holds it).
    #[error("held for review by the write screen: rule `{rule}` ({kind}) matched")]
    Held { rule: String, kind: String },
    /// One write of a batch refused it (`write_batch`): nothing of the batch was stored.
    #[error("memories[{index}]: {error}")]
    InBatch {
        index: usize,
        error: Box<ServiceError>,
    },
    #[error(transparent)]
    Store(#[from] StoreError),
    #[error(transparent)]
    Index(#[from] IndexError),
    #[error(transparent)]
    Embed(#[from] EmbedError),
}

impl ServiceError {
    /// Errors the caller can fix by changing the request (vs. server-side failures).
    pub fn is_client_error(&self) -> bool {
        match self {
            Self::InBatch { error, .. } => error.is_client_error(),
            other => matches!(
                other,
                Self::Invalid(_) | Self::Screened { .. } | Self::Held { .. }
            ),
        }
    }
}

/// The rules' knobs, taken from `Settings`.
#[derive(Debug, Clone)]
pub struct Rules {
    pub min_importance: f64,
    pub dedup_threshold: f64,
    pub working_ttl_hours: f64,
    pub max_content_chars: usize,
    pub weight_similarity: f64,
    pub weight_recency: f64,
    pub weight_importance: f64,
    pub recency_lambda: f64,
    pub search_overfetch: usize,
    pub search_lexical_overfetch: usize,
    pub search_lexical_max_df: f64,
    pub search_arms: fusion::SearchArms,
    pub fusion: fusion::Fusion,
    /// `search_lexical_weight` as configured; unset, the embedder's own (`embed::calibration`),
    /// filled in when the service starts.
    pub lexical_weight: Option<f64>,
}

impl From<&Settings> for Rules {
    fn from(s: &Settings) -> Self {
        Self {
            min_importance: s.min_importance,
            dedup_threshold: s.dedup_threshold,
            working_ttl_hours: s.working_ttl_hours,
            max_content_chars: s.max_content_chars,
            weight_similarity: s.weight_similarity,
            weight_recency: s.weight_recency,
            weight_importance: s.weight_importance,
            recency_lambda: s.recency_lambda,
            search_overfetch: s.search_overfetch,
            search_lexical_overfetch: s.search_lexical_overfetch,
            search_lexical_max_df: s.search_lexical_max_df,
            search_arms: s.search_arms,
            lexical_weight: s.search_lexical_weight,
            fusion: match s.search_fusion {
                crate::configuration::FusionKind::Score => fusion::Fusion::Score {
                    lexical_weight: s
                        .search_lexical_weight
                        .unwrap_or(crate::embed::calibration("builtin-").lexical_weight),
                },
                crate::configuration::FusionKind::Rrf => fusion::Fusion::Rrf { k: s.search_rrf_k },
            },
        }
    }
}

impl Default for Rules {
    fn default() -> Self {
        Self::from(&Settings::default())
    }
}

/// Search queries whose vectors are kept (`MemoryService::query_vectors`): about 1.6 MB with a
/// 384-d model, 6 MB with a 1,536-d one.
const QUERY_CACHE: usize = 1024;

pub struct MemoryService {
    store: Arc<dyn MemoryStore>,
    index: Arc<dyn VectorIndex>,
    embedder: Arc<dyn Embedder>,
    rules: Rules,
    /// Serialise dedup-check-then-insert within this process, per (namespace, type).
    write_locks: write_locks::WriteLocks,
    /// Set when the data was embedded with another embedder: search and write refuse.
    mismatch: Option<String>,
    /// Rows applied to the index but not yet flushed by the engine (still `index_pending`).
    unflushed: std::sync::Mutex<Vec<(MemoryId, DateTime<Utc>)>>,
    /// Hard-forgotten ids deleted from the index but not yet flushed (their tombstones still
    /// `index_delete_pending`).
    unflushed_deletes: std::sync::Mutex<Vec<MemoryId>>,
    /// A bulk load's last batch of rows being applied to the index in the background
    /// (`feed_index`), while the load writes its next batch to the store.
    bulk_feed: tokio::sync::Mutex<Option<tokio::task::JoinHandle<()>>>,
    /// Search hits not yet written to access_count / last_accessed_at: a write per search
    /// tripled search p99, so accesses are batched and written by `flush`.
    accesses: std::sync::Mutex<std::collections::HashMap<MemoryId, (i64, DateTime<Utc>)>>,
    /// The vectors of recent search queries (`QUERY_CACHE` of them), by query text: an agent
    /// asks the same thing again across turns, and each embedding is a model's forward pass
    /// (local) or a paid request (remote). The embedder is fixed for the service's life, so
    /// the text alone is the key.
    query_vectors: quick_cache::sync::Cache<String, Arc<Vec<f32>>>,
    /// Database locks that live as long as the service (behind a mutex only to be `Sync`).
    held: std::sync::Mutex<Vec<StoreLock>>,
    /// What `/metrics` exposes (MCP calls here, job runs by the job runner).
    metrics: Arc<Metrics>,
    /// The write screen (`screening.toml`).
    screen: Arc<Screen>,
    /// Scores what the triage rules leave undecided (`triage_llm`).
    triage_model: Option<Arc<triage_model::TriageModel>>,
    /// Judges the look-alikes the revision rules leave undecided (`update_llm`).
    update_model: Option<Arc<update_model::UpdateModel>>,
}

impl MemoryService {
    /// Wire the parts together, record (or check) which embedder the data belongs to, and
    /// repair the index from the store.
    pub async fn start(
        store: Arc<dyn MemoryStore>,
        index: Arc<dyn VectorIndex>,
        embedder: Arc<dyn Embedder>,
        mut rules: Rules,
    ) -> Result<Self, ServiceError> {
        if let (fusion::Fusion::Score { .. }, None) = (rules.fusion, rules.lexical_weight) {
            rules.fusion = fusion::Fusion::Score {
                lexical_weight: crate::embed::calibration(embedder.id()).lexical_weight,
            };
        }
        let mismatch = match store.meta_get(EMBEDDER_META_KEY).await? {
            None => {
                store.meta_set(EMBEDDER_META_KEY, embedder.id()).await?;
                None
            }
            Some(stored) if stored == embedder.id() => None,
            Some(stored) => {
                tracing::warn!(stored = %stored, configured = %embedder.id(),
                    "embedder changed since the data was indexed; run `hindsight reindex`");
                Some(stored)
            }
        };
        let service = Self {
            store,
            index,
            embedder,
            rules,
            write_locks: write_locks::WriteLocks::new(),
            mismatch,
            unflushed: std::sync::Mutex::new(Vec::new()),
            unflushed_deletes: std::sync::Mutex::new(Vec::new()),
            bulk_feed: tokio::sync::Mutex::new(None),
            accesses: std::sync::Mutex::new(std::collections::HashMap::new()),
            query_vectors: quick_cache::sync::Cache::new(QUERY_CACHE),
            held: std::sync::Mutex::new(Vec::new()),
            metrics: Arc::new(Metrics::new()),
            screen: builtin_screen(),
            triage_model: None,
            update_model: None,
        };
        if service.mismatch.is_none() {
            service.repair_index().await?;
        }
        Ok(service)
    }

    /// Keep a database lock (the claim for an embedded index) for as long as the service lives.
    pub fn hold(&mut self, lock: Option<StoreLock>) {
        self.held
            .get_mut()
            .unwrap_or_else(|e| e.into_inner())
            .extend(lock);
    }

    pub fn store(&self) -> &Arc<dyn MemoryStore> {
        &self.store
    }

    pub fn index(&self) -> &Arc<dyn VectorIndex> {
        &self.index
    }

    pub fn embedder(&self) -> &Arc<dyn Embedder> {
        &self.embedder
    }

    pub fn metrics(&self) -> &Arc<Metrics> {
        &self.metrics
    }

    /// Screen writes with `screen` (the operator's `screening.toml`) instead of the built-in
    /// rules.
    pub fn with_screen(mut self, screen: Arc<Screen>) -> Self {
        self.screen = screen;
        self
    }

    /// Ask `model` for a write's score when the triage rules leave it at their default.
    pub fn with_triage_model(mut self, model: Arc<triage_model::TriageModel>) -> Self {
        self.triage_model = Some(model);
        self
    }

    /// Ask `model` about the look-alikes the revision rules leave undecided.
    pub fn with_update_model(mut self, model: Arc<update_model::UpdateModel>) -> Self {
        self.update_model = Some(model);
        self
    }

    pub fn screen(&self) -> &Arc<Screen> {
        &self.screen
    }

    /// Use the process's metrics (created at startup, shared with the runner and `/metrics`)
    /// instead of a registry of its own.
    pub fn with_metrics(mut self, metrics: Arc<Metrics>) -> Self {
        self.metrics = metrics;
        self
    }

    pub fn rules(&self) -> &Rules {
        &self.rules
    }

    pub(crate) fn ensure_embedder_matches(&self) -> Result<(), ServiceError> {
        match &self.mismatch {
            None => Ok(()),
            Some(stored) => Err(ServiceError::EmbedderMismatch {
                stored: stored.clone(),
                configured: self.embedder.id().to_owned(),
            }),
        }
    }

    async fn embed_one(&self, text: &str) -> Result<Vec<f32>, ServiceError> {
        let mut vectors = self.embedder.embed(&[text.to_owned()]).await?;
        vectors.pop().ok_or(ServiceError::Embed(EmbedError::Count {
            expected: 1,
            got: 0,
        }))
    }
}

/// The built-in rules, compiled once per process.
fn builtin_screen() -> Arc<Screen> {
    static BUILTIN: std::sync::LazyLock<Arc<Screen>> =
        std::sync::LazyLock::new(|| Arc::new(Screen::builtin()));
    BUILTIN.clone()
}

pub(crate) fn index_point(memory: &Memory) -> IndexPoint {
    IndexPoint {
        id: memory.id,
        vector: memory.embedding.clone(),
        namespace: memory.namespace.clone(),
        memory_type: memory.memory_type,
        status: memory.status,
        occurred_at: memory.occurred_at.timestamp(),
        terms: crate::lexical::terms(&memory.content),
    }
}
