//! `hindsight bench search`: load N synthetic memories through the real write path (dedup on),
//! then time searches through the real search path. Vectors come from `RandomEmbedder` (a seeded
//! hash → unit vector), so the embedder costs nothing and is not what is measured.

use std::collections::HashMap;
use std::sync::Arc;
use std::time::Instant;

use async_trait::async_trait;
use futures::StreamExt;
use rand::{Rng, SeedableRng};
use serde::Serialize;

use hindsight::domain::{MemoryId, MemoryType};
use hindsight::embed::{EmbedError, Embedder, l2_normalize};
use hindsight::index::{EdgeIndex, HnswParams};
use hindsight::service::{
    BatchWrite, MemoryService, Rules, SearchRequest, WriteRequest, WriteStatus,
};
use hindsight::store::{MemoryStore, PoolSize, PostgresStore, SqliteStore};

mod cgroup;
pub mod console;
pub mod daemon;
pub mod distill_eval;
pub mod embed;
pub mod jobs;
pub mod locomo;
pub mod retrieval_eval;
pub mod screening_eval;
pub mod transfer;
pub mod updates_eval;

/// An eval's scratch store and embedded index in `scratch` (a SQLite file signed with a key of
/// its own, the index beside it).
pub(crate) async fn scratch_store(
    scratch: &std::path::Path,
    dimension: usize,
) -> Result<
    (
        std::sync::Arc<dyn hindsight::store::MemoryStore>,
        std::sync::Arc<dyn hindsight::index::VectorIndex>,
    ),
    BenchError,
> {
    let store = hindsight::store::SqliteStore::open(
        &scratch.join("eval.db"),
        hindsight::signing::Signer::ephemeral(),
    )
    .await?;
    let index = hindsight::index::EdgeIndex::open(
        &scratch.join("index"),
        dimension,
        hindsight::index::HnswParams::default(),
    )
    .await?;
    Ok((std::sync::Arc::new(store), std::sync::Arc::new(index)))
}

/// Deterministic pseudo-random unit vectors keyed by the text.
pub struct RandomEmbedder {
    dimension: usize,
    id: String,
}

impl RandomEmbedder {
    pub fn new(dimension: usize) -> Self {
        Self {
            dimension,
            id: format!("bench-random/{dimension}"),
        }
    }

    /// The text's vector; a text `≈ X` lies near X's vector (see
    /// `near_duplicate`).
    pub fn vector(&self, text: &str) -> Vec<f32> {
        match text.split_once(NEAR_DUPLICATE_OF) {
            Some((_, base)) => self.near_duplicate(base, text),
            None => self.seeded(text),
        }
    }

    fn seeded(&self, text: &str) -> Vec<f32> {
        let seed = xxhash_rust::xxh3::xxh3_64(text.as_bytes());
        let mut rng = rand::rngs::StdRng::seed_from_u64(seed);
        let mut v: Vec<f32> = (0..self.dimension)
            .map(|_| rng.random::<f32>() * 2.0 - 1.0)
            .collect();
        l2_normalize(&mut v);
        v
    }

    /// A unit vector at cosine 0.93–0.97 (set by `text`'s hash) from `base`'s: the base plus
    /// a random direction orthogonal to it, scaled so the angle is exact. Above the default
    /// dedup threshold (0.92) with room for the index's int8 scores, below a verbatim repeat.
    fn near_duplicate(&self, base: &str, text: &str) -> Vec<f32> {
        let base = self.seeded(base);
        let mut noise = self.seeded(text);
        // Both are unit vectors: the cosine is the noise's component along the base.
        let along = hindsight::embed::cosine(&noise, &base);
        noise
            .iter_mut()
            .zip(&base)
            .for_each(|(n, b)| *n -= along * b);
        l2_normalize(&mut noise);
        let cos =
            0.93 + 0.04 * (xxhash_rust::xxh3::xxh3_64(text.as_bytes()) % 1001) as f32 / 1000.0;
        let scale = (1.0 / (cos * cos) - 1.0).sqrt();
        let mut v: Vec<f32> = base
            .iter()
            .zip(&noise)
            .map(|(b, n)| b + scale * n)
            .collect();
        l2_normalize(&mut v);
        v
    }
}

/// The `i`th synthetic memory's text.
fn synthetic_text(i: usize, in_flight: usize) -> String {
    match planted_base(i, in_flight) {
        Some(j) => format!("{NEAR_DUPLICATE_OF}synthetic memory number {j}"),
        None => format!("synthetic memory number {i}"),
    }
}

