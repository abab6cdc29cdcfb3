//! The embedded vector index: Qdrant's engine in-process (`qdrant-edge`), one shard in
//! `<data_dir>/index`. Its calls are blocking, so each runs on `spawn_blocking`.
//!
//! Engine facts this wrapper is built around (qdrant-edge 0.7):
//! - `flush()` panics if an `update()`/`optimize()` runs at the same time, so writes and
//!   optimisation share `gate` (read side) and flush takes it exclusively (write side).
//! - The engine's WAL is not replayed on load: points are durable only after `flush()`. The
//!   service therefore keeps rows `index_pending` until a flush has covered them. Nor is it
//!   ever truncated, though a load reads all of it: `trim_wal` trims it at each open.
//! - HNSW graphs are built only by `optimize()`; new points sit in a brute-force appendable
//!   segment until then. We optimise in the background after every `OPTIMIZE_EVERY` upserts.
//! - Each point also carries its terms as a sparse vector (`LEXICAL`, BM25 weights from
//!   `sparse.rs`) with the engine's IDF modifier: the lexical arm is a sparse search under the
//!   same payload filter as the dense one. The engine does not tell a term's IDF, which the
//!   fusion's full-match scale needs; a one-term search for the term's best point, divided by
//!   that point's own weight for it, reads it off (`term_idf`).

use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, RwLock};
use std::time::Duration;

use async_trait::async_trait;
use qdrant_edge::external::ordered_float::OrderedFloat;
use qdrant_edge::external::serde_json::json;
use qdrant_edge::{
    Condition, CountRequest, CreateIndex, Distance, EdgeConfig, EdgeOptimizersConfig, EdgeShard,
    EdgeSparseVectorParams, EdgeVectorParamsBuilder, FieldCondition, FieldIndexOperations, Filter,
    HnswIndexConfig, IntegerIndexParams, JsonPath, KeywordIndexParams, Match, Modifier, NamedQuery,
    PayloadFieldSchema, PayloadSchemaParams, PointId, PointInsertOperations, PointOperations,
    PointStruct, PointStructPersisted, QuantizationConfig, QuantizationSearchParams, QueryEnum,
    Range, ScalarQuantizationConfig, ScalarType, ScoredPoint, SearchParams, SearchRequest,
    SparseVector, UpdateOperation, Vector, VectorInternal, VectorStructInternal, Vectors,
    WalOptions, WithPayloadInterface, WithVector,
};

use super::{Hit, IndexError, IndexPoint, IndexQuery, VectorIndex, sparse};
use crate::domain::{MemoryId, MemoryType, Status};
use crate::lexical::{self, LexicalHit, LexicalHits, StatsCache};

/// Upserts after which a background `optimize()` (HNSW build, segment merge) is started.
/// 5,000 instead: 882 against 941 writes/s (`bench search --n 100000 --dimension 512
/// --writers 8`, 2 cores), search p50 4.4 against 4.0 ms.
const OPTIMIZE_EVERY: usize = 1_000;
/// The float vectors in a memory map rather than on the heap: only the rescored candidates'
/// pages are read, and the kernel may drop them.
const VECTORS_ON_DISK: bool = true;
/// The int8 copies in a memory map too, not on the heap: idle, a daemon holds none of them
/// (at 100k × 512-d they were 49 MB of its 114 MB of heap, and they grow with the data: 490 MB
/// at 1M); searched, the graph walk's pages come in and the kernel may drop them again.
const QUANTIZED_IN_RAM: bool = false;
/// Vectors (KiB) an appendable segment holds before it is turned into an HNSW segment: about
/// 1,300 points at 384 dimensions. Qdrant's default (10 MB) leaves ~7k points to brute force,
/// which dominated write (dedup) and search latency in `hindsight bench search`.
const INDEXING_THRESHOLD_KB: usize = 2_000;

const SCOPE: &str = "scope";
const OCCURRED_AT: &str = "occurred_at";
/// The sparse vector holding a point's terms.
const LEXICAL: &str = "lexical";

/// Written into the index dir once it is created. An index whose payload layout differs (an
/// older hindsight, or a dir without the file) is dropped at start and rebuilt from the store.
const LAYOUT_FILE: &str = "hindsight-layout";
/// 3: the time payload is `occurred_at` (event time), no longer `created_at`. 4: the `lexical`
/// sparse vector. 5: int8-quantized vectors beside the float ones. 6: per-scope HNSW links
/// (`keyword`), without which filtered recall collapsed at scale. 7: no global graph (`m = 0`),
/// no links by time.
const LAYOUT_VERSION: &str = "7";

