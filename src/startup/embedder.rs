//! Which embedder a data set uses, and loading it (the local model pulled when absent).

use super::*;

/// How long `auto` waits to connect to the hub before falling back.
const HUB_CONNECT_TIMEOUT: Duration = Duration::from_secs(10);

/// The local model's name and where its files are, if they are here.
fn local_model(settings: &Settings) -> (String, Option<std::path::PathBuf>) {
    let name = settings
        .embed_model
        .clone()
        .unwrap_or_else(|| DEFAULT_LOCAL_MODEL.to_owned());
    let dir = crate::embed::hub::model_dir(settings.embed_model_dir.as_deref(), &name);
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
