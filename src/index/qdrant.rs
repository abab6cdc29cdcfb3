//! The scale-out vector index: a Qdrant server over gRPC (qdrant-client), shared by every
//! replica. Same contract as the embedded index; Qdrant does the HNSW, the payload filtering and
//! the durability (every write waits for the server to apply it).
//!
//! Payload per point: `namespace` (keyword, a tenant key), `memory_type` and `status` (keyword),
//! `occurred_at` (integer, Unix seconds) — each with a payload index. Points written before
//! event time existed carry `created_at` instead, which is their row's `occurred_at` (migration
//! 0009 gave old rows `occurred_at = created_at`), so the time filter reads either: a shared
//! collection needs no rewrite when replicas upgrade one by one.

use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

use async_trait::async_trait;
use qdrant_client::qdrant::point_id::PointIdOptions;
use qdrant_client::qdrant::vectors_config::Config;
use qdrant_client::qdrant::{
    Condition, CountPointsBuilder, CreateCollectionBuilder, CreateFieldIndexCollectionBuilder,
    DeletePointsBuilder, Distance, FieldType, Filter, HnswConfigDiffBuilder,
    IntegerIndexParamsBuilder, KeywordIndexParamsBuilder, PointId, PointStruct, PointsIdsList,
    Query, QueryBatchPointsBuilder, QueryPoints, QueryPointsBuilder, Range, ScoredPoint,
    SearchParamsBuilder, UpsertPointsBuilder, VectorParamsBuilder,
};
use qdrant_client::{Payload, Qdrant, QdrantError};

use super::{Hit, HnswParams, IndexError, IndexPoint, IndexQuery, VectorIndex};
use crate::domain::{MemoryId, MemoryType};

const NAMESPACE: &str = "namespace";
const MEMORY_TYPE: &str = "memory_type";
const STATUS: &str = "status";
const OCCURRED_AT: &str = "occurred_at";
/// The time key of points written before `occurred_at` (read, never written).
const CREATED_AT: &str = "created_at";

/// Where the server is and what to call the collection.
#[derive(Debug, Clone)]
pub struct QdrantSettings {
    /// gRPC endpoint, e.g. `http://qdrant:6334`.
    pub url: String,
    pub api_key: Option<crate::secret::Secret>,
    pub collection: String,
    /// Per-request timeout.
    pub timeout: Duration,
}

pub struct QdrantIndex {
    client: Qdrant,
    collection: String,
    params: HnswParams,
    dimension: AtomicUsize,
}

fn engine(e: QdrantError) -> IndexError {
    IndexError::Engine(format!("qdrant: {e}"))
}

/// The server answers a duplicate create with "Collection `…` already exists!".
fn is_already_exists(e: &QdrantError) -> bool {
    e.to_string().contains("already exists")
}

impl QdrantIndex {
    /// Connect, and create the collection for `dimension`-sized vectors unless it exists. An
    /// existing collection keeps its own dimension (check `dimension()`); `reset` changes it.
    pub async fn connect(
        settings: &QdrantSettings,
        dimension: usize,
        params: HnswParams,
    ) -> Result<Self, IndexError> {
        // The compatibility check would print to stdout (the MCP stdio stream) and probe the
        // server inside `build()`; the health check below is the explicit probe instead.
        let client = Qdrant::from_url(&settings.url)
            .api_key(settings.api_key.as_ref().map(|k| k.expose().to_owned()))
            .timeout(settings.timeout)
            .connect_timeout(Duration::from_secs(5))
            .skip_compatibility_check()
            .build()
            .map_err(engine)?;
        client.health_check().await.map_err(|e| {
            IndexError::Engine(format!(
                "qdrant server at {} is not reachable: {e}",
                settings.url
            ))
        })?;
        let index = Self {
            client,
            collection: settings.collection.clone(),
            params,
            dimension: AtomicUsize::new(dimension),
        };
        match index.stored_dimension().await? {
            Some(stored) => {
                index.dimension.store(stored, Ordering::Release);
                // A collection made before a payload key existed gets that key's index.
                index.create_field_indexes().await?;
            }
            None => index.create(dimension).await?,
        }
        Ok(index)
    }