/// The `scope` payload value: namespace, memory type and status in one keyword (namespaces
/// cannot contain a space, so it is unambiguous). Every filter hindsight needs is then one
/// `scope IN (…)` condition, which the engine answers straight from the keyword index: with
/// separate namespace/type/status fields it re-checked each candidate against every condition,
/// and those checks cost more than the distance computations.
fn scope(namespace: &str, memory_type: MemoryType, status: Status) -> String {
    format!("{namespace} {} {}", memory_type.as_str(), status.as_str())
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct HnswParams {
    pub m: usize,
    pub ef_construct: usize,
    /// Search-time beam width.
    pub ef: usize,
    /// KiB of vectors below which a scope is scanned rather than walked; a scope gets links of
    /// its own only above it. The engine's default; tests lower it to walk a few thousand
    /// points. 2,000 (scopes of a thousand 512-d points walked) made the write path's dedup
    /// probes no cheaper: 846 against 941 writes/s (`bench search --n 100000 --dimension 512
    /// --writers 8`, 2 cores).
    pub full_scan_kb: usize,
    /// KiB of vectors an appendable segment holds before it is built into an HNSW segment
    /// (`INDEXING_THRESHOLD_KB`).
    pub indexing_threshold_kb: usize,
}

impl Default for HnswParams {
    fn default() -> Self {
        Self {
            m: 16,
            ef_construct: 100,
            ef: 128,
            full_scan_kb: 10_000,
            indexing_threshold_kb: INDEXING_THRESHOLD_KB,
        }
    }
}

pub struct EdgeIndex {
    inner: Arc<Inner>,
}

struct Inner {
    dir: PathBuf,
    params: HnswParams,
    /// `None` only transiently during `reset`.
    shard: RwLock<Option<EdgeShard>>,
    /// Read: update/optimize. Write: flush (the engine panics on a concurrent flush).
    gate: RwLock<()>,
    dimension: AtomicUsize,
    upserts_since_optimize: AtomicUsize,
    /// A background optimisation is scheduled or running.
    optimizing: AtomicBool,
    /// Points were written by `upsert_bulk` since the last flush.
    bulk_written: AtomicBool,
    /// Held for the whole of any optimisation, so an explicit `optimize()` waits for a running
    /// background one instead of returning early (the engine's planner skips the segments that
    /// one is rebuilding) and does not leave it competing with the caller's next requests.
    optimize_lock: Mutex<()>,
    /// Terms' IDFs read off the engine, kept between searches.
    idfs: StatsCache<f64>,
}

fn engine<E: std::fmt::Display>(e: E) -> IndexError {
    IndexError::Engine(e.to_string())
}

fn key(name: &str) -> JsonPath {
    // Static field names: parsing cannot fail.
    name.parse()
        .unwrap_or_else(|_| unreachable!("valid JSON path {name}"))
}

fn config(dimension: usize, params: HnswParams) -> EdgeConfig {
    // int8 copies of the vectors (quantile 0.99) score the HNSW build and the graph walk; the
    // float vectors rescore the final candidates; both memory-mapped (`QUANTIZED_IN_RAM`). Measured at
    // 100k × 512-d (`bench search`, 2 cores), before → int8 alone → int8 and memory-mapped:
    // writes 281 → 432 → 421/s, search p50 5.8 → 4.5 → 3.7 ms, p99 8.8 → 7.6 → 6.3 ms,
    // recall@10 0.226 → 0.240 → 0.260, RSS after load 539 → 666 → 410 MB; a bulk import's
    // graph build 20.0 → 9.6 s for 20k points.
    let quantized = QuantizationConfig::from(ScalarQuantizationConfig {
        r#type: ScalarType::Int8,
        quantile: Some(0.99),
        always_ram: Some(QUANTIZED_IN_RAM),
    });
    EdgeConfig::builder()
        .vector(
            "",
            EdgeVectorParamsBuilder::new(dimension, Distance::Cosine)
                .quantization_config(quantized)
                .on_disk(VECTORS_ON_DISK)
                .build(),
        )
        .sparse_vector(
            LEXICAL,
            EdgeSparseVectorParams::builder()
                .modifier(Modifier::Idf)
                .on_disk(false)
                .build(),
        )
        // No graph over all points (`m = 0`), only each large scope's own links (`payload_m`,
        // see `keyword`): every search reads one scope at a time (`dense_search`), and a scope
        // below the engine's full-scan threshold is scanned rather than walked, so the global
        // graph served no search yet was most of a bulk import's time. `bench import` at 100k,
        // 2 cores, before → after: LoCoMo turns in namespaces of ~550, import 46.7 → 32.3 s
        // (the build 18.3 → 3.6 s), search p50 2.7 → 2.2 ms, recall@10 0.996 both; five
        // namespaces of 20k, import 58.8 → 42.7 s, recall@10 0.970 → 0.954, p50 4.3 ms both.
        .hnsw_config(HnswIndexConfig {
            m: 0,
            payload_m: Some(params.m),
            ef_construct: params.ef_construct,
            full_scan_threshold: params.full_scan_kb,
            max_indexing_threads: background_threads(),
            ..Default::default()
        })
        .optimizers(EdgeOptimizersConfig {
            indexing_threshold: Some(params.indexing_threshold_kb),
            // The engine's default number of segments (2 on 2 cores), not more: with 2 one
            // background optimisation of the large segment runs through most of a 100k load,
            // but that is not what bounds writes. `bench search --n 100000 --dimension 512
            // --writers 8`: 2 segments 1,089 writes/s, search p50 3.4 ms, recall@10 0.72;
            // 4: 1,050/s, 5.4 ms, 1.0; 8: 1,177/s, 7.5 ms, 1.0 (small scopes scanned exactly).
            // No max_segment_size cap: a 60 MB cap cut peak RSS at 100k (900 → 640 MB) but
            // doubled search p50 (3.1 → 6.7 ms) by splitting the data over more HNSW segments.
            ..Default::default()
        })
        // Searches never read payloads back (filters go through the payload indexes), so the
        // payload pages stay on disk: held in RAM they were 32 MB per segment, resident in an
        // idle daemon whatever the data (two segments at 100k: 64 MB of its 292 MB).
        .on_disk_payload(true)
        .wal_options(WalOptions {
            segment_capacity: WAL_SEGMENT_BYTES,
            ..WalOptions::default()
        })
        .build()
}

/// HNSW build threads for background optimisations: all cores but one, left to the request
/// path (with every core, writes waited for a CPU behind the build).
fn background_threads() -> usize {
    all_threads().saturating_sub(1).max(1)
}

/// HNSW build threads for an optimisation the caller waits on (a bulk load, a rebuild): every
/// core. 2 threads instead of 1 halved a 20k-point build on a 2-core host.
fn all_threads() -> usize {
    std::thread::available_parallelism().map_or(1, |n| n.get())
}

/// The engine reads its build thread count from the stored config at each `optimize()`; the
/// count is not part of a segment's identity, so changing it rebuilds nothing.
fn set_indexing_threads(shard: &EdgeShard, threads: usize) -> Result<(), IndexError> {
    let mut hnsw = shard.config().hnsw_config;
    if hnsw.max_indexing_threads == threads {
        return Ok(());
    }
    hnsw.max_indexing_threads = threads;
    shard.set_hnsw_config(hnsw).map_err(engine)
}

fn stored_dimension(config: &EdgeConfig) -> Option<usize> {
    config.vectors.get("").map(|v| v.size)
}

/// A keyword index with the engine's extra per-value HNSW links (`enable_hnsw`): every search
/// is filtered by scope, and a scope holding a tenth of the points left the plain graph walk
/// stranded among points the filter drops. `bench import` (pseudo-random 512-d vectors, ten
/// namespaces): recall@10 at 100k 0.08 → 0.67, at 1M 0.008 without them; import 64 → 78 s
/// (the links are built with the graph); HTTP search p50 7.8 → 5.5 ms. (An earlier measure
/// without recall, with `is_tenant` too, had seen p50 3.3 → 4.9 ms and chose without.)
/// Since `m = 0` (see `config`) they are the only links there are. Not a tenant key (which
/// orders a built segment's points by scope): one run on one machine had seen writes 1,206 →
/// 1,349/s, but side by side on another (`bench search --n 100000 --dimension 512 --writers 8`,
/// 2 cores) it was 699–860 writes/s over four runs against 887–946 over two without, and
/// search p99 31–40 against 6–11 ms; `bench import --locomo` at 100k unchanged (18.6–20.1 s
/// against 20.6 s, peak RSS 298–308 MB both, hit@10 0.648 and recall@10 0.996 both).
fn keyword() -> PayloadFieldSchema {
    PayloadFieldSchema::FieldParams(PayloadSchemaParams::Keyword(KeywordIndexParams {
        is_tenant: Some(false),
        enable_hnsw: Some(true),
        ..Default::default()
    }))
}

/// An integer index for time ranges, without HNSW links of its own: by default the engine
/// built a graph for each block of nearby times, linking points across scopes.
fn time_range() -> PayloadFieldSchema {
    PayloadFieldSchema::FieldParams(PayloadSchemaParams::Integer(IntegerIndexParams {
        lookup: Some(false),
        range: Some(true),
        enable_hnsw: Some(false),
        ..Default::default()
    }))
}

fn create(dir: &Path, dimension: usize, params: HnswParams) -> Result<EdgeShard, IndexError> {
    std::fs::create_dir_all(dir).map_err(engine)?;
    let shard = EdgeShard::new(dir, config(dimension, params)).map_err(engine)?;
    for (field, schema) in [(SCOPE, keyword()), (OCCURRED_AT, time_range())] {
        shard
            .update(UpdateOperation::FieldIndexOperation(
                FieldIndexOperations::CreateIndex(CreateIndex {
                    field_name: key(field),
                    field_schema: Some(schema),
                }),
            ))
            .map_err(engine)?;
    }
    shard.flush();
    std::fs::write(dir.join(LAYOUT_FILE), LAYOUT_VERSION).map_err(engine)?;
    Ok(shard)
}

/// The engine writes every update to its WAL and never reads it back (no replay on load;
/// points are durable once flushed) nor truncates it, yet reads all of it at each load: after a
/// 100k × 512-d import, 270 MB of WAL went resident at the next start. Small segments let
/// `trim_wal` keep little of it.
const WAL_SEGMENT_BYTES: usize = 4 * 1024 * 1024;

/// With the shard closed, delete every closed WAL segment but the newest, as the WAL's own
/// `prefix_truncate` does (the engine never calls it). Operation numbers keep counting from the
/// newest segment: starting them afresh would make the engine skip later updates of existing
/// points as older than the points' versions.
/// The WAL's own directory lock is taken first: should another process have this index open
/// (which the data dir's lock is there to prevent), nothing is trimmed.
fn trim_wal(dir: &Path) -> std::io::Result<u64> {
    let wal = dir.join("wal");
    let held = std::fs::File::open(&wal)?;
    if held.try_lock().is_err() {
        return Ok(0);
    }
    let mut closed: Vec<(u64, PathBuf)> = Vec::new();
    for entry in std::fs::read_dir(&wal)? {
        let entry = entry?;
        let name = entry.file_name();
        if let Some(start) = name.to_str().and_then(|n| n.strip_prefix("closed-"))
            && let Ok(start) = start.parse::<u64>()
        {
            closed.push((start, entry.path()));
        }
    }
    closed.sort_unstable();
    closed.pop();
    let mut freed = 0;
    for (_, path) in closed {
        freed += std::fs::metadata(&path)?.len();
        std::fs::remove_file(&path)?;
    }
    Ok(freed)
}

/// Load the shard in `dir` with its stored dimension (its WAL trimmed first), or create a fresh
/// one. The index is derived data: an unreadable one is recreated empty and the service
/// repopulates it from the store.
fn open_or_create(
    dir: &Path,
    dimension: usize,
    params: HnswParams,
) -> Result<(EdgeShard, usize), IndexError> {
    // Each memory-mapped file mapped once, with readahead (the engine's default maps its
    // files twice, a random-access map and one for sequential reads, and a page read through
    // both counted twice in RSS). `bench import` at 100k, 2 cores: peak RSS 1,168 → 732 MB
    // (LoCoMo) and 1,298 → 833 MB (five namespaces of 20k); first-pass search p50 1.8 ms and
    // 3.1 → 3.0 ms. One map with the engine's `MADV_RANDOM` instead had p50 5.4 ms: the scans
    // of small namespaces had been reading through the sequential map's readahead.
    if !qdrant_edge::map_each_file_once() {
        tracing::debug!("the index engine's memory maps were set before this index opened");
    }
    let layout = std::fs::read_to_string(dir.join(LAYOUT_FILE)).unwrap_or_default();
    let stored = if dir.exists() && layout.trim() != LAYOUT_VERSION {
        tracing::info!(dir = %dir.display(), "index was built with another payload layout; rebuilding it from the store");
        None
    } else {
        match EdgeConfig::load(dir) {
            None => None,
            Some(Ok(config)) => stored_dimension(&config),
            Some(Err(e)) => {
                tracing::warn!(error = %e, dir = %dir.display(), "unreadable index config; recreating the index");
                None
            }
        }
    };
    if let Some(stored) = stored {
        match trim_wal(dir) {
            Ok(0) => {}
            Ok(freed) => tracing::debug!(freed, dir = %dir.display(), "trimmed the index WAL"),
            Err(e) => {
                tracing::warn!(error = %e, dir = %dir.display(), "could not trim the index WAL")
            }
        }
        match EdgeShard::load(dir, None) {
            Ok(shard) => {
                // The stored count is this host's, and not a bulk build's killed half-way.
                set_indexing_threads(&shard, background_threads())?;
                return Ok((shard, stored));
            }
            Err(e) => {
                tracing::warn!(error = %e, dir = %dir.display(), "index unreadable; recreating it")
            }
        }
    }
    match std::fs::remove_dir_all(dir) {
        Ok(()) => {}
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {}
        Err(e) => return Err(engine(e)),
    }
    Ok((create(dir, dimension, params)?, dimension))
}

impl EdgeIndex {
    /// Open the index in `dir`, or create it for `dimension`-sized vectors. An existing index
    /// keeps its own dimension (check `dimension()`); `reset` changes it.
    pub async fn open(
        dir: &Path,
        dimension: usize,
        params: HnswParams,
    ) -> Result<Self, IndexError> {
        let dir = dir.to_path_buf();
        let blocking_dir = dir.clone();
        let (shard, dimension) =
            tokio::task::spawn_blocking(move || open_or_create(&blocking_dir, dimension, params))
                .await
                .map_err(|e| IndexError::Task(e.to_string()))??;
        Ok(Self {
            inner: Arc::new(Inner {
                dir,
                params,
                shard: RwLock::new(Some(shard)),
                gate: RwLock::new(()),
                dimension: AtomicUsize::new(dimension),
                upserts_since_optimize: AtomicUsize::new(0),
                optimizing: AtomicBool::new(false),
                bulk_written: AtomicBool::new(false),
                optimize_lock: Mutex::new(()),
                idfs: StatsCache::default(),
            }),
        })
    }

    /// Run `f` with the shard on the blocking pool.
    async fn with_shard<T: Send + 'static>(
        &self,
        f: impl FnOnce(&Inner, &EdgeShard) -> Result<T, IndexError> + Send + 'static,
    ) -> Result<T, IndexError> {
        let inner = self.inner.clone();
        tokio::task::spawn_blocking(move || {
            let guard = inner.shard.read().unwrap_or_else(|e| e.into_inner());
            let shard = guard
                .as_ref()
                .ok_or_else(|| IndexError::Engine("index is being reset".into()))?;
            f(&inner, shard)
        })
        .await
        .map_err(|e| IndexError::Task(e.to_string()))?
    }

    /// Build HNSW graphs and merge segments now (blocking the caller until done).
    pub async fn optimize(&self) -> Result<(), IndexError> {
        self.with_shard(|inner, shard| inner.optimize(shard, all_threads()))
            .await
    }

    /// Points into the shard, without starting an optimisation.
    async fn write_points(&self, points: Vec<IndexPoint>) -> Result<(), IndexError> {
        if points.is_empty() {
            return Ok(());
        }
        let expected = self.dimension();
        if let Some(bad) = points.iter().find(|p| p.vector.len() != expected) {
            return Err(IndexError::Dimension {
                expected,
                got: bad.vector.len(),
            });
        }
        let batch = points
            .into_iter()
            .map(point)
            .collect::<Result<Vec<_>, _>>()?;
        self.with_shard(move |inner, shard| {
            inner.update(
                shard,
                UpdateOperation::PointOperation(PointOperations::UpsertPoints(
                    PointInsertOperations::PointsList(batch),
                )),
            )
        })
        .await
    }

    fn maybe_optimize_in_background(&self, added: usize) {
        let total = self
            .inner
            .upserts_since_optimize
            .fetch_add(added, Ordering::Relaxed)
            + added;
        if total < OPTIMIZE_EVERY || self.inner.optimizing.swap(true, Ordering::AcqRel) {
            return;
        }
        let inner = self.inner.clone();
        tokio::task::spawn_blocking(move || {
            let guard = inner.shard.read().unwrap_or_else(|e| e.into_inner());
            if let Some(shard) = guard.as_ref()
                && let Err(e) = inner.optimize(shard, background_threads())
            {
                tracing::warn!(error = %e, "background index optimisation failed");
            }
            inner.optimizing.store(false, Ordering::Release);
        });
    }
}

