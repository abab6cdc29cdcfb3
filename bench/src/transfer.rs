//! `hindsight bench import`: N memories with vectors written as an export file (fixed
//! vectors, or LoCoMo's real text with the builtin embedder's), then this binary's own
//! `import`, `export` and (SQLite) `backup` run on it as child processes, each timed at the
//! wall clock with its peak RSS (VmHWM, polled). What a user's import costs, JSON parsing and
//! the file's two reads included. Then a daemon on the imported data (its memory idle and
//! after searches, their latency; with real text, how often an evidence turn is in the top
//! 10), and the index's recall@10 against brute force.

use std::collections::{HashMap, HashSet};
use std::io::Write;
use std::path::Path;
use std::time::{Duration, Instant};

use chrono::{DateTime, Utc};
use serde::Serialize;
use serde_json::json;

use super::cgroup::MemoryCgroup;
use super::daemon::{Daemon, Rss};
use super::locomo::Conversation;
use super::{
    BenchBackend, BenchError, RandomEmbedder, ScratchDatabase, Tick, found_in_top_10,
    locomo_turn_at, percentile, probe_stride, status_mb,
};
use hindsight::domain::{MemoryId, MemoryType};
use hindsight::embed::{BuiltinEmbedder, Embedder};
use hindsight::index::{EdgeIndex, HnswParams, VectorIndex};
use hindsight::service::probe_query;
use hindsight::transfer::{FORMAT_VERSION, Header, MemoryLine};

#[derive(Debug, Clone, Serialize)]
pub struct TransferBenchReport {
    pub bench: &'static str,
    /// `fixed` (a templated sentence each, pseudo-random vectors, ten namespaces) or `locomo`
    /// (`ImportCorpus`).
    pub corpus: &'static str,
    pub backend: &'static str,
    pub n: usize,
    pub embedder: String,
    pub dimension: usize,
    /// The index's build beam width (`--hnsw-ef-construct`).
    pub hnsw_ef_construct: usize,
    pub file_mb: f64,
    pub import_seconds: f64,
    pub imported_per_second: f64,
    pub import_peak_rss_mb: f64,
    pub import_peak_anon_mb: f64,
    /// `--memory-limit-mb`: the import ran in a memory cgroup of this size (private memory and
    /// page cache together, as a container's limit counts them)...
    pub import_memory_limit_mb: Option<u64>,
    /// ...and the most that cgroup held.
    pub import_cgroup_peak_mb: Option<f64>,
    pub export_seconds: f64,
    pub exported_per_second: f64,
    pub export_peak_rss_mb: f64,
    /// SQLite only (PostgreSQL's is `pg_dump`).
    pub backup_seconds: Option<f64>,
    /// A daemon (`serve`) then started on the imported data: until it answers (an index found
    /// unusable would be rebuilt here), its memory idle once its start-up jobs are done, and
    /// idle again after `daemon_searches` searches over HTTP (the rescored vectors' pages
    /// mapped in).
    pub daemon_ready_seconds: f64,
    pub daemon_idle: Rss,
    pub daemon_searches: usize,
    pub daemon_search_p50_ms: f64,
    pub daemon_search_p99_ms: f64,
    /// LoCoMo only: the share of the searches (its questions of categories 1–4) with an
    /// evidence turn of their namespace among the daemon's top 10.
    pub daemon_evidence_hit_at_10: Option<f64>,
    pub daemon_idle_after_searches: Rss,
    /// The imported index's dense search (the daemon stopped, its index opened here) against
    /// brute force over the file's vectors: the share of each query's true 10 nearest (in its
    /// namespace; a line tied with the 10th counts as one of them) found, over
    /// `recall_queries` queries.
    pub recall_at_10: f64,
    pub recall_queries: usize,
    /// The same at other search beam widths (`hnsw_ef`; the daemon's is 128): what recall
    /// costs in latency is the daemon's p50/p99 at its own.
    pub recall_at_10_by_hnsw_ef: Vec<RecallAtEf>,
    /// The write path's dedup probe (its query: beam, candidates, namespace and type) asked
    /// up to 10,000 imported lines' own vectors (every k-th line, `probe_stride`), in the
    /// imported index: the share where it finds that line or one of the same vector. A
    /// namespace large enough to be walked rather than scanned (the `locomo-pairs` corpus's)
    /// is where a narrow beam can miss; the synthetic `bench search` measures the same on
    /// noise.
    pub probe_recall: f64,
}

