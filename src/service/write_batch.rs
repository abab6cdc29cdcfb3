//! Several writes at once (`memory_write_batch`, an import's `--mode write`): each goes
//! through the single write's rules (screen, triage, contradiction, importance gate, dedup,
//! supersede), in order, and the batch pays once for what can be shared: one embedding call
//! for every text, and one index update, one turn of the scope's locks and (for its new
//! rows) one store transaction per scope.
//!
//! Every write is checked before any is stored: one that is invalid or refused by the
//! screen refuses the batch, named by its place (`memories[3]`), and nothing is written.
//! The writes are not one transaction: a scope's new rows that state no fact are held back
//! and stored together (one commit), at the end of its turn or before a write of it merges;
//! a merge or a fact commits as a single write's does. So a failure of the store halfway (a
//! server error) leaves some writes stored and indexed and the rest not; sent again, the
//! stored ones merge into themselves (exact repeats) and the rest are written.

use std::collections::HashMap;

use super::requests::{ValidWrite, WriteRequest};
use super::write::{Prepared, probe_query};
use super::{MemoryService, ServiceError, WriteResult};
use crate::domain::{Memory, MemoryType, ValidationError};
use crate::embed::EmbedError;
use crate::index::IndexError;

/// The most writes one batch may hold.
pub const MAX_BATCH: usize = 1_000;

/// What became of one write of a batch.
#[derive(Debug)]
pub enum BatchWrite {
    /// Stored, merged into a near-duplicate, or skipped (its result says which).
    Done(WriteResult),
    /// The screen (or the contradiction rule) held it for a reviewer: the caller records it
    /// as the single write's `Held` is recorded.
    Held { rule: String, kind: String },
}

/// A write ready for the store: its place in the batch, the write, its vector.
type Ready = (usize, Prepared, Vec<f32>);

/// Where a batch's write stands between the checks and the store.
enum Step {
    Held { rule: String, kind: String },
    Skipped(WriteResult),
    Ready(Prepared),
}

impl MemoryService {
    /// Write `requests` in order, as `write` would one after another; the outcomes in the
    /// same order.
    pub async fn write_batch(
        &self,
        requests: &[WriteRequest],
    ) -> Result<Vec<BatchWrite>, ServiceError> {
        if requests.is_empty() || requests.len() > MAX_BATCH {
            return Err(ValidationError::new(
                "memories",
                format!(
                    "from 1 to {MAX_BATCH} memories per batch, got {}",
                    requests.len()
                ),
            )
            .into());
        }
        let steps = self.check_all(requests).await?;
        let ready: Vec<&Prepared> = steps
            .iter()
            .filter_map(|s| match s {
                Step::Ready(p) => Some(p),
                _ => None,
            })
            .collect();
        let ready_len = ready.len();
        let mut embeddings = if ready.is_empty() {
            Vec::new()
        } else {
            self.ensure_embedder_matches()?;
            self.embed_all(&ready).await?
        }
        .into_iter();

        // The ready writes by scope, in order of first appearance; each scope's in its order.
        // Scopes are independent (dedup stays within one), unless one fact is written in two
        // scopes (another type): its supersede order is the batch's, so the batch then goes
        // in runs of one scope, in its own order.
        let in_order = one_fact_in_two_scopes(&ready);
        let mut scopes: Vec<((String, MemoryType), Vec<Ready>)> = Vec::new();
        let mut outcomes: Vec<Option<BatchWrite>> = Vec::with_capacity(steps.len());
        for (i, step) in steps.into_iter().enumerate() {
            match step {
                Step::Held { rule, kind } => outcomes.push(Some(BatchWrite::Held { rule, kind })),
                Step::Skipped(result) => outcomes.push(Some(BatchWrite::Done(result))),
                Step::Ready(prepared) => {
                    outcomes.push(None);
                    // `embed_all` checked the count.
                    let embedding = embeddings.next().ok_or(EmbedError::Count {
                        expected: ready_len,
                        got: ready_len.saturating_sub(1),
                    })?;
                    let key = (
                        prepared.valid.namespace.as_str().to_owned(),
                        prepared.valid.memory_type,
                    );
                    let item = (i, prepared, embedding);
                    let group = if in_order {
                        scopes.last_mut().filter(|(k, _)| *k == key)
                    } else {
                        scopes.iter_mut().find(|(k, _)| *k == key)
                    };
                    match group {
                        Some((_, items)) => items.push(item),
                        None => scopes.push((key, vec![item])),
                    }
                }
            }
        }
        for (_, items) in scopes {
            for (i, result) in self.write_scope(items).await? {
                outcomes[i] = Some(BatchWrite::Done(result));
            }
        }
        Ok(outcomes.into_iter().flatten().collect())
    }

