//! `hindsight eval retrieval --locomo FILE [--arms lexical,dense,hybrid]`: how often search
//! finds what a question is about. Each conversation's turns go through the real write path
//! (one namespace per conversation, `source: {"locomo": dia_id}`; a turn merged into a
//! near-duplicate keeps its id in `merged_sources`) into a scratch SQLite store with the
//! configured embedder; each question of categories 1–4 is asked through the real search path,
//! once per arm. Reported per arm, overall and per category: hit@5/@10 (an evidence turn among
//! the top 5/10) and recall@5/@10 (the share of evidence turns there), with load time,
//! embedding throughput and search latency.

use std::collections::{BTreeMap, HashSet};
use std::path::Path;
use std::sync::Arc;
use std::time::Instant;

use serde::Serialize;
use serde_json::Value;

use super::BenchError;
use super::locomo::{Conversation, Turn};
use hindsight::configuration::SearchArms;
use hindsight::embed::Embedder;
use hindsight::service::{
    MemoryService, Rules, SearchHit, SearchRequest, WriteRequest, WriteStatus,
};

const CATEGORIES: [(u8, &str); 4] = [
    (1, "multi_hop"),
    (2, "temporal"),
    (3, "open_domain"),
    (4, "single_hop"),
];

#[derive(Debug, Clone, Default, Serialize)]
pub struct Scores {
    pub questions: usize,
    pub hit_at_5: f64,
    pub hit_at_10: f64,
    pub recall_at_5: f64,
    pub recall_at_10: f64,
}

/// How many retired turns the report shows.
const RETIRED_EXAMPLES: usize = 12;

/// A turn a later one retired (`revision`), for the report.
#[derive(Debug, Clone, Serialize)]
pub struct RetiredTurn {
    pub turn: String,
    pub by: String,
    pub reason: String,
}

#[derive(Debug, Serialize)]
pub struct RetrievalReport {
    pub eval: &'static str,
    pub arms: &'static str,
    pub fusion: String,
    pub embedder: String,
    pub conversations: usize,
    pub turns: usize,
    /// Turns the write path stored as memories of their own (the rest merged into one, or
    /// skipped).
    pub memories: usize,
    /// Turns written without an importance that write triage scored under the gate
    /// (`screening.toml`'s `[triage]`: small talk), so not stored.
    pub skipped_turns: usize,
    /// Of those, turns some question (categories 1–4) names as its evidence.
    pub skipped_evidence_turns: usize,
    /// Turns a later turn updated (`revision`: the same statement with another value or
    /// polarity), so retired from a default search.
    pub retired_turns: usize,
    /// Of those, turns some question names as its evidence.
    pub retired_evidence_turns: usize,
    /// The first few retired turns, each with the turn that retired it.
    pub retired_examples: Vec<RetiredTurn>,
    pub overall: Scores,
    pub per_category: BTreeMap<&'static str, Scores>,
    pub load_seconds: f64,
    /// Turns embedded per second, in calls of 500 as `hindsight reindex` makes them (the
    /// embedder alone).
    pub embed_per_second: f64,
    /// One question embedded alone (`embed_query`), as a search does: median and p99.
    pub query_embed_p50_ms: f64,
    pub query_embed_p99_ms: f64,
    pub search_p50_ms: f64,
    pub search_p99_ms: f64,
}

/// Sums before averaging.
#[derive(Default)]
struct Tally {
    questions: usize,
    hit5: usize,
    hit10: usize,
    recall5: f64,
    recall10: f64,
}

impl Tally {
    fn add(&mut self, evidence: &HashSet<&str>, ranked: &[HashSet<String>]) {
        let found = |k: usize| {
            let seen: HashSet<&str> = ranked
                .iter()
                .take(k)
                .flat_map(|ids| ids.iter().map(String::as_str))
                .collect();
            evidence.iter().filter(|e| seen.contains(*e)).count()
        };
        let (at5, at10) = (found(5), found(10));
        self.questions += 1;
        self.hit5 += usize::from(at5 > 0);
        self.hit10 += usize::from(at10 > 0);
        self.recall5 += at5 as f64 / evidence.len() as f64;
        self.recall10 += at10 as f64 / evidence.len() as f64;
    }

