//! `memory_search`: two arms — the vector index (dense) and the lexical one (the embedded
//! index's sparse BM25 vectors, or the store's full-text index beside a Qdrant server), each
//! over-fetched with every filter applied where it runs — fused into one relevance
//! (`fusion.rs`); every candidate re-checked against its row (namespace, type, status, expiry,
//! event-time range); ranked by relevance + recency (from event time) + importance; accesses
//! recorded (unless an operator is browsing). `search_staged` also says where the time went.

use std::collections::HashMap;
use std::sync::Arc;
use std::time::{Duration, Instant};

use chrono::Utc;

use super::fusion::{ArmScores, fuse};
use super::requests::SearchRequest;
use super::{MemoryService, SearchHit, SearchResult, ServiceError, integrity};
use crate::domain::Status;
use crate::embed::cosine;
use crate::index::IndexQuery;
use crate::store::{LexicalHits, LexicalQuery, RowTable};

/// Where one search's time went, in the order the stages run. The two arms run side by side:
/// `dense` and `lexical` are each arm's own time, `arms` the wall time of both together (so
/// the stages after `embed` add up to the total with `arms`, not with the two arms).
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct SearchStages {
    /// The query's embedding.
    pub embed: Duration,
    /// The vector index's search (nothing when the dense arm is off).
    pub dense: Duration,
    /// The lexical arm: the index's own, or the store's full-text search.
    pub lexical: Duration,
    /// Both arms, side by side.
    pub arms: Duration,
    /// Reading the candidates' rows.
    pub fetch: Duration,
    /// Checking each row's signature.
    pub verify: Duration,
    /// Re-checking rows against the request, fusing the arms and ranking.
    pub rank: Duration,
    /// Noting the returned memories' accesses.
    pub access: Duration,
}

impl SearchStages {
    /// Each stage's name and time, in order; `arms` is left out (it overlaps its two arms).
    pub fn named(&self) -> [(&'static str, Duration); 7] {
        [
            ("embed", self.embed),
            ("dense", self.dense),
            ("lexical", self.lexical),
            ("fetch", self.fetch),
            ("verify", self.verify),
            ("rank", self.rank),
            ("access", self.access),
        ]
    }
}

impl MemoryService {
    pub async fn search(&self, request: &SearchRequest) -> Result<SearchResult, ServiceError> {
        Ok(self.search_staged(request).await?.0)
    }