impl Inner {
    /// Callers hold the shard read lock first, then `optimize_lock`: one lock order for all.
    /// The build uses `threads` threads; background optimisations go back to theirs after.
    fn optimize(&self, shard: &EdgeShard, threads: usize) -> Result<(), IndexError> {
        let _running = self.optimize_lock.lock().unwrap_or_else(|e| e.into_inner());
        let _gate = self.gate.read().unwrap_or_else(|e| e.into_inner());
        self.upserts_since_optimize.store(0, Ordering::Relaxed);
        let started = std::time::Instant::now();
        set_indexing_threads(shard, threads)?;
        let optimized = shard.optimize().map_err(engine);
        let restored = set_indexing_threads(shard, background_threads());
        tracing::debug!(
            seconds = started.elapsed().as_secs_f64(),
            threads,
            segments = shard.info().segments_count,
            "index optimised"
        );
        optimized?;
        restored
    }

    fn update(&self, shard: &EdgeShard, op: UpdateOperation) -> Result<(), IndexError> {
        let _gate = self.gate.read().unwrap_or_else(|e| e.into_inner());
        shard.update(op).map_err(engine)
    }

    /// Flush without ever queueing behind a long optimisation as a waiting writer (which would
    /// stall every update behind us): poll for the exclusive gate instead.
    fn flush(&self, shard: &EdgeShard) {
        loop {
            if let Ok(_gate) = self.gate.try_write() {
                shard.flush();
                return;
            }
            std::thread::sleep(Duration::from_millis(20));
        }
    }
}

