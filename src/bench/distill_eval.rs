//! `hindsight eval distill --locomo FILE`: how much of LoCoMo's reference knowledge the distill
//! job would put in front of a reviewer. Each conversation's turns become episodic memories of
//! one namespace (`speaker: text`, dated by their session), stored in a scratch SQLite file
//! with the configured embedder; the real distill job runs over them (extractive, or with the
//! configured language model); a reference fact (`session_N_observation`: a fact and the turns
//! it came from) counts as covered when some candidate's sources include one of its turns.
//! Reported as JSON, with clusters, candidates, model calls, tokens and time.

use std::collections::{HashMap, HashSet};
use std::path::Path;
use std::sync::Arc;
use std::time::Instant;

use serde::Serialize;
use serde_json::{Value, json};

use super::BenchError;
use crate::domain::{Content, Importance, MemoryId, MemoryType, Namespace, NewMemory};
use crate::embed::Embedder;
use crate::index::{EdgeIndex, HnswParams};
use crate::jobs::{JobEnv, Runner, TickOutcome};
use crate::service::{MemoryService, Rules};
use crate::store::{Database, DistillStore, MemoryStore, SqliteStore};

/// The distill parameters to evaluate (the job's own, from `jobs/distill.toml`'s keys).
#[derive(Debug, Clone, Serialize)]
pub struct DistillEvalOptions {
    pub min_cosine: f64,
    pub min_points: usize,
    pub dedup_cosine: f64,
}

#[derive(Debug, Serialize)]
pub struct DistillEvalReport {
    pub eval: &'static str,
    pub embedder: String,
    pub method: String,
    pub params: DistillEvalOptions,
    pub conversations: usize,
    pub turns: usize,
    pub clusters: u64,
    pub noise_turns: u64,
    pub candidates: usize,
    /// Reference facts, and those whose evidence turns some candidate rests on.
    pub facts: usize,
    pub facts_covered: usize,
    pub coverage: f64,
    /// Candidates resting on at least one fact's evidence turn (the rest rest on chit-chat).
    pub candidates_on_evidence: usize,
    pub mean_sources_per_candidate: f64,
    pub llm_calls: u64,
    pub tokens_in: u64,
    pub tokens_out: u64,
    pub clusters_failed: u64,
    pub load_seconds: f64,
    pub distill_seconds: f64,
    pub per_conversation: Vec<Value>,
    /// A few candidates, to see what the numbers mean.
    pub examples: Vec<Value>,
}

/// Candidates shown in the report.
const EXAMPLES: usize = 12;