    /// Every write checked and screened before any is stored; the first refused refuses the
    /// batch, named by its place.
    async fn check_all(&self, requests: &[WriteRequest]) -> Result<Vec<Step>, ServiceError> {
        let mut steps = Vec::with_capacity(requests.len());
        for (i, request) in requests.iter().enumerate() {
            let earlier: Vec<&ValidWrite> = steps
                .iter()
                .filter_map(|s| match s {
                    Step::Ready(p) => Some(&p.valid),
                    _ => None,
                })
                .collect();
            let step = match self.prepare(request, false, &earlier).await {
                Ok(prepared) => match self.below_importance(&prepared.valid) {
                    Some(skipped) => Step::Skipped(prepared.said.finish(skipped)),
                    None => Step::Ready(prepared),
                },
                Err(ServiceError::Held { rule, kind }) => Step::Held { rule, kind },
                Err(ServiceError::Invalid(e)) => {
                    let field = match e.field.as_ref() {
                        "" => format!("memories[{i}]"),
                        field => format!("memories[{i}].{field}"),
                    };
                    return Err(ValidationError::new(field, e.rule).into());
                }
                Err(e) => {
                    return Err(ServiceError::InBatch {
                        index: i,
                        error: Box::new(e),
                    });
                }
            };
            steps.push(step);
        }
        Ok(steps)
    }

    /// One embedding call for every ready write's text.
    async fn embed_all(&self, ready: &[&Prepared]) -> Result<Vec<Vec<f32>>, ServiceError> {
        let texts: Vec<String> = ready
            .iter()
            .map(|p| p.valid.content.as_str().to_owned())
            .collect();
        let vectors = self.embedder.embed(&texts).await?;
        if vectors.len() != texts.len() {
            return Err(EmbedError::Count {
                expected: texts.len(),
                got: vectors.len(),
            }
            .into());
        }
        Ok(vectors)
    }

    /// One scope's writes, in order, under one turn of its locks; the index learns of the
    /// rows they changed once, at the end. Until then the dedup check compares each write
    /// with the rows written before it here (`pending`) as well as with what the index holds.
    async fn write_scope(
        &self,
        items: Vec<Ready>,
    ) -> Result<Vec<(usize, WriteResult)>, ServiceError> {
        let Some((_, first, _)) = items.first() else {
            return Ok(Vec::new());
        };
        let (namespace, memory_type) = (first.valid.namespace.clone(), first.valid.memory_type);
        self.under_scope_locks(namespace.as_str(), memory_type, async {
            // No other writer changes the scope's points in the index during its turn (its
            // locks), and this one updates them only at the end: every write's dedup probe
            // can be asked now, together, and a scanned scope is read once for all of them.
            let vectors = items.iter().map(|(_, _, v)| v.clone()).collect();
            let probe = probe_query(namespace.as_str(), memory_type, &[]);
            let probes = self.index.search_many(probe, vectors).await?;
            if probes.len() != items.len() {
                return Err(ServiceError::Index(IndexError::Engine(format!(
                    "{} dedup probes answered for {} writes",
                    probes.len(),
                    items.len()
                ))));
            }
            let mut pending: Vec<Memory> = Vec::new();
            // New rows held back to be stored together: one commit (and one full-text flush)
            // for a run of them instead of one each.
            let mut unstored: Vec<Memory> = Vec::new();
            let mut results = Vec::with_capacity(items.len());
            let written = async {
                for ((i, Prepared { valid, said }, embedding), probed) in
                    items.into_iter().zip(probes)
                {
                    let applied = self
                        .apply(
                            valid,
                            embedding,
                            &pending,
                            Some(probed),
                            Some(&mut unstored),
                        )
                        .await?;
                    for row in applied.changed {
                        match pending.iter_mut().find(|m| m.id == row.id) {
                            Some(slot) => *slot = row,
                            None => pending.push(row),
                        }
                    }
                    results.push((i, said.finish(applied.result)));
                }
                self.store_unstored(&mut unstored).await
            }
            .await;
            // Whatever was stored reaches the index, a failure halfway included; rows still
            // held back were not stored.
            pending.retain(|m| !unstored.iter().any(|u| u.id == m.id));
            self.sync_index(&pending).await;
            written.map(|()| results)
        })
        .await
    }
}

/// Whether one (namespace, entity, attribute) fact is written with two memory types.
fn one_fact_in_two_scopes(ready: &[&Prepared]) -> bool {
    let mut types: HashMap<(&str, &str, &str), MemoryType> = HashMap::new();
    ready.iter().any(|p| {
        let v = &p.valid;
        let (Some(entity), Some(attribute)) = (&v.entity, &v.attribute) else {
            return false;
        };
        let first = *types
            .entry((v.namespace.as_str(), entity, attribute))
            .or_insert(v.memory_type);
        first != v.memory_type
    })
}