    /// The collection's vector size, or `None` if it does not exist.
    async fn stored_dimension(&self) -> Result<Option<usize>, IndexError> {
        if !self
            .client
            .collection_exists(&self.collection)
            .await
            .map_err(engine)?
        {
            return Ok(None);
        }
        let info = self
            .client
            .collection_info(&self.collection)
            .await
            .map_err(engine)?;
        let size = info
            .result
            .and_then(|i| i.config)
            .and_then(|c| c.params)
            .and_then(|p| p.vectors_config)
            .and_then(|v| v.config)
            .and_then(|c| match c {
                Config::Params(params) => Some(params.size as usize),
                Config::ParamsMap(_) => None,
            });
        size.map(Some).ok_or_else(|| {
            IndexError::Engine(format!(
                "qdrant collection {} exists but has no single unnamed vector; \
                 point `qdrant_collection` at another name",
                self.collection
            ))
        })
    }

    /// Create the collection and its payload indexes. Replicas starting together may race:
    /// "already exists" means another one won, which is fine.
    async fn create(&self, dimension: usize) -> Result<(), IndexError> {
        let created = self
            .client
            .create_collection(
                CreateCollectionBuilder::new(&self.collection)
                    .vectors_config(VectorParamsBuilder::new(dimension as u64, Distance::Cosine))
                    .hnsw_config(
                        HnswConfigDiffBuilder::default()
                            .m(self.params.m as u64)
                            .ef_construct(self.params.ef_construct as u64),
                    ),
            )
            .await;
        match created {
            Ok(_) => {}
            Err(e) if is_already_exists(&e) => {}
            Err(e) => return Err(engine(e)),
        }
        self.create_field_indexes().await?;
        self.dimension.store(dimension, Ordering::Release);
        Ok(())
    }

    async fn create_field_indexes(&self) -> Result<(), IndexError> {
        let keyword = |field: &str, tenant: bool| {
            CreateFieldIndexCollectionBuilder::new(&self.collection, field, FieldType::Keyword)
                .field_index_params(KeywordIndexParamsBuilder::default().is_tenant(tenant))
                .wait(true)
        };
        for request in [
            keyword(NAMESPACE, true),
            keyword(MEMORY_TYPE, false),
            keyword(STATUS, false),
            CreateFieldIndexCollectionBuilder::new(
                &self.collection,
                OCCURRED_AT,
                FieldType::Integer,
            )
            .field_index_params(IntegerIndexParamsBuilder::new(true, true))
            .wait(true),
        ] {
            // Creating an index that exists is a no-op on the server.
            self.client
                .create_field_index(request)
                .await
                .map_err(engine)?;
        }
        Ok(())
    }

    /// `query`'s dense search, for `vector`.
    fn dense_query(&self, query: &IndexQuery, vector: Vec<f32>) -> QueryPointsBuilder {
        QueryPointsBuilder::new(&self.collection)
            .query(Query::new_nearest(vector))
            .filter(filter(query))
            .limit(query.limit as u64)
            .params(
                SearchParamsBuilder::default()
                    .hnsw_ef(query.ef.unwrap_or(self.params.ef).max(query.limit) as u64),
            )
            .with_payload(false)
    }

    fn check_dimension(&self, got: usize) -> Result<(), IndexError> {
        let expected = self.dimension();
        if got == expected {
            Ok(())
        } else {
            Err(IndexError::Dimension { expected, got })
        }
    }
}

/// The server's points as hits; a point without a UUID id (not hindsight's) is left out.
fn hits(points: Vec<ScoredPoint>) -> Vec<Hit> {
    points
        .into_iter()
        .filter_map(|point| {
            let id = match point.id?.point_id_options? {
                PointIdOptions::Uuid(text) => MemoryId::parse_str(&text).ok()?,
                PointIdOptions::Num(_) => return None,
            };
            Some(Hit {
                id,
                score: point.score,
            })
        })
        .collect()
}

fn payload(p: &IndexPoint) -> Payload {
    let mut payload = Payload::new();
    payload.insert(NAMESPACE, p.namespace.clone());
    payload.insert(MEMORY_TYPE, p.memory_type.as_str());
    payload.insert(STATUS, p.status.as_str());
    payload.insert(OCCURRED_AT, p.occurred_at);
    payload
}

