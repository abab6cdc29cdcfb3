//! `hindsight-bench`: the benchmarks and evals, a binary of their own so the daemon does not
//! carry them. `hindsight bench …` and `hindsight eval …` run this binary (found beside the
//! daemon's) with the same arguments, so either spelling works:
//!
//! ```sh
//! cargo build --release --workspace
//! target/release/hindsight bench search --n 100000     # = target/release/hindsight-bench bench search …
//! ```

mod commands;

use clap::{Parser, Subcommand};
use hindsight::configuration::{GlobalFlags, Settings};

#[derive(Debug, Parser)]
#[command(
    name = "hindsight-bench",
    version,
    about = "hindsight's benchmarks and evals, printed as JSON"
)]
struct Cli {
    #[command(flatten)]
    global: GlobalFlags,
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
    let settings = Settings::load(
        cli.global.config.as_deref(),
        |k| std::env::var(k).ok(),
        cli.global.layer(),
    )?;
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