/// Every scope a query reads, each once: its namespaces × types (all when none) × statuses.
/// (`dense_search` searches each: one named twice would list its hits twice.)
fn scopes(query: &IndexQuery) -> Vec<String> {
    let types: &[MemoryType] = if query.memory_types.is_empty() {
        &MemoryType::ALL
    } else {
        &query.memory_types
    };
    let mut scopes: Vec<String> = query
        .namespaces
        .iter()
        .flat_map(|n| {
            types
                .iter()
                .flat_map(move |t| query.statuses.iter().map(move |s| scope(n, *t, *s)))
        })
        .collect();
    scopes.sort_unstable();
    scopes.dedup();
    scopes
}

/// `scope IN scopes`, and the query's time range.
fn filter(scopes: Vec<String>, query: &IndexQuery) -> Filter {
    let mut must = vec![Condition::Field(FieldCondition::new_match(
        key(SCOPE),
        Match::from(scopes),
    ))];
    if query.occurred_from.is_some() || query.occurred_to.is_some() {
        must.push(Condition::Field(FieldCondition::new_range(
            key(OCCURRED_AT),
            Range {
                gte: query.occurred_from.map(|v| OrderedFloat(v as f64)),
                lte: query.occurred_to.map(|v| OrderedFloat(v as f64)),
                gt: None,
                lt: None,
            },
        )));
    }
    Filter {
        must: Some(must),
        ..Default::default()
    }
}

