//! `export` and `import` in this process. An export page is read from the database with its
//! signatures checked (a tampered row is left out and counted, never carried into another
//! store under a new signature). An import batch is checked whole — every line through the
//! domain types, then against what the store holds — and written only when no line failed.

use std::collections::{HashMap, HashSet};

use chrono::Utc;
use serde_json::Value;

use super::local::LocalOperations;
use super::{OperationError, Operations};
use crate::domain::{Memory, MemoryId, Status};
use crate::service::{
    EMBEDDER_META_KEY, WriteBatchRequest, WriteRequest, WriteResult, WriteStatus,
};
use crate::store::{ImportedLine, RowTable, StoredRow};
use crate::transfer::{
    ExportCursor, ExportPage, ExportRequest, FORMAT_VERSION, Header, ImportBatch, ImportMode,
    ImportReport, ImportRow, LineError, MemoryLine, NumberedLine, dimension_of,
};

/// How many texts one embedder call gets when an import computes vectors.
const EMBED_BATCH: usize = 64;

/// How many lines `--mode write` hands the write path at once (`write_batch`): one embedder
/// call and one index update per scope for them.
const WRITE_CHUNK: usize = 256;

impl LocalOperations {
    pub(super) async fn export_page(
        &self,
        request: ExportRequest,
    ) -> Result<ExportPage, OperationError> {
        let (filter, limit) = request
            .validate()
            .map_err(|e| OperationError::Service(e.into()))?;
        let header = self.export_header(request.with_vectors).await?;
        let cursor = request.after.unwrap_or(ExportCursor {
            archived: false,
            after: None,
        });
        let rows = self
            .db()
            .export_page(&filter, cursor.archived, cursor.after, limit)
            .await?;
        let next = match rows.last() {
            Some(last) if rows.len() as i64 >= limit => Some(ExportCursor {
                archived: cursor.archived,
                after: Some(last.memory.id),
            }),
            _ if !cursor.archived && request.include_archive => Some(ExportCursor {
                archived: true,
                after: None,
            }),
            _ => None,
        };
        let table = if cursor.archived {
            RowTable::Archive
        } else {
            RowTable::Memories
        };
        let read = rows.len();
        let mut archived_at: HashMap<MemoryId, _> = rows
            .iter()
            .filter_map(|r| r.archived_at.map(|at| (r.memory.id, at)))
            .collect();
        // A daemon's metrics count tampered rows; a one-shot export assembles no service for
        // them (which would open the index: ~1 GB at 1M rows).
        let metrics = self.assembled().map(|s| s.metrics().as_ref());
        let store: &dyn crate::store::IntegrityStore = self.db().as_ref();
        let good = crate::service::integrity::checked(
            store,
            metrics,
            table,
            rows.into_iter().map(|r| r.memory).collect(),
        )
        .await;
        let tampered = (read - good.len()) as u64;
        let lines = good
            .into_iter()
            .map(|m| {
                let at = archived_at.remove(&m.id);
                MemoryLine::from_row(m, at, request.with_vectors)
            })
            .collect();
        Ok(ExportPage {
            header,
            lines,
            next,
            tampered,
        })
    }

    /// Whose vectors the rows hold: the data set's embedder (the one its rows were embedded
    /// with, which a reindex changes), and its dimension. Read from the store when it says
    /// (the id ends in the dimension); only a store that never recorded one needs the
    /// configured embedder, and so the service.
    async fn export_header(&self, with_vectors: bool) -> Result<Header, OperationError> {
        let recorded = self.db().meta_get(EMBEDDER_META_KEY).await?;
        let (embedder, dimension) = match recorded.as_deref().and_then(dimension_of) {
            Some(dimension) => (recorded.unwrap_or_default(), dimension),
            None => {
                let configured = self.service().await?.embedder();
                match recorded {
                    Some(id) if id != configured.id() => (id, 0),
                    _ => (configured.id().to_owned(), configured.dimension()),
                }
            }
        };
        Ok(Header {
            hindsight_export: FORMAT_VERSION,
            embedder,
            dimension,
            exported_at: Utc::now(),
            with_vectors,
        })
    }

    pub(super) async fn import_batch(
        &self,
        batch: ImportBatch,
    ) -> Result<ImportReport, OperationError> {
        batch
            .check_size()
            .map_err(|e| OperationError::Service(e.into()))?;
        let max_chars = self.service().await?.rules().max_content_chars;
        let mut report = ImportReport {
            lines: batch.lines.len() as u64,
            ..ImportReport::default()
        };
        let mut rows = Vec::with_capacity(batch.lines.len());
        for NumberedLine { line, memory } in batch.lines {
            match memory.validate(max_chars, batch.header.dimension) {
                Ok(row) => rows.push((line, row)),
                Err(e) => report.errors.push(LineError::invalid(line, e)),
            }
        }
        match batch.mode {
            ImportMode::Preserve => {
                if batch.defer_index && !batch.dry_run {
                    self.db().begin_bulk_load(batch.load_lines).await?;
                }
                let (report, added) = self
                    .preserve(rows, &batch.header, batch.dry_run, report)
                    .await?;
                if !batch.dry_run {
                    let service = self.service().await?;
                    service.feed_index(added).await;
                    if !batch.defer_index {
                        // This batch's rows and those of every deferred batch before it.
                        self.db().finish_bulk_load().await?;
                        service.finish_bulk_load().await?;
                    }
                }
                Ok(report)
            }
            ImportMode::Write => self.write_lines(rows, batch.dry_run, report).await,
        }
    }

