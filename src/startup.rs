//! Assembling the daemon from `Settings`: open the store, pick the embedder, open the index,
//! start the service; then run it as an HTTP daemon (`serve`) or over stdio (`mcp`).

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
use crate::jobs::{ConfiguredJob, JobConfigError, JobEnv, Runner};
use crate::lock::{Acquired, DataDirLock, Endpoint, LockError, read_endpoint};
use crate::service::{MemoryService, Rules, ServiceError};
use crate::store::{Database, MemoryStore, PoolSize, PostgresStore, SqliteStore, StoreError};

/// How often index changes are flushed to disk (and their rows' pending flags cleared).
const FLUSH_INTERVAL: Duration = Duration::from_secs(1);
/// How long a stopping daemon waits for running jobs to finish their current batch (inside
/// Docker's default 10 s between SIGTERM and SIGKILL).
pub const JOB_STOP_GRACE: Duration = Duration::from_secs(8);
/// How often the daemon retries index writes that failed (rows left `index_pending`).
const REPAIR_INTERVAL: Duration = Duration::from_secs(30);

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
}

/// Meta key: why `auto` fell back to `builtin` for this data set (shown by `hindsight stats`).
pub const EMBEDDER_NOTE_META_KEY: &str = "embedder_note";
/// How long `auto` waits to connect to the hub before falling back.
const HUB_CONNECT_TIMEOUT: Duration = Duration::from_secs(10);

/// The local model's name and where its files are, if they are here.
fn local_model(settings: &Settings) -> (String, Option<std::path::PathBuf>) {
    let name = settings
        .embed_model
        .clone()
        .unwrap_or_else(|| DEFAULT_LOCAL_MODEL.to_owned());
    let dir = crate::embed::local::model_dir(settings.embed_model_dir.as_deref(), &name);
    (name, dir)
}

/// Load the local model named by the settings; when it is not here and `pull` is set, pull it
/// from the hub first (logging progress).
async fn local_embedder(settings: &Settings, pull: bool) -> Result<LocalEmbedder, StartupError> {
    let (name, dir) = local_model(settings);
    let dir = match dir {
        Some(dir) => dir,
        None if pull && !hub_offline() => pull_logged(&name).await?,
        None => {
            return Err(EmbedError::Model(format!(
                "{name} is not in the hub cache ({}); run `hindsight models pull {name}`, \
                 or set embed_model_dir to a directory holding its files",
                HubCache::from_env().root().display()
            ))
            .into());
        }
    };
    let started = std::time::Instant::now();
    let loaded = tokio::task::spawn_blocking(move || LocalEmbedder::load(&dir, &name))
        .await
        .map_err(|e| EmbedError::Model(e.to_string()))??;
    tracing::info!(embedder = %loaded.id(), ms = started.elapsed().as_millis() as u64, "local embedding model loaded");
    Ok(loaded)
}

/// `HF_HUB_OFFLINE` set (as the hub's libraries read it): never reach for the network.
pub fn hub_offline() -> bool {
    std::env::var("HF_HUB_OFFLINE").is_ok_and(|v| !v.is_empty() && v != "0" && v != "false")
}

/// Pull `model` into the hub cache, logging where it stands every 5 s.
async fn pull_logged(model: &str) -> Result<std::path::PathBuf, StartupError> {
    let hub = Hub::from_env(HUB_CONNECT_TIMEOUT)?;
    tracing::info!(model = %model, hub = %hub.endpoint(), "pulling the local embedding model");
    let mut last = std::time::Instant::now();
    let dir = hub
        .pull(&HubCache::from_env(), model, "main", |p| {
            if last.elapsed() >= Duration::from_secs(5) {
                last = std::time::Instant::now();
                tracing::info!(
                    file = p.file,
                    mb = p.done / 1_000_000,
                    of_mb = p.total.map(|t| t / 1_000_000),
                    "pulling the local embedding model"
                );
            }
        })
        .await?;
    tracing::info!(model = %model, dir = %dir.display(), "local embedding model pulled");
    Ok(dir)
}

