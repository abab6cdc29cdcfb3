use std::cmp;

use crate::common::counter::hardware_accumulator::HwMeasurementAcc;
use crate::segment::common::operation_error::OperationResult;
use crate::segment::data_types::modifier::Modifier;
use crate::segment::data_types::vectors::QueryVector;
use crate::segment::types::{DEFAULT_FULL_SCAN_THRESHOLD, ScoredPoint, WithPayload};
use crate::shard::common::stopping_guard::StoppingGuard;
use crate::shard::query::query_context::{fill_query_context, init_query_context};
use crate::shard::search::CoreSearchRequest;
use crate::shard::search_result_aggregator::BatchResultAggregator;

use crate::edge::{DEFAULT_EDGE_TIMEOUT, EdgeShard};

impl EdgeShard {
    /// This method is DEPRECATED and should be replaced with query.
    pub fn search(&self, search: CoreSearchRequest) -> OperationResult<Vec<ScoredPoint>> {
        let query = search.query.clone();
        let mut found = self.search_many(search, vec![query])?;
        Ok(found.pop().unwrap_or_default())
    }

    /// hindsight patch (see vendor/README.md): the search `search` describes (filter, params,
    /// limit; its own `query` is not read) for each of `queries`, all of one vector name,
    /// given to each segment as one batch. A segment that scans its filtered points scores
    /// each chunk of them against every query while it holds it, instead of one pass per
    /// query; a graph walk is one per query either way. The results in `queries`' order.
    pub fn search_many(
        &self,
        search: CoreSearchRequest,
        queries: Vec<crate::shard::query::query_enum::QueryEnum>,
    ) -> OperationResult<Vec<Vec<ScoredPoint>>> {
        if queries.is_empty() {
            return Ok(vec![]);
        }
        let is_stopped_guard = StoppingGuard::new();
        // The IDF statistics a sparse query needs are gathered for every query's terms.
        let sparse = queries.iter().filter(|query| {
            let mut is_sparse = false;
            query.iterate_sparse(|_, _| is_sparse = true);
            is_sparse
        });
        let context_searches: Vec<CoreSearchRequest> = sparse
            .map(|query| CoreSearchRequest {
                query: query.clone(),
                filter: None,
                params: None,
                limit: 0,
                offset: 0,
                with_payload: None,
                with_vector: None,
                score_threshold: None,
            })
            .collect();
        let query_context = init_query_context(
            &context_searches,
            DEFAULT_FULL_SCAN_THRESHOLD,
            &is_stopped_guard,
            HwMeasurementAcc::disposable_edge(),
            |vector_name| {
                self.config
                    .read()
                    .sparse_vectors
                    .get(vector_name)
                    .is_some_and(|v| v.modifier == Some(Modifier::Idf))
            },
        );
        let Some(context) = fill_query_context(
            query_context,
            self.segments.clone(),
            DEFAULT_EDGE_TIMEOUT,
            &is_stopped_guard.get_is_stopped(),
        )?
        else {
            // No segments to search
            return Ok(vec![Vec::new(); queries.len()]);
        };

        let segments: Vec<_> = self
            .segments
            .read()
            .non_appendable_then_appendable_segments()
            .collect();

        let CoreSearchRequest {
            query: _,
            filter,
            params,
            limit,
            offset,
            with_payload,
            with_vector,
            score_threshold,
        } = search;

        let vector_name = queries[0].get_vector_name().to_string();
        if let Some(other) = queries.iter().find(|q| q.get_vector_name() != vector_name) {
            return Err(
                crate::segment::common::operation_error::OperationError::service_error(format!(
                    "one batch searches one vector, got '{vector_name}' and '{}'",
                    other.get_vector_name()
                )),
            );
        }
        let query_vectors: Vec<QueryVector> = queries.into_iter().map(QueryVector::from).collect();
        let query_refs: Vec<&QueryVector> = query_vectors.iter().collect();
        let with_payload = WithPayload::from(with_payload.unwrap_or_default());
        let with_vector = with_vector.unwrap_or_default();

        let mut points_by_segment = Vec::with_capacity(segments.len());

        for segment in segments {
            let batched_points = segment.get().read().search_batch(
                &vector_name,
                &query_refs,
                &with_payload,
                &with_vector,
                filter.as_ref(),
                offset + limit,
                params.as_ref(),
                &context.get_segment_query_context(),
            )?;

            debug_assert_eq!(batched_points.len(), query_refs.len());

            points_by_segment.push(batched_points);
        }

        let mut aggregator = BatchResultAggregator::new(vec![offset + limit; query_refs.len()]);
        aggregator.update_point_versions(points_by_segment.iter().flatten().flatten());

        for batched_points in points_by_segment {
            for (batch_id, points) in batched_points.into_iter().enumerate() {
                aggregator.update_batch_results(batch_id, points);
            }
        }

        let distance = {
            let config = self.config.read();
            if let Some(dense) = config.vectors.get(&vector_name) {
                dense.distance
            } else if config.sparse_vectors.contains_key(&vector_name) {
                crate::segment::types::Distance::Dot
            } else {
                return Err(
                    crate::segment::common::operation_error::OperationError::service_error(format!(
                        "vector config for '{vector_name}' does not exist"
                    )),
                );
            }
        };

        let mut results = aggregator.into_topk();
        for (points, query_vector) in results.iter_mut().zip(&query_vectors) {
            match query_vector {
                QueryVector::Nearest(_) => {
                    for point in points.iter_mut() {
                        point.score = distance.postprocess_score(point.score);
                    }
                }
                QueryVector::RecommendBestScore(_) => (),
                QueryVector::RecommendSumScores(_) => (),
                QueryVector::Discover(_) => (),
                QueryVector::Context(_) => (),
                QueryVector::FeedbackNaive(_) => (),
            }

            if let Some(score_threshold) = score_threshold {
                debug_assert!(
                    points.is_sorted_by(|left, right| distance.is_ordered(left.score, right.score)),
                );

                let below_threshold = points
                    .iter()
                    .enumerate()
                    .find(|(_, point)| !distance.check_threshold(point.score, score_threshold));

                if let Some((below_threshold_idx, _)) = below_threshold {
                    points.truncate(below_threshold_idx);
                }
            }

            let _ = points.drain(..cmp::min(points.len(), offset));
        }

        Ok(results)
    }
}