/// Marks a synthetic text that re-says an earlier one (`RandomEmbedder::vector`). A mark, not
/// words: the revision rules read "≈ synthetic memory number 7" as a restatement of
/// "synthetic memory number 7" (merged), as they would "The user prefers dark mode." of "the
/// user prefers dark mode"; with words added they would read another statement (kept apart).
/// Each base is re-said once (`planted_base`), so the texts need not differ otherwise.
const NEAR_DUPLICATE_OF: &str = "≈ ";

/// Every `PLANT_EVERY`th synthetic write re-says an earlier memory of its scope in other words
/// (a near-duplicate vector), so the load measures whether dedup finds what it should merge.
const PLANT_EVERY: usize = 25;

/// The load's namespaces (synthetic corpus) and memory types (every corpus), taken in turn.
const NAMESPACES: [&str; 4] = ["alpha", "beta", "gamma", "delta"];
const TYPES: [MemoryType; 3] = [
    MemoryType::Episodic,
    MemoryType::Semantic,
    MemoryType::Working,
];

/// The synthetic load's scopes: write `i` has namespace `i % 4` and type `i % 3`, so (4 and 3
/// having no common factor) its scope is `i % 12`.
const SCOPES: usize = NAMESPACES.len() * TYPES.len();

/// Write `i`'s memory type.
fn memory_type_of(i: usize) -> MemoryType {
    TYPES[i % TYPES.len()]
}

/// Synthetic write `i`'s namespace and memory type, over the first `namespaces` of
/// `NAMESPACES` (1, 2 or 4: a divisor of 4, so a write and the earlier one it re-says, 12
/// apart, stay in one scope).
fn synthetic_scope(i: usize, namespaces: usize) -> (&'static str, MemoryType) {
    (NAMESPACES[i % namespaces], memory_type_of(i))
}

/// The namespace counts `--namespaces` accepts (`synthetic_scope`).
pub const SYNTHETIC_NAMESPACES: [usize; 3] = [1, 2, 4];

/// The earlier write that write `i` re-says, if it is a planted near-duplicate: the last of its
/// scope at or before `i / 2`, so bases lie all through the store (old, merged segments and
/// the fresh one alike). Each base is re-said once (planted writes of a scope lie 300 apart,
/// their bases 150), is never a planted write itself (that one was merged away), and was
/// written before `i` started (`in_flight` writes run together).
fn planted_base(i: usize, in_flight: usize) -> Option<usize> {
    if i % PLANT_EVERY != PLANT_EVERY - 1 {
        return None;
    }
    let half = i / 2;
    let mut j = half.checked_sub((half % SCOPES + SCOPES - i % SCOPES) % SCOPES)?;
    if j % PLANT_EVERY == PLANT_EVERY - 1 {
        j = j.checked_sub(SCOPES)?;
    }
    (j + in_flight < i).then_some(j)
}

#[async_trait]
impl Embedder for RandomEmbedder {
    fn id(&self) -> &str {
        &self.id
    }
    fn dimension(&self) -> usize {
        self.dimension
    }
    async fn embed(&self, texts: &[String]) -> Result<Vec<Vec<f32>>, EmbedError> {
        Ok(texts.iter().map(|t| self.vector(t)).collect())
    }
}

/// Writes the synthetic corpus `hindsight bench search` loads, as vectors, for another store to
/// load the very same (`scripts/side-by-side.sh`): in `dir`, `memories.f32` and `queries.f32`
/// (rows of `dimension` little-endian f32), `memories.tsv` (each memory's namespace and
/// memory type) and `queries.tsv` (each query's namespace). `in_flight` as the search bench's
/// `writers × batch`, which decides which writes are planted near-duplicates.
pub fn write_synthetic_vectors(
    dir: &std::path::Path,
    n: usize,
    dimension: usize,
    queries: usize,
    in_flight: usize,
    namespaces: usize,
) -> std::io::Result<()> {
    use std::io::Write;
    std::fs::create_dir_all(dir)?;
    let embedder = RandomEmbedder::new(dimension);
    let corpus = Corpus::Synthetic { namespaces };
    let file = |name: &str| -> std::io::Result<std::io::BufWriter<std::fs::File>> {
        Ok(std::io::BufWriter::new(std::fs::File::create(
            dir.join(name),
        )?))
    };
    let (mut vectors, mut rows) = (file("memories.f32")?, file("memories.tsv")?);
    for i in 0..n {
        let (namespace, content) = corpus.memory(i, in_flight);
        for x in embedder.vector(&content) {
            vectors.write_all(&x.to_le_bytes())?;
        }
        writeln!(rows, "{namespace}\t{}", memory_type_of(i).as_str())?;
    }
    let (mut vectors_q, mut rows_q) = (file("queries.f32")?, file("queries.tsv")?);
    for q in 0..queries {
        let (namespace, text) = corpus.query(q, n);
        for x in embedder.vector(&text) {
            vectors_q.write_all(&x.to_le_bytes())?;
        }
        writeln!(rows_q, "{namespace}")?;
    }
    for mut out in [vectors, rows, vectors_q, rows_q] {
        out.flush()?;
    }
    Ok(())
}