/// Queries `recall_at_10` asks, spread over the namespaces.
const RECALL_QUERIES: usize = 50;
/// The fixed corpus's namespaces: line `i` is in `bench/{i % NAMESPACES}`.
const NAMESPACES: usize = 10;
/// Searches the started daemon answers before its memory is read again (the fixed corpus;
/// LoCoMo's asks each of its questions once).
const DAEMON_SEARCHES: usize = 200;

/// What the bench file's lines say.
pub enum ImportCorpus {
    /// A templated sentence each in ten namespaces, with pseudo-random unit vectors: large
    /// namespaces, HNSW's worst case.
    Fixed,
    /// LoCoMo's turns repeated to N, each repetition of a conversation its own namespace
    /// (`conv-26/r3`: many users' histories on one server), with the builtin embedder's
    /// vectors (`vectors[c][t]`, the turns' own); its questions of categories 1–4 as queries.
    Locomo {
        conversations: Vec<Conversation>,
        vectors: Vec<Vec<Vec<f32>>>,
    },
    /// LoCoMo's turns two by two: line `i` joins global turn `i % turns` with the turn
    /// `1 + i / turns` after it in its conversation (wrapping), in that conversation's
    /// namespace. Five namespaces of distinct real text, large as the fixed corpus's: what
    /// the graph walk does on vectors of words rather than of noise.
    LocomoPairs { conversations: Vec<Conversation> },
}

/// One line of the file, as `ImportCorpus::line` makes it.
struct Line {
    namespace: String,
    content: String,
    occurred_at: Option<DateTime<Utc>>,
    source: serde_json::Value,
}

/// A search the daemon is asked: its body's fields, and the evidence (LoCoMo's `dia_id`s) it
/// should find.
struct Query {
    namespace: String,
    text: String,
    evidence: Option<HashSet<String>>,
}

impl ImportCorpus {
    /// LoCoMo's conversations, their turns embedded once.
    pub fn locomo(mut conversations: Vec<Conversation>) -> Self {
        trim_turns(&mut conversations);
        let builtin = BuiltinEmbedder::new();
        let vectors = conversations
            .iter()
            .map(|c| {
                c.turns
                    .iter()
                    .map(|t| builtin.embed_one(&t.content))
                    .collect()
            })
            .collect();
        Self::Locomo {
            conversations,
            vectors,
        }
    }

    /// LoCoMo's turns joined two by two (`LocomoPairs`).
    pub fn locomo_pairs(mut conversations: Vec<Conversation>) -> Self {
        trim_turns(&mut conversations);
        Self::LocomoPairs { conversations }
    }

