//! `hindsight serve`: own the data dir, serve MCP over HTTP and run the scheduled jobs until
//! SIGINT/SIGTERM.

use std::sync::Arc;

use hindsight::configuration::Settings;
use hindsight::startup;
use tokio_util::sync::CancellationToken;

pub async fn run(settings: Settings) -> anyhow::Result<()> {
    let jobs = startup::load_jobs(&settings)?;
    let lock = startup::acquire(&settings)?;
    let (service, db) = startup::build(&settings).await?;
    let service = Arc::new(service);
    let runner = startup::job_runner(jobs, &service, db);
    let engine = hindsight::jobs::Engine::start(runner.clone()).await?;
    let listener = startup::bind(&settings.listen.to_string()).await?;
    let local = listener.local_addr()?;
    lock.publish(&startup::endpoint(
        "serve",
        local,
        settings.auth_token.clone(),
    ))?;
    tracing::info!(%local, data_dir = %settings.data_dir.display(), embedder = service.embedder().id(), "hindsight serving MCP at /mcp");
    let shutdown = CancellationToken::new();
    let signal = shutdown.clone();
    let jobs = runner.clone();
    tokio::spawn(async move {
        startup::shutdown_signal().await;
        tracing::info!("shutting down");
        // Jobs first: a run in progress (even one an operator request started) stops after its
        // batch, so the HTTP server's graceful shutdown is not held up by it.
        jobs.stop_now();
        signal.cancel();
    });
    startup::serve_http(
        service.clone(),
        Some(runner),
        listener,
        settings.auth_token.clone(),
        startup::browser_guard(&settings, local),
        shutdown,
    )
    .await?;
    engine.shutdown(startup::JOB_STOP_GRACE).await;
    service.flush().await?;
    drop(lock);
    Ok(())
}
