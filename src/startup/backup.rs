//! `hindsight backup DIR` and `hindsight restore DIR` for the embedded store. A backup is a
//! consistent copy of the SQLite file taken while the daemon runs (`VACUUM INTO`: one read
//! transaction, so writers carry on in WAL mode and the copy is the database as of one
//! instant), the data dir's signing key (without it the restored rows' signatures could not
//! be checked), and a manifest. The vector index is not copied: it is derived, and `restore`
//! rebuilds it from the rows' stored vectors (no re-embedding). PostgreSQL has its own tools:
//! `pg_dump`, or `hindsight export`.

use std::path::{Path, PathBuf};
use std::time::Instant;

use chrono::{DateTime, Utc};
use serde::{Deserialize, Serialize};
use sqlx::ConnectOptions;
use sqlx::sqlite::SqliteConnectOptions;

use super::StartupError;
use crate::configuration::Settings;
use crate::signing::signing_key_path;
use crate::store::SqliteStore;
use crate::store::{AuditEntry, AuditStore};

/// The backup's manifest, `backup.json`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Manifest {
    pub hindsight_backup: u32,
    pub created_at: DateTime<Utc>,
    /// The data dir it was taken from.
    pub source: PathBuf,
    pub database: String,
    /// The signing key file, when the key was the data dir's (a `signing_key` setting is the
    /// operator's to keep: it is not copied).
    pub signing_key: Option<String>,
    /// Rows in `memories` and in `memories_archive` at the backup's instant.
    pub memories: i64,
    pub archived: i64,
    pub bytes: u64,
    pub seconds: f64,
    pub note: String,
}

const MANIFEST: &str = "backup.json";
const DATABASE: &str = "hindsight.db";
const KEY: &str = "signing.key";

fn refuse_postgres(settings: &Settings, what: &str) -> Result<(), StartupError> {
    if settings.postgres_url().is_some() {
        return Err(StartupError::Backup(format!(
            "`hindsight {what}` copies the embedded SQLite store; this data set is in \
             PostgreSQL: back it up with `pg_dump --format=custom DATABASE > hindsight.dump` \
             (restore with `pg_restore`), or take a portable copy with `hindsight export \
             --include-archive --with-vectors -o memories.jsonl.gz`"
        )));
    }
    Ok(())
}

/// `dir` absent or empty: nothing of another copy is mixed in or overwritten.
fn empty_dir(dir: &Path, role: &str) -> Result<(), StartupError> {
    if dir.exists() && std::fs::read_dir(dir)?.next().is_some() {
        return Err(StartupError::Backup(format!(
            "{role} {} is not empty; give an empty or new directory",
            dir.display()
        )));
    }
    std::fs::create_dir_all(dir)?;
    Ok(())
}

/// A consistent copy of the store (and its key) in `dir`, taken while it may be in use.
pub async fn backup(settings: &Settings, dir: &Path) -> Result<Manifest, StartupError> {
    refuse_postgres(settings, "backup")?;
    let started = Instant::now();
    let source = settings.sqlite_path();
    if !source.exists() {
        return Err(StartupError::Backup(format!(
            "no store at {}: nothing to back up",
            source.display()
        )));
    }
    empty_dir(dir, "backup directory")?;
    let target = dir.join(DATABASE);
    // Read-only: this process never writes to a store another one owns.
    let mut conn = SqliteConnectOptions::new()
        .filename(&source)
        .read_only(true)
        .busy_timeout(std::time::Duration::from_secs(30))
        .connect()
        .await
        .map_err(crate::store::StoreError::from)?;
    sqlx::query("VACUUM INTO ?1")
        .bind(target.to_string_lossy().into_owned())
        .execute(&mut conn)
        .await
        .map_err(crate::store::StoreError::from)?;
    sqlx::Connection::close(conn).await.ok();
    let (memories, archived) = check_copy(&target).await?;
    // The source is never written (another process may own it): the backup is recorded in
    // the copy's own audit trail, where a restore of it adds its entry next.
    let copy = SqliteStore::open(&target, super::signer(settings)?).await?;
    copy.record_audit(
        &AuditEntry::operator_command("backup", "ok").with_detail(format!(
            "{memories} rows, {archived} archived, from {}",
            settings.data_dir.display()
        )),
    )
    .await?;
    copy.close().await;
    let key = signing_key_path(&settings.data_dir);
    let signing_key = if settings.signing_key.is_none() && key.exists() {
        copy_private(&key, &dir.join(KEY))?;
        Some(KEY.to_owned())
    } else {
        None
    };
    let manifest = Manifest {
        hindsight_backup: 1,
        created_at: Utc::now(),
        source: settings.data_dir.clone(),
        database: DATABASE.to_owned(),
        signing_key,
        memories,
        archived,
        bytes: std::fs::metadata(&target)?.len(),
        seconds: started.elapsed().as_secs_f64(),
        note: "the vector index is not in the backup: `hindsight restore` rebuilds it from the \
               rows' stored vectors"
            .to_owned(),
    };
    let text =
        serde_json::to_string_pretty(&manifest).map_err(|e| StartupError::Backup(e.to_string()))?;
    std::fs::write(dir.join(MANIFEST), text)?;
    Ok(manifest)
}

