//! `hindsight export` and `hindsight import`, through `Operations` (this process, or the daemon
//! that owns the data dir). Export streams pages to stdout or a file (gzip by `.gz` or
//! `--gzip`), so memory stays flat however many rows there are. Import reads the file twice:
//! first every line is checked (here: JSON, fields, duplicate ids, one active row per fact
//! across the whole file; in the owner: the domain types and what the store already holds),
//! and only a file without a bad line is then written, batch by batch.

use std::collections::HashMap;
use std::hash::{Hash, Hasher};
use std::io::{BufRead, BufReader, Read, Write};
use std::path::{Path, PathBuf};
use std::sync::Arc;

use anyhow::Context;
use clap::Args as ClapArgs;
use hindsight::configuration::Settings;
use hindsight::domain::{MemoryId, Status};
use hindsight::operations::OperationError;
use hindsight::transfer::peers::{self, Peer};
use hindsight::transfer::{
    ExportRequest, Header, ImportBatch, ImportMode, ImportReport, LineError, MemoryLine,
    NumberedLine, parse_line,
};

use super::connection::with_operations;
use super::progress::Reporter;

/// A line longer than this is refused unread (a vector of 1,536 numbers is ~30 kB).
const MAX_LINE_BYTES: usize = 16 * 1024 * 1024;
/// Bad lines printed on stderr before the rest are only counted (the report holds them all).
const PRINTED_ERRORS: usize = 50;

#[derive(Debug, ClapArgs)]
pub struct ExportArgs {
    /// Only this namespace (repeat for several).
    #[arg(long = "namespace")]
    namespaces: Vec<String>,
    /// Only this status (repeat): active, deprecated, expired, forgotten, archived.
    #[arg(long = "status")]
    statuses: Vec<String>,
    /// Only rows changed at or after this time (RFC 3339).
    #[arg(long)]
    since: Option<String>,
    /// The archive table's rows too.
    #[arg(long)]
    include_archive: bool,
    /// Each line carries its vector (an import with the same embedder then computes none).
    #[arg(long)]
    with_vectors: bool,
    /// Write here instead of stdout; gzip when it ends in `.gz`.
    #[arg(long, short)]
    output: Option<PathBuf>,
    /// Gzip the output.
    #[arg(long)]
    gzip: bool,
}

#[derive(Debug, ClapArgs)]
pub struct ImportArgs {
    /// A JSON Lines file from `hindsight export` (gzip or not: detected).
    file: PathBuf,
    /// preserve: every row exactly as exported (ids, statuses, history; a restore). write:
    /// each active memory through the write path (dedup, supersede, screening).
    #[arg(long, value_enum, default_value_t = ImportMode::Preserve)]
    mode: ImportMode,
    /// Check the whole file and report; write nothing.
    #[arg(long)]
    dry_run: bool,
    /// Lines per batch (each batch is written in one transaction).
    #[arg(long, default_value_t = 500)]
    batch: usize,
    /// The file is another server's: the MCP reference memory server's memory.jsonl, or
    /// mem0/OpenMemory's export (memories.json, memories.jsonl.gz, the API's get_all).
    #[arg(long, value_enum)]
    from: Option<Peer>,
    /// With --from: the namespace the memories go to (mem0: default the user's id).
    #[arg(long, requires = "from")]
    namespace: Option<String>,
}