/// What the benchmark's memories say.
pub enum Corpus {
    /// `synthetic memory number {i}`, queries `query {q}`: the vector path, words barely used;
    /// over `namespaces` namespaces (`SYNTHETIC_NAMESPACES`), each query asking one.
    Synthetic { namespaces: usize },
    /// Real text: LoCoMo's turns repeated to N (each repetition its own namespaces, so the
    /// write path's dedup leaves them be), queried with LoCoMo's questions, so the full-text
    /// arm works on words as it would in use.
    Locomo(Vec<locomo::Conversation>),
    /// The same turns all in one namespace (each repetition marked `(copy r)`, so dedup leaves
    /// it be): one user's large store, where no namespace filter narrows the full-text match.
    LocomoOneNamespace(Vec<locomo::Conversation>),
}

/// The one namespace of `Corpus::LocomoOneNamespace`.
const ONE_NAMESPACE: &str = "locomo";

impl Corpus {
    fn name(&self) -> &'static str {
        match self {
            Corpus::Synthetic { .. } => "synthetic",
            Corpus::Locomo(_) => "locomo",
            Corpus::LocomoOneNamespace(_) => "locomo-one-namespace",
        }
    }

    /// The `i`th memory: (namespace, content). `in_flight` writes run together.
    fn memory(&self, i: usize, in_flight: usize) -> (String, String) {
        match self {
            Corpus::Synthetic { namespaces } => (
                synthetic_scope(i, *namespaces).0.to_owned(),
                synthetic_text(i, in_flight),
            ),
            Corpus::Locomo(conversations) => {
                let (repetition, conversation, turn) = locomo_turn(conversations, i);
                (
                    format!("{}/r{repetition}", conversation.namespace),
                    turn.content.clone(),
                )
            }
            Corpus::LocomoOneNamespace(conversations) => {
                let (repetition, _, turn) = locomo_turn(conversations, i);
                let content = if repetition == 0 {
                    turn.content.clone()
                } else {
                    format!("{} (copy {repetition})", turn.content)
                };
                (ONE_NAMESPACE.to_owned(), content)
            }
        }
    }

    /// The `q`th query: (namespace, text), over the repetitions that `n` memories fill.
    fn query(&self, q: usize, n: usize) -> (String, String) {
        match self {
            Corpus::Synthetic { namespaces } => {
                (NAMESPACES[q % namespaces].to_owned(), format!("query {q}"))
            }
            Corpus::Locomo(conversations) => {
                let questions: Vec<(&locomo::Conversation, &locomo::Question)> = conversations
                    .iter()
                    .flat_map(|c| c.questions.iter().map(move |question| (c, question)))
                    .collect();
                let (conversation, question) = questions[q % questions.len()];
                let turns: usize = conversations.iter().map(|c| c.turns.len()).sum();
                let repetitions = n.div_ceil(turns.max(1)).max(1);
                let repetition = (q / questions.len().max(1)) % repetitions;
                (
                    format!("{}/r{repetition}", conversation.namespace),
                    question.question.clone(),
                )
            }
            Corpus::LocomoOneNamespace(conversations) => {
                let questions: Vec<&locomo::Question> =
                    conversations.iter().flat_map(|c| &c.questions).collect();
                let question = questions[q % questions.len().max(1)];
                (ONE_NAMESPACE.to_owned(), question.question.clone())
            }
        }
    }
}

