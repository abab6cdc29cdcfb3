//! Subcommands. Each file is one group; `run` loads the configuration and dispatches.

mod admin;
mod audit;
mod candidates;
mod connection;
mod integrity;
mod jobs;
mod listing;
mod mcp;
mod memory;
mod models;
mod progress;
mod quarantine;
mod serve;
mod tokens;
mod transfer;

use std::path::PathBuf;

use clap::{Parser, Subcommand};
use hindsight::configuration::{GlobalFlags, Settings};

#[derive(Debug, Parser)]
#[command(
    name = "hindsight",
    version,
    about = "Long-term memory for AI agents, over MCP"
)]
pub struct Cli {
    #[command(flatten)]
    global: GlobalFlags,
    #[command(subcommand)]
    command: Command,
}

#[derive(Debug, Subcommand)]
enum Command {
    /// Run the daemon: MCP over Streamable HTTP at /mcp, GET /healthz.
    Serve {
        /// Listen address (env HINDSIGHT_LISTEN, default 127.0.0.1:8765).
        #[arg(long)]
        listen: Option<std::net::SocketAddr>,
    },
    /// Serve MCP over stdio (for Claude Desktop, Claude Code, Cursor). Relays to the running
    /// daemon when one owns the data dir.
    Mcp,
    /// Write, search, forget or show memories from the shell.
    #[command(subcommand)]
    Memory(memory::MemoryCommand),
    /// Counts of memories by namespace, type and status.
    Stats,
    /// Apply pending database migrations (also done at every start) and exit.
    Migrate,
    /// Re-embed every memory with the configured embedder (or `--embedder`) and rebuild the
    /// vector index.
    Reindex,
    /// Check every row's signature, hot and archived: prints what failed (exit 1 if any).
    Verify,
    /// Sign rows again with the current key: those a previous key signed (after a rotation:
    /// the old key in `signing_previous_keys`).
    Resign {
        /// Also the rows that fail their check: you accept them as they now stand.
        #[arg(long)]
        all: bool,
        /// Say how many rows would be signed; change nothing.
        #[arg(long)]
        dry_run: bool,
    },
    /// Local embedding models: `models pull MODEL_ID`.
    #[command(subcommand)]
    Models(models::ModelsCommand),
    /// Print the effective configuration (secrets masked).
    Config,
    /// Exit 0 if the daemon at `listen` answers GET /healthz (for container health checks,
    /// so the image needs no curl).
    Healthcheck,
    /// Scheduled maintenance jobs: list, run now (or --dry-run), history.
    #[command(subcommand)]
    Jobs(jobs::JobsCommand),
    /// Review what the distill job drafted: list, show, approve, reject.
    #[command(subcommand)]
    Candidates(candidates::CandidatesCommand),
    /// The audit trail: writes, forgets, reviews and token changes, by whom, oldest first.
    Audit {
        /// From when: an RFC 3339 time or a span back from now (`90m`, `24h`, `7d`).
        #[arg(long, default_value = "24h")]
        since: String,
        #[arg(long, default_value_t = 1000)]
        limit: i64,
        #[command(flatten)]
        format: listing::Format,
    },
    /// Writes the screen held for review (rules with action = "quarantine"): list, show,
    /// approve, reject.
    #[command(subcommand)]
    Quarantine(quarantine::QuarantineCommand),
    /// Tokens for agents, scoped to namespaces: create (the secret is shown once), list, revoke.
    #[command(subcommand)]
    Tokens(tokens::TokensCommand),
    /// The archive: restore archived memories, purge forgotten ones from exported objects.
    #[command(subcommand)]
    Archive(jobs::ArchiveCommand),
    /// Every memory with every column (provenance, merge and supersede history, access
    /// stats), as JSON Lines after a header line; streamed, progress on stderr.
    Export(transfer::ExportArgs),
    /// Memories from a `hindsight export` file, checked whole before anything is written.
    Import(transfer::ImportArgs),
    /// A consistent copy of the embedded store (and its signing key) in DIR, taken while the
    /// daemon runs; the vector index is rebuilt on restore. (PostgreSQL: `pg_dump`.)
    Backup { dir: PathBuf },
    /// Put a backup from DIR into an empty data dir and rebuild its index.
    Restore { dir: PathBuf },
    /// Quality evaluations on real data (LoCoMo), printed as JSON: runs `hindsight-bench`.
    #[command(disable_help_flag = true)]
    Eval {
        #[arg(trailing_var_arg = true, allow_hyphen_values = true)]
        args: Vec<String>,
    },
    /// Benchmarks, printed as JSON: runs `hindsight-bench`.
    #[command(disable_help_flag = true)]
    Bench {
        #[arg(trailing_var_arg = true, allow_hyphen_values = true)]
        args: Vec<String>,
    },
}