    fn name(&self) -> &'static str {
        match self {
            ImportCorpus::Fixed => "fixed",
            ImportCorpus::Locomo { .. } => "locomo",
            ImportCorpus::LocomoPairs { .. } => "locomo-pairs",
        }
    }

    /// The most lines the corpus holds distinct: pairs run out when the offset reaches the
    /// shortest conversation.
    fn most_lines(&self) -> usize {
        match self {
            ImportCorpus::LocomoPairs { conversations } => {
                let shortest = conversations.iter().map(|c| c.turns.len()).min();
                self.turns() * shortest.unwrap_or(1).saturating_sub(1)
            }
            ImportCorpus::Fixed | ImportCorpus::Locomo { .. } => usize::MAX,
        }
    }

    /// LoCoMo's turns, all conversations (0 for the fixed corpus).
    fn turns(&self) -> usize {
        match self {
            ImportCorpus::Fixed => 0,
            ImportCorpus::Locomo { conversations, .. }
            | ImportCorpus::LocomoPairs { conversations } => {
                conversations.iter().map(|c| c.turns.len()).sum()
            }
        }
    }

    fn line(&self, i: usize) -> Line {
        match self {
            ImportCorpus::Fixed => Line {
                namespace: format!("bench/{}", i % NAMESPACES),
                content: format!(
                    "memory {i}: the user in project {} asked about report {} and sensor {}",
                    i % 97,
                    i % 13,
                    i % 31
                ),
                occurred_at: None,
                source: json!({"bench": i}),
            },
            ImportCorpus::Locomo { conversations, .. } => {
                let (r, c, t) = locomo_turn_at(conversations, i);
                let (conversation, turn) = (&conversations[c], &conversations[c].turns[t]);
                Line {
                    namespace: format!("{}/r{r}", conversation.namespace),
                    content: turn.content.clone(),
                    occurred_at: Some(turn.at),
                    source: json!({"locomo": turn.dia_id}),
                }
            }
            ImportCorpus::LocomoPairs { conversations } => {
                let (offset, c, t) = locomo_turn_at(conversations, i);
                let conversation = &conversations[c];
                let first = &conversation.turns[t];
                let second = &conversation.turns[(t + 1 + offset) % conversation.turns.len()];
                Line {
                    namespace: conversation.namespace.clone(),
                    content: format!("{} {}", first.content, second.content),
                    occurred_at: Some(first.at),
                    source: json!({"locomo": [first.dia_id, second.dia_id]}),
                }
            }
        }
    }

    /// Line `i`'s vector; `line` is `self.line(i)`, already built by the caller.
    fn vector(&self, i: usize, line: &Line, random: &RandomEmbedder) -> Vec<f32> {
        match self {
            ImportCorpus::Fixed => random.vector(&line.content),
            ImportCorpus::Locomo {
                conversations,
                vectors,
            } => {
                let (_, c, t) = locomo_turn_at(conversations, i);
                vectors[c][t].clone()
            }
            ImportCorpus::LocomoPairs { .. } => BuiltinEmbedder::new().embed_one(&line.content),
        }
    }

    /// The repetitions `n` lines hold in full (LoCoMo).
    fn repetitions(&self, n: usize) -> usize {
        (n / self.turns().max(1)).max(1)
    }

    /// What the daemon is asked, over the lines `n` holds.
    fn daemon_queries(&self, n: usize) -> Vec<Query> {
        match self {
            ImportCorpus::Fixed => (0..DAEMON_SEARCHES)
                .map(|q| {
                    // The file's own wording, so each search has real matches.
                    let i = (q * 7_919) % n.max(1);
                    Query {
                        namespace: format!("bench/{}", i % NAMESPACES),
                        text: format!("project {} report {} sensor {}", i % 97, i % 13, i % 31),
                        evidence: None,
                    }
                })
                .collect(),
            ImportCorpus::Locomo { conversations, .. }
            | ImportCorpus::LocomoPairs { conversations } => {
                let repetitions = self.repetitions(n);
                let pairs = matches!(self, ImportCorpus::LocomoPairs { .. });
                conversations
                    .iter()
                    .flat_map(|c| c.questions.iter().map(move |question| (c, question)))
                    .filter(|(_, question)| (1..=4).contains(&question.category))
                    .enumerate()
                    .map(|(k, (conversation, question))| Query {
                        namespace: if pairs {
                            conversation.namespace.clone()
                        } else {
                            format!("{}/r{}", conversation.namespace, (k * 7_919) % repetitions)
                        },
                        text: question.question.clone(),
                        evidence: Some(question.evidence.iter().cloned().collect()),
                    })
                    .collect()
            }
        }
    }

    /// The queries `recall_at_10` asks: (namespace, vector).
    fn recall_queries(&self, n: usize, random: &RandomEmbedder) -> Vec<(String, Vec<f32>)> {
        match self {
            ImportCorpus::Fixed => (0..RECALL_QUERIES)
                .map(|q| {
                    (
                        format!("bench/{}", q % NAMESPACES),
                        random.vector(&format!("recall query {q}")),
                    )
                })
                .collect(),
            ImportCorpus::Locomo { .. } | ImportCorpus::LocomoPairs { .. } => {
                let builtin = BuiltinEmbedder::new();
                self.daemon_queries(n)
                    .into_iter()
                    .step_by(7)
                    .take(RECALL_QUERIES)
                    .map(|q| (q.namespace, builtin.embed_one(&q.text)))
                    .collect()
            }
        }
    }
}

/// Turns as the write path stores them and an export holds them: a few end in a space.
fn trim_turns(conversations: &mut [Conversation]) {
    for turn in conversations.iter_mut().flat_map(|c| c.turns.iter_mut()) {
        turn.content = turn.content.trim().to_owned();
    }
}

