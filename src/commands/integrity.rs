//! `hindsight verify` and `hindsight resign`: the row signatures, store-wide. Both read the
//! database directly (like `migrate`: no index, no embedder), so they run beside a daemon.

use hindsight::configuration::Settings;
use hindsight::startup;
use hindsight::store::{RowTable, resign_all, verify_all};

/// Rows done per table, on stderr (`progress.rs`).
fn progress(reporter: &super::progress::Reporter, verb: &'static str) -> impl FnMut(RowTable, u64) {
    move |table, rows| reporter.tick(&format!("{verb} {}", table.as_str()), rows, None)
}

/// Check every row's signature (hot and archived); print the report; exit 1 when any failed.
pub async fn verify(settings: Settings) -> anyhow::Result<()> {
    let db = startup::open_database(&settings).await?;
    let reporter = super::progress::Reporter::new();
    let report = verify_all(db.as_ref(), progress(&reporter, "verified")).await?;
    reporter.finish();
    println!("{}", serde_json::to_string_pretty(&report)?);
    if !report.failed.is_empty() {
        anyhow::bail!(
            "{} rows failed their signature check (listed above; not served, and alerted by the \
             capacity job until they are good, forgotten, or accepted with `hindsight resign --all`)",
            report.failed.len()
        );
    }
    Ok(())
}

/// Sign with the current key what a previous key signed (after a rotation), and with `all`
/// the rows that fail too.
pub async fn resign(settings: Settings, all: bool, dry_run: bool) -> anyhow::Result<()> {
    // With --all the rows may all be signed by a key that is gone: open the store anyway.
    let signer = startup::signer(&settings)?;
    let signer = if all {
        signer.accepting_foreign_rows()
    } else {
        signer
    };
    let db = startup::open_database_signed(&settings, signer).await?;
    let reporter = super::progress::Reporter::new();
    let report = resign_all(db.as_ref(), all, dry_run, progress(&reporter, "checked")).await?;
    reporter.finish();
    println!("{}", serde_json::to_string_pretty(&report)?);
    Ok(())
}