    /// `search`, and where its time went.
    pub async fn search_staged(
        &self,
        request: &SearchRequest,
    ) -> Result<(SearchResult, SearchStages), ServiceError> {
        let mut stages = SearchStages::default();
        let valid = request.validate(self.rules.max_content_chars)?;
        self.ensure_embedder_matches()?;
        let rules = &self.rules;
        let arms = rules.search_arms;
        // The query vector is needed even without the dense arm: every hit shows its cosine.
        let started = Instant::now();
        let vector = self.query_vector(valid.query.as_str()).await?;
        stages.embed = started.elapsed();
        let mut statuses = vec![Status::Active];
        if valid.include_deprecated {
            statuses.push(Status::Deprecated);
        }
        let top_k = valid.top_k.get();
        let now = Utc::now();
        let namespaces: Vec<String> = valid
            .namespaces
            .iter()
            .map(|n| n.as_str().to_owned())
            .collect();
        let index_query = IndexQuery {
            vector: vector.to_vec(),
            namespaces: namespaces.clone(),
            memory_types: valid.memory_types.clone(),
            statuses: statuses.clone(),
            occurred_from: valid.from.map(|t| t.timestamp()),
            occurred_to: valid.to.map(|t| t.timestamp()),
            limit: top_k * rules.search_overfetch,
            ef: None,
        };
        let dense = timed(async {
            if !arms.dense() {
                return Ok(vec![]);
            }
            self.index
                .search(index_query.clone())
                .await
                .map_err(ServiceError::from)
        });
        let lexical = timed(async {
            if !arms.lexical() {
                return Ok(LexicalHits::default());
            }
            let terms = crate::lexical::query_terms(valid.query.as_str());
            let limit = top_k * rules.search_lexical_overfetch;
            // The index's own lexical arm when it keeps one (the embedded engine), else the
            // store's full-text index.
            let in_index = IndexQuery {
                limit,
                ..index_query.clone()
            };
            if let Some(hits) = self
                .index
                .lexical_search(&in_index, &terms, rules.search_lexical_max_df)
                .await?
            {
                return Ok(hits);
            }
            self.store
                .lexical_search(&LexicalQuery {
                    namespaces: namespaces.clone(),
                    memory_types: valid.memory_types.clone(),
                    statuses: statuses.clone(),
                    terms,
                    now,
                    occurred_from: valid.from,
                    occurred_to: valid.to,
                    max_df: rules.search_lexical_max_df,
                    limit,
                })
                .await
                .map_err(ServiceError::from)
        });
        let started = Instant::now();
        let ((dense, dense_time), (lexical, lexical_time)) = tokio::join!(dense, lexical);
        stages.arms = started.elapsed();
        (stages.dense, stages.lexical) = (dense_time, lexical_time);
        let (dense, lexical) = (dense?, lexical?);

        let mut candidates: HashMap<_, ArmScores> = HashMap::new();
        for (rank, hit) in dense.iter().enumerate() {
            candidates.entry(hit.id).or_default().dense_rank = Some(rank + 1);
        }
        for (rank, hit) in lexical.iter().enumerate() {
            let entry = candidates.entry(hit.id).or_default();
            entry.lexical_score = Some(hit.score);
            entry.lexical_rank = Some(rank + 1);
        }
        let ids: Vec<_> = candidates.keys().copied().collect();
        let started = Instant::now();
        let rows = self.store.get_many(&ids).await?;
        stages.fetch = started.elapsed();
        let found = rows.len();
        let started = Instant::now();
        let rows = integrity::checked(
            self.store.as_ref(),
            Some(self.metrics.as_ref()),
            RowTable::Memories,
            rows,
        )
        .await;
        stages.verify = started.elapsed();

        let started = Instant::now();
        // Points whose row is gone (a hard forget interrupted before the index delete) are
        // cleaned up here; they are never returned.
        if found < ids.len() {
            let found: std::collections::HashSet<_> = rows.iter().map(|m| m.id).collect();
            let orphans: Vec<_> = dense
                .iter()
                .map(|h| h.id)
                .chain(lexical.iter().map(|h| h.id))
                .filter(|id| !found.contains(id))
                .collect();
            if !orphans.is_empty()
                && let Err(e) = self.index.delete(orphans).await
            {
                tracing::warn!(error = %e, "could not drop orphaned index points");
            }
        }

        // The row decides, never an index's copy of it: an index out of step (a point whose
        // payload still names an old namespace or type) must not widen the result.
        let rows: Vec<_> = rows
            .into_iter()
            .filter(|m| namespaces.contains(&m.namespace))
            .filter(|m| {
                valid.memory_types.is_empty() || valid.memory_types.contains(&m.memory_type)
            })
            .filter(|m| statuses.contains(&m.status) && !m.is_expired_at(now))
            .filter(|m| valid.from.is_none_or(|from| m.occurred_at >= from))
            .filter(|m| valid.to.is_none_or(|to| m.occurred_at <= to))
            .collect();
        for m in &rows {
            if let Some(c) = candidates.get_mut(&m.id) {
                c.similarity = f64::from(cosine(&m.embedding, &vector));
            }
        }
        candidates.retain(|id, _| rows.iter().any(|m| m.id == *id));
        let relevance = fuse(arms, rules.fusion, &candidates, lexical.full_match);

        let mut ranked: Vec<SearchHit> = rows
            .into_iter()
            .map(|m| {
                let parts = candidates.get(&m.id).copied().unwrap_or_default();
                let relevance = relevance.get(&m.id).copied().unwrap_or(0.0);
                let days = (now - m.occurred_at).num_milliseconds().max(0) as f64 / 86_400_000.0;
                let recency = (-rules.recency_lambda * days).exp();
                let score = rules.weight_similarity * relevance
                    + rules.weight_recency * recency
                    + rules.weight_importance * m.importance;
                SearchHit {
                    id: m.id,
                    content: m.content,
                    memory_type: m.memory_type,
                    namespace: m.namespace,
                    status: m.status,
                    importance: m.importance,
                    entity: m.entity,
                    attribute: m.attribute,
                    occurred_at: m.occurred_at,
                    created_at: m.created_at,
                    expires_at: m.expires_at,
                    source: m.source,
                    merged_sources: m.merged_sources,
                    metadata: m.metadata,
                    deprecated_by: m.deprecated_by,
                    score,
                    relevance,
                    similarity: parts.similarity,
                    dense_rank: parts.dense_rank,
                    lexical_score: parts.lexical_score,
                    lexical_rank: parts.lexical_rank,
                    recency,
                    access_count: m.access_count,
                }
            })
            .collect();
        ranked.sort_by(|a, b| b.score.total_cmp(&a.score).then_with(|| b.id.cmp(&a.id)));
        ranked.truncate(top_k);
        stages.rank = started.elapsed();

        let started = Instant::now();
        if !request.browsing {
            self.note_access(ranked.iter().map(|h| h.id), now);
        }
        stages.access = started.elapsed();
        Ok((SearchResult { memories: ranked }, stages))
    }
}

impl MemoryService {
    /// The query's vector: from the recent queries' (`query_vectors`) when it is there.
    async fn query_vector(&self, query: &str) -> Result<Arc<Vec<f32>>, ServiceError> {
        if let Some(vector) = self.query_vectors.get(query) {
            return Ok(vector);
        }
        let vector = Arc::new(self.embedder.embed_query(query).await?);
        self.query_vectors.insert(query.to_owned(), vector.clone());
        Ok(vector)
    }
}

/// `future`'s output and how long it took.
async fn timed<T>(future: impl Future<Output = T>) -> (T, Duration) {
    let started = Instant::now();
    let out = future.await;
    (out, started.elapsed())
}
