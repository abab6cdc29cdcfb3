//! What every data command shares: the connection (this process, or the owning daemon) and
//! how a result is printed.

use hindsight::configuration::Settings;
use hindsight::operations::{OperationError, Operations};
use hindsight::startup;

/// Run `work` on the operations of this process or of the daemon that owns the data dir, then
/// close the connection (flushing what this process changed) whatever the outcome.
pub async fn with_operations<T, F, Fut>(settings: &Settings, work: F) -> anyhow::Result<T>
where
    F: FnOnce(std::sync::Arc<dyn Operations>, bool) -> Fut,
    Fut: std::future::Future<Output = Result<T, OperationError>>,
{
    let connection = startup::connect(settings).await?;
    let local = connection.is_local();
    let result = work(connection.ops(), local).await;
    // The operation's own failure first: it says more than a flush that failed after it.
    let closed = connection.close().await;
    let value = result?;
    closed?;
    Ok(value)
}

/// The reviewer a command records when `--reviewer` is not given: `$USER`.
pub fn user() -> Option<String> {
    std::env::var("USER").ok().filter(|u| !u.is_empty())
}

pub fn print(value: &impl serde::Serialize) -> anyhow::Result<()> {
    println!("{}", serde_json::to_string_pretty(value)?);
    Ok(())
}