/// The file: UUIDv7 ids in order, the builtin embedder's id with the corpus's vectors of its
/// dimension (so the import reuses them, as it would a real export's). Returns the lines' ids.
fn write_file(
    path: &Path,
    corpus: &ImportCorpus,
    n: usize,
    embedder: &str,
    dimension: usize,
) -> Result<Vec<MemoryId>, BenchError> {
    let random = RandomEmbedder::new(dimension);
    let mut out = std::io::BufWriter::with_capacity(1 << 20, std::fs::File::create(path)?);
    let now = Utc::now();
    let header = Header {
        hindsight_export: FORMAT_VERSION,
        embedder: embedder.to_owned(),
        dimension,
        exported_at: now,
        with_vectors: true,
    };
    serde_json::to_writer(&mut out, &header)?;
    out.write_all(b"\n")?;
    let mut ids = Vec::with_capacity(n);
    for i in 0..n {
        let line = corpus.line(i);
        let embedding = Some(corpus.vector(i, &line, &random));
        let Line {
            namespace,
            content,
            occurred_at,
            source,
        } = line;
        let id = uuid::Uuid::now_v7();
        ids.push(id);
        let line = MemoryLine {
            source,
            occurred_at: occurred_at.unwrap_or(now),
            embedding_model: embedder.to_owned(),
            embedding,
            ..MemoryLine::new_active(id, namespace, MemoryType::Episodic, content, now)
        };
        serde_json::to_writer(&mut out, &line)?;
        out.write_all(b"\n")?;
    }
    out.flush()?;
    Ok(ids)
}

/// The search beam widths recall is measured at: the daemon's (`HnswParams::default`) among
/// them.
const RECALL_EFS: [usize; 4] = [64, 128, 256, 512];

/// Recall at one search beam width.
#[derive(Debug, Clone, Serialize)]
pub struct RecallAtEf {
    pub hnsw_ef: usize,
    pub recall_at_10: f64,
}

/// Lines kept per recall query while scanning: the 10 nearest and any tied with the 10th.
const RECALL_KEPT: usize = 32;

/// Recall@10 of the index in `index_dir` (see `TransferBenchReport::recall_at_10`). The
/// file's vectors are regenerated in one pass, each scored against its namespace's queries,
/// so no second copy of them is held.
async fn recall_at_10(
    index_dir: &Path,
    corpus: &ImportCorpus,
    ids: &[MemoryId],
    dimension: usize,
) -> Result<Vec<RecallAtEf>, BenchError> {
    let random = RandomEmbedder::new(dimension);
    let queries = corpus.recall_queries(ids.len(), &random);
    let mut by_namespace: HashMap<&str, Vec<usize>> = HashMap::new();
    for (q, (namespace, _)) in queries.iter().enumerate() {
        by_namespace.entry(namespace).or_default().push(q);
    }
    // Per query, its nearest (similarity, line) so far, best first.
    let mut best: Vec<Vec<(f32, usize)>> = vec![Vec::new(); queries.len()];
    for i in 0..ids.len() {
        let line = corpus.line(i);
        let Some(asking) = by_namespace.get(line.namespace.as_str()) else {
            continue;
        };
        let vector = corpus.vector(i, &line, &random);
        for &q in asking {
            let top = &mut best[q];
            let score = hindsight::embed::cosine(&queries[q].1, &vector);
            if top.len() < RECALL_KEPT || score > top[top.len() - 1].0 {
                let at = top.partition_point(|(s, _)| *s >= score);
                top.insert(at, (score, i));
                top.truncate(RECALL_KEPT);
            }
        }
    }
    let mut by_ef = Vec::with_capacity(RECALL_EFS.len());
    for ef in RECALL_EFS {
        let params = HnswParams {
            ef,
            ..HnswParams::default()
        };
        let index = EdgeIndex::open(index_dir, dimension, params).await?;
        let (mut found, mut wanted) = (0, 0);
        for ((namespace, vector), top) in queries.iter().zip(&best) {
            let Some(tenth) = top.get(top.len().min(10).saturating_sub(1)) else {
                continue;
            };
            // Identical texts have identical vectors: any of a tie at the 10th place will do.
            let exact = top
                .iter()
                .take_while(|(s, _)| *s >= tenth.0 - 1e-6)
                .map(|(_, i)| ids[*i]);
            wanted += top.len().min(10);
            found += found_in_top_10(&index, vector.clone(), namespace, exact)
                .await?
                .min(10);
        }
        by_ef.push(RecallAtEf {
            hnsw_ef: ef,
            recall_at_10: found as f64 / wanted.max(1) as f64,
        });
    }
    Ok(by_ef)
}