/// The turn the `i`th memory repeats: (repetition, its conversation, the turn).
fn locomo_turn(
    conversations: &[locomo::Conversation],
    i: usize,
) -> (usize, &locomo::Conversation, &locomo::Turn) {
    let (repetition, c, t) = locomo_turn_at(conversations, i);
    (repetition, &conversations[c], &conversations[c].turns[t])
}

/// Where the `i`th of LoCoMo's turns repeated in order falls: (repetition, conversation, turn).
pub(crate) fn locomo_turn_at(
    conversations: &[locomo::Conversation],
    i: usize,
) -> (usize, usize, usize) {
    let total: usize = conversations.iter().map(|c| c.turns.len()).sum();
    let (repetition, mut offset) = (i / total, i % total);
    for (c, conversation) in conversations.iter().enumerate() {
        if offset < conversation.turns.len() {
            return (repetition, c, offset);
        }
        offset -= conversation.turns.len();
    }
    unreachable!("offset < total")
}

#[derive(Debug, Serialize)]
pub struct SearchBenchReport {
    pub corpus: &'static str,
    /// The synthetic corpus's namespaces (each query asks one).
    pub namespaces: Option<usize>,
    /// The search arms timed (`search_arms`).
    pub arms: &'static str,
    pub n: usize,
    pub dimension: usize,
    pub backend: &'static str,
    pub index: &'static str,
    /// Writes in flight at once during the load (agents writing together).
    pub writers: usize,
    /// Writes per call: 1, each on its own (`memory_write`); more, batched
    /// (`memory_write_batch`), `writers` batches in flight.
    pub batch: usize,
    pub load_seconds: f64,
    pub writes_per_second: f64,
    /// Writes merged into an existing memory: the planted near-duplicates dedup found, plus any
    /// write merged where it should not have been (`merged_on_load - planted_merged`).
    pub merged_on_load: usize,
    /// Near-duplicates planted in the synthetic load (`PLANT_EVERY`), each re-saying one
    /// earlier memory of its scope at cosine 0.93–0.97.
    pub planted_duplicates: usize,
    /// Planted near-duplicates merged into the very memory they re-say.
    pub planted_merged: usize,
    /// `planted_merged / planted_duplicates`: the dedup probe's recall (synthetic corpus only).
    pub dedup_recall: Option<f64>,
    /// The dedup probe asked up to `PROBE_SAMPLE` stored memories' own vectors after the load:
    /// the share it finds (`probe_recall`; synthetic corpus only).
    pub probe_recall: Option<f64>,
    pub optimize_seconds: f64,
    pub queries: usize,
    pub top_k: usize,
    pub search_p50_ms: f64,
    pub search_p95_ms: f64,
    pub search_p99_ms: f64,
    pub search_max_ms: f64,
    /// Each stage of a search (`SearchStages`, in the order they run) as p50/p99 over the
    /// queries, so a regression shows which stage moved. The dense and lexical arms run side by
    /// side; the stages' p50s add up to about `search_p50_ms` with the slower arm's.
    pub stages: Vec<StageFigures>,
    pub rss_mb: f64,
    /// `rss_mb` split: heap and other private memory, and mapped file pages (reclaimable).
    pub rss_anon_mb: f64,
    pub rss_file_mb: f64,
    pub peak_rss_mb: f64,
    /// The index's top 10 against exact cosine over every vector of the namespace, averaged
    /// over `RECALL_QUERIES` queries: what the ANN graph and quantization cost in accuracy
    /// (synthetic corpus only).
    pub recall_at_10: Option<f64>,
}

#[derive(Debug, Clone, Serialize)]
pub struct StageFigures {
    pub stage: &'static str,
    pub p50_ms: f64,
    pub p99_ms: f64,
}

/// p50/p99 of each stage over `runs`.
fn stage_figures(runs: &[hindsight::service::SearchStages]) -> Vec<StageFigures> {
    let Some(first) = runs.first() else {
        return Vec::new();
    };
    let ms = |v: f64| (v * 1e6).round() / 1e3;
    (0..first.named().len())
        .map(|i| {
            let mut times: Vec<f64> = runs.iter().map(|r| r.named()[i].1.as_secs_f64()).collect();
            times.sort_by(f64::total_cmp);
            StageFigures {
                stage: first.named()[i].0,
                p50_ms: ms(percentile(&times, 50.0)),
                p99_ms: ms(percentile(&times, 99.0)),
            }
        })
        .collect()
}

const RECALL_QUERIES: usize = 50;