    fn scores(&self) -> Scores {
        let n = self.questions.max(1) as f64;
        let round = |x: f64| (x * 1000.0).round() / 1000.0;
        Scores {
            questions: self.questions,
            hit_at_5: round(self.hit5 as f64 / n),
            hit_at_10: round(self.hit10 as f64 / n),
            recall_at_5: round(self.recall5 / n),
            recall_at_10: round(self.recall10 / n),
        }
    }
}

/// The LoCoMo turns a hit stands for: its own and those merged into it.
fn turns_of(hit: &SearchHit) -> HashSet<String> {
    let mut ids = HashSet::new();
    let mut take = |source: &Value| {
        if let Some(id) = source.get("locomo").and_then(Value::as_str) {
            ids.insert(id.to_owned());
        }
    };
    take(&hit.source);
    for merged in hit.merged_sources.as_array().into_iter().flatten() {
        take(&merged["source"]);
    }
    ids
}

pub async fn retrieval_eval(
    conversations: &[Conversation],
    scratch: &Path,
    embedder: Arc<dyn Embedder>,
    rules: &Rules,
    arms: &[SearchArms],
    progress: super::Tick<'_>,
) -> Result<Vec<RetrievalReport>, BenchError> {
    // The embedder alone, for its throughput.
    let texts: Vec<String> = conversations
        .iter()
        .flat_map(|c| c.turns.iter().map(|t| t.content.clone()))
        .collect();
    let started = Instant::now();
    let mut embedded = 0;
    for chunk in texts.chunks(500) {
        embedder.embed(chunk).await?;
        embedded += chunk.len() as u64;
        progress("embedding", embedded, Some(texts.len() as u64));
    }
    let embed_per_second = texts.len() as f64 / started.elapsed().as_secs_f64().max(1e-9);
    let mut query_latencies = Vec::new();
    for question in conversations.iter().flat_map(|c| &c.questions) {
        let started = Instant::now();
        embedder.embed_query(&question.question).await?;
        query_latencies.push(started.elapsed().as_secs_f64() * 1000.0);
    }
    query_latencies.sort_by(f64::total_cmp);
    let ms = |sorted: &[f64], p: f64| (super::percentile(sorted, p) * 1000.0).round() / 1000.0;

    let (store, index) = super::scratch_store(scratch, embedder.dimension()).await?;
    let loader = MemoryService::start(
        store.clone(),
        index.clone(),
        embedder.clone(),
        rules.clone(),
    )
    .await?;
    let started = Instant::now();
    let mut memories = HashSet::new();
    let mut loaded = 0;
    let (mut skipped_turns, mut skipped_evidence_turns) = (0, 0);
    let (mut retired_turns, mut retired_evidence_turns) = (0, 0);
    // Each stored turn's memory, for the turns a later one retired.
    let mut turn_of: std::collections::HashMap<hindsight::domain::MemoryId, &Turn> =
        std::collections::HashMap::new();
    let mut retired_examples = Vec::new();
    for conversation in conversations {
        let evidence: HashSet<&str> = conversation
            .questions
            .iter()
            .filter(|q| (1..=4).contains(&q.category))
            .flat_map(|q| q.evidence.iter().map(String::as_str))
            .collect();
        for turn in &conversation.turns {
            let written = loader
                .write(&WriteRequest {
                    content: turn.content.clone(),
                    memory_type: Some("episodic".into()),
                    namespace: Some(conversation.namespace.clone()),
                    source: Some(serde_json::json!({"locomo": turn.dia_id})),
                    occurred_at: Some(turn.at.to_rfc3339()),
                    ..WriteRequest::default()
                })
                .await?;
            if written.status == WriteStatus::Skipped {
                skipped_turns += 1;
                if evidence.contains(turn.dia_id.as_str()) {
                    skipped_evidence_turns += 1;
                }
            }
            // The turns a later one retired: those this one updated, or this one itself when
            // a later one (written earlier) holds.
            let retired = written
                .superseded
                .iter()
                .filter_map(|id| turn_of.get(id).map(|older| (*older, turn)))
                .chain(
                    written
                        .superseded_by
                        .and_then(|id| turn_of.get(&id))
                        .map(|later| (turn, *later)),
                );
            for (older, by) in retired {
                retired_turns += 1;
                retired_evidence_turns += usize::from(evidence.contains(older.dia_id.as_str()));
                if retired_examples.len() < RETIRED_EXAMPLES {
                    retired_examples.push(RetiredTurn {
                        turn: older.content.clone(),
                        by: by.content.clone(),
                        reason: written.reason.clone().unwrap_or_default(),
                    });
                }
            }
            if let (Some(id), WriteStatus::Stored) = (written.memory_id, written.status) {
                turn_of.insert(id, turn);
            }
            memories.extend(written.memory_id);
            loaded += 1;
            progress("loading", loaded, Some(texts.len() as u64));
        }
    }
    loader.flush().await?;
    let load_seconds = started.elapsed().as_secs_f64();
    drop(loader);

    let mut reports = Vec::new();
    for &arm in arms {
        let service = MemoryService::start(
            store.clone(),
            index.clone(),
            embedder.clone(),
            Rules {
                search_arms: arm,
                ..rules.clone()
            },
        )
        .await?;
        let mut overall = Tally::default();
        let mut per_category: BTreeMap<u8, Tally> = BTreeMap::new();
        let mut latencies = Vec::new();
        let phase = format!("search {}", arm.as_str());
        let questions: u64 = conversations.iter().map(|c| c.questions.len() as u64).sum();
        let mut asked = 0;
        for conversation in conversations {
            for question in &conversation.questions {
                asked += 1;
                progress(&phase, asked, Some(questions));
                if !(1..=4).contains(&question.category) || question.evidence.is_empty() {
                    continue;
                }
                let started = Instant::now();
                let result = service
                    .search(&SearchRequest {
                        query: question.question.clone(),
                        top_k: Some(10),
                        namespace: Some(conversation.namespace.clone()),
                        ..SearchRequest::default()
                    })
                    .await?;
                latencies.push(started.elapsed().as_secs_f64() * 1000.0);
                let ranked: Vec<HashSet<String>> = result.memories.iter().map(turns_of).collect();
                let evidence: HashSet<&str> =
                    question.evidence.iter().map(String::as_str).collect();
                overall.add(&evidence, &ranked);
                per_category
                    .entry(question.category)
                    .or_default()
                    .add(&evidence, &ranked);
            }
        }
        latencies.sort_by(f64::total_cmp);
        reports.push(RetrievalReport {
            eval: "retrieval-locomo",
            arms: arm.as_str(),
            // As the service runs it (an unset lexical weight is the embedder's own).
            fusion: format!("{:?}", service.rules().fusion),
            embedder: embedder.id().to_owned(),
            conversations: conversations.len(),
            turns: texts.len(),
            memories: memories.len(),
            skipped_turns,
            skipped_evidence_turns,
            retired_turns,
            retired_evidence_turns,
            retired_examples: retired_examples.clone(),
            overall: overall.scores(),
            per_category: CATEGORIES
                .iter()
                .map(|(n, name)| {
                    (
                        *name,
                        per_category.get(n).map(Tally::scores).unwrap_or_default(),
                    )
                })
                .collect(),
            load_seconds,
            embed_per_second: embed_per_second.round(),
            query_embed_p50_ms: ms(&query_latencies, 50.0),
            query_embed_p99_ms: ms(&query_latencies, 99.0),
            search_p50_ms: ms(&latencies, 50.0),
            search_p99_ms: ms(&latencies, 99.0),
        });
    }
    Ok(reports)
}