fn point(p: IndexPoint) -> Result<PointStructPersisted, IndexError> {
    let (dims, weights) = sparse::document(&p.terms);
    let vectors = Vectors::new_named([
        ("", Vector::new_dense(p.vector)),
        (LEXICAL, Vector::new_sparse(dims, weights).map_err(engine)?),
    ]);
    Ok(PointStruct::new(
        PointId::Uuid(p.id),
        vectors,
        json!({
            SCOPE: scope(&p.namespace, p.memory_type, p.status),
            OCCURRED_AT: p.occurred_at,
        }),
    )
    .into())
}

fn sparse_search(dims: Vec<u32>, weights: Vec<f32>) -> QueryEnum {
    QueryEnum::Nearest(NamedQuery::new(
        VectorInternal::Sparse(SparseVector {
            indices: dims,
            values: weights,
        }),
        LEXICAL,
    ))
}

fn hit_id(p: &ScoredPoint) -> Option<MemoryId> {
    match p.id {
        PointId::Uuid(id) => Some(id),
        PointId::NumId(_) => None,
    }
}

/// The IDF the engine gives dimension `dim` (over every point, whatever a search filters):
/// the best one-term score divided by that point's weight for the term. A term no point holds
/// gets the highest IDF, as FTS5 counts it: a query whose telling word is nowhere is then
/// matched weakly.
fn term_idf(shard: &EdgeShard, dim: u32, points: f64) -> Result<f64, IndexError> {
    let best = shard
        .search(SearchRequest {
            query: sparse_search(vec![dim], vec![1.0]),
            filter: None,
            params: None,
            limit: 1,
            offset: 0,
            with_payload: Some(WithPayloadInterface::Bool(false)),
            with_vector: Some(WithVector::Selector(vec![LEXICAL.into()])),
            score_threshold: None,
        })
        .map_err(engine)?;
    let weight = best.first().and_then(|p| match &p.vector {
        Some(VectorStructInternal::Named(named)) => match named.get(LEXICAL) {
            Some(VectorInternal::Sparse(v)) => v
                .indices
                .iter()
                .position(|d| *d == dim)
                .map(|at| (p.score, v.values[at])),
            _ => None,
        },
        _ => None,
    });
    Ok(match weight {
        Some((score, weight)) if weight > 0.0 => f64::from(score) / f64::from(weight),
        _ => sparse::idf(points, 0.0),
    })
}