pub async fn export(settings: Settings, args: ExportArgs) -> anyhow::Result<()> {
    let gzip = args.gzip
        || args
            .output
            .as_ref()
            .is_some_and(|p| p.extension().is_some_and(|e| e == "gz"));
    // A file is written beside its name and renamed when complete: a failed export leaves no
    // file that looks whole.
    let partial = args.output.as_ref().map(|p| {
        let mut name = p.as_os_str().to_owned();
        name.push(".partial");
        PathBuf::from(name)
    });
    let sink: Box<dyn Write + Send> = match &partial {
        Some(path) => Box::new(std::io::BufWriter::with_capacity(
            1 << 20,
            std::fs::File::create(path).with_context(|| format!("creating {}", path.display()))?,
        )),
        None => Box::new(std::io::BufWriter::with_capacity(
            1 << 20,
            std::io::stdout(),
        )),
    };
    let mut out = if gzip {
        Output::Gzip(flate2::write::GzEncoder::new(
            sink,
            flate2::Compression::fast(),
        ))
    } else {
        Output::Plain(sink)
    };
    let mut request = ExportRequest {
        namespaces: args.namespaces,
        statuses: args.statuses,
        since: args.since,
        include_archive: args.include_archive,
        with_vectors: args.with_vectors,
        after: None,
        limit: Some(if args.with_vectors { 1_000 } else { 5_000 }),
    };
    let reporter = Reporter::new();
    let progress = &reporter;
    let exported = with_operations(&settings, |ops, _| async move {
        let mut rows = 0u64;
        let mut tampered = 0u64;
        let mut header_written = false;
        loop {
            let page = ops.export(request.clone()).await?;
            if !header_written {
                write_line(&mut out, &page.header)?;
                header_written = true;
            }
            for line in &page.lines {
                write_line(&mut out, line)?;
            }
            rows += page.lines.len() as u64;
            tampered += page.tampered;
            progress.tick("exporting", rows, None);
            match page.next {
                Some(next) => request.after = Some(next),
                None => break,
            }
        }
        finish(out)?;
        Ok((rows, tampered))
    })
    .await;
    reporter.finish();
    let (rows, tampered) = match (exported, &partial, &args.output) {
        (Ok(counts), Some(partial), Some(path)) => {
            std::fs::rename(partial, path)
                .with_context(|| format!("renaming {} to {}", partial.display(), path.display()))?;
            counts
        }
        (Ok(counts), _, _) => counts,
        (Err(e), partial, _) => {
            if let Some(partial) = partial {
                let _ = std::fs::remove_file(partial);
            }
            return Err(e);
        }
    };
    eprintln!(
        "{}",
        serde_json::json!({"exported": rows, "left_out_tampered": tampered})
    );
    if tampered > 0 {
        eprintln!(
            "warning: {tampered} rows failed their signature check and were left out; \
             `hindsight verify` lists them"
        );
    }
    Ok(())
}

fn write_line(out: &mut impl Write, value: &impl serde::Serialize) -> Result<(), OperationError> {
    let mut text = serde_json::to_vec(value).map_err(|e| io_error(e.to_string()))?;
    text.push(b'\n');
    out.write_all(&text).map_err(|e| io_error(e.to_string()))
}

/// Where an export goes; a gzip stream is finished (its trailer written) before the flush.
enum Output {
    Plain(Box<dyn Write + Send>),
    Gzip(flate2::write::GzEncoder<Box<dyn Write + Send>>),
}

impl Write for Output {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        match self {
            Output::Plain(w) => w.write(buf),
            Output::Gzip(w) => w.write(buf),
        }
    }

    fn flush(&mut self) -> std::io::Result<()> {
        match self {
            Output::Plain(w) => w.flush(),
            Output::Gzip(w) => w.flush(),
        }
    }
}

fn finish(out: Output) -> Result<(), OperationError> {
    let mut sink = match out {
        Output::Plain(sink) => sink,
        Output::Gzip(gz) => gz.finish().map_err(|e| io_error(e.to_string()))?,
    };
    sink.flush().map_err(|e| io_error(e.to_string()))
}

fn io_error(reason: String) -> OperationError {
    OperationError::Unavailable(format!("writing the export: {reason}"))
}

