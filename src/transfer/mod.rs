//! Moving memories between instances: the export format (`format`) and the requests of
//! `hindsight export` and `import` as every transport carries them. Export reads pages by id;
//! import takes batches of numbered lines, checks each through the domain types and reports a
//! bad one by its line number and field, writing nothing from a batch with one. The work itself
//! happens in `operations` (in the process that owns the data).

pub mod format;
pub mod peers;

use serde::{Deserialize, Serialize};

pub use format::{FORMAT_VERSION, Header, ImportRow, LineError, MemoryLine, parse_line};

use crate::domain::{MemoryId, Namespace, Status, ValidationError};
use crate::service::requests::parse_timestamp;
use crate::store::ExportFilter;

/// The most rows one export page holds.
pub const MAX_PAGE: i64 = 5_000;
/// The most lines one import batch holds (with 1,536-d vectors, ~25 MB of JSON).
pub const MAX_BATCH: usize = 2_000;

/// One page of an export.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ExportRequest {
    /// Only these namespaces (all when empty).
    #[serde(default)]
    pub namespaces: Vec<String>,
    /// Only these statuses (all when empty): active, deprecated, expired, forgotten, archived.
    #[serde(default)]
    pub statuses: Vec<String>,
    /// Only rows changed at or after this time (RFC 3339).
    #[serde(default)]
    pub since: Option<String>,
    /// The archive table's rows too, after the hot ones.
    #[serde(default)]
    pub include_archive: bool,
    /// Each line carries its vector.
    #[serde(default)]
    pub with_vectors: bool,
    /// Where the previous page ended (its `next`).
    #[serde(default)]
    pub after: Option<ExportCursor>,
    /// Rows per page, 1 to `MAX_PAGE` (default 1,000).
    #[serde(default)]
    pub limit: Option<i64>,
}

/// Where an export goes on: which table, after which id.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ExportCursor {
    pub archived: bool,
    pub after: Option<MemoryId>,
}

impl ExportRequest {
    /// The store's filter and the page size, or the field at fault.
    pub fn validate(&self) -> Result<(ExportFilter, i64), ValidationError> {
        let namespaces = self
            .namespaces
            .iter()
            .map(|n| Namespace::parse(n).map(|n| n.as_str().to_owned()))
            .collect::<Result<_, _>>()
            .map_err(|e| ValidationError::new("namespaces", e.rule))?;
        let statuses = self
            .statuses
            .iter()
            .map(|s| Status::parse(s))
            .collect::<Result<_, _>>()
            .map_err(|e| ValidationError::new("statuses", e.rule))?;
        let since = self
            .since
            .as_deref()
            .map(|s| parse_timestamp("since", s))
            .transpose()?;
        let limit = self.limit.unwrap_or(1_000);
        if !(1..=MAX_PAGE).contains(&limit) {
            return Err(ValidationError::new(
                "limit",
                format!("must be 1 to {MAX_PAGE}, got {limit}"),
            ));
        }
        Ok((
            ExportFilter {
                namespaces,
                statuses,
                since,
            },
            limit,
        ))
    }
}

/// A page of an export: the header (the same on every page), the lines, and where the next
/// page starts (none after the last).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ExportPage {
    pub header: Header,
    pub lines: Vec<MemoryLine>,
    pub next: Option<ExportCursor>,
    /// Rows left out because their signature failed (`hindsight verify` lists them).
    #[serde(default)]
    pub tampered: u64,
}

/// How an import writes.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize, clap::ValueEnum)]
#[serde(rename_all = "lowercase")]
pub enum ImportMode {
    /// Every row exactly as the file has it: ids, statuses, times, supersede history,
    /// provenance (a backup's restore).
    #[default]
    Preserve,
    /// Each active memory through the write path, as an agent's write: dedup, supersede,
    /// screening. Other statuses are skipped.
    Write,
}

/// A line of the file with its number (1 is the header).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct NumberedLine {
    pub line: u64,
    pub memory: MemoryLine,
}

/// One batch of an import.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ImportBatch {
    pub mode: ImportMode,
    /// Check only: report what would happen and every bad line; write nothing.
    #[serde(default)]
    pub dry_run: bool,
    /// The file's header: whose vectors the lines carry.
    pub header: Header,
    pub lines: Vec<NumberedLine>,
    /// Preserve mode: leave this batch's rows pending for the index, to be taken in by a later
    /// batch sent without it (a bulk load's last), in one pass instead of batch by batch. A load
    /// stopped before then leaves them pending, and the index repair at the next start takes
    /// them in.
    #[serde(default)]
    pub defer_index: bool,
    /// With `defer_index`: the lines of the whole load (0: not known). A load large against
    /// the store may have the store drop an index the load would keep up row by row, made
    /// again at the load's last batch (`TransferStore::begin_bulk_load`).
    #[serde(default)]
    pub load_lines: u64,
}

impl ImportBatch {
    pub fn check_size(&self) -> Result<(), ValidationError> {
        if self.lines.len() > MAX_BATCH {
            return Err(ValidationError::new(
                "lines",
                format!("at most {MAX_BATCH} a batch, got {}", self.lines.len()),
            ));
        }
        if self.header.hindsight_export != FORMAT_VERSION {
            return Err(ValidationError::new(
                "header.hindsight_export",
                format!(
                    "this build reads format {FORMAT_VERSION}, the file is format {}",
                    self.header.hindsight_export
                ),
            ));
        }
        Ok(())
    }
}

/// What an import did (or, dry, would do), summed over its batches.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct ImportReport {
    pub lines: u64,
    /// New rows (preserve) or memories stored by the write path (write).
    pub added: u64,
    /// Lines already here: the same id (preserve), or imported before (write).
    pub unchanged: u64,
    /// Write mode: merged into a near-duplicate.
    pub merged: u64,
    /// Write mode: not written (an inactive status, already expired, below the importance
    /// floor, refused by the screen).
    pub skipped: u64,
    /// Write mode: held by the screen for a reviewer.
    pub quarantined: u64,
    /// Lines whose vectors were computed here (none carried, or another embedder's).
    pub embedded: u64,
    pub errors: Vec<LineError>,
}

impl ImportReport {
    pub fn add(&mut self, other: ImportReport) {
        self.lines += other.lines;
        self.added += other.added;
        self.unchanged += other.unchanged;
        self.merged += other.merged;
        self.skipped += other.skipped;
        self.quarantined += other.quarantined;
        self.embedded += other.embedded;
        self.errors.extend(other.errors);
    }
}

/// The dimension an embedder id names (`…/384`), if it does.
pub fn dimension_of(embedder: &str) -> Option<usize> {
    embedder.rsplit('/').next()?.parse().ok()
}