/// `TransferBenchReport::probe_recall`, on the index in `index_dir`.
async fn probe_recall(
    index_dir: &Path,
    corpus: &ImportCorpus,
    ids: &[MemoryId],
    dimension: usize,
) -> Result<f64, BenchError> {
    let random = RandomEmbedder::new(dimension);
    let index = EdgeIndex::open(index_dir, dimension, HnswParams::default()).await?;
    let stride = probe_stride(ids.len());
    let (mut asked, mut found) = (0, 0);
    for i in (0..ids.len()).step_by(stride) {
        let line = corpus.line(i);
        let vector = corpus.vector(i, &line, &random);
        let hits = index
            .search(probe_query(&line.namespace, MemoryType::Episodic, &vector))
            .await?;
        asked += 1;
        // A line repeated word for word has the same vector; either one is what dedup wants.
        found += usize::from(
            hits.iter()
                .any(|h| h.id == ids[i] || h.score >= SAME_VECTOR),
        );
    }
    Ok(found as f64 / asked.max(1) as f64)
}

/// A cosine at which two vectors count as the same (float rounding aside).
const SAME_VECTOR: f32 = 1.0 - 1e-5;

/// `HINDSIGHT_BENCH_KEEP_DATA` set: the bench's dir (the file, the data, the children's logs
/// as `<command>.log`) is kept for a look afterwards, and its path printed on stderr. The
/// children log at `RUST_LOG` (default `warn`).
fn keep_data() -> bool {
    std::env::var_os("HINDSIGHT_BENCH_KEEP_DATA").is_some()
}

/// A child run to completion: its wall time and peak memory (MiB).
struct Timed {
    seconds: f64,
    /// VmHWM: private memory and mapped file pages at their highest.
    peak_rss_mb: f64,
    /// RssAnon at its highest (polled every 20 ms).
    peak_anon_mb: f64,
}

/// Run `exe args` to completion (in `cgroup`, when given).
async fn timed(
    exe: &Path,
    args: &[&str],
    envs: &[(&str, String)],
    cgroup: Option<&MemoryCgroup>,
) -> Result<Timed, BenchError> {
    // Its messages to a file (a pipe nobody reads while it runs could fill and stall it).
    let log = tempfile::NamedTempFile::new()?;
    let started = Instant::now();
    let mut child = tokio::process::Command::new(exe)
        .args(args)
        .envs(envs.iter().map(|(k, v)| (*k, v.as_str())))
        .stdout(std::process::Stdio::null())
        .stderr(log.reopen()?)
        .kill_on_drop(true)
        .spawn()?;
    let pid = child.id().ok_or("the child has no pid")?;
    if let Some(cgroup) = cgroup {
        // Before it has read the file or opened the store: a few MB at most are outside.
        cgroup.add(pid)?;
    }
    let pid = pid.to_string();
    let (mut peak_rss_mb, mut peak_anon_mb) = (0.0_f64, 0.0_f64);
    let status = loop {
        let [hwm, anon] = status_mb(&pid, ["VmHWM:", "RssAnon:"]);
        peak_rss_mb = peak_rss_mb.max(hwm);
        peak_anon_mb = peak_anon_mb.max(anon);
        if let Some(status) = child.try_wait()? {
            break status;
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
    };
    let seconds = started.elapsed().as_secs_f64();
    if keep_data()
        && let Some((_, data)) = envs.iter().find(|(k, _)| *k == "HINDSIGHT_DATA_DIR")
    {
        let _ = std::fs::copy(
            log.path(),
            Path::new(data).with_file_name(format!("{}.log", args[0])),
        );
    }
    if !status.success() {
        let err = std::fs::read_to_string(log.path()).unwrap_or_default();
        return Err(format!("hindsight {} failed ({status}): {err}", args[0]).into());
    }
    Ok(Timed {
        seconds,
        peak_rss_mb,
        peak_anon_mb,
    })
}

/// What one `bench import` run is given.
pub struct ImportBench<'a> {
    pub corpus: &'a ImportCorpus,
    pub n: usize,
    /// `--memory-limit-mb`: the import in a memory cgroup of this size.
    pub memory_limit_mb: Option<u64>,
    /// The index's build beam width (`hnsw_ef_construct`; unset: the default's).
    pub hnsw_ef_construct: Option<usize>,
}