/// Recall@10 of the index (active points of one namespace, any type) against brute force.
/// `holders` maps each stored memory to the write whose text it holds now (a merge may have
/// replaced its wording); vectors are regenerated from those texts, so the run holds no second
/// copy of them.
async fn index_recall_at_10(
    index: &EdgeIndex,
    embedder: &RandomEmbedder,
    holders: &HashMap<MemoryId, usize>,
    in_flight: usize,
    namespaces: usize,
) -> Result<f64, BenchError> {
    let mut found = 0;
    let mut wanted = 0;
    for q in 0..RECALL_QUERIES {
        let namespace = NAMESPACES[q % namespaces];
        let query = embedder.vector(&format!("recall query {q}"));
        let mut exact: Vec<(f32, MemoryId)> = holders
            .iter()
            .filter(|(_, i)| synthetic_scope(**i, namespaces).0 == namespace)
            .map(|(id, i)| {
                let v = embedder.vector(&synthetic_text(*i, in_flight));
                (hindsight::embed::cosine(&query, &v), *id)
            })
            .collect();
        exact.sort_by(|a, b| b.0.total_cmp(&a.0));
        exact.truncate(10);
        wanted += exact.len();
        found += found_in_top_10(index, query, namespace, exact.iter().map(|(_, id)| *id)).await?;
    }
    Ok(found as f64 / wanted.max(1) as f64)
}

/// Stored memories the dedup probe is asked to find again after a load, at most.
const PROBE_SAMPLE: usize = 10_000;

/// Of `writes` written in order, the dedup probe asks every `probe_stride`th: at most
/// `PROBE_SAMPLE` of them, spread over the whole load.
pub(crate) fn probe_stride(writes: usize) -> usize {
    writes.div_ceil(PROBE_SAMPLE).max(1)
}

/// The write path's dedup probe (`active_neighbours`: its beam, its candidates, its floor),
/// asked each sampled memory's own vector after the load, in its own namespace and type: the
/// share it finds that memory. A planted near-duplicate is found when its base's scope is
/// scanned whatever the beam; this asks every scope as the store ends up, walked graphs
/// included, where a narrow beam can miss a point it stands on.
async fn probe_recall(
    service: &MemoryService,
    embedder: &RandomEmbedder,
    holders: &HashMap<MemoryId, usize>,
    floor: f64,
    in_flight: usize,
    namespaces: usize,
) -> Result<f64, BenchError> {
    // Every `stride`th write: at most `PROBE_SAMPLE` of them, whatever share merged away.
    let writes = holders.values().max().map_or(0, |i| i + 1);
    let stride = probe_stride(writes);
    let (mut asked, mut found) = (0, 0);
    for (id, &i) in holders.iter().filter(|(_, i)| *i % stride == 0) {
        let (namespace, memory_type) = synthetic_scope(i, namespaces);
        let vector = embedder.vector(&synthetic_text(i, in_flight));
        let neighbours = service
            .active_neighbours(namespace, memory_type, &vector, floor)
            .await?;
        asked += 1;
        found += usize::from(neighbours.iter().any(|(_, m)| m.id == *id));
    }
    Ok(found as f64 / asked.max(1) as f64)
}

/// How many of `exact` (a query's true nearest neighbours) the index's 10 nearest to `vector`
/// hold, among the active points of `namespace` (any type): recall's numerator.
pub(crate) async fn found_in_top_10(
    index: &EdgeIndex,
    vector: Vec<f32>,
    namespace: &str,
    exact: impl IntoIterator<Item = MemoryId>,
) -> Result<usize, BenchError> {
    use hindsight::domain::Status;
    use hindsight::index::{IndexQuery, VectorIndex};
    let hits = index
        .search(IndexQuery {
            vector,
            namespaces: vec![namespace.to_owned()],
            memory_types: vec![],
            statuses: vec![Status::Active],
            occurred_from: None,
            occurred_to: None,
            limit: 10,
            ef: None,
        })
        .await?;
    Ok(exact
        .into_iter()
        .filter(|id| hits.iter().any(|h| h.id == *id))
        .count())
}

/// The `p`th percentile (0–100) of `sorted`, nearest rank; 0 when empty.
pub(crate) fn percentile(sorted: &[f64], p: f64) -> f64 {
    if sorted.is_empty() {
        return 0.0;
    }
    let rank = ((p / 100.0) * (sorted.len() - 1) as f64).round() as usize;
    sorted[rank.min(sorted.len() - 1)]
}

