//! `hindsight stats`, `migrate`, `reindex` and `healthcheck`.

use hindsight::configuration::Settings;
use hindsight::startup;
use hindsight::store::AuditEntry;
use serde_json::json;

use super::connection::{print, with_operations};

pub async fn stats(settings: Settings) -> anyhow::Result<()> {
    let stats = with_operations(&settings, |ops, _| async move { ops.stats().await }).await?;
    print(&stats)
}

/// Opening a store applies its pending migrations; report which database is now current.
pub async fn migrate(settings: Settings) -> anyhow::Result<()> {
    let db = startup::open_database(&settings).await?;
    let database = match settings.postgres_url() {
        Some(_) => "postgresql",
        None => "sqlite",
    };
    db.record_audit(&AuditEntry::operator_command("migrate", "ok").with_detail(database))
        .await?;
    println!("{}", json!({"migrated": true, "database": database}));
    Ok(())
}

pub async fn reindex(settings: Settings) -> anyhow::Result<()> {
    let lock = startup::acquire(&settings)?;
    let mut service = startup::build_service(&settings).await?;
    let started = std::time::Instant::now();
    let reporter = super::progress::Reporter::new();
    let done = service
        .reindex(|p| reporter.tick(p.phase, p.done as u64, Some(p.total as u64)))
        .await?;
    reporter.finish();
    service
        .store()
        .meta_set(startup::EMBEDDER_NOTE_META_KEY, "")
        .await?;
    startup::open_database(&settings)
        .await?
        .record_audit(
            &AuditEntry::operator_command("reindex", "ok")
                .with_detail(format!("{done} rows with {}", service.embedder().id())),
        )
        .await?;
    drop(lock);
    println!(
        "{}",
        json!({"reindexed": done, "embedder": service.embedder().id(), "seconds": started.elapsed().as_secs_f64()})
    );
    Ok(())
}

/// GET /healthz on the configured listen address (a wildcard address is asked on loopback).
pub async fn healthcheck(settings: Settings) -> anyhow::Result<()> {
    let mut addr = settings.listen;
    if addr.ip().is_unspecified() {
        addr.set_ip(match addr {
            std::net::SocketAddr::V4(_) => std::net::Ipv4Addr::LOCALHOST.into(),
            std::net::SocketAddr::V6(_) => std::net::Ipv6Addr::LOCALHOST.into(),
        });
    }
    let url = format!("http://{addr}/healthz");
    let response = reqwest::Client::builder()
        .timeout(std::time::Duration::from_secs(3))
        .build()?
        .get(&url)
        .send()
        .await
        .map_err(|e| anyhow::anyhow!("{url}: {e}"))?;
    anyhow::ensure!(
        response.status().is_success(),
        "{url}: HTTP {}",
        response.status()
    );
    println!("ok");
    Ok(())
}

/// `hindsight backup DIR`: a consistent copy of the embedded store while it may be in use.
pub async fn backup(settings: Settings, dir: std::path::PathBuf) -> anyhow::Result<()> {
    let manifest = startup::backup::backup(&settings, &dir).await?;
    super::connection::print(&manifest)
}

/// `hindsight restore DIR`: a backup into an empty data dir, the index rebuilt.
pub async fn restore(settings: Settings, dir: std::path::PathBuf) -> anyhow::Result<()> {
    let restored = startup::backup::restore(&settings, &dir).await?;
    super::connection::print(&restored)
}
