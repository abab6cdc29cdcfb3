//! `hindsight eval distill --locomo FILE`: how much of LoCoMo's reference knowledge the distill
//! job would put in front of a reviewer. Each conversation's turns become episodic memories of
//! one namespace (`speaker: text`, dated by their session), stored in a scratch SQLite file
//! with the configured embedder; the real distill job runs over them (extractive, or with the
//! configured language model). A reference fact (`session_N_observation`: a fact and the turns
//! it came from) counts as covered when some candidate cites one of its turns *and* says it:
//! the candidate's cosine to the fact reaches the embedder's `fact_min_cosine`, calibrated on
//! the hand-labelled pairs of `coverage_pairs.json` (their precision and recall at that
//! threshold are in the report). The old measure, sources only, is reported beside it as
//! `coverage_by_sources`: a candidate citing the right turn while saying something else (a
//! small model's copy of the prompt's example) counted there.
//! Reported as JSON, with clusters, candidates, model calls, failures and refusals by kind,
//! tokens and time, and a few candidates beside their episodes.

use std::collections::{HashMap, HashSet};
use std::path::Path;
use std::sync::Arc;
use std::time::Instant;

use serde::Serialize;
use serde_json::{Value, json};

use super::BenchError;
use hindsight::distill::grounding::Grounding;
use hindsight::domain::{Content, Importance, MemoryId, MemoryType, Namespace, NewMemory};
use hindsight::embed::{Embedder, cosine};
use hindsight::index::{EdgeIndex, HnswParams};
use hindsight::jobs::{JobEnv, Runner, TickOutcome};
use hindsight::service::{MemoryService, Rules};
use hindsight::store::{Database, DistillStore, MemoryStore, SqliteStore};

/// The distill parameters to evaluate (the job's own, from `jobs/distill.toml`'s keys).
#[derive(Debug, Clone, Serialize)]
pub struct DistillEvalOptions {
    pub min_cosine: f64,
    pub min_points: usize,
    pub dedup_cosine: f64,
    /// The job's `ground_drafts`.
    pub grounding: bool,
    /// Candidates shown beside their episodes.
    pub examples: usize,
    /// Only the first N conversations.
    pub conversations: Option<usize>,
}

/// The labelled pairs' verdict at a threshold.
#[derive(Debug, Serialize)]
pub struct PairsCalibration {
    pub pairs: usize,
    pub threshold: f32,
    pub precision: f64,
    pub recall: f64,
    /// The threshold with the best F1 on the pairs, for comparison (not used).
    pub best_threshold: f32,
    pub best_f1: f64,
}

/// One candidate's grounding measures (`distill::grounding`), to calibrate its thresholds.
#[derive(Debug, Serialize)]
pub struct CandidateMeasure {
    pub centroid: f32,
    pub best: f32,
    pub worst: f32,
    /// It cites some fact's turn and states that fact.
    pub states_a_fact: bool,
    pub on_evidence: bool,
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
    /// Reference facts, those a candidate cites and states, and their share.
    pub facts: usize,
    pub facts_covered: usize,
    pub coverage: f64,
    /// Facts with a candidate citing one of their turns, whatever it says (the old measure).
    pub facts_covered_by_sources: usize,
    pub coverage_by_sources: f64,
    /// The cosine at which a candidate states a fact, and how it does on the labelled pairs.
    pub fact_min_cosine: f32,
    pub coverage_pairs: PairsCalibration,
    /// Candidates resting on at least one fact's evidence turn (the rest rest on chit-chat).
    pub candidates_on_evidence: usize,
    pub mean_sources_per_candidate: f64,
    pub llm_calls: u64,
    pub tokens_in: u64,
    pub tokens_out: u64,
    pub clusters_failed: u64,
    pub clusters_failed_schema: u64,
    pub clusters_failed_llm: u64,
    /// Drafts refused by the grounding check, by reason (`drafts_refused_*` of the run).
    pub drafts_refused: Value,
    /// The response format the endpoint took (`llm_structured_output` after fallback).
    pub structured_output: Value,
    pub grounding: bool,
    pub load_seconds: f64,
    pub distill_seconds: f64,
    pub per_conversation: Vec<Value>,
    /// A few candidates beside their episodes, to see what the numbers mean.
    pub examples: Vec<Value>,
    /// Every candidate's grounding measures.
    pub measures: Vec<CandidateMeasure>,
}

/// The labelled pairs, built in.
const PAIRS: &str = include_str!("coverage_pairs.json");

#[derive(serde::Deserialize)]
struct Pairs {
    pairs: Vec<Pair>,
}

#[derive(serde::Deserialize)]
struct Pair {
    fact: String,
    candidate: String,
    states: bool,
}

