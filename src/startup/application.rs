//! The daemon: `Application` (what `serve` and an owning `mcp` run), its HTTP face and the
//! index's flush and repair loop, and the ordered shutdown.

use super::*;

/// How often index changes are flushed to disk (and their rows' pending flags cleared).
const FLUSH_INTERVAL: Duration = Duration::from_secs(1);
/// How long a stopping daemon waits for running jobs to finish their current batch (inside
/// Docker's default 10 s between SIGTERM and SIGKILL).
pub const JOB_STOP_GRACE: Duration = Duration::from_secs(8);
/// How often the daemon retries index writes that failed (rows left `index_pending`).
const REPAIR_INTERVAL: Duration = Duration::from_secs(30);

/// Serve HTTP on `listener` until `shutdown` fires, with the index's flush and repair loop.
pub async fn serve_http(
    state: crate::http::AppState,
    listener: TcpListener,
    auth_token: Option<crate::secret::Secret>,
    guard: crate::http::BrowserGuard,
    shutdown: CancellationToken,
) -> Result<(), StartupError> {
    let service = state
        .ops
        .service()
        .await
        .map_err(|e| StartupError::Serve(e.to_string()))?;
    let maintenance = tokio::spawn(index_maintenance(service.clone(), shutdown.clone()));
    let app = crate::http::router(state, auth_token, guard, shutdown.clone());
    let result = axum::serve(listener, app)
        .with_graceful_shutdown(shutdown.clone().cancelled_owned())
        .await;
    shutdown.cancel();
    let _ = maintenance.await;
    Ok(result?)
}

/// Flush index changes every second and retry failed ones every 30 s, until shutdown; then a
/// final flush so a clean stop leaves nothing pending.
async fn index_maintenance(service: Arc<MemoryService>, shutdown: CancellationToken) {
    let mut flush = tokio::time::interval(FLUSH_INTERVAL);
    let mut repair = tokio::time::interval(REPAIR_INTERVAL);
    repair.tick().await; // start() just repaired
    loop {
        tokio::select! {
            _ = shutdown.cancelled() => break,
            _ = flush.tick() => {
                if let Err(e) = service.flush().await {
                    tracing::warn!(error = %e, "index flush failed; rows stay pending");
                }
            }
            _ = repair.tick() => {
                if let Err(e) = service.repair_index().await {
                    tracing::warn!(error = %e, "periodic index repair failed");
                }
            }
        }
    }
    if let Err(e) = service.flush().await {
        tracing::warn!(error = %e, "final index flush failed; rows stay pending for the next start");
    }
}

/// What the HTTP guard lets through: `allowed_hosts` and `allowed_origins`, plus the address
/// the daemon listens on when it is a specific one (the CLI reaches the daemon by that address,
/// and a DNS-rebinding page cannot send an IP literal as its Host: its origin would then be
/// the daemon itself).
fn browser_guard(settings: &Settings, local: std::net::SocketAddr) -> crate::http::BrowserGuard {
    let mut hosts = settings.allowed_hosts.clone();
    if !local.ip().is_unspecified() {
        hosts.push(local.ip().to_string());
    }
    crate::http::BrowserGuard::new(&hosts, &settings.allowed_origins)
}

/// A random bearer token for the private endpoint of a stdio owner.
fn random_token() -> crate::secret::Secret {
    use rand::Rng;
    let bytes: [u8; 24] = rand::rng().random();
    crate::secret::Secret::new(bytes.iter().map(|b| format!("{b:02x}")).collect::<String>())
}

/// The endpoint another process should use to reach this one.
fn endpoint(
    mode: &str,
    local: std::net::SocketAddr,
    token: Option<crate::secret::Secret>,
) -> Endpoint {
    let host = if local.ip().is_unspecified() {
        "127.0.0.1".to_owned()
    } else if local.is_ipv6() {
        format!("[{}]", local.ip())
    } else {
        local.ip().to_string()
    };
    Endpoint {
        pid: std::process::id(),
        url: format!("http://{host}:{}/mcp", local.port()),
        token,
        mode: mode.to_owned(),
    }
}

/// Resolves on SIGINT or SIGTERM.
pub async fn shutdown_signal() {
    let ctrl_c = async {
        let _ = tokio::signal::ctrl_c().await;
    };
    #[cfg(unix)]
    let term = async {
        match tokio::signal::unix::signal(tokio::signal::unix::SignalKind::terminate()) {
            Ok(mut s) => {
                s.recv().await;
            }
            Err(_) => std::future::pending::<()>().await,
        }
    };
    #[cfg(not(unix))]
    let term = std::future::pending::<()>();
    tokio::select! { _ = ctrl_c => {}, _ = term => {} }
}

/// Whom the daemon's HTTP face serves.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Face {
    /// `hindsight serve`: the configured address, token and allowed hosts.
    Public,
    /// `hindsight mcp` owning the data dir: a private loopback port with a random token, for
    /// relaying `hindsight mcp` processes and the CLI on this machine.
    Private,
}

/// The daemon: the data dir held, the service and its jobs running, the HTTP face bound.
/// `serve` and `mcp` both build one; `run_until_stopped` runs it and takes it down in order.
pub struct Application {
    face: Face,
    lock: DataDirLock,
    ops: Arc<LocalOperations>,
    rules: Arc<Rules>,
    metrics: Arc<Metrics>,
    engine: Engine,
    listener: TcpListener,
    local: std::net::SocketAddr,
    token: Option<crate::secret::Secret>,
    guard: crate::http::BrowserGuard,
}

