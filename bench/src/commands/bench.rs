//! `hindsight bench search | jobs | embed`: machine-readable benchmark results (one JSON object per
//! size and backend).

use clap::Subcommand;
use hindsight::configuration::Settings;
use hindsight_bench::BenchBackend;

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
        /// Real text: LoCoMo's turns repeated to N (its questions as queries) instead of
        /// synthetic sentences, so the full-text arm works on words.
        #[arg(long)]
        locomo: Option<std::path::PathBuf>,
        /// With --locomo: every memory in one namespace (one user's large store) instead of a
        /// namespace per conversation and repetition.
        #[arg(long, requires = "locomo")]
        one_namespace: bool,
        /// The synthetic corpus's namespaces, each query asking one: 1, 2 or 4 (1: one
        /// user's store of N memories).
        #[arg(long, default_value_t = 4, conflicts_with = "locomo")]
        namespaces: usize,
        /// The search arms timed: hybrid (the default search), dense or lexical.
        #[arg(long, default_value = "hybrid", value_parser = hindsight::configuration::SearchArms::parse)]
        arms: hindsight::configuration::SearchArms,
        /// Writes in flight at once while loading, as agents writing together (1: one after
        /// another).
        #[arg(long, default_value_t = 1, value_parser = clap::value_parser!(u16).range(1..=256))]
        writers: u16,
        /// Writes per call while loading (`memory_write_batch`; 1: each write on its own).
        #[arg(long, default_value_t = 1, value_parser = clap::value_parser!(u16).range(1..=1000))]
        batch: u16,
    },
    /// Write the synthetic corpus `bench search` loads (the same `--n`, `--dimension`,
    /// `--queries`, `--writers` and `--batch`) as vectors into a directory, for another store
    /// to load the very same: `scripts/side-by-side.sh` runs chromadb on them.
    Vectors {
        #[arg(long, default_value_t = 100_000)]
        n: usize,
        #[arg(long, default_value_t = 384)]
        dimension: usize,
        #[arg(long, default_value_t = 2000)]
        queries: usize,
        #[arg(long, default_value_t = 1, value_parser = clap::value_parser!(u16).range(1..=256))]
        writers: u16,
        #[arg(long, default_value_t = 1, value_parser = clap::value_parser!(u16).range(1..=1000))]
        batch: u16,
        /// As `bench search --namespaces`.
        #[arg(long, default_value_t = 4)]
        namespaces: usize,
        /// The directory to write (created if missing).
        #[arg(long)]
        out: std::path::PathBuf,
    },
    /// The configured embedder alone (`--embedder local`): one query at a time, as a search
    /// embeds it, and bulk, as a reindex does, over LoCoMo's turns. `RAYON_NUM_THREADS=1`
    /// measures one core. Prints one JSON line.
    Embed {
        /// LoCoMo JSON, e.g. ../shared/data/locomo/locomo-dev.json
        #[arg(long)]
        locomo: std::path::PathBuf,
        /// Words per query (turns cut to this many).
        #[arg(long, default_value_t = 20)]
        words: usize,
        #[arg(long, default_value_t = 500)]
        queries: usize,
        /// Turns embedded in bulk (default: all of them).
        #[arg(long, default_value_t = usize::MAX, hide_default_value = true)]
        bulk: usize,
    },
    /// Bulk-load N rows, then time the expire and archive jobs over them. Prints JSON lines.
    Jobs {
        #[arg(long, value_delimiter = ',', default_value = "1000000")]
        n: Vec<usize>,
        #[arg(long, default_value_t = 384)]
        dimension: usize,
        #[arg(long, default_value_t = 1000)]
        batch_size: usize,
        /// The archive job's concurrent batch movers (its `workers` parameter).
        #[arg(long, default_value_t = 2)]
        workers: usize,
        /// The archive sink: `table`, or `object` (a temporary local directory).
        #[arg(long, default_value = "table")]
        sink: String,
        /// Stores to run against, comma-separated: sqlite, postgres.
        #[arg(long, value_delimiter = ',', default_value = "sqlite,postgres")]
        backend: Vec<String>,
        #[arg(long, default_value = "postgres://postgres@127.0.0.1:5432")]
        postgres_server: String,
    },
    /// Export, import and backup at scale: N memories with vectors written as an export file,
    /// then this binary's `import`, `export` and (SQLite) `backup` on it, each timed with its
    /// peak RSS; a daemon on the data (its memory, search latency); the index's recall@10
    /// against brute force. Prints one JSON line per size and backend.
    Import {
        #[arg(long, value_delimiter = ',', default_value = "100000")]
        n: Vec<usize>,
        /// Real text: LoCoMo's turns repeated to N (each repetition of a conversation its own
        /// namespace) with the builtin embedder's vectors, its questions as the daemon's
        /// searches (how often an evidence turn is in the top 10), instead of fixed vectors.
        #[arg(long)]
        locomo: Option<std::path::PathBuf>,
        /// With --locomo: each memory two turns of one conversation joined, one namespace per
        /// conversation (large namespaces of distinct real text) instead of one per repetition.
        #[arg(long, requires = "locomo")]
        large_namespaces: bool,
        #[arg(long, value_delimiter = ',', default_value = "sqlite")]
        backend: Vec<String>,
        #[arg(long, default_value = "postgres://postgres@127.0.0.1:5432")]
        postgres_server: String,
        /// Run the import in a memory cgroup of this many MiB (private memory and page cache
        /// together, as a container's limit counts them; needs root and a cgroup memory
        /// controller).
        #[arg(long)]
        memory_limit_mb: Option<u64>,
        /// The index's build beam width (`hnsw_ef_construct`, default 100): graph build time
        /// against recall.
        #[arg(long)]
        hnsw_ef_construct: Option<usize>,
    },
    /// What the operator console costs: a daemon (this binary) loaded with N memories from
    /// LoCoMo's turns and pending candidates; its RSS idle and after every console page was
    /// fetched; each page's time (at the client, over loopback). Prints one JSON line.
    Console {
        /// LoCoMo JSON, e.g. ../shared/data/locomo/locomo-dev.json (its turns, repeated to N).
        #[arg(long)]
        locomo: std::path::PathBuf,
        #[arg(long, default_value_t = 10_000)]
        n: usize,
        /// Fetches of each page.
        #[arg(long, default_value_t = 50)]
        fetches: usize,
    },
}

