//! `hindsight archive purge`, and the first step of every object-sink archive run: exported
//! objects that still hold hard-forgotten memories are rewritten without them, or deleted when
//! nothing else is left in them, so a privacy request reaches the archive's objects too.
//!
//! Which objects: the export listing (`archive_exported`) joined with the hard tombstones.
//! Safe to kill at any instant: an object is rewritten in place (the same key, written whole
//! and verified, as the export writes it) before the journal forgets the ids; a run killed in
//! between finds the object already clean and only finishes the journal, and a run killed
//! after a delete finds no object and does the same.

use std::collections::HashSet;

use serde::Serialize;

use super::object::ObjectSink;
use crate::domain::MemoryId;
use crate::jobs::JobError;
use crate::store::Database;

/// What a purge did, or (dry run) would do.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, serde::Deserialize)]
pub struct PurgeReport {
    pub dry_run: bool,
    /// Objects rewritten without the forgotten rows.
    pub objects_rewritten: usize,
    /// Objects deleted: every row in them was forgotten.
    pub objects_deleted: usize,
    /// Forgotten rows taken out of objects.
    pub rows_removed: usize,
    /// The objects' keys.
    pub objects: Vec<String>,
}

/// Rewrite or delete every exported object holding hard-forgotten ids. With `dry_run`, read
/// the objects and report what would change, changing nothing.
pub async fn purge(
    db: &dyn Database,
    sink: &ObjectSink,
    dry_run: bool,
) -> Result<PurgeReport, JobError> {
    let mut report = PurgeReport {
        dry_run,
        ..PurgeReport::default()
    };
    for (batch, forgotten) in db.batches_to_purge().await? {
        let gone: HashSet<MemoryId> = forgotten.iter().copied().collect();
        let Some(rows) = sink.read_if_exists(&batch.key).await? else {
            // A purge killed after deleting the object: only the journal is left to do.
            if !dry_run {
                db.purged_from_batch(&batch.key, &forgotten, true).await?;
            }
            continue;
        };
        let before = rows.len();
        let kept: Vec<_> = rows
            .into_iter()
            .filter(|row| !gone.contains(&row.memory.id))
            .collect();
        let removed = before - kept.len();
        report.rows_removed += removed;
        if kept.is_empty() {
            report.objects_deleted += 1;
        } else if removed > 0 {
            report.objects_rewritten += 1;
        }
        if removed > 0 {
            report.objects.push(batch.key.clone());
        }
        if dry_run {
            continue;
        }
        if kept.is_empty() {
            sink.delete(&batch.key).await?;
            db.purged_from_batch(&batch.key, &forgotten, true).await?;
        } else {
            // `removed == 0`: the object never held them (they were forgotten between staging
            // and export) or a killed purge already rewrote it; the journal catches up.
            if removed > 0 {
                sink.write(&batch.key, &kept).await?;
            }
            db.purged_from_batch(&batch.key, &forgotten, false).await?;
        }
        tracing::info!(
            object = %batch.key,
            rows_removed = removed,
            deleted = kept.is_empty(),
            "archive purge: forgotten memories taken out of an exported object"
        );
    }
    Ok(report)
}