/// Every condition takes a list: a single string with a space would be a full-text match.
fn filter(query: &IndexQuery) -> Filter {
    let types: &[MemoryType] = if query.memory_types.is_empty() {
        &MemoryType::ALL
    } else {
        &query.memory_types
    };
    let mut must = vec![
        Condition::matches(NAMESPACE, query.namespaces.clone()),
        Condition::matches(
            MEMORY_TYPE,
            types
                .iter()
                .map(|t| t.as_str().to_owned())
                .collect::<Vec<_>>(),
        ),
        Condition::matches(
            STATUS,
            query
                .statuses
                .iter()
                .map(|s| s.as_str().to_owned())
                .collect::<Vec<_>>(),
        ),
    ];
    if query.occurred_from.is_some() || query.occurred_to.is_some() {
        let range = || Range {
            gte: query.occurred_from.map(|v| v as f64),
            lte: query.occurred_to.map(|v| v as f64),
            ..Default::default()
        };
        must.push(
            Filter::should([
                Condition::range(OCCURRED_AT, range()),
                Filter::must([
                    Condition::is_empty(OCCURRED_AT),
                    Condition::range(CREATED_AT, range()),
                ])
                .into(),
            ])
            .into(),
        );
    }
    Filter::must(must)
}

fn point_ids(ids: Vec<MemoryId>) -> PointsIdsList {
    PointsIdsList {
        ids: ids
            .into_iter()
            .map(|id| PointId::from(id.to_string()))
            .collect(),
    }
}

#[async_trait]
impl VectorIndex for QdrantIndex {
    fn dimension(&self) -> usize {
        self.dimension.load(Ordering::Acquire)
    }

    fn is_shared(&self) -> bool {
        true
    }

    async fn upsert(&self, points: Vec<IndexPoint>) -> Result<(), IndexError> {
        if points.is_empty() {
            return Ok(());
        }
        if let Some(bad) = points.iter().find(|p| p.vector.len() != self.dimension()) {
            self.check_dimension(bad.vector.len())?;
        }
        let points: Vec<PointStruct> = points
            .into_iter()
            .map(|p| {
                let payload = payload(&p);
                PointStruct::new(p.id.to_string(), p.vector, payload)
            })
            .collect();
        self.client
            .upsert_points(UpsertPointsBuilder::new(&self.collection, points).wait(true))
            .await
            .map_err(engine)?;
        Ok(())
    }

    async fn delete(&self, ids: Vec<MemoryId>) -> Result<(), IndexError> {
        if ids.is_empty() {
            return Ok(());
        }
        self.client
            .delete_points(
                DeletePointsBuilder::new(&self.collection)
                    .points(point_ids(ids))
                    .wait(true),
            )
            .await
            .map_err(engine)?;
        Ok(())
    }

    async fn search(&self, query: IndexQuery) -> Result<Vec<Hit>, IndexError> {
        self.check_dimension(query.vector.len())?;
        let response = self
            .client
            .query(self.dense_query(&query, query.vector.clone()))
            .await
            .map_err(engine)?;
        Ok(hits(response.result))
    }

    /// One round trip for every vector (the server's batch query).
    async fn search_many(
        &self,
        query: IndexQuery,
        vectors: Vec<Vec<f32>>,
    ) -> Result<Vec<Vec<Hit>>, IndexError> {
        for vector in &vectors {
            self.check_dimension(vector.len())?;
        }
        if vectors.is_empty() {
            return Ok(Vec::new());
        }
        let expected = vectors.len();
        let requests: Vec<QueryPoints> = vectors
            .into_iter()
            .map(|vector| self.dense_query(&query, vector).build())
            .collect();
        let response = self
            .client
            .query_batch(QueryBatchPointsBuilder::new(&self.collection, requests))
            .await
            .map_err(engine)?;
        if response.result.len() != expected {
            return Err(IndexError::Engine(format!(
                "the server answered {} of {expected} searches",
                response.result.len()
            )));
        }
        Ok(response
            .result
            .into_iter()
            .map(|batch| hits(batch.result))
            .collect())
    }

    async fn count(&self) -> Result<usize, IndexError> {
        let response = self
            .client
            .count(CountPointsBuilder::new(&self.collection).exact(true))
            .await
            .map_err(engine)?;
        Ok(response.result.map_or(0, |r| r.count as usize))
    }

    async fn reset(&self, dimension: usize) -> Result<(), IndexError> {
        if self
            .client
            .collection_exists(&self.collection)
            .await
            .map_err(engine)?
        {
            self.client
                .delete_collection(&self.collection)
                .await
                .map_err(engine)?;
        }
        self.create(dimension).await
    }

