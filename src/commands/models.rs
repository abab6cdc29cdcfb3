//! `hindsight models pull`: fetch a local embedding model into the hub cache.

use std::io::IsTerminal;
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
    let tty = std::io::stderr().is_terminal();
    let started = Instant::now();
    let mut last: Option<(String, Instant)> = None;
    eprintln!(
        "pulling {model} ({revision}) from {} into {}",
        hub.endpoint(),
        cache.root().display()
    );
    // A terminal gets one line per file, rewritten in place; a log a line every 5 s and at
    // the end of each file.
    let dir = hub
        .pull(&cache, &model, &revision, |p| {
            let file_changed = last.as_ref().is_none_or(|(f, _)| f != p.file);
            let finished = p.total.is_some_and(|t| p.done >= t);
            let line = match p.total {
                Some(total) => format!("{} {:.1}/{:.1} MB", p.file, mb(p.done), mb(total)),
                None => format!("{} {:.1} MB", p.file, mb(p.done)),
            };
            if tty {
                if file_changed && last.is_some() {
                    eprintln!();
                }
                eprint!("\r{line}");
                last = Some((p.file.to_owned(), Instant::now()));
            } else if file_changed
                || finished
                || last
                    .as_ref()
                    .is_some_and(|(_, at)| at.elapsed().as_secs() >= 5)
            {
                eprintln!("{line}");
                last = Some((p.file.to_owned(), Instant::now()));
            }
        })
        .await;
    if tty && last.is_some() {
        eprintln!();
    }
    let dir = dir?;
    println!(
        "{}",
        json!({"model": model, "revision": revision, "path": dir, "seconds": started.elapsed().as_secs_f64()})
    );
    Ok(())
}

fn mb(bytes: u64) -> f64 {
    bytes as f64 / 1_000_000.0
}