/// The embedder for the data set in `store`: the configured one, or with `embedder = "auto"`
/// the one its vectors came from (a data set never changes embedder silently; `hindsight
/// reindex --embedder …` changes it). A new data set under `auto` gets the local model, pulled
/// if need be, and `builtin` when that fails, which is logged and noted for `hindsight stats`.
pub async fn data_set_embedder(
    settings: &Settings,
    store: &dyn MemoryStore,
) -> Result<Arc<dyn Embedder>, StartupError> {
    if settings.embedder != EmbedderKind::Auto {
        return embedder(settings).await;
    }
    let stored = store.meta_get(crate::service::EMBEDDER_META_KEY).await?;
    let Some(stored) = stored else {
        let (embedder, note) = new_data_set_embedder(settings).await;
        if let Some(note) = note {
            store.meta_set(EMBEDDER_NOTE_META_KEY, &note).await?;
        }
        return Ok(embedder);
    };
    let mut concrete = settings.clone();
    concrete.embedder = EmbedderKind::of_id(&stored).ok_or_else(|| {
        EmbedError::Model(format!(
            "the data set was embedded with {stored:?}, which this version does not know; \
             set `embedder` and run `hindsight reindex`"
        ))
    })?;
    match concrete.embedder {
        EmbedderKind::Local => {
            // "local:{model}/{dimension}"
            let model = stored
                .trim_start_matches("local:")
                .rsplit_once('/')
                .map(|(m, _)| m.to_owned());
            concrete.embed_model = model.or(concrete.embed_model);
            Ok(Arc::new(local_embedder(&concrete, true).await?))
        }
        EmbedderKind::Openai if concrete.embed_base_url.is_none() => {
            Err(EmbedError::Model(format!(
                "the data set was embedded with {stored}: set embed_base_url and embed_model \
                 (or embedder = \"builtin\" / \"local\" and run `hindsight reindex`)"
            ))
            .into())
        }
        _ => embedder(&concrete).await,
    }
}

/// `auto` for a new data set: the local model if it loads (pulled when absent), else builtin
/// and the reason.
async fn new_data_set_embedder(settings: &Settings) -> (Arc<dyn Embedder>, Option<String>) {
    match local_embedder(settings, true).await {
        Ok(local) => (Arc::new(local), None),
        Err(e) => {
            let (name, _) = local_model(settings);
            let note = format!(
                "embedder auto: the local model {name} is not available ({e}); this data set \
                 uses builtin (shared words only, no semantic matching). To upgrade: \
                 `hindsight models pull {name}`, then `hindsight reindex --embedder local`"
            );
            tracing::warn!("{note}");
            (Arc::new(BuiltinEmbedder::new()), Some(note))
        }
    }
}

/// The embedder named by the settings. For `openai` without `embed_dimension`, one probe call
/// learns the vector size; `local` pulls its model when it is not here. `auto` here (no data
/// set to ask, as in the evals and benches) means the local model when it is here, else builtin.
pub async fn embedder(settings: &Settings) -> Result<Arc<dyn Embedder>, StartupError> {
    match settings.embedder {
        EmbedderKind::Builtin => Ok(Arc::new(BuiltinEmbedder::new())),
        EmbedderKind::Local => Ok(Arc::new(local_embedder(settings, true).await?)),
        EmbedderKind::Auto => Ok(match local_embedder(settings, false).await {
            Ok(local) => Arc::new(local),
            Err(e) => {
                tracing::warn!(error = %e, "embedder auto: using builtin");
                Arc::new(BuiltinEmbedder::new())
            }
        }),
        EmbedderKind::Openai => {
            let mut config = OpenAiEmbedderConfig {
                base_url: settings
                    .embed_base_url
                    .as_ref()
                    .map(|u| u.expose().to_owned())
                    .unwrap_or_default(),
                model: settings.embed_model.clone().unwrap_or_default(),
                api_key: settings.embed_api_key.clone(),
                dimension: settings.embed_dimension.unwrap_or(0),
                timeout: Duration::from_secs(settings.embed_timeout_secs),
                batch_size: 64,
            };
            if config.dimension == 0 {
                let probe = crate::embed::probe_dimension(&config).await?;
                tracing::info!(
                    dimension = probe,
                    "probed the embedding endpoint's vector size"
                );
                config.dimension = probe;
            }
            Ok(Arc::new(OpenAiEmbedder::new(config)?))
        }
    }
}

/// The store `database_url` names: PostgreSQL, or the SQLite file (default under `data_dir`).
pub async fn open_store(settings: &Settings) -> Result<Arc<dyn MemoryStore>, StartupError> {
    Ok(open_database(settings).await?)
}

