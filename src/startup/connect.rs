//! `connect`: a CLI command's `Operations`, this process's (assembled on demand) when the data
//! dir is free, or the owning daemon's. When the dir is held by a process that serves no API
//! (a CLI `jobs run` or `reindex`, a daemon still loading), reads still go to the database
//! (SQLite's WAL and PostgreSQL both allow readers beside the writer) and what needs the
//! service says who holds it.

use super::*;

/// A CLI command's way to the data: this process's operations when the data dir is free (held
/// until `close`), or the owning daemon's.
pub enum Connection {
    /// `lock` is `None` beside a process that holds the dir but serves no API.
    Local {
        ops: Arc<LocalOperations>,
        lock: Option<DataDirLock>,
    },
    Remote(Arc<RemoteOperations>),
}

impl Connection {
    /// Local: checked as the operator (whoever owns the data dir's files is); remote: the
    /// daemon checks the endpoint's token.
    pub fn ops(&self) -> Arc<dyn crate::operations::Operations> {
        match self {
            Connection::Local { ops, .. } => {
                Arc::new(ops.guarded(crate::auth::Principal::operator("cli")))
            }
            Connection::Remote(ops) => ops.clone(),
        }
    }

    pub fn is_local(&self) -> bool {
        matches!(self, Connection::Local { .. })
    }

    /// Flush what this process changed and release the data dir.
    pub async fn close(self) -> Result<(), OperationError> {
        if let Connection::Local { ops, lock } = self {
            ops.flush().await?;
            drop(lock);
        }
        Ok(())
    }
}

/// Run here or ask the owner, decided once for every CLI command.
pub async fn connect(settings: &Settings) -> Result<Connection, StartupError> {
    match DataDirLock::try_acquire(&settings.data_dir)? {
        Acquired::Owner(lock) => local(settings, Some(lock)).await,
        Acquired::Taken => match read_endpoint(&settings.data_dir) {
            Some(endpoint) => Ok(Connection::Remote(Arc::new(RemoteOperations::new(
                endpoint,
            )))),
            None => local(settings, None).await,
        },
    }
}

async fn local(settings: &Settings, lock: Option<DataDirLock>) -> Result<Connection, StartupError> {
    let db = open_database(settings).await?;
    let assemble = OnDemand {
        settings: settings.clone(),
        db: db.clone(),
        held_elsewhere: lock.is_none(),
    };
    Ok(Connection::Local {
        ops: Arc::new(LocalOperations::lazy(db, Box::new(assemble))),
        lock,
    })
}

/// What `connect` assembles when an operation needs it.
struct OnDemand {
    settings: Settings,
    db: Arc<dyn Database>,
    /// Another process holds the data dir (and the index): no service here.
    held_elsewhere: bool,
}

impl Assemble for OnDemand {
    fn job_settings(&self) -> Result<Vec<JobSettings>, OperationError> {
        let jobs = load_jobs(&self.settings).map_err(unavailable)?;
        Ok(jobs.into_iter().map(|j| j.settings).collect())
    }

    fn service(
        &self,
    ) -> futures::future::BoxFuture<'_, Result<Arc<MemoryService>, OperationError>> {
        Box::pin(async move {
            if self.held_elsewhere {
                return Err(OperationError::Unavailable(format!(
                    "data dir {} is held by another hindsight process that serves no API (a \
                     `jobs run` or `reindex` in progress, or a daemon still starting); this \
                     needs the memory service, which lives in that process: try again when it \
                     is done",
                    self.settings.data_dir.display()
                )));
            }
            let store: Arc<dyn MemoryStore> = self.db.clone();
            let service = service_on(&self.settings, store)
                .await
                .map_err(unavailable)?;
            Ok(Arc::new(service))
        })
    }

    fn runner(
        &self,
        service: Arc<MemoryService>,
    ) -> futures::future::BoxFuture<'_, Result<Arc<Runner>, OperationError>> {
        Box::pin(async move {
            let jobs = load_jobs(&self.settings).map_err(unavailable)?;
            let runner = job_runner(jobs, &service, self.db.clone());
            // As the daemon does at start: runs a killed process left `running` are marked.
            runner.interrupt_dead_runs(true).await;
            Ok(runner)
        })
    }
}

fn unavailable(e: StartupError) -> OperationError {
    OperationError::Unavailable(e.to_string())
}