/// Where a bench or eval reports how far it is: `(phase, done, total)`; the CLI draws it.
pub type Tick<'a> = &'a (dyn Fn(&str, u64, Option<u64>) + Sync);

/// For callers that show no progress.
pub fn no_progress(_: &str, _: u64, _: Option<u64>) {}

/// `(VmRSS, VmHWM)` in MiB, from /proc (0 where unavailable).
pub fn rss_mb() -> (f64, f64) {
    rss_mb_of("self")
}

/// `(VmRSS, VmHWM)` in MiB of process `pid` (`self` for this one).
pub fn rss_mb_of(pid: &str) -> (f64, f64) {
    let [rss, peak] = status_mb(pid, ["VmRSS:", "VmHWM:"]);
    (rss, peak)
}

/// `/proc/<pid>/status` fields given in kB, in MiB (0 where unavailable).
pub(crate) fn status_mb<const N: usize>(pid: &str, names: [&str; N]) -> [f64; N] {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).unwrap_or_default();
    names.map(|name| {
        status
            .lines()
            .find(|l| l.starts_with(name))
            .and_then(|l| l.split_whitespace().nth(1))
            .and_then(|kb| kb.parse::<f64>().ok())
            .map_or(0.0, |kb| kb / 1024.0)
    })
}

pub(crate) type BenchError = Box<dyn std::error::Error + Send + Sync>;

/// Where the benchmark's rows go: a SQLite file in the run's temp dir, or a scratch database
/// created on a PostgreSQL server (and dropped afterwards) — never a database holding real data.
#[derive(Debug, Clone)]
pub enum BenchBackend {
    Sqlite,
    /// Server URL without a database name, e.g. `postgres://postgres@127.0.0.1:5432`.
    Postgres {
        server_url: String,
    },
}

impl BenchBackend {
    pub(crate) fn name(&self) -> &'static str {
        match self {
            BenchBackend::Sqlite => "sqlite",
            BenchBackend::Postgres { .. } => "postgresql",
        }
    }
}

/// A scratch PostgreSQL database for one run.
pub(crate) struct ScratchDatabase {
    server_url: String,
    name: String,
}

impl ScratchDatabase {
    pub(crate) async fn create(server_url: &str) -> Result<Self, BenchError> {
        use sqlx::{Connection, Executor};
        let name = format!("hindsight_bench_{}", uuid::Uuid::new_v4().simple());
        let mut admin = sqlx::PgConnection::connect(&format!("{server_url}/postgres")).await?;
        admin
            .execute(sqlx::AssertSqlSafe(format!("CREATE DATABASE {name}")))
            .await?;
        Ok(Self {
            server_url: server_url.to_owned(),
            name,
        })
    }

    pub(crate) fn url(&self) -> String {
        format!("{}/{}", self.server_url, self.name)
    }

    pub(crate) async fn drop_database(self) -> Result<(), BenchError> {
        use sqlx::{Connection, Executor};
        let mut admin =
            sqlx::PgConnection::connect(&format!("{}/postgres", self.server_url)).await?;
        admin
            .execute(sqlx::AssertSqlSafe(format!(
                "DROP DATABASE IF EXISTS {} WITH (FORCE)",
                self.name
            )))
            .await?;
        Ok(())
    }
}

/// What one `bench search` run measures.
pub struct SearchBench<'a> {
    pub corpus: &'a Corpus,
    pub rules: Rules,
    pub n: usize,
    pub dimension: usize,
    pub queries: usize,
    pub top_k: usize,
    /// Writes in flight at once during the load (1: one after another).
    pub writers: usize,
    /// Writes per call (`write_batch`); 1: each on its own (`write`).
    pub batch: usize,
    pub progress: Tick<'a>,
}

pub async fn search_bench(
    dir: &std::path::Path,
    backend: &BenchBackend,
    bench: &SearchBench<'_>,
) -> Result<SearchBenchReport, BenchError> {
    match backend {
        BenchBackend::Sqlite => {
            let store = Arc::new(
                SqliteStore::open(
                    &dir.join("bench.db"),
                    hindsight::signing::Signer::ephemeral(),
                )
                .await?,
            );
            run(dir, store, backend, bench).await
        }
        BenchBackend::Postgres { server_url } => {
            let scratch = ScratchDatabase::create(server_url).await?;
            let result = async {
                let store = Arc::new(
                    PostgresStore::connect(
                        &scratch.url(),
                        PoolSize { min: 5, max: 20 },
                        hindsight::signing::Signer::ephemeral(),
                    )
                    .await?,
                );
                run(dir, store, backend, bench).await
            }
            .await;
            scratch.drop_database().await?;
            result
        }
    }
}