pub async fn import(settings: Settings, args: ImportArgs) -> anyhow::Result<()> {
    let batch_size = args.batch.clamp(1, hindsight::transfer::MAX_BATCH);
    // A peer's file is turned into one of ours first (a temporary file, removed at the end);
    // what is reported names the peer file's lines.
    let peer = match args.from {
        Some(peer) => Some(PeerFile::convert(
            peer,
            &args.file,
            args.namespace.as_deref(),
        )?),
        None => None,
    };
    let file = peer.as_ref().map_or(args.file.clone(), |p| p.path.clone());
    // A peer line that could not be converted blocks the import as a bad line of ours does.
    let blocked = peer.as_ref().is_some_and(|p| !p.errors.is_empty());
    let mode = args.mode;
    let dry_run = args.dry_run;
    let reporter = Arc::new(Reporter::new());
    let progress = reporter.clone();
    let report = with_operations(&settings, |ops, _| async move {
        // Pass 1: every line checked, here and by the owner against its store; nothing written.
        let header =
            read_header(&file).map_err(|e| OperationError::Unavailable(format!("{e:#}")))?;
        let mut checked = ImportReport::default();
        let mut file_check = FileCheck::default();
        for_each_batch(
            &file,
            batch_size,
            &ops,
            (mode, true, &header, 0),
            (&mut checked, Some(&mut file_check)),
            |n| progress.tick("checking", n, None),
        )
        .await?;
        checked.errors.append(&mut file_check.errors);
        checked.errors.sort_by_key(|e| e.line);
        if !checked.errors.is_empty() || dry_run || blocked {
            return Ok(checked);
        }
        // Pass 2: written batch by batch (each one transaction; a rerun skips what is in).
        let mut written = ImportReport::default();
        for_each_batch(
            &file,
            batch_size,
            &ops,
            (mode, false, &header, checked.lines),
            (&mut written, None),
            |n| progress.tick("importing", n, None),
        )
        .await?;
        Ok(written)
    })
    .await;
    reporter.finish();
    let mut report = report?;
    let mut left_out = 0;
    if let Some(peer) = &peer {
        for error in &mut report.errors {
            error.line = peer.origin_of(error.line);
        }
        report.errors.splice(0..0, peer.errors.iter().cloned());
        left_out = peer.left_out;
    }
    for error in report.errors.iter().take(PRINTED_ERRORS) {
        eprintln!("{error}");
    }
    if report.errors.len() > PRINTED_ERRORS {
        eprintln!(
            "… and {} more bad lines",
            report.errors.len() - PRINTED_ERRORS
        );
    }
    super::connection::print(&serde_json::json!({
        "file": args.file,
        "mode": args.mode,
        "dry_run": args.dry_run,
        "from": args.from.map(Peer::name),
        "left_out": left_out,
        "written": report.errors.is_empty() && !args.dry_run,
        "report": report,
    }))?;
    if !report.errors.is_empty() {
        anyhow::bail!(
            "{} bad lines in {}: nothing was imported",
            report.errors.len(),
            args.file.display()
        );
    }
    Ok(())
}

/// A peer's file converted to our format in a temporary file (removed when dropped), with
/// the peer file's line (or record) number of each of its lines.
struct PeerFile {
    path: PathBuf,
    /// `origin[i]`: the source line of our line `i + 2` (line 1 is the header).
    origin: Vec<u64>,
    errors: Vec<LineError>,
    left_out: u64,
}

impl PeerFile {
    fn convert(peer: Peer, source: &Path, namespace: Option<&str>) -> anyhow::Result<Self> {
        let mut text = String::new();
        LineReader::open(source)?
            .reader
            .read_to_string(&mut text)
            .with_context(|| format!("reading {} (UTF-8 text)", source.display()))?;
        let converted = peers::convert(peer, &text, namespace, chrono::Utc::now());
        let path = std::env::temp_dir().join(format!(
            "hindsight-import-{}-{}.jsonl",
            std::process::id(),
            uuid::Uuid::now_v7()
        ));
        let mut out = std::io::BufWriter::new(
            std::fs::File::create(&path).with_context(|| format!("creating {}", path.display()))?,
        );
        let mut origin = Vec::with_capacity(converted.lines.len());
        serde_json::to_writer(&mut out, &converted.header)?;
        out.write_all(b"\n")?;
        for (from, line) in &converted.lines {
            serde_json::to_writer(&mut out, line)?;
            out.write_all(b"\n")?;
            origin.push(*from);
        }
        out.flush()?;
        Ok(Self {
            path,
            origin,
            errors: converted.errors,
            left_out: converted.left_out,
        })
    }

    /// The peer file's line that our line `line` came from.
    fn origin_of(&self, line: u64) -> u64 {
        (line as usize)
            .checked_sub(2)
            .and_then(|i| self.origin.get(i))
            .copied()
            .unwrap_or(line)
    }
}

impl Drop for PeerFile {
    fn drop(&mut self) {
        let _ = std::fs::remove_file(&self.path);
    }
}

