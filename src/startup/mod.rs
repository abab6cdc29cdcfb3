//! The composition root: everything is assembled from `Settings` here and nowhere else. The
//! store, the embedder, the index and the service; the jobs and their runner; `Application`,
//! the daemon (`serve`, and `mcp` when it owns the data dir) with its HTTP face; and
//! `connect`, which gives a CLI command the `Operations` of this process or of the daemon that
//! owns the data dir.

mod application;
pub mod backup;
mod connect;
mod embedder;

pub use application::{Application, Face, JOB_STOP_GRACE, serve_http, shutdown_signal};
pub use connect::{Connection, connect};
pub use embedder::{data_set_embedder, embedder, hub_offline};

use std::sync::Arc;
use std::time::Duration;

use tokio::net::TcpListener;
use tokio_util::sync::CancellationToken;

use crate::configuration::{DEFAULT_LOCAL_MODEL, EmbedderKind, Settings};
use crate::distill::drafter::{LlmDrafter, PromptLoadError, load_prompt};
use crate::distill::llm::{LlmClient, LlmConfig, LlmError};
use crate::embed::hub::{Hub, HubCache, PullError};
use crate::embed::{
    BuiltinEmbedder, EmbedError, Embedder, LocalEmbedder, OpenAiEmbedder, OpenAiEmbedderConfig,
};
use crate::index::{EdgeIndex, HnswParams, IndexError, QdrantIndex, QdrantSettings, VectorIndex};
use crate::jobs::engine::SchedulerError;
use crate::jobs::{ConfiguredJob, Engine, JobConfigError, JobEnv, JobSettings, Runner};
use crate::lock::{Acquired, DataDirLock, Endpoint, LockError, read_endpoint};
use crate::metrics::Metrics;
use crate::operations::{Assemble, LocalOperations, OperationError, RemoteOperations};
use crate::service::triage_model::TriageModel;
use crate::service::update_model::UpdateModel;
use crate::service::{MemoryService, Rules, ServiceError};
use crate::signing::Signer;
use crate::store::{Database, MemoryStore, PoolSize, PostgresStore, SqliteStore, StoreError};