async fn run(
    dir: &std::path::Path,
    store: Arc<dyn MemoryStore>,
    backend: &BenchBackend,
    bench: &SearchBench<'_>,
) -> Result<SearchBenchReport, BenchError> {
    let SearchBench {
        corpus,
        n,
        dimension,
        queries,
        top_k,
        writers,
        ..
    } = *bench;
    let index =
        Arc::new(EdgeIndex::open(&dir.join("index"), dimension, HnswParams::default()).await?);
    let embedder = Arc::new(RandomEmbedder::new(dimension));
    let service = Arc::new(
        MemoryService::start(store, index.clone(), embedder.clone(), bench.rules.clone()).await?,
    );

    let writers = writers.max(1);
    let started = Instant::now();
    let mut merged = 0;
    let (mut planted, mut planted_merged) = (0, 0);
    // Each write's memory id, in write order; and which write's text each memory holds now.
    let mut ids = Vec::with_capacity(n);
    let mut holders = HashMap::with_capacity(n);
    // Each write (or batch of `batch` writes) a task of its own, `writers` of them in flight,
    // results taken in order.
    let batch = bench.batch.max(1);
    let in_flight = writers * batch;
    let request = |i: usize| {
        let (namespace, content) = corpus.memory(i, in_flight);
        WriteRequest {
            content,
            memory_type: Some(memory_type_of(i).as_str().to_owned()),
            importance: Some(0.3 + (i % 7) as f64 / 10.0),
            namespace: Some(namespace),
            ..WriteRequest::default()
        }
    };
    let mut results = futures::stream::iter((0..n).step_by(batch))
        .map(|start| {
            let requests: Vec<WriteRequest> = (start..n.min(start + batch)).map(request).collect();
            let service = service.clone();
            tokio::spawn(async move {
                if let [one] = requests.as_slice() {
                    return Ok(vec![service.write(one).await?]);
                }
                service
                    .write_batch(&requests)
                    .await?
                    .into_iter()
                    .map(|outcome| match outcome {
                        BatchWrite::Done(result) => Ok(result),
                        BatchWrite::Held { rule, .. } => Err(BenchError::from(format!(
                            "the screen held a bench write: {rule}"
                        ))),
                    })
                    .collect::<Result<Vec<_>, BenchError>>()
            })
        })
        .buffered(writers)
        .map(|batch| match batch {
            Ok(Ok(results)) => {
                futures::stream::iter(results.into_iter().map(Ok).collect::<Vec<_>>())
            }
            Ok(Err(e)) => futures::stream::iter(vec![Err(e)]),
            Err(e) => futures::stream::iter(vec![Err(BenchError::from(e.to_string()))]),
        })
        .flatten();
    let mut written = 0;
    while let Some(result) = results.next().await {
        let result = result?;
        let i = written as usize;
        let base = match corpus {
            Corpus::Synthetic { .. } => planted_base(i, in_flight),
            Corpus::Locomo(_) | Corpus::LocomoOneNamespace(_) => None,
        };
        planted += usize::from(base.is_some());
        if let Some(id) = result.memory_id {
            if result.status == WriteStatus::Merged {
                merged += 1;
                planted_merged += usize::from(base.is_some_and(|j| ids[j] == Some(id)));
                // Episodic and working memories take the newer wording; semantic keeps its own.
                if memory_type_of(i) != MemoryType::Semantic {
                    holders.insert(id, i);
                }
            } else {
                holders.insert(id, i);
            }
        }
        ids.push(result.memory_id);
        written += 1;
        (bench.progress)("loading", written, Some(n as u64));
    }
    let load_seconds = started.elapsed().as_secs_f64();
    service.flush().await?;
    // What a running daemon does in the background after bulk writes: build the HNSW graphs.
    let optimize_started = Instant::now();
    index.optimize().await?;
    let optimize_seconds = optimize_started.elapsed().as_secs_f64();

    let mut latencies = Vec::with_capacity(queries);
    let mut stages = Vec::with_capacity(queries);
    for q in 0..queries {
        let (namespace, query) = corpus.query(q, n);
        let request = SearchRequest {
            query,
            top_k: Some(top_k as i64),
            namespace: Some(namespace),
            ..SearchRequest::default()
        };
        let t = Instant::now();
        let (result, staged) = service.search_staged(&request).await?;
        latencies.push(t.elapsed().as_secs_f64() * 1e3);
        stages.push(staged);
        (bench.progress)("searching", q as u64 + 1, Some(queries as u64));
        // (A LoCoMo run smaller than the data leaves some conversations without rows.)
        if result.memories.is_empty() && matches!(corpus, Corpus::Synthetic { .. }) {
            return Err("search returned nothing on a loaded index".into());
        }
    }
    latencies.sort_by(f64::total_cmp);
    let (rss, peak) = rss_mb();
    let daemon::Rss {
        anon_mb: rss_anon_mb,
        file_mb: rss_file_mb,
        ..
    } = daemon::Rss::of("self");
    let (recall, dedup_recall, probe_recall) = match corpus {
        Corpus::Synthetic { namespaces } => (
            Some(index_recall_at_10(&index, &embedder, &holders, in_flight, *namespaces).await?),
            Some(planted_merged as f64 / planted.max(1) as f64),
            Some(
                probe_recall(
                    &service,
                    &embedder,
                    &holders,
                    bench.rules.dedup_threshold - 0.01,
                    in_flight,
                    *namespaces,
                )
                .await?,
            ),
        ),
        Corpus::Locomo(_) | Corpus::LocomoOneNamespace(_) => (None, None, None),
    };
    Ok(SearchBenchReport {
        corpus: corpus.name(),
        namespaces: match corpus {
            Corpus::Synthetic { namespaces } => Some(*namespaces),
            Corpus::Locomo(_) | Corpus::LocomoOneNamespace(_) => None,
        },
        arms: bench.rules.search_arms.as_str(),
        n,
        dimension,
        backend: backend.name(),
        index: "qdrant-edge",
        writers,
        batch: bench.batch.max(1),
        load_seconds,
        writes_per_second: n as f64 / load_seconds,
        merged_on_load: merged,
        planted_duplicates: planted,
        planted_merged,
        dedup_recall,
        probe_recall,
        optimize_seconds,
        queries,
        top_k,
        search_p50_ms: percentile(&latencies, 50.0),
        search_p95_ms: percentile(&latencies, 95.0),
        search_p99_ms: percentile(&latencies, 99.0),
        search_max_ms: latencies.last().copied().unwrap_or(0.0),
        stages: stage_figures(&stages),
        rss_mb: rss,
        rss_anon_mb,
        rss_file_mb,
        peak_rss_mb: peak,
        recall_at_10: recall,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Each planted write re-says one earlier, finished write of its own scope that is not
    /// planted itself, and no base is re-said twice: what `planted_merged` counts on.
    #[test]
    fn planted_duplicates_each_re_say_one_distinct_earlier_write_of_their_scope() {
        let in_flight = 8;
        let mut bases = std::collections::HashSet::new();
        for i in 0..100_000 {
            let Some(j) = planted_base(i, in_flight) else {
                continue;
            };
            assert_eq!(
                j % SCOPES,
                i % SCOPES,
                "write {i}: base {j} in another scope"
            );
            assert!(
                j + in_flight < i,
                "write {i}: base {j} may still be in flight"
            );
            assert!(
                planted_base(j, in_flight).is_none(),
                "write {i}: base {j} planted"
            );
            assert!(bases.insert(j), "write {i}: base {j} re-said twice");
        }
        assert_eq!(
            bases.len(),
            100_000 / PLANT_EVERY,
            "every {PLANT_EVERY}th write planted"
        );
    }

    #[test]
    fn a_near_duplicate_lies_between_the_dedup_threshold_and_a_repeat() {
        let embedder = RandomEmbedder::new(512);
        for i in 0..200 {
            let base = embedder.vector(&format!("synthetic memory number {i}"));
            let text = format!("{NEAR_DUPLICATE_OF}synthetic memory number {i}");
            let near = embedder.vector(&text);
            let cos = hindsight::embed::cosine(&base, &near);
            assert!((0.929..=0.971).contains(&cos), "{text}: cosine {cos}");
            assert!((hindsight::embed::cosine(&near, &near) - 1.0).abs() < 1e-5);
        }
    }
}