/// `open_store` with every view of the database (memories, job ledger, maintenance moves).
pub async fn open_database(settings: &Settings) -> Result<Arc<dyn Database>, StartupError> {
    std::fs::create_dir_all(&settings.data_dir)?;
    Ok(match settings.postgres_url() {
        Some(url) => Arc::new(
            PostgresStore::connect(
                url,
                PoolSize {
                    min: settings.db_pool_min,
                    max: settings.db_pool_max,
                },
            )
            .await?,
        ),
        None => Arc::new(SqliteStore::open(&settings.sqlite_path()).await?),
    })
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

/// `build_service`, also returning the database for the job runner.
pub async fn build(
    settings: &Settings,
) -> Result<(MemoryService, Arc<dyn Database>), StartupError> {
    let db = open_database(settings).await?;
    let store: Arc<dyn MemoryStore> = db.clone();
    let embedder = data_set_embedder(settings, store.as_ref()).await?;
    let index = open_index(settings, embedder.dimension()).await?;
    let claim = if index.is_shared() {
        None
    } else {
        Some(store.claim_for_local_index().await?)
    };
    let mut service = MemoryService::start(store, index, embedder, Rules::from(settings)).await?;
    service.hold(claim);
    Ok((service, db))
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
    let (Some(base_url), Some(model)) = (&settings.llm_base_url, &settings.llm_model) else {
        return Ok(JobEnv { llm: None });
    };
    let client = LlmClient::new(LlmConfig {
        base_url: base_url.expose().to_owned(),
        model: model.clone(),
        api_key: settings.llm_api_key.clone(),
        timeout: Duration::from_secs(settings.llm_timeout_secs),
        retries: 2,
        backoff: Duration::from_secs(1),
        max_tokens: settings.llm_max_tokens,
        structured_output: settings.llm_structured_output,
    })?;
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

/// Serve HTTP on `listener` until `shutdown` fires, with periodic index repair. With a job
/// runner, `/metrics` and the operator routes are served too.
pub async fn serve_http(
    service: Arc<MemoryService>,
    runner: Option<Arc<Runner>>,
    listener: TcpListener,
    auth_token: Option<crate::secret::Secret>,
    guard: crate::http::BrowserGuard,
    shutdown: CancellationToken,
) -> Result<(), StartupError> {
    let app = crate::http::router(service.clone(), runner, auth_token, guard, shutdown.clone());
    let maintenance = tokio::spawn(index_maintenance(service.clone(), shutdown.clone()));
    let result = axum::serve(listener, app)
        .with_graceful_shutdown(shutdown.clone().cancelled_owned())
        .await;
    shutdown.cancel();
    let _ = maintenance.await;
    Ok(result?)
}

/// Flush index changes every second and retry failed ones every 30 s, until shutdown; then a
/// final flush so a clean stop leaves nothing pending.
async fn index_maintenance(service: Arc<MemoryService>, shutdown: CancellationToken) {
    let mut flush = tokio::time::interval(FLUSH_INTERVAL);
    let mut repair = tokio::time::interval(REPAIR_INTERVAL);
    repair.tick().await; // start() just repaired
    loop {
        tokio::select! {
            _ = shutdown.cancelled() => break,
            _ = flush.tick() => {
                if let Err(e) = service.flush().await {
                    tracing::warn!(error = %e, "index flush failed; rows stay pending");
                }
            }
            _ = repair.tick() => {
                if let Err(e) = service.repair_index().await {
                    tracing::warn!(error = %e, "periodic index repair failed");
                }
            }
        }
    }
    if let Err(e) = service.flush().await {
        tracing::warn!(error = %e, "final index flush failed; rows stay pending for the next start");
    }
}

/// What the HTTP guard lets through: `allowed_hosts` and `allowed_origins`, plus the address
/// the daemon listens on when it is a specific one (the CLI reaches the daemon by that address,
/// and a DNS-rebinding page cannot send an IP literal as its Host: its origin would then be
/// the daemon itself).
pub fn browser_guard(
    settings: &Settings,
    local: std::net::SocketAddr,
) -> crate::http::BrowserGuard {
    let mut hosts = settings.allowed_hosts.clone();
    if !local.ip().is_unspecified() {
        hosts.push(local.ip().to_string());
    }
    crate::http::BrowserGuard::new(&hosts, &settings.allowed_origins)
}

/// A random bearer token for the private endpoint of a stdio owner.
pub fn random_token() -> crate::secret::Secret {
    use rand::Rng;
    let bytes: [u8; 24] = rand::rng().random();
    crate::secret::Secret::new(bytes.iter().map(|b| format!("{b:02x}")).collect::<String>())
}

/// The endpoint another process should use to reach this one.
pub fn endpoint(
    mode: &str,
    local: std::net::SocketAddr,
    token: Option<crate::secret::Secret>,
) -> Endpoint {
    let host = if local.ip().is_unspecified() {
        "127.0.0.1".to_owned()
    } else if local.is_ipv6() {
        format!("[{}]", local.ip())
    } else {
        local.ip().to_string()
    };
    Endpoint {
        pid: std::process::id(),
        url: format!("http://{host}:{}/mcp", local.port()),
        token,
        mode: mode.to_owned(),
    }
}

/// Resolves on SIGINT or SIGTERM.
pub async fn shutdown_signal() {
    let ctrl_c = async {
        let _ = tokio::signal::ctrl_c().await;
    };
    #[cfg(unix)]
    let term = async {
        match tokio::signal::unix::signal(tokio::signal::unix::SignalKind::terminate()) {
            Ok(mut s) => {
                s.recv().await;
            }
            Err(_) => std::future::pending::<()>().await,
        }
    };
    #[cfg(not(unix))]
    let term = std::future::pending::<()>();
    tokio::select! { _ = ctrl_c => {}, _ = term => {} }
}