#[derive(Debug, thiserror::Error)]
pub enum StartupError {
    #[error(transparent)]
    Store(#[from] StoreError),
    #[error(transparent)]
    Index(#[from] IndexError),
    #[error("embedder: {0}")]
    Embed(#[from] EmbedError),
    #[error(transparent)]
    Service(#[from] ServiceError),
    #[error(transparent)]
    Lock(#[from] LockError),
    #[error("cannot listen on {addr}: {source}")]
    Listen {
        addr: String,
        source: std::io::Error,
    },
    #[error(
        "data dir {dir} is in use by another hindsight process{owner}; stop it first, \
         or point this command at another --data-dir"
    )]
    DataDirInUse { dir: String, owner: String },
    #[error("{0}")]
    Io(#[from] std::io::Error),
    #[error(transparent)]
    Jobs(#[from] JobConfigError),
    #[error(transparent)]
    Scheduler(#[from] SchedulerError),
    #[error("llm: {0}")]
    Llm(#[from] LlmError),
    #[error(transparent)]
    Prompt(#[from] PromptLoadError),
    #[error("model pull: {0}")]
    Pull(#[from] PullError),
    #[error("{0}")]
    Serve(String),
    #[error("screening: {0}")]
    Screening(#[from] crate::screening::RuleError),
    #[error("signing: {0}")]
    Signing(#[from] crate::signing::SigningError),
    #[error("{0}")]
    Backup(String),
    #[error("data dir {0} is locked by a process that publishes no endpoint (an older hindsight?)")]
    NoEndpoint(String),
}

pub use crate::service::EMBEDDER_NOTE_META_KEY;
/// The store `database_url` names: PostgreSQL, or the SQLite file (default under `data_dir`).
pub async fn open_store(settings: &Settings) -> Result<Arc<dyn MemoryStore>, StartupError> {
    Ok(open_database(settings).await?)
}

/// `open_store` with every view of the database (memories, job ledger, maintenance moves).
pub async fn open_database(settings: &Settings) -> Result<Arc<dyn Database>, StartupError> {
    open_database_signed(settings, signer(settings)?).await
}

/// `open_database` with these keys (`hindsight resign --all` accepts foreign rows).
pub async fn open_database_signed(
    settings: &Settings,
    signer: Signer,
) -> Result<Arc<dyn Database>, StartupError> {
    std::fs::create_dir_all(&settings.data_dir)?;
    Ok(match settings.postgres_url() {
        Some(url) => Arc::new(
            PostgresStore::connect(
                url,
                PoolSize {
                    min: settings.db_pool_min,
                    max: settings.db_pool_max,
                },
                signer,
            )
            .await?,
        ),
        None => Arc::new(SqliteStore::open(&settings.sqlite_path(), signer).await?),
    })
}

/// The row-signing keys: `signing_key`, else the data dir's `signing.key`; and the previous
/// ones.
pub fn signer(settings: &Settings) -> Result<Signer, StartupError> {
    Ok(Signer::for_data_dir(
        &settings.data_dir,
        settings.signing_key.as_ref(),
        &settings.signing_previous_keys,
    )?)
}

/// The index `qdrant_url` names: a Qdrant server shared by replicas, or the embedded one
/// under `data_dir`.
pub async fn open_index(
    settings: &Settings,
    dimension: usize,
) -> Result<Arc<dyn VectorIndex>, StartupError> {
    let params = HnswParams {
        m: settings.hnsw_m,
        ef_construct: settings.hnsw_ef_construct,
        ef: settings.hnsw_ef,
        ..HnswParams::default()
    };
    Ok(match &settings.qdrant_url {
        Some(url) => Arc::new(
            QdrantIndex::connect(
                &QdrantSettings {
                    url: url.expose().to_owned(),
                    api_key: settings.qdrant_api_key.clone(),
                    collection: settings.qdrant_collection.clone(),
                    timeout: Duration::from_secs(settings.qdrant_timeout_secs),
                },
                dimension,
                params,
            )
            .await?,
        ),
        None => Arc::new(EdgeIndex::open(&settings.index_dir(), dimension, params).await?),
    })
}

/// Open store, embedder and index, and start the service (which repairs the index). With an
/// embedded index the process first claims the database: replicas need the shared index.
pub async fn build_service(settings: &Settings) -> Result<MemoryService, StartupError> {
    Ok(build(settings).await?.0)
}

/// `build_service`, also returning the database for the job runner. The service records into
/// a metrics registry of its own; `Application` hands it the process's (`with_metrics`).
pub async fn build(
    settings: &Settings,
) -> Result<(MemoryService, Arc<dyn Database>), StartupError> {
    let db = open_database(settings).await?;
    let service = service_on(settings, db.clone()).await?;
    Ok((service, db))
}

/// The service over `store`: its embedder, its index (claiming the database first when the
/// index is embedded), repaired from the store.
async fn service_on(
    settings: &Settings,
    store: Arc<dyn MemoryStore>,
) -> Result<MemoryService, StartupError> {
    let embedder = data_set_embedder(settings, store.as_ref()).await?;
    let index = open_index(settings, embedder.dimension()).await?;
    let claim = if index.is_shared() {
        None
    } else {
        Some(store.claim_for_local_index().await?)
    };
    let screen = crate::screening::Screen::load(&settings.screening_file)?;
    let mut service = MemoryService::start(store, index, embedder, Rules::from(settings))
        .await?
        .with_screen(Arc::new(screen));
    if settings.triage_llm
        && let Some(client) = llm_client(settings)?
    {
        tracing::info!(model = %client.model(), daily_calls = settings.triage_llm_daily_calls,
            "write triage asks a language model what its rules leave undecided");
        service = service.with_triage_model(Arc::new(TriageModel::new(
            Arc::new(client),
            settings.triage_llm_daily_calls,
        )));
    }
    if settings.update_llm
        && let Some(client) = llm_client(settings)?
    {
        tracing::info!(model = %client.model(), daily_calls = settings.update_llm_daily_calls,
            "the write path asks a language model about look-alikes its rules leave undecided");
        service = service.with_update_model(Arc::new(UpdateModel::new(
            Arc::new(client),
            settings.update_llm_daily_calls,
        )));
    }
    service.hold(claim);
    Ok(service)
}

/// The language model `llm_*` name, if any.
fn llm_client(settings: &Settings) -> Result<Option<LlmClient>, StartupError> {
    let (Some(base_url), Some(model)) = (&settings.llm_base_url, &settings.llm_model) else {
        return Ok(None);
    };
    Ok(Some(LlmClient::new(LlmConfig {
        base_url: base_url.expose().to_owned(),
        model: model.clone(),
        api_key: settings.llm_api_key.clone(),
        timeout: Duration::from_secs(settings.llm_timeout_secs),
        retries: 2,
        backoff: Duration::from_secs(1),
        max_tokens: settings.llm_max_tokens,
        structured_output: settings.llm_structured_output,
    })?))
}

/// The jobs of `jobs_dir`, loaded and checked (a bad file fails here, naming file and key).
pub fn load_jobs(settings: &Settings) -> Result<Vec<ConfiguredJob>, StartupError> {
    Ok(crate::jobs::load_jobs(
        &settings.jobs_dir,
        &job_env(settings)?,
    )?)
}

/// What the jobs share from the settings: the language model the
/// distill job drafts with when `llm_base_url` is set (with the prompt from `prompts_dir`, or
/// the built-in one).
pub fn job_env(settings: &Settings) -> Result<JobEnv, StartupError> {
    let Some(client) = llm_client(settings)? else {
        return Ok(JobEnv { llm: None });
    };
    let model = client.model().to_owned();
    let prompt = load_prompt(&settings.prompts_dir)?;
    tracing::info!(model = %model, prompt = %prompt.version, "distill drafts with a language model");
    Ok(JobEnv {
        llm: Some(Arc::new(LlmDrafter::new(
            client,
            prompt,
            settings.max_content_chars,
            settings.llm_max_concurrency,
            settings.llm_token_budget,
        ))),
    })
}

/// A runner for `jobs` over this process's service and database.
pub fn job_runner(
    jobs: Vec<ConfiguredJob>,
    service: &Arc<MemoryService>,
    db: Arc<dyn Database>,
) -> Arc<Runner> {
    // With an embedded index this process claimed the database: it is the only writer.
    let exclusive = !service.index().is_shared();
    Runner::new(
        jobs,
        service.clone(),
        db,
        exclusive,
        service.metrics().clone(),
    )
}

/// Own the data dir or explain who does.
pub fn acquire(settings: &Settings) -> Result<DataDirLock, StartupError> {
    match DataDirLock::try_acquire(&settings.data_dir)? {
        Acquired::Owner(lock) => Ok(lock),
        Acquired::Taken => Err(StartupError::DataDirInUse {
            dir: settings.data_dir.display().to_string(),
            owner: read_endpoint(&settings.data_dir)
                .map(|e| format!(" (pid {}, {} at {})", e.pid, e.mode, e.url))
                .unwrap_or_default(),
        }),
    }
}

pub async fn bind(addr: &str) -> Result<TcpListener, StartupError> {
    TcpListener::bind(addr)
        .await
        .map_err(|source| StartupError::Listen {
            addr: addr.to_owned(),
            source,
        })
}