/// The file's first line: the export header, of a format this build reads.
fn read_header(path: &Path) -> anyhow::Result<Header> {
    let mut lines = LineReader::open(path)?;
    let header = match lines.next_line()? {
        None => anyhow::bail!(
            "{} is empty: line 1 should be the export header",
            path.display()
        ),
        Some((_, Err(e))) => anyhow::bail!("{e}"),
        Some((number, Ok(text))) => parse_line::<Header>(number, &text)
            .map_err(|e| anyhow::anyhow!("{e} (line 1 is the export header)"))?,
    };
    if header.hindsight_export != hindsight::transfer::FORMAT_VERSION {
        anyhow::bail!(
            "{} is export format {}; this build reads format {}",
            path.display(),
            header.hindsight_export,
            hindsight::transfer::FORMAT_VERSION
        );
    }
    Ok(header)
}

/// What the first pass checks across the whole file, which no one batch sees: an id on two
/// lines says the same on both, and a fact has one active line.
#[derive(Default)]
struct FileCheck {
    /// Per id, the line that first held it and a hash of its content.
    ids: HashMap<MemoryId, (u64, u64)>,
    /// Per active fact, its line.
    facts: HashMap<(String, String, String), u64>,
    errors: Vec<LineError>,
}

impl FileCheck {
    /// Check line `number`; false (and the error noted) when it clashes with an earlier line.
    fn line(&mut self, number: u64, line: &MemoryLine) -> bool {
        let digest = content_hash(&line.content);
        match self.ids.get(&line.id) {
            Some((first, hash)) if *hash != digest => {
                self.errors.push(LineError::new(
                    number,
                    "content",
                    format!(
                        "id {} is already on line {first} with different content",
                        line.id
                    ),
                ));
                return false;
            }
            Some(_) => return true,
            None => {
                self.ids.insert(line.id, (number, digest));
            }
        }
        if line.status == Status::Active
            && let (Some(entity), Some(attribute)) = (&line.entity, &line.attribute)
        {
            let key = (line.namespace.clone(), entity.clone(), attribute.clone());
            if let Some(first) = self.facts.get(&key) {
                self.errors.push(LineError::new(
                    number,
                    "attribute",
                    format!(
                        "line {first} already holds the active memory of ({}, {}, {}): one \
                         fact has one active row",
                        key.0, key.1, key.2
                    ),
                ));
                return false;
            }
            self.facts.insert(key, number);
        }
        true
    }
}

fn content_hash(content: &str) -> u64 {
    let mut hasher = std::collections::hash_map::DefaultHasher::new();
    content.hash(&mut hasher);
    hasher.finish()
}

/// Read the file's memory lines and send them to `ops` in import batches of `size` (`mode`, dry
/// or not, under `header`, `load_lines` in all when known), summing what each batch reports
/// into `report`. With `check` (the first pass), a line that does not parse, or clashes with an
/// earlier line, is noted there and not sent; without, such lines were reported by the first
/// pass. Every batch but the last leaves its rows for the index to take in at the end (one
/// pass, rather than one per batch); the last is sent once the file is known to hold no
/// further line.
/// The file is read and parsed on a thread of its own, a batch ahead of the one being written:
/// parsing the vectors' JSON took a core for ~3 s per 100k lines that the writes waited on.
async fn for_each_batch(
    path: &Path,
    size: usize,
    ops: &Arc<dyn hindsight::operations::Operations>,
    (mode, dry_run, header, load_lines): (ImportMode, bool, &Header, u64),
    (report, mut check): (&mut ImportReport, Option<&mut FileCheck>),
    mut progress: impl FnMut(u64),
) -> Result<(), OperationError> {
    let (batches, mut parsed) = tokio::sync::mpsc::channel::<Vec<NumberedLine>>(1);
    let path = path.to_path_buf();
    // The reader's own while it runs, given back after.
    let mut own_check = check.as_deref_mut().map(std::mem::take);
    let reader = tokio::task::spawn_blocking(move || {
        read_batches(&path, size, own_check.as_mut(), |batch| {
            batches.blocking_send(batch).is_ok()
        })
        .map(|()| own_check)
    });
    let mut held: Option<Vec<NumberedLine>> = None;
    let mut done = 0;
    let mut send = async |lines: Vec<NumberedLine>, last: bool| {
        done += lines.len() as u64;
        let batch_report = ops
            .import(ImportBatch {
                mode,
                dry_run,
                header: header.clone(),
                lines,
                defer_index: !last,
                load_lines,
            })
            .await?;
        report.add(batch_report);
        progress(done);
        Ok::<_, OperationError>(())
    };
    let sent = async {
        while let Some(batch) = parsed.recv().await {
            if let Some(previous) = held.replace(batch) {
                send(previous, false).await?;
            }
        }
        Ok::<_, OperationError>(())
    }
    .await;
    // Stop the reader (were the writes refused) before reading what it found.
    drop(parsed);
    let read = reader
        .await
        .map_err(|e| OperationError::Unavailable(format!("reading the file: {e}")))?
        .map_err(|e| OperationError::Unavailable(format!("{e:#}")))?;
    sent?;
    if let Some(last) = held {
        send(last, true).await?;
    }
    if let (Some(check), Some(read)) = (check, read) {
        *check = read;
    }
    Ok(())
}