/// The points in the index, from each segment's own tally. Unfiltered, the engine's estimate
/// is that tally, exact; its `exact` count instead listed every point id, which each lexical
/// search paid for: `bench import --locomo` at 1M rows, namespaces of ~550, search p50
/// 16.6 → 7.7 ms (2.7 ms at 100k).
fn point_count(shard: &EdgeShard) -> Result<usize, IndexError> {
    shard
        .count(CountRequest {
            filter: None,
            exact: false,
        })
        .map_err(engine)
}

/// The lexical arm (see the module notes): the terms' IDFs (remembered in `idfs` between
/// searches), the common ones left out (`lexical::selective`), then one sparse
/// search under the query's filter.
fn lexical_search(
    shard: &EdgeShard,
    idfs: &StatsCache<f64>,
    query: &IndexQuery,
    terms: &[String],
    max_df: f64,
) -> Result<LexicalHits, IndexError> {
    if terms.is_empty() {
        return Ok(LexicalHits::default());
    }
    let count = point_count(shard)?;
    let points = count as f64;
    let (mut known, missing) = idfs.lookup(count as i64, terms);
    let read = missing
        .iter()
        .map(|t| Ok((t.clone(), term_idf(shard, sparse::dimension(t), points)?)))
        .collect::<Result<Vec<_>, IndexError>>()?;
    idfs.remember(count as i64, &missing, &read);
    known.extend(read);
    let mut by_rarity: Vec<(u32, f64)> = known
        .iter()
        .map(|(t, idf)| (sparse::dimension(t), *idf))
        .collect();
    // Two terms of one dimension (repeated, or colliding) are one term to the engine.
    by_rarity.sort_by_key(|(dim, _)| *dim);
    by_rarity.dedup_by_key(|(dim, _)| *dim);
    by_rarity.sort_by(|a, b| b.1.total_cmp(&a.1));
    // The IDF at which a term is held by `max_df` of the points.
    let common = sparse::idf(points, max_df * points);
    let kept = lexical::selective(by_rarity, points, max_df, |(_, idf)| *idf < common);
    let full_match = kept.iter().map(|(_, idf)| idf).sum();
    // In dimension order, as the engine expects of a sparse vector; weight 1 each.
    let mut dims: Vec<u32> = kept.iter().map(|(dim, _)| *dim).collect();
    dims.sort_unstable();
    let weights = vec![1.0; dims.len()];
    let found = shard
        .search(SearchRequest {
            query: sparse_search(dims, weights),
            filter: Some(filter(scopes(query), query)),
            params: None,
            limit: query.limit,
            offset: 0,
            with_payload: Some(WithPayloadInterface::Bool(false)),
            with_vector: None,
            score_threshold: None,
        })
        .map_err(engine)?;
    Ok(LexicalHits {
        hits: found
            .iter()
            .filter_map(|p| {
                hit_id(p).map(|id| LexicalHit {
                    id,
                    score: f64::from(p.score),
                })
            })
            .collect(),
        full_match: Some(full_match),
    })
}

/// The dense arm: one search per scope, merged by score. There is no graph over all points
/// (`m = 0`), only each large scope's own (see `config`), so a walk started in one scope
/// never reaches another: a search of several scopes at once would have returned one
/// scope's points. (`EdgeIndex::search` walks the scopes side by side instead.)
fn dense_search(
    shard: &EdgeShard,
    params: HnswParams,
    query: &IndexQuery,
) -> Result<Vec<Hit>, IndexError> {
    let mut hits: Vec<Hit> = Vec::new();
    for scope in scopes(query) {
        hits.extend(dense_search_scope(shard, params, query, scope)?);
    }
    keep_best(&mut hits, query.limit);
    Ok(hits)
}

/// `dense_search` in one scope: its best `query.limit` points, unordered.
fn dense_search_scope(
    shard: &EdgeShard,
    params: HnswParams,
    query: &IndexQuery,
    scope: String,
) -> Result<Vec<Hit>, IndexError> {
    let ranged = query.occurred_from.is_some() || query.occurred_to.is_some();
    let filter = filter(vec![scope], query);
    let mut found = shard
        .search(dense_request(query, params, filter.clone(), false))
        .map_err(engine)?;
    if ranged && found.len() < query.limit {
        // A walk finds nothing when none of the scope's entry points passes the time
        // range (the engine then returns no points at all); a scan of the points that
        // pass it does not miss them. Without a range the entry points are the scope's
        // own, and a scanned scope returns all it holds: no count needed (most searches
        // name three scopes, two of them often empty, each a count).
        let held = shard
            .count(CountRequest {
                filter: Some(filter.clone()),
                exact: true,
            })
            .map_err(engine)?;
        if held > found.len() {
            found = shard
                .search(dense_request(query, params, filter, true))
                .map_err(engine)?;
        }
    }
    Ok(dense_hits(&found).collect())
}