fn backends(names: &[String], postgres_server: &str) -> anyhow::Result<Vec<BenchBackend>> {
    names
        .iter()
        .map(|name| match name.as_str() {
            "sqlite" => Ok(BenchBackend::Sqlite),
            "postgres" | "postgresql" => Ok(BenchBackend::Postgres {
                server_url: postgres_server.trim_end_matches('/').to_owned(),
            }),
            other => anyhow::bail!("--backend: must be sqlite or postgres, got {other:?}"),
        })
        .collect()
}

/// The daemon these benches start as child processes: `HINDSIGHT_BIN`, else the `hindsight`
/// binary beside this one (cargo builds both into the same target directory).
fn daemon_binary() -> anyhow::Result<std::path::PathBuf> {
    if let Some(path) = std::env::var_os("HINDSIGHT_BIN") {
        return Ok(path.into());
    }
    let exe = std::env::current_exe()?;
    let beside = exe.with_file_name(format!("hindsight{}", std::env::consts::EXE_SUFFIX));
    anyhow::ensure!(
        beside.exists(),
        "this bench starts the daemon, and {} is missing: build it (`cargo build --release \
         --workspace`) or set HINDSIGHT_BIN",
        beside.display()
    );
    Ok(beside)
}

fn check_namespaces(namespaces: usize) -> anyhow::Result<()> {
    anyhow::ensure!(
        hindsight_bench::SYNTHETIC_NAMESPACES.contains(&namespaces),
        "--namespaces: must be one of {:?}, got {namespaces}",
        hindsight_bench::SYNTHETIC_NAMESPACES
    );
    Ok(())
}