    /// Rows exactly as given. A line whose id is here already is left alone if it says the
    /// same, and an error if its content differs; so is an active fact whose key another
    /// active row holds here. Any error: nothing written. Also returns the rows added to the
    /// hot table (pending for the index).
    async fn preserve(
        &self,
        rows: Vec<(u64, ImportRow)>,
        header: &Header,
        dry_run: bool,
        mut report: ImportReport,
    ) -> Result<(ImportReport, Vec<Memory>), OperationError> {
        let ids: Vec<MemoryId> = rows.iter().map(|(_, r)| r.memory.id).collect();
        let held: HashMap<MemoryId, Memory> = self
            .db()
            .held(&ids)
            .await?
            .into_iter()
            .map(|m| (m.id, m))
            .collect();
        let mut seen: HashMap<MemoryId, (u64, String)> = HashMap::new();
        let mut facts: HashMap<(String, String, String), (u64, MemoryId)> = HashMap::new();
        let mut fresh = Vec::with_capacity(rows.len());
        for (line, row) in rows {
            let m = &row.memory;
            let earlier = held
                .get(&m.id)
                .map(|h| (None, &h.content))
                .or_else(|| seen.get(&m.id).map(|(l, c)| (Some(*l), c)));
            if let Some((earlier_line, content)) = earlier {
                if *content != m.content {
                    let whose =
                        earlier_line.map_or("this store".to_owned(), |l| format!("line {l}"));
                    report.errors.push(LineError::new(
                        line,
                        "content",
                        format!(
                            "id {} is already held by {whose} with different content",
                            m.id
                        ),
                    ));
                } else {
                    report.unchanged += 1;
                }
                continue;
            }
            seen.insert(m.id, (line, m.content.clone()));
            if m.status == Status::Active
                && let (Some(entity), Some(attribute)) = (&m.entity, &m.attribute)
            {
                let key = (m.namespace.clone(), entity.clone(), attribute.clone());
                if let Some((other, _)) = facts.get(&key) {
                    report
                        .errors
                        .push(fact_error(line, &key, &format!("line {other}")));
                    continue;
                }
                let namespace = crate::domain::Namespace::parse(&m.namespace)
                    .map_err(|e| OperationError::Service(e.into()))?;
                let holder = self
                    .db()
                    .active_facts(&namespace, entity, attribute)
                    .await?
                    .into_iter()
                    .find(|h| h.id != m.id);
                if let Some(holder) = holder {
                    report
                        .errors
                        .push(fact_error(line, &key, &format!("memory {}", holder.id)));
                    continue;
                }
                facts.insert(key, (line, m.id));
            }
            fresh.push(row);
        }
        if !report.errors.is_empty() || dry_run {
            if report.errors.is_empty() {
                report.added = fresh.len() as u64;
            }
            return Ok((report, Vec::new()));
        }
        report.embedded = self.embed_missing(&mut fresh, header).await?;
        let rows: Vec<StoredRow> = fresh
            .into_iter()
            .map(|r| StoredRow {
                memory: r.memory,
                archived_at: r.archived_at,
            })
            .collect();
        let added: HashSet<MemoryId> = self.db().import_rows(&rows).await?.into_iter().collect();
        report.added = added.len() as u64;
        report.unchanged += (rows.len() - added.len()) as u64;
        let hot = rows
            .into_iter()
            .filter(|r| r.archived_at.is_none() && added.contains(&r.memory.id))
            .map(|r| r.memory)
            .collect();
        Ok((report, hot))
    }

    /// Vectors for the rows that carry none, or carry another embedder's: computed here in
    /// batches. How many were computed.
    async fn embed_missing(
        &self,
        rows: &mut [ImportRow],
        header: &Header,
    ) -> Result<u64, OperationError> {
        let embedder = self.service().await?.embedder().clone();
        let reuse = header.embedder == embedder.id() && header.dimension == embedder.dimension();
        let mut todo: Vec<&mut ImportRow> = rows
            .iter_mut()
            .filter(|r| !reuse || r.memory.embedding.is_empty())
            .collect();
        let count = todo.len() as u64;
        for chunk in todo.chunks_mut(EMBED_BATCH) {
            let texts: Vec<String> = chunk.iter().map(|r| r.memory.content.clone()).collect();
            let vectors = embedder
                .embed(&texts)
                .await
                .map_err(|e| OperationError::Service(e.into()))?;
            for (row, vector) in chunk.iter_mut().zip(vectors) {
                row.memory.embedding = vector;
                row.memory.embedding_model = embedder.id().to_owned();
            }
        }
        Ok(count)
    }