/// Embed the labelled pairs and score them at `threshold`.
pub async fn calibrate_pairs(
    embedder: &dyn Embedder,
    threshold: f32,
) -> Result<PairsCalibration, BenchError> {
    let pairs: Pairs = serde_json::from_str(PAIRS)?;
    let facts: Vec<String> = pairs.pairs.iter().map(|p| p.fact.clone()).collect();
    let candidates: Vec<String> = pairs.pairs.iter().map(|p| p.candidate.clone()).collect();
    let (f, c) = (
        embedder.embed(&facts).await?,
        embedder.embed(&candidates).await?,
    );
    let scored: Vec<(f32, bool)> = pairs
        .pairs
        .iter()
        .enumerate()
        .map(|(i, p)| (cosine(&f[i], &c[i]), p.states))
        .collect();
    let (precision, recall) = precision_recall(&scored, threshold);
    let mut best = (threshold, 0.0);
    for step in 0..=100 {
        let t = step as f32 / 100.0;
        let (p, r) = precision_recall(&scored, t);
        let f1 = if p + r > 0.0 {
            2.0 * p * r / (p + r)
        } else {
            0.0
        };
        if f1 > best.1 {
            best = (t, f1);
        }
    }
    Ok(PairsCalibration {
        pairs: scored.len(),
        threshold,
        precision: round3(precision),
        recall: round3(recall),
        best_threshold: best.0,
        best_f1: round3(best.1),
    })
}

fn precision_recall(scored: &[(f32, bool)], threshold: f32) -> (f64, f64) {
    let said = scored.iter().filter(|(s, _)| *s >= threshold);
    let true_positive = said.clone().filter(|(_, states)| *states).count();
    let said = said.count();
    let positive = scored.iter().filter(|(_, states)| *states).count();
    (
        if said == 0 {
            1.0
        } else {
            true_positive as f64 / said as f64
        },
        if positive == 0 {
            1.0
        } else {
            true_positive as f64 / positive as f64
        },
    )
}

fn round3(x: f64) -> f64 {
    (x * 1000.0).round() / 1000.0
}

pub async fn distill_eval(
    locomo: &Path,
    scratch: &Path,
    embedder: Arc<dyn Embedder>,
    env: &JobEnv,
    options: &DistillEvalOptions,
    progress: super::Tick<'_>,
) -> Result<DistillEvalReport, BenchError> {
    let mut conversations = super::locomo::load(locomo)?;
    if let Some(n) = options.conversations {
        conversations.truncate(n);
    }
    let fact_min_cosine = hindsight::embed::calibration(embedder.id()).fact_min_cosine;
    let coverage_pairs = calibrate_pairs(embedder.as_ref(), fact_min_cosine).await?;

    let db = Arc::new(
        SqliteStore::open(
            &scratch.join("eval.db"),
            hindsight::signing::Signer::ephemeral(),
        )
        .await?,
    );
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
    // By memory id: a turn's dia_id ("D1:7") repeats in every conversation.
    let mut text_of: HashMap<MemoryId, String> = HashMap::new();
    let mut turns = 0;
    let all_turns: u64 = conversations.iter().map(|c| c.turns.len() as u64).sum();
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
                text_of.insert(memory.id, turn.content.clone());
                turns += 1;
                progress("loading", turns as u64, Some(all_turns));
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
             min_cosine = {}\nmin_points = {}\ndedup_cosine = {}\nground_drafts = {}\n",
            options.min_cosine, options.min_points, options.dedup_cosine, options.grounding
        ),
    )?;
    let jobs = hindsight::jobs::load_jobs(&jobs_dir, env)?
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
    progress("distilling", 0, None);
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
        facts_covered_by_sources: 0,
        coverage_by_sources: 0.0,
        fact_min_cosine,
        coverage_pairs,
        candidates_on_evidence: 0,
        mean_sources_per_candidate: 0.0,
        llm_calls: figure("llm_calls"),
        tokens_in: figure("tokens_in"),
        tokens_out: figure("tokens_out"),
        clusters_failed: figure("clusters_failed"),
        clusters_failed_schema: figure("clusters_failed_schema"),
        clusters_failed_llm: figure("clusters_failed_llm"),
        drafts_refused: Value::Object(
            stats
                .details
                .iter()
                .filter(|(k, _)| k.starts_with("drafts_refused"))
                .map(|(k, v)| (k.clone(), v.clone()))
                .collect(),
        ),
        structured_output: stats
            .details
            .get("structured_output")
            .cloned()
            .unwrap_or(Value::Null),
        grounding: options.grounding,
        load_seconds,
        distill_seconds,
        per_conversation: vec![],
        examples: vec![],
        measures: vec![],
    };
    let mut sources_total = 0;
    for conversation in &conversations {
        let candidates = db
            .candidates(Some(&conversation.namespace), None, 1_000_000)
            .await?;
        let fact_texts: Vec<String> = conversation.facts.iter().map(|(f, _)| f.clone()).collect();
        let fact_vectors = match fact_texts.is_empty() {
            true => vec![],
            false => embedder.embed(&fact_texts).await?,
        };
        let evidence: HashSet<&str> = conversation
            .facts
            .iter()
            .flat_map(|(_, turns)| turns.iter().map(String::as_str))
            .collect();
        let vector_of: HashMap<MemoryId, Vec<f32>> = db
            .get_many(
                &candidates
                    .iter()
                    .flat_map(|c| c.source_ids.clone())
                    .collect::<Vec<_>>(),
            )
            .await?
            .into_iter()
            .map(|m| (m.id, m.embedding))
            .collect();
        let mut by_sources: HashSet<usize> = HashSet::new();
        let mut stated: HashSet<usize> = HashSet::new();
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
            let mut states_a_fact = false;
            for (i, (_, fact_turns)) in conversation.facts.iter().enumerate() {
                let (cites, states) = covers(
                    &turns,
                    &candidate.embedding,
                    fact_turns,
                    &fact_vectors[i],
                    fact_min_cosine,
                );
                if cites {
                    by_sources.insert(i);
                }
                if states {
                    stated.insert(i);
                    states_a_fact = true;
                }
            }
            let sources: Vec<&[f32]> = candidate
                .source_ids
                .iter()
                .filter_map(|id| vector_of.get(id).map(Vec::as_slice))
                .collect();
            let measured =
                Grounding::measure(&candidate.content, &candidate.embedding, &sources, &[], "");
            report.measures.push(CandidateMeasure {
                centroid: round2(measured.centroid),
                best: round2(measured.best),
                worst: round2(measured.worst),
                states_a_fact,
                on_evidence,
            });
            if report.examples.len() < options.examples {
                report.examples.push(json!({
                    "conversation": conversation.namespace,
                    "content": candidate.content.chars().take(200).collect::<String>(),
                    "states_a_fact": states_a_fact,
                    "on_evidence": on_evidence,
                    "episodes": candidate.source_ids.iter().take(6).map(|id| json!({
                        "turn": dia_of.get(id),
                        "text": text_of.get(id).map(|x| x.chars().take(160).collect::<String>()),
                    })).collect::<Vec<_>>(),
                }));
            }
        }
        report.candidates += candidates.len();
        report.facts += conversation.facts.len();
        report.facts_covered += stated.len();
        report.facts_covered_by_sources += by_sources.len();
        report.per_conversation.push(json!({
            "conversation": conversation.namespace,
            "turns": conversation.turns.len(),
            "facts": conversation.facts.len(),
            "facts_covered": stated.len(),
            "facts_covered_by_sources": by_sources.len(),
            "candidates": candidates.len(),
        }));
    }
    report.coverage = ratio(report.facts_covered, report.facts);
    report.coverage_by_sources = ratio(report.facts_covered_by_sources, report.facts);
    report.mean_sources_per_candidate = ratio(sources_total, report.candidates);
    Ok(report)
}