/// The engine's points as hits (a point without a UUID id is not one of ours).
fn dense_hits(found: &[ScoredPoint]) -> impl Iterator<Item = Hit> + '_ {
    found
        .iter()
        .filter_map(|p| hit_id(p).map(|id| Hit { id, score: p.score }))
}

/// The `limit` best of several scopes' hits, best first.
fn keep_best(hits: &mut Vec<Hit>, limit: usize) {
    hits.sort_by(|a, b| b.score.total_cmp(&a.score));
    hits.truncate(limit);
}

/// `dense_search` for each of `vectors` (`query`'s own vector is not read): each scope's
/// points scanned once for all of them where the engine scans (`EdgeShard::search_many`).
/// With a time range, one `dense_search` each (its fallback to an exact scan is per query).
fn dense_search_many(
    shard: &EdgeShard,
    params: HnswParams,
    query: &IndexQuery,
    vectors: Vec<Vec<f32>>,
) -> Result<Vec<Vec<Hit>>, IndexError> {
    if query.occurred_from.is_some() || query.occurred_to.is_some() {
        return vectors
            .into_iter()
            .map(|vector| {
                let one = IndexQuery {
                    vector,
                    ..query.clone()
                };
                dense_search(shard, params, &one)
            })
            .collect();
    }
    let mut hits: Vec<Vec<Hit>> = vec![Vec::new(); vectors.len()];
    let queries: Vec<QueryEnum> = vectors
        .into_iter()
        .map(|v| QueryEnum::Nearest(NamedQuery::default_dense(v)))
        .collect();
    for scope in scopes(query) {
        let request = dense_request(query, params, filter(vec![scope], query), false);
        let found = shard
            .search_many(request, queries.clone())
            .map_err(engine)?;
        for (hits, found) in hits.iter_mut().zip(found) {
            hits.extend(dense_hits(&found));
        }
    }
    for hits in &mut hits {
        keep_best(hits, query.limit);
    }
    Ok(hits)
}

/// A dense search of the points `filter` passes; `exact`: every one of them scored with its
/// float vector, no graph.
fn dense_request(
    query: &IndexQuery,
    params: HnswParams,
    filter: Filter,
    exact: bool,
) -> SearchRequest {
    SearchRequest {
        query: QueryEnum::Nearest(NamedQuery::default_dense(query.vector.clone())),
        filter: Some(filter),
        params: Some(SearchParams {
            hnsw_ef: Some(query.ef.unwrap_or(params.ef).max(query.limit)),
            // Three times the candidates by their int8 scores, rescored with the float
            // vectors: a namespace small enough to be scanned rather than walked was
            // ranked by int8 scores alone. `bench import --locomo` at 100k (namespaces
            // of ~550 turns): recall@10 0.944 → 0.998, search p50 2.7 ms both; the
            // graph walk's recall is bounded by `hnsw_ef`, not by this.
            quantization: Some(QuantizationSearchParams {
                ignore: false,
                rescore: Some(true),
                oversampling: Some(3.0),
            }),
            exact,
            ..Default::default()
        }),
        limit: query.limit,
        offset: 0,
        with_payload: Some(WithPayloadInterface::Bool(false)),
        with_vector: None,
        score_threshold: None,
    }
}

#[async_trait]
impl VectorIndex for EdgeIndex {
    fn dimension(&self) -> usize {
        self.inner.dimension.load(Ordering::Acquire)
    }

    fn is_shared(&self) -> bool {
        false
    }

    async fn upsert(&self, points: Vec<IndexPoint>) -> Result<(), IndexError> {
        let n = points.len();
        self.write_points(points).await?;
        self.maybe_optimize_in_background(n);
        Ok(())
    }

    /// No optimisation until the load's one `optimize` at its end: optimising every 20k points
    /// instead rebuilt the merged segment's graph each time (60k points: 29 s, 75 s, then
    /// 133 s). The points wait in one appendable segment, whose sparse index re-walked a whole
    /// posting list on every append in qdrant-edge 0.7 (100k × 512-d: 106 s of a 208 s import,
    /// growing with the square of the points); the vendored engine stops that walk early
    /// (vendor/README.md).
    async fn upsert_bulk(&self, points: Vec<IndexPoint>) -> Result<(), IndexError> {
        self.inner.bulk_written.store(true, Ordering::Relaxed);
        self.write_points(points).await
    }

    /// Optimise, then flush: the engine's new segments are durable only after a flush, and a
    /// one-shot command (an import) may have nothing else left to flush before it exits.
    async fn optimize(&self) -> Result<(), IndexError> {
        EdgeIndex::optimize(self).await?;
        VectorIndex::flush(self).await
    }

    async fn delete(&self, ids: Vec<MemoryId>) -> Result<(), IndexError> {
        if ids.is_empty() {
            return Ok(());
        }
        let ids = ids.into_iter().map(PointId::Uuid).collect();
        self.with_shard(move |inner, shard| {
            inner.update(
                shard,
                UpdateOperation::PointOperation(PointOperations::DeletePoints { ids }),
            )
        })
        .await
    }