pub async fn transfer_bench(
    exe: &Path,
    bench: &ImportBench<'_>,
    backend: &BenchBackend,
    progress: Tick<'_>,
) -> Result<TransferBenchReport, BenchError> {
    let ImportBench {
        corpus,
        n,
        memory_limit_mb,
        hnsw_ef_construct,
    } = *bench;
    let ef_construct = hnsw_ef_construct.unwrap_or(HnswParams::default().ef_construct);
    if n < corpus.turns() {
        return Err(format!(
            "--n: with --locomo at least the file's {} turns (one repetition), got {n}",
            corpus.turns()
        )
        .into());
    }
    if n > corpus.most_lines() {
        return Err(format!(
            "--n: with --large-namespaces at most {} (the distinct pairs of the shortest conversation's turns), got {n}",
            corpus.most_lines()
        )
        .into());
    }
    // Made first: a machine where it cannot be is told before the file is written.
    let cgroup = memory_limit_mb.map(MemoryCgroup::create).transpose()?;
    let dir = tempfile::tempdir()?;
    let builtin = BuiltinEmbedder::new();
    let (embedder, dimension) = (builtin.id().to_owned(), builtin.dimension());
    let file = dir.path().join("bench.jsonl");
    progress("writing the file", 0, Some(n as u64));
    let ids = write_file(&file, corpus, n, &embedder, dimension)?;
    let data = dir.path().join("data");
    let scratch = match backend {
        BenchBackend::Sqlite => None,
        BenchBackend::Postgres { server_url } => Some(ScratchDatabase::create(server_url).await?),
    };
    let token = format!("bench-{}", uuid::Uuid::now_v7().simple());
    let mut envs = vec![
        (
            "HINDSIGHT_CONFIG",
            dir.path().join("none.toml").display().to_string(),
        ),
        ("HINDSIGHT_DATA_DIR", data.display().to_string()),
        ("HINDSIGHT_EMBEDDER", "builtin".to_owned()),
        (
            "RUST_LOG",
            std::env::var("RUST_LOG").unwrap_or_else(|_| "warn".to_owned()),
        ),
        ("HINDSIGHT_AUTH_TOKEN", token.clone()),
        ("HINDSIGHT_HNSW_EF_CONSTRUCT", ef_construct.to_string()),
    ];
    if let Some(db) = &scratch {
        envs.push(("HINDSIGHT_DATABASE_URL", db.url()));
    }
    let result = async {
        progress("importing", 0, Some(n as u64));
        let import = timed(
            exe,
            &["import", &file.display().to_string()],
            &envs,
            cgroup.as_ref(),
        )
        .await?;
        progress("exporting", 0, Some(n as u64));
        let out = dir.path().join("out.jsonl");
        let export = timed(
            exe,
            &["export", "--with-vectors", "-o", &out.display().to_string()],
            &envs,
            None,
        )
        .await?;
        let backup_seconds = match backend {
            BenchBackend::Sqlite => {
                progress("backing up", 0, None);
                let target = dir.path().join("backup");
                Some(
                    timed(exe, &["backup", &target.display().to_string()], &envs, None)
                        .await?
                        .seconds,
                )
            }
            BenchBackend::Postgres { .. } => None,
        };
        progress("starting a daemon on it", 0, None);
        let daemon = Daemon::spawn(exe, &data, &envs, Duration::from_secs(1800)).await?;
        let served = serve_searches(&daemon, corpus.daemon_queries(n), &token, progress).await;
        let ready_seconds = daemon.ready_seconds;
        daemon.stop().await;
        let served = served?;
        progress("recall against brute force", 0, None);
        let by_ef = recall_at_10(&data.join("index"), corpus, &ids, dimension).await?;
        let daemon_ef = HnswParams::default().ef;
        let recall = by_ef
            .iter()
            .find(|r| r.hnsw_ef == daemon_ef)
            .map(|r| r.recall_at_10)
            .ok_or("RECALL_EFS holds the daemon's hnsw_ef")?;
        progress("the dedup probe on the imported index", 0, None);
        let probe_recall = probe_recall(&data.join("index"), corpus, &ids, dimension).await?;
        Ok::<_, BenchError>(TransferBenchReport {
            bench: "import",
            corpus: corpus.name(),
            backend: backend.name(),
            n,
            embedder: embedder.clone(),
            dimension,
            hnsw_ef_construct: ef_construct,
            file_mb: std::fs::metadata(&file)?.len() as f64 / (1024.0 * 1024.0),
            import_seconds: import.seconds,
            imported_per_second: n as f64 / import.seconds,
            import_peak_rss_mb: import.peak_rss_mb,
            import_peak_anon_mb: import.peak_anon_mb,
            import_memory_limit_mb: memory_limit_mb,
            import_cgroup_peak_mb: cgroup.as_ref().and_then(MemoryCgroup::peak_mb),
            export_seconds: export.seconds,
            exported_per_second: n as f64 / export.seconds,
            export_peak_rss_mb: export.peak_rss_mb,
            backup_seconds,
            daemon_ready_seconds: ready_seconds,
            daemon_idle: served.idle,
            daemon_searches: served.searches,
            daemon_search_p50_ms: served.p50_ms,
            daemon_search_p99_ms: served.p99_ms,
            daemon_evidence_hit_at_10: served.evidence_hit_at_10,
            daemon_idle_after_searches: served.after_searches,
            recall_at_10: recall,
            recall_queries: RECALL_QUERIES,
            recall_at_10_by_hnsw_ef: by_ef,
            probe_recall,
        })
    }
    .await;
    if let Some(db) = scratch {
        db.drop_database().await?;
    }
    if keep_data() {
        eprintln!("kept {}", dir.keep().display());
    }
    result
}