pub async fn distill_eval(
    locomo: &Path,
    scratch: &Path,
    embedder: Arc<dyn Embedder>,
    env: &JobEnv,
    options: &DistillEvalOptions,
) -> Result<DistillEvalReport, BenchError> {
    let conversations = super::locomo::load(locomo)?;

    let db = Arc::new(SqliteStore::open(&scratch.join("eval.db")).await?);
    let index = Arc::new(
        EdgeIndex::open(
            &scratch.join("index"),
            embedder.dimension(),
            HnswParams::default(),
        )
        .await?,
    );
    let store: Arc<dyn MemoryStore> = db.clone();
    let service =
        Arc::new(MemoryService::start(store, index, embedder.clone(), Rules::default()).await?);

    // Straight into the store, as the turns are: the eval measures distillation, not the
    // write path's dedup of "Hey!" and "Thanks!".
    let started = Instant::now();
    let mut dia_of: HashMap<MemoryId, String> = HashMap::new();
    let mut turns = 0;
    for conversation in &conversations {
        let namespace = Namespace::parse(&conversation.namespace)?;
        for chunk in conversation.turns.chunks(64) {
            let texts: Vec<String> = chunk.iter().map(|t| t.content.clone()).collect();
            let vectors = embedder.embed(&texts).await?;
            for (turn, embedding) in chunk.iter().zip(vectors) {
                let memory = NewMemory {
                    id: uuid::Uuid::now_v7(),
                    namespace: namespace.clone(),
                    memory_type: MemoryType::Episodic,
                    content: Content::parse(&turn.content, 100_000)?,
                    importance: Importance::parse(0.5)?,
                    entity: None,
                    attribute: None,
                    source: json!({"locomo": turn.dia_id}),
                    metadata: json!({}),
                    created_at: turn.at,
                    occurred_at: turn.at,
                    expires_at: None,
                    embedding_model: embedder.id().to_owned(),
                    embedding,
                }
                .into_memory();
                db.insert(&memory).await?;
                dia_of.insert(memory.id, turn.dia_id.clone());
                turns += 1;
            }
        }
    }
    let load_seconds = started.elapsed().as_secs_f64();

    // The job as shipped, with a window reaching back to 2022 and room for a whole
    // conversation per run.
    let jobs_dir = scratch.join("jobs");
    std::fs::create_dir_all(&jobs_dir)?;
    std::fs::write(
        jobs_dir.join("distill.toml"),
        format!(
            "cron = \"0 0 4 * * *\"\n[params]\nwindow_days = 3650\nmax_episodes = 100000\n\
             min_cosine = {}\nmin_points = {}\ndedup_cosine = {}\n",
            options.min_cosine, options.min_points, options.dedup_cosine
        ),
    )?;
    let jobs = crate::jobs::load_jobs(&jobs_dir, env)?
        .into_iter()
        .filter(|j| j.settings.name == "distill")
        .collect();
    let database: Arc<dyn Database> = db.clone();
    let runner = Runner::new(
        jobs,
        service.clone(),
        database,
        true,
        service.metrics().clone(),
    );
    let started = Instant::now();
    let stats = match runner.run_now("distill", false, None).await? {
        TickOutcome::Ran {
            stats, error: None, ..
        } => stats,
        TickOutcome::Ran {
            error: Some(error), ..
        } => return Err(format!("distill failed: {error}").into()),
        TickOutcome::Skipped(reason) => return Err(format!("distill skipped: {reason}").into()),
    };
    let distill_seconds = started.elapsed().as_secs_f64();
    let figure = |key: &str| stats.details.get(key).and_then(Value::as_u64).unwrap_or(0);

    let mut report = DistillEvalReport {
        eval: "distill-locomo",
        embedder: embedder.id().to_owned(),
        method: stats
            .details
            .get("method")
            .and_then(Value::as_str)
            .unwrap_or("?")
            .to_owned(),
        params: options.clone(),
        conversations: conversations.len(),
        turns,
        clusters: figure("clusters"),
        noise_turns: figure("noise"),
        candidates: 0,
        facts: 0,
        facts_covered: 0,
        coverage: 0.0,
        candidates_on_evidence: 0,
        mean_sources_per_candidate: 0.0,
        llm_calls: figure("llm_calls"),
        tokens_in: figure("tokens_in"),
        tokens_out: figure("tokens_out"),
        clusters_failed: figure("clusters_failed"),
        load_seconds,
        distill_seconds,
        per_conversation: vec![],
        examples: vec![],
    };
    let mut sources_total = 0;
    for conversation in &conversations {
        let candidates = db
            .candidates(Some(&conversation.namespace), None, 1_000_000)
            .await?;
        let evidence: HashSet<&str> = conversation
            .facts
            .iter()
            .flat_map(|(_, turns)| turns.iter().map(String::as_str))
            .collect();
        let mut supported: HashSet<&str> = HashSet::new();
        for candidate in &candidates {
            sources_total += candidate.source_ids.len();
            let turns: Vec<&str> = candidate
                .source_ids
                .iter()
                .filter_map(|id| dia_of.get(id).map(String::as_str))
                .collect();
            let on_evidence = turns.iter().any(|t| evidence.contains(t));
            if on_evidence {
                report.candidates_on_evidence += 1;
            }
            if report.examples.len() < EXAMPLES {
                report.examples.push(json!({
                    "conversation": conversation.namespace,
                    "content": candidate.content.chars().take(200).collect::<String>(),
                    "sources": turns,
                    "on_evidence": on_evidence,
                }));
            }
            supported.extend(turns);
        }
        let covered = conversation
            .facts
            .iter()
            .filter(|(_, turns)| turns.iter().any(|t| supported.contains(t.as_str())))
            .count();
        report.candidates += candidates.len();
        report.facts += conversation.facts.len();
        report.facts_covered += covered;
        report.per_conversation.push(json!({
            "conversation": conversation.namespace,
            "turns": conversation.turns.len(),
            "facts": conversation.facts.len(),
            "facts_covered": covered,
            "candidates": candidates.len(),
        }));
    }
    report.coverage = ratio(report.facts_covered, report.facts);
    report.mean_sources_per_candidate = ratio(sources_total, report.candidates);
    Ok(report)
}

fn ratio(part: usize, whole: usize) -> f64 {
    if whole == 0 {
        0.0
    } else {
        (part as f64 / whole as f64 * 1000.0).round() / 1000.0
    }
}
