//! `hindsight bench search`: machine-readable benchmark results (one JSON object per size).

use clap::Subcommand;
use hindsight::bench::BenchBackend;
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
        /// Stores to run against, comma-separated: sqlite, postgres.
        #[arg(long, value_delimiter = ',', default_value = "sqlite")]
        backend: Vec<String>,
        /// PostgreSQL server for `--backend postgres` (a scratch database is created there and
        /// dropped afterwards).
        #[arg(long, default_value = "postgres://postgres@127.0.0.1:5432")]
        postgres_server: String,
    },
}

pub async fn run(_settings: Settings, command: BenchCommand) -> anyhow::Result<()> {
    match command {
        BenchCommand::Search {
            n,
            dimension,
            queries,
            top_k,
            backend,
            postgres_server,
        } => {
            let backends = backend
                .iter()
                .map(|name| match name.as_str() {
                    "sqlite" => Ok(BenchBackend::Sqlite),
                    "postgres" | "postgresql" => Ok(BenchBackend::Postgres {
                        server_url: postgres_server.trim_end_matches('/').to_owned(),
                    }),
                    other => anyhow::bail!("--backend: must be sqlite or postgres, got {other:?}"),
                })
                .collect::<anyhow::Result<Vec<_>>>()?;
            for size in n {
                for backend in &backends {
                    // Each run in a fresh temporary directory, removed afterwards.
                    let dir = tempfile::tempdir()?;
                    let report = hindsight::bench::search_bench(
                        dir.path(),
                        backend,
                        size,
                        dimension,
                        queries,
                        top_k,
                    )
                    .await
                    .map_err(|e| anyhow::anyhow!("{e}"))?;
                    println!("{}", serde_json::to_string(&report)?);
                }
            }
            Ok(())
        }
    }
}
