//! `hindsight serve`: own the data dir, serve MCP over HTTP and run the scheduled jobs until
//! SIGINT/SIGTERM.

use hindsight::configuration::Settings;
use hindsight::startup::{self, Application, Face};

pub async fn run(settings: Settings) -> anyhow::Result<()> {
    let lock = startup::acquire(&settings)?;
    let app = Application::build(&settings, lock, Face::Public).await?;
    app.run_until_stopped(startup::shutdown_signal()).await?;
    Ok(())
}