    async fn search(&self, query: IndexQuery) -> Result<Vec<Hit>, IndexError> {
        let expected = self.dimension();
        if query.vector.len() != expected {
            return Err(IndexError::Dimension {
                expected,
                got: query.vector.len(),
            });
        }
        // Each scope walked on a blocking thread of its own, side by side: a search's scopes
        // (usually its namespace's three memory types) are independent walks, and one after
        // another they were most of a search's time. 100k random 384-d points in one
        // namespace (three scopes of ~33k), limit 30, `ef` 128, 2 cores: p50 6.65 → 4.84 ms,
        // the same hits (docs/benchmarks.md).
        let query = Arc::new(query);
        let walks = scopes(&query).into_iter().map(|scope| {
            let query = query.clone();
            self.with_shard(move |inner, shard| {
                dense_search_scope(shard, inner.params, &query, scope)
            })
        });
        let mut hits: Vec<Hit> = futures::future::try_join_all(walks)
            .await?
            .into_iter()
            .flatten()
            .collect();
        keep_best(&mut hits, query.limit);
        Ok(hits)
    }

    async fn search_many(
        &self,
        query: IndexQuery,
        vectors: Vec<Vec<f32>>,
    ) -> Result<Vec<Vec<Hit>>, IndexError> {
        let expected = self.dimension();
        if let Some(v) = vectors.iter().find(|v| v.len() != expected) {
            return Err(IndexError::Dimension {
                expected,
                got: v.len(),
            });
        }
        if vectors.is_empty() {
            return Ok(Vec::new());
        }
        self.with_shard(move |inner, shard| dense_search_many(shard, inner.params, &query, vectors))
            .await
    }

    async fn lexical_search(
        &self,
        query: &IndexQuery,
        terms: &[String],
        max_df: f64,
    ) -> Result<Option<LexicalHits>, IndexError> {
        let query = query.clone();
        let terms = terms.to_vec();
        self.with_shard(move |inner, shard| {
            lexical_search(shard, &inner.idfs, &query, &terms, max_df).map(Some)
        })
        .await
    }

    async fn count(&self) -> Result<usize, IndexError> {
        self.with_shard(|_, shard| point_count(shard)).await
    }

    async fn reset(&self, dimension: usize) -> Result<(), IndexError> {
        let inner = self.inner.clone();
        tokio::task::spawn_blocking(move || {
            let mut guard = inner.shard.write().unwrap_or_else(|e| e.into_inner());
            let _gate = inner.gate.write().unwrap_or_else(|e| e.into_inner());
            // Dropping the shard flushes it; nothing else can touch it while we hold both locks.
            drop(guard.take());
            std::fs::remove_dir_all(&inner.dir).or_else(|e| {
                if e.kind() == std::io::ErrorKind::NotFound {
                    Ok(())
                } else {
                    Err(engine(e))
                }
            })?;
            *guard = Some(create(&inner.dir, dimension, inner.params)?);
            inner.dimension.store(dimension, Ordering::Release);
            inner.upserts_since_optimize.store(0, Ordering::Relaxed);
            Ok(())
        })
        .await
        .map_err(|e| IndexError::Task(e.to_string()))?
    }

    /// After a bulk load's writes, the flushed vectors' pages are given back: only the build at
    /// the load's end reads them again, and held until then they were the largest share of an
    /// import's peak RSS (192 of 425 MB at 100k × 512-d). Other writes keep theirs, which
    /// searches read.
    async fn flush(&self) -> Result<(), IndexError> {
        self.with_shard(|inner, shard| {
            inner.flush(shard);
            // The flush is done and durable whatever this says: a failure costs memory only.
            if inner.bulk_written.swap(false, Ordering::Relaxed)
                && let Err(e) = shard.release_vector_pages()
            {
                tracing::warn!(error = %e, "releasing the bulk load's vector pages failed");
            }
            Ok(())
        })
        .await
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn names(dir: &Path) -> Vec<String> {
        let mut names: Vec<String> = std::fs::read_dir(dir)
            .unwrap()
            .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
            .collect();
        names.sort();
        names
    }

    #[test]
    fn trimming_keeps_the_newest_closed_segment_and_skips_a_wal_in_use() {
        let dir = tempfile::tempdir().unwrap();
        let wal = dir.path().join("wal");
        std::fs::create_dir(&wal).unwrap();
        for (name, bytes) in [
            ("closed-0", 10),
            ("closed-9", 20),
            ("closed-30", 30),
            ("open-4", 40),
        ] {
            std::fs::write(wal.join(name), vec![0u8; bytes]).unwrap();
        }
        let in_use = std::fs::File::open(&wal).unwrap();
        in_use.lock().unwrap();
        assert_eq!(trim_wal(dir.path()).unwrap(), 0);
        assert_eq!(names(&wal).len(), 4, "a locked WAL is left alone");
        drop(in_use);
        assert_eq!(trim_wal(dir.path()).unwrap(), 30);
        // By start index, not by name: closed-30 is the newest.
        assert_eq!(names(&wal), vec!["closed-30", "open-4"]);
        assert_eq!(trim_wal(dir.path()).unwrap(), 0);
    }
}