/// What `serve_searches` read off the daemon.
struct Served {
    idle: Rss,
    searches: usize,
    p50_ms: f64,
    p99_ms: f64,
    evidence_hit_at_10: Option<f64>,
    after_searches: Rss,
}

/// The started daemon idle (after a settling pause), the latencies of `queries` over HTTP (and
/// how often their evidence was found), and idle again after them.
async fn serve_searches(
    daemon: &Daemon,
    queries: Vec<Query>,
    token: &str,
    progress: Tick<'_>,
) -> Result<Served, BenchError> {
    let http = reqwest::Client::new();
    // A daemon starting on a store it has not served catches up on missed job ticks (distill
    // over the new episodes: seconds, and its working set); idle is after them.
    let settled = Instant::now();
    loop {
        let jobs: serde_json::Value = http
            .get(format!("{}/admin/jobs", daemon.base))
            .bearer_auth(token)
            .send()
            .await?
            .error_for_status()?
            .json()
            .await?;
        let running = jobs
            .as_array()
            .is_some_and(|jobs| jobs.iter().any(|j| j["last_run"]["status"] == "running"));
        if !running {
            break;
        }
        if settled.elapsed() > Duration::from_secs(600) {
            return Err("the daemon's start-up jobs ran over 10 minutes".into());
        }
        tokio::time::sleep(Duration::from_millis(200)).await;
    }
    tokio::time::sleep(Duration::from_secs(2)).await;
    let idle = daemon.rss();
    let mut latencies = Vec::with_capacity(queries.len());
    let (mut asked, mut hits) = (0, 0);
    for (q, query) in queries.iter().enumerate() {
        let body = json!({"query": query.text, "namespace": query.namespace, "top_k": 10});
        let started = Instant::now();
        let found: serde_json::Value = http
            .post(format!("{}/api/memories/search", daemon.base))
            .bearer_auth(token)
            .json(&body)
            .send()
            .await?
            .error_for_status()?
            .json()
            .await?;
        latencies.push(started.elapsed().as_secs_f64() * 1e3);
        let memories = found["memories"].as_array().map_or(&[][..], Vec::as_slice);
        if memories.is_empty() {
            return Err(format!("the daemon found nothing for {body}: {found}").into());
        }
        if let Some(evidence) = &query.evidence {
            asked += 1;
            // A turn's `dia_id`, or a pair's two.
            let hit = memories.iter().take(10).any(|m| {
                let locomo = &m["source"]["locomo"];
                std::iter::once(locomo)
                    .chain(locomo.as_array().into_iter().flatten())
                    .filter_map(serde_json::Value::as_str)
                    .any(|dia_id| evidence.contains(dia_id))
            });
            hits += usize::from(hit);
        }
        progress(
            "searching the daemon",
            q as u64 + 1,
            Some(queries.len() as u64),
        );
    }
    latencies.sort_by(f64::total_cmp);
    tokio::time::sleep(Duration::from_secs(2)).await;
    Ok(Served {
        idle,
        searches: queries.len(),
        p50_ms: percentile(&latencies, 50.0),
        p99_ms: percentile(&latencies, 99.0),
        evidence_hit_at_10: (asked > 0).then(|| hits as f64 / asked as f64),
        after_searches: daemon.rss(),
    })
}