    /// Every write already waited for the server to apply it (`wait = true`).
    async fn flush(&self) -> Result<(), IndexError> {
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    //! The request shapes that can be checked without a server (the server round trips are in
    //! `tests/integration/index_suite.rs`, run when `QDRANT_URL` is set).
    use qdrant_client::qdrant::condition::ConditionOneOf;
    use qdrant_client::qdrant::r#match::MatchValue;

    use super::*;
    use crate::domain::Status;

    /// (key, keywords or None, range as (gte, lte) or None) per condition.
    type Shape = (
        String,
        Option<Vec<String>>,
        Option<(Option<f64>, Option<f64>)>,
    );

    fn shape(filter: &Filter) -> Vec<Shape> {
        filter
            .must
            .iter()
            .map(|c| match &c.condition_one_of {
                Some(ConditionOneOf::Field(field)) => {
                    let keywords = field.r#match.as_ref().map(|m| match &m.match_value {
                        Some(MatchValue::Keywords(list)) => list.strings.clone(),
                        other => panic!("{}: expected a keyword list, got {other:?}", field.key),
                    });
                    let range = field.range.as_ref().map(|r| (r.gte, r.lte));
                    (field.key.clone(), keywords, range)
                }
                other => panic!("unexpected condition {other:?}"),
            })
            .collect()
    }

    fn query() -> IndexQuery {
        IndexQuery {
            vector: vec![1.0],
            namespaces: vec!["team a".into()],
            memory_types: vec![],
            statuses: vec![Status::Active, Status::Deprecated],
            occurred_from: None,
            occurred_to: None,
            limit: 5,
            ef: None,
        }
    }

    #[test]
    fn every_condition_is_an_exact_keyword_list_never_full_text() {
        let keywords = |v: &[&str]| Some(v.iter().map(|s| s.to_string()).collect());
        assert_eq!(
            shape(&filter(&query())),
            vec![
                (NAMESPACE.into(), keywords(&["team a"]), None),
                (
                    MEMORY_TYPE.into(),
                    keywords(&["working", "episodic", "semantic"]),
                    None
                ),
                (STATUS.into(), keywords(&["active", "deprecated"]), None),
            ]
        );
    }

    #[test]
    fn types_and_time_range_narrow_the_filter() {
        let mut q = query();
        q.memory_types = vec![MemoryType::Semantic];
        q.occurred_from = Some(100);
        let filter = filter(&q);
        let conditions = shape(&Filter::must(filter.must[..3].to_vec()));
        assert_eq!(conditions[1].1, Some(vec!["semantic".to_string()]));
        // The time range: event time, or the creation time of a point written before it.
        let Some(ConditionOneOf::Filter(time)) = &filter.must[3].condition_one_of else {
            panic!("expected a nested filter, got {:?}", filter.must[3]);
        };
        assert_eq!(
            shape(&Filter::must(time.should[..1].to_vec())),
            vec![(OCCURRED_AT.into(), None, Some((Some(100.0), None)))]
        );
        let Some(ConditionOneOf::Filter(old)) = &time.should[1].condition_one_of else {
            panic!("expected a nested filter, got {:?}", time.should[1]);
        };
        assert!(matches!(
            old.must[0].condition_one_of,
            Some(ConditionOneOf::IsEmpty(ref e)) if e.key == OCCURRED_AT
        ));
        assert_eq!(
            shape(&Filter::must(old.must[1..].to_vec())),
            vec![(CREATED_AT.into(), None, Some((Some(100.0), None)))]
        );
    }

    #[test]
    fn points_carry_the_payload_the_filter_reads() {
        let point = IndexPoint {
            id: MemoryId::now_v7(),
            vector: vec![1.0],
            namespace: "ns".into(),
            memory_type: MemoryType::Episodic,
            status: Status::Active,
            occurred_at: 42,
            terms: vec![],
        };
        let fields: std::collections::HashMap<String, qdrant_client::qdrant::Value> =
            payload(&point).into();
        let mut shown: Vec<String> = fields
            .iter()
            .map(|(k, v)| format!("{k}={:?}", v.kind))
            .collect();
        shown.sort();
        assert_eq!(
            shown,
            [
                "memory_type=Some(StringValue(\"episodic\"))",
                "namespace=Some(StringValue(\"ns\"))",
                "occurred_at=Some(IntegerValue(42))",
                "status=Some(StringValue(\"active\"))",
            ]
        );
    }
}
