//! `hindsight bench search`: machine-readable benchmark results (one JSON object per size).

use clap::Subcommand;
use hindsight::configuration::Settings;

#[derive(Debug, Subcommand)]
pub enum BenchCommand {
    /// Load N memories through the write path, then time searches. Prints JSON lines.
    Search {
        /// Sizes to run, comma-separated.
        #[arg(long, value_delimiter = ',', default_value = "10000,100000")]
        n: Vec<usize>,
        #[arg(long, default_value_t = 384)]
        dimension: usize,
        #[arg(long, default_value_t = 2000)]
        queries: usize,
        #[arg(long, default_value_t = 10)]
        top_k: usize,
    },
}

pub async fn run(_settings: Settings, command: BenchCommand) -> anyhow::Result<()> {
    match command {
        BenchCommand::Search {
            n,
            dimension,
            queries,
            top_k,
        } => {
            for size in n {
                // Each size in a fresh temporary directory, removed afterwards.
                let dir = tempfile::tempdir()?;
                let report =
                    hindsight::bench::search_bench(dir.path(), size, dimension, queries, top_k)
                        .await
                        .map_err(|e| anyhow::anyhow!("{e}"))?;
                println!("{}", serde_json::to_string(&report)?);
            }
            Ok(())
        }
    }
}