/// Whether a candidate (the turns it cites, its vector) cites one of a fact's turns, and
/// whether it also states the fact (cosine to it at least `threshold`).
fn covers(
    cited: &[&str],
    candidate: &[f32],
    fact_turns: &[String],
    fact: &[f32],
    threshold: f32,
) -> (bool, bool) {
    let cites = fact_turns.iter().any(|t| cited.contains(&t.as_str()));
    (cites, cites && cosine(candidate, fact) >= threshold)
}

fn round2(x: f32) -> f32 {
    (x * 100.0).round() / 100.0
}

fn ratio(part: usize, whole: usize) -> f64 {
    if whole == 0 {
        0.0
    } else {
        (part as f64 / whole as f64 * 1000.0).round() / 1000.0
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use hindsight::embed::BuiltinEmbedder;

    #[test]
    fn citing_the_right_turn_while_saying_something_else_covers_nothing() {
        let turns = vec!["D1:3".to_owned()];
        let fact = [1.0, 0.0, 0.0];
        assert_eq!(
            covers(&["D1:3"], &[0.0, 1.0, 0.0], &turns, &fact, 0.5),
            (true, false)
        );
        assert_eq!(
            covers(&["D1:3"], &[0.9, 0.1, 0.0], &turns, &fact, 0.5),
            (true, true)
        );
        assert_eq!(
            covers(&["D2:1"], &[1.0, 0.0, 0.0], &turns, &fact, 0.5),
            (false, false)
        );
    }

    /// The built-in embedder's `fact_min_cosine` on the labelled pairs: the figures docs/review.md
    /// reports, held here so a change to the embedder or the threshold shows.
    #[tokio::test]
    async fn the_labelled_pairs_calibrate_the_builtin_threshold() {
        let embedder = BuiltinEmbedder::new();
        let threshold = hindsight::embed::calibration(embedder.id()).fact_min_cosine;
        let calibration = calibrate_pairs(&embedder, threshold).await.unwrap();
        assert_eq!(calibration.pairs, 40);
        assert!(calibration.precision >= 0.9, "{calibration:?}");
        assert!(calibration.recall >= 0.6, "{calibration:?}");
    }
}