impl Application {
    /// Assemble the daemon on a data dir this process holds (`acquire`).
    pub async fn build(
        settings: &Settings,
        lock: DataDirLock,
        face: Face,
    ) -> Result<Self, StartupError> {
        let jobs = load_jobs(settings)?;
        // The port first: a taken one fails the start before the model loads or a job runs.
        let (listener, token, mode) = match face {
            Face::Public => (
                bind(&settings.listen.to_string()).await?,
                public_token(settings)?,
                "serve",
            ),
            Face::Private => (bind("127.0.0.1:0").await?, Some(random_token()), "mcp"),
        };
        let local = listener.local_addr()?;
        let metrics = Arc::new(Metrics::new());
        let (service, db) = build(settings).await?;
        let service = Arc::new(service.with_metrics(metrics.clone()));
        let rules = Arc::new(service.rules().clone());
        // The owner of the data dir keeps it maintained, whether it serves HTTP or stdio.
        let runner = job_runner(jobs, &service, db);
        let engine = Engine::start(runner.clone()).await?;
        lock.publish(&endpoint(mode, local, token.clone()))?;
        let guard = match face {
            Face::Public => browser_guard(settings, local),
            // Only loopback relays from this machine talk to a stdio owner's private endpoint.
            Face::Private => crate::http::BrowserGuard::new(&["127.0.0.1".to_owned()], &[]),
        };
        if face == Face::Public {
            tracing::info!(%local, data_dir = %settings.data_dir.display(), embedder = service.embedder().id(), "hindsight serving MCP at /mcp");
        }
        Ok(Self {
            face,
            lock,
            ops: Arc::new(LocalOperations::new(runner)),
            rules,
            metrics,
            engine,
            listener,
            local,
            token,
            guard,
        })
    }

    pub fn local_addr(&self) -> std::net::SocketAddr {
        self.local
    }

    pub fn operations(&self) -> Arc<LocalOperations> {
        self.ops.clone()
    }

    pub fn rules(&self) -> &Rules {
        &self.rules
    }

    pub fn metrics(&self) -> Arc<Metrics> {
        self.metrics.clone()
    }

    /// Serve until `stop` resolves (or the HTTP server fails); then stop the jobs (a run in
    /// progress, even one an operator started, ends after its batch, so the HTTP server's
    /// graceful shutdown is not held up by it), finish the HTTP server, wait for the jobs,
    /// flush the index and release the data dir.
    pub async fn run_until_stopped(
        self,
        stop: impl std::future::Future<Output = ()>,
    ) -> Result<(), StartupError> {
        let shutdown = CancellationToken::new();
        let state = crate::http::AppState {
            ops: self.ops.clone(),
            metrics: self.metrics.clone(),
            rules: self.rules.clone(),
        };
        let http = tokio::spawn(serve_http(
            state,
            self.listener,
            self.token,
            self.guard,
            shutdown.clone(),
        ));
        tokio::select! {
            _ = stop => {}
            // serve_http cancels it when it ends: a failed server ends the daemon.
            _ = shutdown.cancelled() => {}
        }
        tracing::info!("shutting down");
        let runner = self.engine.runner().clone();
        runner.stop_now();
        shutdown.cancel();
        let served = http_outcome(self.face, http.await);
        if let Err(e) = &served {
            tracing::error!(error = %e, "the HTTP endpoint failed");
        }
        self.engine.shutdown(JOB_STOP_GRACE).await;
        runner.service().flush().await?;
        drop(self.lock);
        served
    }
}

/// The operator's token on the public face: `auth_token`, else the data dir's operator token
/// (created on the first start); none with `auth = "none"`.
fn public_token(settings: &Settings) -> Result<Option<crate::secret::Secret>, StartupError> {
    if settings.auth == crate::configuration::AuthMode::None {
        tracing::warn!("auth = none: whoever reaches the port is the operator");
        return Ok(None);
    }
    if let Some(token) = &settings.auth_token {
        return Ok(Some(token.clone()));
    }
    let (token, created) = crate::auth::operator_token(&settings.data_dir)?;
    let path = crate::auth::operator_token_path(&settings.data_dir);
    tracing::info!(
        path = %path.display(),
        created,
        "HTTP wants a bearer token: the operator's is in this file (send `Authorization: \
         Bearer <its contents>`; the CLI and `hindsight mcp` on this machine read it \
         themselves); give agents scoped ones with `hindsight tokens create`"
    );
    Ok(Some(token))
}

/// How the HTTP server's task ended. For a stdio owner a failure matters as much: other
/// `hindsight mcp` processes could not relay to it, and its index maintenance stopped.
fn http_outcome(
    face: Face,
    joined: Result<Result<(), StartupError>, tokio::task::JoinError>,
) -> Result<(), StartupError> {
    let what = match face {
        Face::Public => "the HTTP server",
        Face::Private => "the private endpoint for other `hindsight mcp` processes",
    };
    match joined {
        Ok(Ok(())) => Ok(()),
        Ok(Err(e)) => Err(StartupError::Serve(format!("{what} failed: {e}"))),
        Err(e) => Err(StartupError::Serve(format!("{what} stopped: {e}"))),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn a_failed_http_endpoint_is_reported() {
        assert!(http_outcome(Face::Private, Ok(Ok(()))).is_ok());
        let failed = http_outcome(
            Face::Private,
            Ok(Err(StartupError::Io(std::io::Error::other(
                "accept failed",
            )))),
        );
        let message = failed.unwrap_err().to_string();
        assert!(
            message.contains("private endpoint") && message.contains("accept failed"),
            "{message}"
        );
        // A cancelled task stands for a stopped endpoint (a panic's backtrace took 12 s).
        let stopped = tokio::spawn(std::future::pending::<()>());
        stopped.abort();
        let message = http_outcome(Face::Public, stopped.await.map(|()| Ok(())))
            .unwrap_err()
            .to_string();
        assert!(
            message.contains("HTTP server") && message.contains("stopped"),
            "{message}"
        );
    }
}