pub async fn run(settings: Settings, command: BenchCommand) -> anyhow::Result<()> {
    // One progress reporter for the whole command (`progress.rs`): bars at a terminal.
    let reporter = super::progress::Reporter::new();
    match command {
        BenchCommand::Console { locomo, n, fetches } => {
            anyhow::ensure!(fetches >= 1, "--fetches: must be at least 1");
            let conversations =
                hindsight_bench::locomo::load(&locomo).map_err(|e| anyhow::anyhow!("{e}"))?;
            let exe = daemon_binary()?;
            let options = hindsight_bench::console::ConsoleBenchOptions {
                exe: &exe,
                n,
                fetches,
            };
            let report = hindsight_bench::console::console_bench(
                conversations,
                &options,
                &|phase, done, total| reporter.tick(phase, done, total),
            )
            .await
            .map_err(|e| anyhow::anyhow!("{e}"))?;
            reporter.finish();
            println!("{}", serde_json::to_string(&report)?);
            Ok(())
        }
        BenchCommand::Import {
            n,
            locomo,
            large_namespaces,
            backend,
            postgres_server,
            memory_limit_mb,
            hnsw_ef_construct,
        } => {
            use hindsight_bench::transfer::{ImportBench, ImportCorpus};
            let exe = daemon_binary()?;
            let corpus = match locomo {
                None => ImportCorpus::Fixed,
                Some(path) => {
                    let conversations =
                        hindsight_bench::locomo::load(&path).map_err(|e| anyhow::anyhow!("{e}"))?;
                    if large_namespaces {
                        ImportCorpus::locomo_pairs(conversations)
                    } else {
                        ImportCorpus::locomo(conversations)
                    }
                }
            };
            for size in n {
                for backend in &backends(&backend, &postgres_server)? {
                    let bench = ImportBench {
                        corpus: &corpus,
                        n: size,
                        memory_limit_mb,
                        hnsw_ef_construct,
                    };
                    let report = hindsight_bench::transfer::transfer_bench(
                        &exe,
                        &bench,
                        backend,
                        &|phase, done, total| reporter.tick(phase, done, total),
                    )
                    .await
                    .map_err(|e| anyhow::anyhow!("{e}"))?;
                    reporter.finish();
                    println!("{}", serde_json::to_string(&report)?);
                }
            }
            Ok(())
        }
        BenchCommand::Vectors {
            n,
            dimension,
            queries,
            writers,
            batch,
            namespaces,
            out,
        } => {
            anyhow::ensure!(dimension >= 1, "--dimension: must be at least 1");
            check_namespaces(namespaces)?;
            let in_flight = usize::from(writers) * usize::from(batch);
            hindsight_bench::write_synthetic_vectors(
                &out, n, dimension, queries, in_flight, namespaces,
            )
            .map_err(|e| anyhow::anyhow!("writing {}: {e}", out.display()))?;
            println!(
                "{}",
                serde_json::json!({"bench": "vectors", "n": n, "dimension": dimension,
                    "queries": queries, "out": out})
            );
            Ok(())
        }
        BenchCommand::Search {
            n,
            dimension,
            queries,
            top_k,
            backend,
            postgres_server,
            locomo,
            one_namespace,
            namespaces,
            arms,
            writers,
            batch,
        } => {
            let backends = backends(&backend, &postgres_server)?;
            let corpus = match locomo {
                None => {
                    check_namespaces(namespaces)?;
                    hindsight_bench::Corpus::Synthetic { namespaces }
                }
                Some(path) => {
                    let conversations =
                        hindsight_bench::locomo::load(&path).map_err(|e| anyhow::anyhow!("{e}"))?;
                    if one_namespace {
                        hindsight_bench::Corpus::LocomoOneNamespace(conversations)
                    } else {
                        hindsight_bench::Corpus::Locomo(conversations)
                    }
                }
            };
            // The configured search (fusion, weights), with the arms asked for.
            let rules = hindsight::service::Rules {
                search_arms: arms,
                ..hindsight::service::Rules::from(&settings)
            };
            for size in n {
                for backend in &backends {
                    // Each run in a fresh temporary directory, removed afterwards.
                    let dir = tempfile::tempdir()?;
                    let bench = hindsight_bench::SearchBench {
                        corpus: &corpus,
                        rules: rules.clone(),
                        n: size,
                        dimension,
                        queries,
                        top_k,
                        writers: usize::from(writers),
                        batch: usize::from(batch),
                        progress: &|phase, done, total| reporter.tick(phase, done, total),
                    };
                    let report = hindsight_bench::search_bench(dir.path(), backend, &bench)
                        .await
                        .map_err(|e| anyhow::anyhow!("{e}"))?;
                    reporter.finish();
                    println!("{}", serde_json::to_string(&report)?);
                }
            }
            Ok(())
        }
        BenchCommand::Embed {
            locomo,
            words,
            queries,
            bulk,
        } => {
            anyhow::ensure!(
                (1..=500).contains(&words),
                "--words: must be 1..=500, got {words}"
            );
            let conversations =
                hindsight_bench::locomo::load(&locomo).map_err(|e| anyhow::anyhow!("{e}"))?;
            let embedder = hindsight::startup::embedder(&settings).await?;
            let report = hindsight_bench::embed::embed_bench(
                &conversations,
                embedder,
                words,
                queries,
                bulk,
                &|phase, done, total| reporter.tick(phase, done, total),
            )
            .await
            .map_err(|e| anyhow::anyhow!("{e}"))?;
            reporter.finish();
            println!("{}", serde_json::to_string(&report)?);
            Ok(())
        }
        BenchCommand::Jobs {
            n,
            dimension,
            batch_size,
            workers,
            sink,
            backend,
            postgres_server,
        } => {
            anyhow::ensure!(
                sink == "table" || sink == "object",
                "--sink: must be table or object, got {sink:?}"
            );
            anyhow::ensure!(
                (1..=100_000).contains(&batch_size),
                "--batch-size: must be 1..=100000, got {batch_size}"
            );
            for size in n {
                for backend in backends(&backend, &postgres_server)? {
                    let dir = tempfile::tempdir()?;
                    let sink_url = if sink == "table" {
                        "table".to_owned()
                    } else {
                        format!("file://{}", dir.path().join("objects").display())
                    };
                    let options = hindsight_bench::jobs::JobsBenchOptions {
                        rows: size,
                        dimension,
                        batch_size,
                        workers,
                        sink: sink_url,
                    };
                    let report = hindsight_bench::jobs::jobs_bench(
                        dir.path(),
                        &backend,
                        &options,
                        &|phase, done, total| reporter.tick(phase, done, total),
                    )
                    .await
                    .map_err(|e| anyhow::anyhow!("{e}"))?;
                    reporter.finish();
                    println!("{}", serde_json::to_string(&report)?);
                }
            }
            Ok(())
        }
    }
}
