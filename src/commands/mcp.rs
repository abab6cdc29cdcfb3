//! `hindsight mcp`: MCP over stdio. If no one owns the data dir, own it and serve directly (and
//! publish a private loopback endpoint so further `hindsight mcp` processes can share it);
//! otherwise relay to the owner.

use std::time::Duration;

use hindsight::auth::Principal;
use hindsight::configuration::Settings;
use hindsight::lock::{Acquired, DataDirLock, read_endpoint};
use hindsight::mcp::{HindsightMcp, relay};
use hindsight::startup::{self, Application, Face};
use rmcp::ServiceExt;

pub async fn run(settings: Settings) -> anyhow::Result<()> {
    match DataDirLock::try_acquire(&settings.data_dir)? {
        Acquired::Owner(lock) => serve_directly(settings, lock).await,
        Acquired::Taken => {
            // The owner publishes its endpoint right after it takes the lock; give it a moment.
            for _ in 0..50 {
                if let Some(endpoint) = read_endpoint(&settings.data_dir) {
                    tracing::info!(url = %endpoint.url, owner_pid = endpoint.pid, "data dir owned by another process; relaying");
                    relay::run(&endpoint).await?;
                    return Ok(());
                }
                tokio::time::sleep(Duration::from_millis(100)).await;
            }
            anyhow::bail!(
                "data dir {} is locked by another process that publishes no endpoint",
                settings.data_dir.display()
            )
        }
    }
}

async fn serve_directly(settings: Settings, lock: DataDirLock) -> anyhow::Result<()> {
    let app = Application::build(&settings, lock, Face::Private).await?;
    tracing::info!(data_dir = %settings.data_dir.display(), "hindsight serving MCP over stdio");
    // The stdio client is this process's own user: the operator of the data dir it owns.
    let caller = Principal::operator("stdio");
    let running = HindsightMcp::new(app.operations(), Some(caller), app.rules(), app.metrics())
        .serve(rmcp::transport::stdio())
        .await?;
    let stop = async {
        tokio::select! {
            reason = running.waiting() => { tracing::info!(?reason, "stdio session ended"); }
            _ = startup::shutdown_signal() => {}
        }
    };
    app.run_until_stopped(stop).await?;
    Ok(())
}
