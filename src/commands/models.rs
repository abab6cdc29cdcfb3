//! `hindsight models pull`: fetch a local embedding model into the hub cache.

use std::time::{Duration, Instant};

use clap::Subcommand;
use hindsight::configuration::{DEFAULT_LOCAL_MODEL, Settings};
use hindsight::embed::hub::{Hub, HubCache};
use serde_json::json;

#[derive(Debug, Subcommand)]
pub enum ModelsCommand {
    /// Download a model (config.json, tokenizer.json, model.safetensors and its
    /// sentence-transformers files) from the hub (`HF_ENDPOINT`, default huggingface.co) into
    /// the hub cache (`HF_HUB_CACHE`, or `HF_HOME/hub`), each file checked against the hub's
    /// length and SHA-256. A failed pull installs nothing.
    Pull {
        /// Hub model id (default: `embed_model`, else sentence-transformers/all-MiniLM-L6-v2).
        model: Option<String>,
        /// A branch, tag or commit. The embedder reads `main`; for another revision, point
        /// `embed_model_dir` at the `path` this prints.
        #[arg(long, default_value = "main")]
        revision: String,
    },
}

pub async fn run(settings: Settings, command: ModelsCommand) -> anyhow::Result<()> {
    let ModelsCommand::Pull { model, revision } = command;
    let model = model
        .or(settings.embed_model)
        .unwrap_or_else(|| DEFAULT_LOCAL_MODEL.to_owned());
    anyhow::ensure!(
        !hindsight::startup::hub_offline(),
        "HF_HUB_OFFLINE is set: unset it to pull {model}"
    );
    let hub = Hub::from_env(Duration::from_secs(30))?;
    let cache = HubCache::from_env();
    let started = Instant::now();
    eprintln!(
        "pulling {model} ({revision}) from {} into {}",
        hub.endpoint(),
        cache.root().display()
    );
    // One bar per file, in bytes.
    let reporter = super::progress::Reporter::bytes();
    let dir = hub
        .pull(&cache, &model, &revision, |p| {
            reporter.tick(p.file, p.done, p.total)
        })
        .await;
    reporter.finish();
    let dir = dir?;
    println!(
        "{}",
        json!({"model": model, "revision": revision, "path": dir, "seconds": started.elapsed().as_secs_f64()})
    );
    Ok(())
}
