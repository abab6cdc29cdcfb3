//! `hindsight-bench`: the benchmarks and evals, a binary of their own so the daemon does not
//! carry them. `hindsight bench …` and `hindsight eval …` run this binary (found beside the
//! daemon's) with the same arguments, so either spelling works:
//!
//! ```sh
//! cargo build --release --workspace
//! target/release/hindsight bench search --n 100000     # = target/release/hindsight-bench bench search …
//! ```

mod commands;

use std::path::PathBuf;

use clap::{Parser, Subcommand};
use hindsight::configuration::{Layer, Settings};

#[derive(Debug, Parser)]
#[command(
    name = "hindsight-bench",
    version,
    about = "hindsight's benchmarks and evals, printed as JSON"
)]
struct Cli {
    /// Config file (default: ./hindsight.toml if present; env HINDSIGHT_CONFIG).
    #[arg(long, global = true)]
    config: Option<PathBuf>,
    /// Data directory (env HINDSIGHT_DATA_DIR, default ./data).
    #[arg(long, global = true)]
    data_dir: Option<PathBuf>,
    /// Database URL (env HINDSIGHT_DATABASE_URL; default: SQLite in the data dir).
    #[arg(long, global = true)]
    database_url: Option<String>,
    /// Embedder (env HINDSIGHT_EMBEDDER, default auto).
    #[arg(long, global = true, value_enum)]
    embedder: Option<hindsight::configuration::EmbedderKind>,
    #[command(subcommand)]
    command: Command,
}

#[derive(Debug, Subcommand)]
enum Command {
    /// Quality evaluations on real data (LoCoMo), printed as JSON.
    #[command(subcommand)]
    Eval(commands::eval::EvalCommand),
    /// Benchmarks, printed as JSON.
    #[command(subcommand)]
    Bench(commands::bench::BenchCommand),
}

async fn run(cli: Cli) -> anyhow::Result<()> {
    let flags = Layer {
        data_dir: cli.data_dir,
        database_url: cli.database_url.map(|url| Some(url.as_str().into())),
        embedder: cli.embedder,
        ..Layer::default()
    };
    let settings = Settings::load(cli.config.as_deref(), |k| std::env::var(k).ok(), flags)?;
    hindsight::telemetry::init(&settings.log_format);
    match cli.command {
        Command::Bench(command) => commands::bench::run(settings, command).await,
        Command::Eval(command) => commands::eval::run(settings, command).await,
    }
}

#[tokio::main]
async fn main() -> std::process::ExitCode {
    match run(Cli::parse()).await {
        Ok(()) => std::process::ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("error: {e:#}");
            std::process::ExitCode::FAILURE
        }
    }
}
