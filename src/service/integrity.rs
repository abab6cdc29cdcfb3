//! Rows are served only when their signature holds (`signing`). A row that fails is left out,
//! counted (`hindsight_tampered_rows_total`), logged by id (never its content) and listed in
//! the store's `tampered` table, which the capacity job alerts on.

use chrono::Utc;

use crate::domain::Memory;
use crate::metrics::Metrics;
use crate::store::{IntegrityStore, RowTable, TamperedRow};

/// `rows` of `table` whose signature holds; the others reported as above.
pub async fn checked(
    store: &dyn IntegrityStore,
    metrics: Option<&Metrics>,
    table: RowTable,
    rows: Vec<Memory>,
) -> Vec<Memory> {
    let signer = store.signer().clone();
    let (good, bad): (Vec<_>, Vec<_>) = rows
        .into_iter()
        .map(|m| {
            let verdict = signer.verify(&m);
            (m, verdict)
        })
        .partition(|(_, verdict)| verdict.is_ok());
    if !bad.is_empty() {
        let now = Utc::now();
        let found: Vec<TamperedRow> = bad
            .iter()
            .filter_map(|(m, verdict)| verdict.as_ref().err().map(|t| (m, t)))
            .map(|(m, tamper)| {
                tracing::error!(id = %m.id, table = table.as_str(), reason = tamper.as_str(),
                    "a row failed its signature check and is not served; run `hindsight verify`");
                TamperedRow::of(m, table, tamper, now)
            })
            .collect();
        if let Some(metrics) = metrics {
            metrics.tampered_rows(found.len() as u64);
        }
        if let Err(e) = store.record_tampered(&found).await {
            tracing::warn!(error = %e, "could not list the tampered rows for the alert");
        }
    }
    good.into_iter().map(|(m, _)| m).collect()
}
