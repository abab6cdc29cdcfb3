//! Logging: `tracing` to stderr, always (stdout carries MCP JSON-RPC in `hindsight mcp`).
//! Filter with `RUST_LOG` (default `info`, with the embedded Qdrant engine's own chatter — WAL
//! open notices, feature-flag warnings meant for the Qdrant server binary — at `error`);
//! `log_format = "json"` for log shippers.
//! Memory content is never logged at info level.

use tracing_subscriber::EnvFilter;

pub fn init(format: &str) {
    let filter = EnvFilter::try_from_default_env().unwrap_or_else(|_| {
        EnvFilter::new("info,qdrant_edge=error,rmcp=warn,tokio_cron_scheduler=warn")
    });
    let builder = tracing_subscriber::fmt()
        .with_env_filter(filter)
        .with_writer(std::io::stderr)
        .with_target(false);
    // try_init: tests and embedders may have installed a subscriber already.
    let _ = if format == "json" {
        builder.json().try_init()
    } else {
        builder.try_init()
    };
}
