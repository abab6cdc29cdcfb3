//! `hindsight verify` and `hindsight resign`: the row signatures, store-wide. Both read the
//! database directly (like `migrate`: no index, no embedder), so they run beside a daemon; each
//! records what it did in the audit trail itself (`AuditEntry::operator_command`), as
//! `Guarded` does for the commands that go through `Operations`.

use hindsight::configuration::Settings;
use hindsight::startup;
use hindsight::store::{AuditEntry, RowTable, resign_all, verify_all};

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
    let outcome = match report.failed.len() {
        0 => "ok".to_owned(),
        n => format!("failed: {n} rows"),
    };
    db.record_audit(
        &AuditEntry::operator_command("verify", outcome)
            .with_ids(report.failed.iter().map(|row| row.id))
            .with_detail(format!(
                "{} rows, {} archived",
                report.memories, report.archive
            )),
    )
    .await?;
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
    if !dry_run {
        // The ids are the rows accepted as they stand despite a failed check (`--all`): who
        // vouched for them, and when, stays on record.
        let mode = if all { "all" } else { "previous keys" };
        db.record_audit(
            &AuditEntry::operator_command("resign", "ok")
                .with_ids(report.accepted.iter())
                .with_detail(format!(
                    "{mode}: {} rows signed, {} accepted despite a failed check",
                    report.signed,
                    report.accepted.len()
                )),
        )
        .await?;
    }
    println!("{}", serde_json::to_string_pretty(&report)?);
    Ok(())
}
