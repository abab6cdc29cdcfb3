//! `hindsight verify` and `hindsight resign`: the row signatures, store-wide. Both read the
//! database directly (like `migrate`: no index, no embedder), so they run beside a daemon.

use std::io::IsTerminal;

use hindsight::configuration::Settings;
use hindsight::startup;
use hindsight::store::{RowTable, resign_all, verify_all};

/// Progress on stderr: rewritten in place on a terminal, a line per 10,000 rows in a log.
fn progress(verb: &'static str) -> impl FnMut(RowTable, u64) {
    let tty = std::io::stderr().is_terminal();
    move |table, rows| {
        if tty {
            eprint!("\r{verb} {}: {rows} rows", table.as_str());
        } else if rows.is_multiple_of(10_000) {
            eprintln!("{verb} {}: {rows} rows", table.as_str());
        }
    }
}

/// Check every row's signature (hot and archived); print the report; exit 1 when any failed.
pub async fn verify(settings: Settings) -> anyhow::Result<()> {
    let db = startup::open_database(&settings).await?;
    let report = verify_all(db.as_ref(), progress("verified")).await?;
    if std::io::stderr().is_terminal() {
        eprintln!();
    }
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
    let report = resign_all(db.as_ref(), all, dry_run, progress("checked")).await?;
    if std::io::stderr().is_terminal() {
        eprintln!();
    }
    println!("{}", serde_json::to_string_pretty(&report)?);
    Ok(())
}