/// The copy passes SQLite's integrity check; its row counts.
async fn check_copy(path: &Path) -> Result<(i64, i64), StartupError> {
    let mut conn = SqliteConnectOptions::new()
        .filename(path)
        .read_only(true)
        .connect()
        .await
        .map_err(crate::store::StoreError::from)?;
    let integrity: String = sqlx::query_scalar("PRAGMA integrity_check")
        .fetch_one(&mut conn)
        .await
        .map_err(crate::store::StoreError::from)?;
    if integrity != "ok" {
        return Err(StartupError::Backup(format!(
            "the copy failed SQLite's integrity check: {integrity}"
        )));
    }
    let memories: i64 = sqlx::query_scalar("SELECT COUNT(*) FROM memories")
        .fetch_one(&mut conn)
        .await
        .map_err(crate::store::StoreError::from)?;
    let archived: i64 = sqlx::query_scalar("SELECT COUNT(*) FROM memories_archive")
        .fetch_one(&mut conn)
        .await
        .map_err(crate::store::StoreError::from)?;
    sqlx::Connection::close(conn).await.ok();
    Ok((memories, archived))
}

fn copy_private(from: &Path, to: &Path) -> Result<(), StartupError> {
    std::fs::copy(from, to)?;
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        std::fs::set_permissions(to, std::fs::Permissions::from_mode(0o600))?;
    }
    Ok(())
}

/// What `restore` put back.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Restored {
    pub data_dir: PathBuf,
    pub memories: i64,
    pub archived: i64,
    /// Points in the rebuilt index.
    pub indexed: usize,
    pub seconds: f64,
}

/// The backup in `dir` into this (empty) data dir, the index rebuilt from the rows.
pub async fn restore(settings: &Settings, dir: &Path) -> Result<Restored, StartupError> {
    refuse_postgres(settings, "restore")?;
    let started = Instant::now();
    let text = std::fs::read_to_string(dir.join(MANIFEST)).map_err(|e| {
        StartupError::Backup(format!(
            "{} holds no backup ({MANIFEST}: {e})",
            dir.display()
        ))
    })?;
    let manifest: Manifest = serde_json::from_str(&text)
        .map_err(|e| StartupError::Backup(format!("{MANIFEST}: {e}")))?;
    empty_dir(&settings.data_dir, "data dir")?;
    let lock = super::acquire(settings)?;
    let target = settings.sqlite_path();
    if let Some(parent) = target.parent() {
        std::fs::create_dir_all(parent)?;
    }
    std::fs::copy(dir.join(&manifest.database), &target)?;
    if let Some(key) = &manifest.signing_key {
        copy_private(&dir.join(key), &signing_key_path(&settings.data_dir))?;
    }
    let (memories, archived) = check_copy(&target).await?;
    // Opening the service rebuilds the missing index from the stored vectors.
    let service = super::build_service(settings).await?;
    let indexed = service.index().count().await?;
    service.flush().await?;
    drop(service);
    super::open_database(settings)
        .await?
        .record_audit(
            &AuditEntry::operator_command("restore", "ok").with_detail(format!(
                "{memories} rows, {archived} archived, {indexed} indexed, from {}",
                dir.display()
            )),
        )
        .await?;
    drop(lock);
    Ok(Restored {
        data_dir: settings.data_dir.clone(),
        memories,
        archived,
        indexed,
        seconds: started.elapsed().as_secs_f64(),
    })
}