    /// Each active line through the write path, as an agent's write (its id, status and
    /// history are not kept: the write path decides them). Lines imported before are skipped.
    async fn write_lines(
        &self,
        rows: Vec<(u64, ImportRow)>,
        dry_run: bool,
        mut report: ImportReport,
    ) -> Result<ImportReport, OperationError> {
        let ids: Vec<MemoryId> = rows.iter().map(|(_, r)| r.memory.id).collect();
        let done: std::collections::HashSet<MemoryId> =
            self.db().imported(&ids).await?.into_iter().collect();
        let max_chars = self.service().await?.rules().max_content_chars;
        let now = Utc::now();
        let mut requests = Vec::new();
        for (line, row) in rows {
            let m = row.memory;
            if done.contains(&m.id) {
                report.unchanged += 1;
                continue;
            }
            if m.status != Status::Active || m.is_expired_at(now) {
                report.skipped += 1;
                continue;
            }
            let request = WriteRequest {
                content: m.content,
                memory_type: Some(m.memory_type.as_str().to_owned()),
                importance: Some(m.importance),
                ttl_days: m
                    .expires_at
                    .map(|at| (at - now).num_milliseconds() as f64 / 86_400_000.0),
                namespace: Some(m.namespace),
                entity: m.entity,
                attribute: m.attribute,
                source: Some(m.source),
                metadata: match m.metadata {
                    Value::Object(map) => Some(map),
                    _ => None,
                },
                occurred_at: Some(m.occurred_at.to_rfc3339()),
            };
            match request.validate(max_chars) {
                Ok(_) => requests.push((line, m.id, request)),
                Err(e) => report.errors.push(LineError::invalid(line, e)),
            }
        }
        if !report.errors.is_empty() || dry_run {
            return Ok(report);
        }
        let mut imported = Vec::with_capacity(requests.len());
        for chunk in requests.chunks(WRITE_CHUNK) {
            let results = self.write_chunk(chunk).await;
            for ((line, id, _), result) in chunk.iter().zip(results) {
                let (line, id) = (*line, *id);
                let result = match result {
                    Ok(result) => result,
                    // Refused by the screen: the file's line stays out, as an agent's would.
                    Err(e) if refused(&e) => {
                        report.skipped += 1;
                        tracing::info!(line, error = %e, "import: a line was refused");
                        continue;
                    }
                    Err(e) => {
                        // What the lines before it did is kept, so a rerun skips them.
                        self.db().record_imported(&imported, Utc::now()).await?;
                        return Err(e);
                    }
                };
                match result.status {
                    WriteStatus::Stored => report.added += 1,
                    WriteStatus::Merged => report.merged += 1,
                    WriteStatus::Skipped => report.skipped += 1,
                    WriteStatus::Quarantined => report.quarantined += 1,
                }
                imported.push(ImportedLine {
                    line_id: id,
                    memory_id: result.memory_id,
                    outcome: result.status.as_str().to_owned(),
                });
            }
        }
        self.db().record_imported(&imported, Utc::now()).await?;
        Ok(report)
    }

    /// A chunk of lines as one batch write; if the screen refuses one of them (which refuses
    /// the batch), line by line instead, so only that line stays out. Each line's result, in
    /// order, up to the first that failed on the server's side.
    async fn write_chunk(
        &self,
        chunk: &[(u64, MemoryId, WriteRequest)],
    ) -> Vec<Result<WriteResult, OperationError>> {
        let memories = chunk.iter().map(|(_, _, r)| r.clone()).collect();
        match self.write_batch(WriteBatchRequest { memories }).await {
            Ok(batch) => return batch.results.into_iter().map(Ok).collect(),
            Err(e) if refused(&e) => {}
            Err(e) => return vec![Err(e)],
        }
        let mut results = Vec::with_capacity(chunk.len());
        for (_, _, request) in chunk {
            let result = self.write(request.clone()).await;
            let failed = matches!(&result, Err(e) if !refused(e));
            results.push(result);
            if failed {
                break;
            }
        }
        results
    }
}

/// A write the screen (or the rules) refused: its line stays out, the import goes on.
fn refused(e: &OperationError) -> bool {
    matches!(e, OperationError::Service(e) if e.is_client_error())
}

fn fact_error(
    line: u64,
    (namespace, entity, attribute): &(String, String, String),
    holder: &str,
) -> LineError {
    LineError::new(
        line,
        "attribute",
        format!(
            "an active memory of ({namespace}, {entity}, {attribute}) is already held by \
             {holder}: one fact has one active row"
        ),
    )
}