/// The file's memory lines (after its header), parsed and handed to `emit` in batches of
/// `size`; `emit` returning false stops the reading. See `for_each_batch` for `check`.
fn read_batches(
    path: &Path,
    size: usize,
    mut check: Option<&mut FileCheck>,
    mut emit: impl FnMut(Vec<NumberedLine>) -> bool,
) -> anyhow::Result<()> {
    let mut lines = LineReader::open(path)?;
    lines.next_line()?; // the header
    let mut batch = Vec::with_capacity(size);
    while let Some((number, text)) = lines.next_line()? {
        let parsed = text.and_then(|text| parse_line::<MemoryLine>(number, &text));
        match (parsed, check.as_deref_mut()) {
            (Ok(memory), check) => {
                if check.is_none_or(|check| check.line(number, &memory)) {
                    batch.push(NumberedLine {
                        line: number,
                        memory,
                    });
                }
            }
            (Err(e), Some(check)) => check.errors.push(e),
            (Err(_), None) => {}
        }
        if batch.len() >= size && !emit(std::mem::replace(&mut batch, Vec::with_capacity(size))) {
            return Ok(());
        }
    }
    if !batch.is_empty() {
        emit(batch);
    }
    Ok(())
}

/// The lines of a file, gunzipped when it starts with gzip's magic bytes; blank lines skipped,
/// a line over `MAX_LINE_BYTES` or not UTF-8 an error of its own (the reading goes on).
struct LineReader {
    reader: Box<dyn BufRead>,
    number: u64,
}

impl LineReader {
    fn open(path: &Path) -> anyhow::Result<Self> {
        let mut file =
            std::fs::File::open(path).with_context(|| format!("opening {}", path.display()))?;
        let mut magic = [0u8; 2];
        let gzip = file.read(&mut magic).unwrap_or(0) == 2 && magic == [0x1f, 0x8b];
        let file =
            std::fs::File::open(path).with_context(|| format!("opening {}", path.display()))?;
        let reader: Box<dyn BufRead> = if gzip {
            Box::new(BufReader::new(flate2::read::MultiGzDecoder::new(file)))
        } else {
            Box::new(BufReader::with_capacity(1 << 20, file))
        };
        Ok(Self { reader, number: 0 })
    }

    /// The next non-blank line with its number, or `None` at the end.
    fn next_line(&mut self) -> anyhow::Result<Option<(u64, Result<String, LineError>)>> {
        loop {
            let mut bytes = Vec::new();
            let mut too_long = false;
            loop {
                let chunk = self.reader.fill_buf().context("reading the file")?;
                if chunk.is_empty() {
                    break;
                }
                let (take, end) = match chunk.iter().position(|b| *b == b'\n') {
                    Some(at) => (at + 1, true),
                    None => (chunk.len(), false),
                };
                if bytes.len() + take <= MAX_LINE_BYTES {
                    bytes.extend_from_slice(&chunk[..take]);
                } else {
                    too_long = true;
                }
                self.reader.consume(take);
                if end {
                    break;
                }
            }
            if bytes.is_empty() && !too_long {
                return Ok(None);
            }
            self.number += 1;
            if too_long {
                return Ok(Some((
                    self.number,
                    Err(LineError::new(
                        self.number,
                        "",
                        format!("longer than {MAX_LINE_BYTES} bytes"),
                    )),
                )));
            }
            let text = match String::from_utf8(bytes) {
                Ok(text) => text,
                Err(e) => {
                    return Ok(Some((
                        self.number,
                        Err(LineError::new(self.number, "", format!("not UTF-8: {e}"))),
                    )));
                }
            };
            if text.trim().is_empty() {
                continue;
            }
            return Ok(Some((self.number, Ok(text))));
        }
    }
}
