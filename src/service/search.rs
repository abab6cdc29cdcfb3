//! `memory_search`: over-fetch from the index with filters, re-check every hit against the store
//! (namespace, type, status, expiry, time range), re-rank by similarity + recency + importance, record access.

use std::collections::HashMap;

use chrono::Utc;

use super::requests::SearchRequest;
use super::{MemoryService, SearchHit, SearchResult, ServiceError};
use crate::domain::Status;
use crate::index::IndexQuery;

impl MemoryService {
    pub async fn search(&self, request: &SearchRequest) -> Result<SearchResult, ServiceError> {
        let valid = request.validate(self.rules.max_content_chars)?;
        self.ensure_embedder_matches()?;
        let vector = self.embed_one(valid.query.as_str()).await?;
        let mut statuses = vec![Status::Active];
        if valid.include_deprecated {
            statuses.push(Status::Deprecated);
        }
        let top_k = valid.top_k.get();
        let hits = self
            .index
            .search(IndexQuery {
                vector,
                namespace: valid.namespace.as_str().to_owned(),
                memory_types: valid.memory_types.clone(),
                statuses: statuses.clone(),
                created_from: valid.from.map(|t| t.timestamp()),
                created_to: valid.to.map(|t| t.timestamp()),
                limit: top_k * self.rules.search_overfetch,
            })
            .await?;
        let similarity: HashMap<_, _> = hits.iter().map(|h| (h.id, h.score)).collect();
        let ids: Vec<_> = hits.iter().map(|h| h.id).collect();
        let rows = self.store.get_many(&ids).await?;

        // Points whose row is gone (a hard forget interrupted before the index delete) are
        // cleaned up here; they are never returned.
        if rows.len() < ids.len() {
            let found: std::collections::HashSet<_> = rows.iter().map(|m| m.id).collect();
            let orphans: Vec<_> = ids
                .iter()
                .copied()
                .filter(|id| !found.contains(id))
                .collect();
            if let Err(e) = self.index.delete(orphans).await {
                tracing::warn!(error = %e, "could not drop orphaned index points");
            }
        }

        let now = Utc::now();
        let rules = &self.rules;
        let mut ranked: Vec<SearchHit> = rows
            .into_iter()
            // The row decides, never the index's copy of it: an index out of step (a point
            // whose payload still names an old namespace or type) must not widen the result.
            .filter(|m| m.namespace == valid.namespace.as_str())
            .filter(|m| {
                valid.memory_types.is_empty() || valid.memory_types.contains(&m.memory_type)
            })
            .filter(|m| statuses.contains(&m.status) && !m.is_expired_at(now))
            .filter(|m| valid.from.is_none_or(|from| m.created_at >= from))
            .filter(|m| valid.to.is_none_or(|to| m.created_at <= to))
            .map(|m| {
                let sim = f64::from(similarity.get(&m.id).copied().unwrap_or(0.0));
                let days = (now - m.created_at).num_milliseconds().max(0) as f64 / 86_400_000.0;
                let recency = (-rules.recency_lambda * days).exp();
                let score = rules.weight_similarity * sim
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
                    created_at: m.created_at,
                    expires_at: m.expires_at,
                    source: m.source,
                    merged_sources: m.merged_sources,
                    metadata: m.metadata,
                    deprecated_by: m.deprecated_by,
                    score,
                    similarity: sim,
                    recency,
                    access_count: m.access_count,
                }
            })
            .collect();
        ranked.sort_by(|a, b| b.score.total_cmp(&a.score).then_with(|| b.id.cmp(&a.id)));
        ranked.truncate(top_k);

        self.note_access(ranked.iter().map(|h| h.id), now);
        Ok(SearchResult { memories: ranked })
    }
}
