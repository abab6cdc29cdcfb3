//! `hindsight mcp`: MCP over stdio. If no one owns the data dir, own it and serve directly (and
//! publish a private loopback endpoint so further `hindsight mcp` processes can share it);
//! otherwise relay to the owner.

use std::sync::Arc;
use std::time::Duration;

use hindsight::configuration::Settings;
use hindsight::lock::{Acquired, DataDirLock, read_endpoint};
use hindsight::mcp::{HindsightMcp, relay};
use hindsight::startup;
use rmcp::ServiceExt;
use tokio_util::sync::CancellationToken;

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
    let jobs = startup::load_jobs(&settings)?;
    let (service, db) = startup::build(&settings).await?;
    let service = Arc::new(service);
    // The owner of the data dir keeps it maintained, whether it serves HTTP or stdio.
    let runner = startup::job_runner(jobs, &service, db);
    let engine = hindsight::jobs::Engine::start(runner.clone()).await?;
    let listener = startup::bind("127.0.0.1:0").await?;
    let token = startup::random_token();
    lock.publish(&startup::endpoint(
        "mcp",
        listener.local_addr()?,
        Some(token.clone()),
    ))?;
    let shutdown = CancellationToken::new();
    let http = tokio::spawn(startup::serve_http(
        service.clone(),
        Some(runner.clone()),
        listener,
        Some(token),
        // Only loopback relays from this machine talk to a stdio owner's private endpoint.
        hindsight::http::BrowserGuard::new(&["127.0.0.1".to_owned()], &[]),
        shutdown.clone(),
    ));

    tracing::info!(data_dir = %settings.data_dir.display(), "hindsight serving MCP over stdio");
    let running = HindsightMcp::new(service.clone())
        .serve(rmcp::transport::stdio())
        .await?;
    tokio::select! {
        reason = running.waiting() => { tracing::info!(?reason, "stdio session ended"); }
        _ = startup::shutdown_signal() => { tracing::info!("shutting down"); }
    }
    runner.stop_now();
    shutdown.cancel();
    let endpoint = private_endpoint_outcome(http.await);
    if let Err(e) = &endpoint {
        tracing::error!(error = %e, "the private endpoint failed");
    }
    engine.shutdown(startup::JOB_STOP_GRACE).await;
    service.flush().await?;
    drop(lock);
    endpoint
}

/// How the private endpoint's task ended: a failure (other `hindsight mcp` processes could not
/// relay to this one, and its index maintenance stopped) is the command's failure too.
fn private_endpoint_outcome(
    joined: Result<Result<(), startup::StartupError>, tokio::task::JoinError>,
) -> anyhow::Result<()> {
    match joined {
        Ok(Ok(())) => Ok(()),
        Ok(Err(e)) => Err(anyhow::anyhow!(
            "the private endpoint for other `hindsight mcp` processes failed: {e}"
        )),
        Err(e) => Err(anyhow::anyhow!(
            "the private endpoint for other `hindsight mcp` processes stopped: {e}"
        )),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn a_failed_private_endpoint_is_reported() {
        assert!(private_endpoint_outcome(Ok(Ok(()))).is_ok());
        let failed = private_endpoint_outcome(Ok(Err(startup::StartupError::Io(
            std::io::Error::other("accept failed"),
        ))));
        let message = failed.unwrap_err().to_string();
        assert!(
            message.contains("private endpoint") && message.contains("accept failed"),
            "{message}"
        );
        let stopped = tokio::spawn(std::future::pending::<()>());
        stopped.abort();
        let message = private_endpoint_outcome(stopped.await.map(|()| Ok(())))
            .unwrap_err()
            .to_string();
        assert!(message.contains("stopped"), "{message}");
    }
}
