//! `hindsight bench embed`: the configured embedder alone — one query at a time as a search
//! embeds it, and bulk as a reindex does — on LoCoMo's turns cut to a fixed number of words.

use std::sync::Arc;
use std::time::Instant;

use serde::Serialize;

use super::BenchError;
use super::locomo::Conversation;
use hindsight::embed::Embedder;

#[derive(Debug, Serialize)]
pub struct EmbedBenchReport {
    pub bench: &'static str,
    pub embedder: String,
    /// Threads the process may use (`RAYON_NUM_THREADS`, which candle's kernels honour, else
    /// the machine's cores).
    pub threads: usize,
    pub query_words: usize,
    pub queries: usize,
    pub query_p50_ms: f64,
    pub query_p99_ms: f64,
    /// Whole turns embedded per second, in calls of 500.
    pub bulk_texts: usize,
    pub bulk_per_second: f64,
}

/// Queries: the first `words` words of each turn that has that many (up to `queries` of them);
/// bulk: the first `bulk` turns, whole.
pub async fn embed_bench(
    conversations: &[Conversation],
    embedder: Arc<dyn Embedder>,
    words: usize,
    queries: usize,
    bulk: usize,
    progress: super::Tick<'_>,
) -> Result<EmbedBenchReport, BenchError> {
    let turns: Vec<String> = conversations
        .iter()
        .flat_map(|c| c.turns.iter().map(|t| t.content.clone()))
        .collect();
    let bulk_turns = &turns[..bulk.min(turns.len())];
    let texts: Vec<String> = turns
        .iter()
        .filter_map(|t| {
            let cut: Vec<&str> = t.split_whitespace().take(words).collect();
            (cut.len() == words).then(|| cut.join(" "))
        })
        .take(queries)
        .collect();
    // One warm-up call: the first forward pass allocates.
    embedder.embed_query("warm up").await?;
    let mut latencies = Vec::with_capacity(texts.len());
    for (i, text) in texts.iter().enumerate() {
        let started = Instant::now();
        embedder.embed_query(text).await?;
        latencies.push(started.elapsed().as_secs_f64() * 1000.0);
        progress("queries", i as u64 + 1, Some(texts.len() as u64));
    }
    latencies.sort_by(f64::total_cmp);
    let started = Instant::now();
    for chunk in bulk_turns.chunks(500) {
        embedder.embed(chunk).await?;
    }
    let bulk_per_second = bulk_turns.len() as f64 / started.elapsed().as_secs_f64().max(1e-9);
    let threads = std::env::var("RAYON_NUM_THREADS")
        .ok()
        .and_then(|v| v.parse().ok())
        .filter(|n| *n > 0)
        .unwrap_or_else(|| std::thread::available_parallelism().map_or(1, |n| n.get()));
    let ms = |p: f64| (super::percentile(&latencies, p) * 1000.0).round() / 1000.0;
    Ok(EmbedBenchReport {
        bench: "embed",
        embedder: embedder.id().to_owned(),
        threads,
        query_words: words,
        queries: texts.len(),
        query_p50_ms: ms(50.0),
        query_p99_ms: ms(99.0),
        bulk_texts: bulk_turns.len(),
        bulk_per_second: bulk_per_second.round(),
    })
}