/// `hindsight bench|eval …`: the benches and evals are the `hindsight-bench` binary (a
/// workspace member, kept out of the daemon), run beside this one with the same arguments.
fn run_bench_binary() -> anyhow::Result<()> {
    let exe = std::env::current_exe()?;
    let bench = match std::env::var_os("HINDSIGHT_BENCH_BIN") {
        Some(path) => PathBuf::from(path),
        None => exe.with_file_name(format!("hindsight-bench{}", std::env::consts::EXE_SUFFIX)),
    };
    anyhow::ensure!(
        bench.exists(),
        "`hindsight bench` and `hindsight eval` are the hindsight-bench binary, and {} is \
         missing: build it with `cargo build --release --workspace` (or set HINDSIGHT_BENCH_BIN)",
        bench.display()
    );
    let status = std::process::Command::new(&bench)
        .args(std::env::args_os().skip(1))
        .env("HINDSIGHT_BIN", &exe)
        .status()
        .map_err(|e| anyhow::anyhow!("{}: {e}", bench.display()))?;
    match status.code() {
        Some(0) => Ok(()),
        Some(code) => std::process::exit(code),
        None => anyhow::bail!("{} was stopped by a signal", bench.display()),
    }
}

pub async fn run(cli: Cli) -> anyhow::Result<()> {
    let mut flags = cli.global.layer();
    if let Command::Serve {
        listen: Some(listen),
    } = &cli.command
    {
        flags.listen = Some(*listen);
    }
    let settings = Settings::load(
        cli.global.config.as_deref(),
        |k| std::env::var(k).ok(),
        flags,
    )?;
    hindsight::telemetry::init(&settings.log_format);
    match cli.command {
        Command::Serve { .. } => serve::run(settings).await,
        Command::Mcp => mcp::run(settings).await,
        Command::Memory(command) => memory::run(settings, command).await,
        Command::Stats => admin::stats(settings).await,
        Command::Migrate => admin::migrate(settings).await,
        Command::Reindex => admin::reindex(settings).await,
        Command::Verify => integrity::verify(settings).await,
        Command::Resign { all, dry_run } => integrity::resign(settings, all, dry_run).await,
        Command::Models(command) => models::run(settings, command).await,
        Command::Config => {
            print!("{}", settings.to_masked_toml());
            Ok(())
        }
        Command::Bench { .. } | Command::Eval { .. } => run_bench_binary(),
        Command::Jobs(command) => jobs::run(settings, command).await,
        Command::Archive(command) => jobs::archive(settings, command).await,
        Command::Candidates(command) => candidates::run(settings, command).await,
        Command::Tokens(command) => tokens::run(settings, command).await,
        Command::Quarantine(command) => quarantine::run(settings, command).await,
        Command::Audit {
            since,
            limit,
            format,
        } => audit::run(settings, since, limit, format).await,
        Command::Export(args) => transfer::export(settings, args).await,
        Command::Import(args) => transfer::import(settings, args).await,
        Command::Backup { dir } => admin::backup(settings, dir).await,
        Command::Restore { dir } => admin::restore(settings, dir).await,
        Command::Healthcheck => admin::healthcheck(settings).await,
    }
}
