//! `memory_write`: importance gate → the decision against its look-alikes (merge a restatement,
//! retire what it updates, or store it beside them: `decide`, `revision`) and the keyed
//! supersede → store → index.

use chrono::{Duration, Utc};
use serde_json::json;
use uuid::Uuid;

use super::requests::{ValidWrite, WriteRequest};
use super::update_model::Judged;
use super::{MemoryService, ServiceError, WriteResult, WriteStatus};
use crate::domain::{
    Content, FactKey, Importance, Memory, MemoryId, MemoryType, NewMemory, Status,
};
use crate::embed::{calibration, cosine};
use crate::index::{Hit, IndexQuery};
use crate::revision::{self, Relation};
use crate::screening::{ContradictionAction, Verdict};
use crate::store::MergeUpdate;

/// How many nearest neighbours the dedup check looks at.
const DEDUP_CANDIDATES: usize = 5;

/// The dedup probe's graph-walk beam: the searches' own. The probe looks for a point at
/// cosine > 0.92, and a narrower beam had seemed to reach it as surely: `bench search --n 100000
/// --dimension 512 --writers 8` (random vectors, 4,000 planted near-duplicates) merged all of
/// them at 128, 32 and 16 alike, and loaded a little faster narrower (128: 499, 516 writes/s;
/// 32: 528, 557). But asked stored memories' own vectors after a load, a narrow walk misses
/// points it stands on: on random 512-d vectors 0–4 per ~24k at 32, 72–96 at 16, none at 64
/// or 128; on real text in walked namespaces (`bench import --n 100000 --locomo
/// --large-namespaces`: five namespaces of 20k turn pairs, `probe_recall`), 1.2 % of the
/// lines' own vectors not among the probe's candidates at 64, 0.4 % at 128 and 0.3 % at 256
/// (what is left is not the beam's): near-duplicates of those points a write would store
/// again (exact repeats the store finds first, `decide`). 128 loaded random
/// vectors as fast as 64 (568 and 511 writes/s against 518 and 538, runs interleaved on one
/// machine; dedup and probe recall 1.0 at each).
const PROBE_EF: usize = 128;

/// What the dedup probe asks the index: the nearest few active points of one namespace and
/// type, at the probe's beam.
pub fn probe_query(namespace: &str, memory_type: MemoryType, vector: &[f32]) -> IndexQuery {
    IndexQuery {
        vector: vector.to_vec(),
        namespaces: vec![namespace.to_owned()],
        memory_types: vec![memory_type],
        statuses: vec![Status::Active],
        occurred_from: None,
        occurred_to: None,
        limit: DEDUP_CANDIDATES,
        ef: Some(PROBE_EF),
    }
}

/// A write checked and screened (`MemoryService::prepare`), and what the checks said.
pub(super) struct Prepared {
    pub valid: ValidWrite,
    pub said: Said,
}

/// What the screen and triage did to a write, for its result.
pub(super) struct Said {
    /// The screen's rules whose secrets were redacted.
    redacted: Vec<String>,
    /// The triage rule that set the importance, when one did.
    triaged: Option<String>,
}

impl Said {
    /// The write's result as its writer sees it.
    pub fn finish(self, mut result: WriteResult) -> WriteResult {
        if let (WriteStatus::Skipped, Some(rule)) = (&result.status, self.triaged) {
            result.reason = Some(format!("triage:{rule}"));
        }
        result.redacted = self.redacted;
        result
    }
}

/// What a write does about the active memories that look like it (`MemoryService::decide`).
enum Decision {
    /// It says what this one says: merged into it.
    Merge(Box<Memory>),
    /// Stored as a new row, retiring `replaces` (the look-alikes it updates, each with what
    /// made it an update: `update:value`, `update:model` …).
    Store {
        replaces: Vec<Retired>,
        /// The most similar memory above the dedup threshold that it did not merge into, and
        /// why (`distinct:…`): for its result.
        look_alike: Option<(MemoryId, &'static str)>,
    },
}

/// What a write would do (`MemoryService::preview_write`).
#[derive(Debug, Clone, Default, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct Preview {
    /// The memory it would be merged into (a restatement of it).
    pub merges_into: Option<MemoryId>,
    /// The active memories it would retire (or be retired by, if they happened later).
    pub retires: Vec<Retired>,
}

/// An active memory a write would retire, and why (`update:value`, `update:fact` …).
#[derive(Debug, Clone, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct Retired {
    pub id: MemoryId,
    pub content: String,
    pub reason: String,
}

/// A write applied to the store, and the rows it changed, whose index update is the caller's.
pub(super) struct Applied {
    pub result: WriteResult,
    pub changed: Vec<Memory>,
}

impl MemoryService {
    pub async fn write(&self, request: &WriteRequest) -> Result<WriteResult, ServiceError> {
        self.write_screened(request, false).await
    }

    /// A write a reviewer released from quarantine: the screen's `quarantine` rules let it
    /// through this time (its `reject` and `redact` rules still apply).
    pub async fn write_released(
        &self,
        request: &WriteRequest,
    ) -> Result<WriteResult, ServiceError> {
        self.write_screened(request, true).await
    }

    async fn write_screened(
        &self,
        request: &WriteRequest,
        released: bool,
    ) -> Result<WriteResult, ServiceError> {
        let Prepared { valid, said } = self.prepare(request, released, &[]).await?;
        let result = self.write_valid(valid).await?;
        Ok(said.finish(result))
    }

    /// A write checked and screened, ready for the store: validated, its secrets redacted,
    /// triaged, and (unless a reviewer released it) checked against the active facts it
    /// would contradict: the store's, and `earlier`'s (writes of the same batch before it).
    pub(super) async fn prepare(
        &self,
        request: &WriteRequest,
        released: bool,
        earlier: &[&ValidWrite],
    ) -> Result<Prepared, ServiceError> {
        let mut valid = request.validate(self.rules.max_content_chars)?;
        let redacted = self.screen_content(&mut valid, released)?;
        let triaged = self.triage(&mut valid).await;
        if !released {
            self.check_contradiction(&valid, earlier).await?;
        }
        Ok(Prepared {
            valid,
            said: Said { redacted, triaged },
        })
    }

    /// `screening.toml`'s `[contradiction]`: a fact whose namespace holds an active semantic
    /// fact of the same entity and attribute saying something else is held for a reviewer or
    /// refused, unless the action is `supersede` (the write path's own rule then applies).
    async fn check_contradiction(
        &self,
        valid: &ValidWrite,
        earlier: &[&ValidWrite],
    ) -> Result<(), ServiceError> {
        let action = self.screen.contradiction();
        let (Some(entity), Some(attribute)) = (&valid.entity, &valid.attribute) else {
            return Ok(());
        };
        if action == ContradictionAction::Supersede {
            return Ok(());
        }
        let said = |text: &str| text.trim().to_lowercase();
        let new = said(valid.content.as_str());
        let contradicted = self
            .store
            .active_facts(&valid.namespace, entity, attribute)
            .await?
            .into_iter()
            .any(|m| m.memory_type == MemoryType::Semantic && said(&m.content) != new)
            || earlier.iter().any(|e| {
                e.memory_type == MemoryType::Semantic
                    && e.namespace == valid.namespace
                    && e.entity.as_deref() == Some(entity.as_str())
                    && e.attribute.as_deref() == Some(attribute.as_str())
                    && said(e.content.as_str()) != new
            });
        if !contradicted {
            return Ok(());
        }
        let (rule, kind) = ("contradiction".to_owned(), "contradiction".to_owned());
        tracing::info!(namespace = %valid.namespace, ?action, "a write contradicts an active fact");
        Err(match action {
            ContradictionAction::Reject => ServiceError::Screened { rule, kind },
            _ => ServiceError::Held { rule, kind },
        })
    }

    /// Write triage (`screening.toml`'s `[triage]`): a write without an importance gets the
    /// score of the first rule its content matches, stored with the memory in its metadata
    /// (`hindsight_triage: {rule, score}`). The rule's name, when one set it.
    /// What the rules leave at their default goes to the triage model when there is one
    /// (rule `model`).
    async fn triage(&self, valid: &mut ValidWrite) -> Option<String> {
        if valid.importance_given {
            return None;
        }
        let mut triaged = self.screen.triage(valid.content.as_str());
        if triaged.rule == "default"
            && let Some(model) = &self.triage_model
            && let Some(score) = model.score(valid.content.as_str()).await
        {
            triaged = crate::screening::Triaged {
                score,
                rule: "model".to_owned(),
            };
        }
        valid.importance = Importance::parse(triaged.score).unwrap_or_default();
        if let serde_json::Value::Object(map) = &mut valid.metadata {
            map.insert(
                "hindsight_triage".to_owned(),
                json!({"rule": triaged.rule, "score": triaged.score}),
            );
        }
        tracing::debug!(rule = %triaged.rule, score = triaged.score, "write triaged");
        Some(triaged.rule)
    }

    /// The write screen over everything a search returns to agents: the content, and the
    /// strings inside `source` and `metadata` (an injection hidden there reaches the model as
    /// surely). A `reject` rule refuses the write; `redact` rules replace their matches (the
    /// rules that did are returned).
    fn screen_content(
        &self,
        valid: &mut ValidWrite,
        released: bool,
    ) -> Result<Vec<String>, ServiceError> {
        let mut redacted = Vec::new();
        let content = self.screen_text(valid.content.as_str(), &mut redacted, released)?;
        if let Some(text) = content {
            // A marker can be longer than the secret it replaces: the bound is the
            // writer's, not the marker's.
            valid.content = Content::parse(&text, self.rules.max_content_chars * 2)?;
        }
        for json in [&mut valid.source, &mut valid.metadata] {
            self.screen_json(json, &mut redacted, released)?;
        }
        redacted.dedup();
        if !redacted.is_empty() {
            tracing::info!(rules = ?redacted, namespace = %valid.namespace, "secrets redacted from a write");
        }
        Ok(redacted)
    }

    /// `Some(new text)` when secrets were redacted; an error when a `reject` rule matched.
    fn screen_text(
        &self,
        text: &str,
        redacted: &mut Vec<String>,
        released: bool,
    ) -> Result<Option<String>, ServiceError> {
        match self.screen.check(text) {
            Verdict::Pass => Ok(None),
            Verdict::Quarantine(_) if released => {
                // Held once and released by a reviewer; its secrets still go.
                Ok(self.screen.redact_only(text, redacted))
            }
            Verdict::Quarantine(f) => {
                tracing::info!(rule = %f.rule, kind = %f.kind, "write held by the screen for review");
                Err(ServiceError::Held {
                    rule: f.rule,
                    kind: f.kind,
                })
            }
            Verdict::Reject(f) => {
                tracing::info!(rule = %f.rule, kind = %f.kind, "write refused by the screen");
                Err(ServiceError::Screened {
                    rule: f.rule,
                    kind: f.kind,
                })
            }
            Verdict::Redact { text, findings } => {
                redacted.extend(findings.into_iter().map(|f| f.rule));
                Ok(Some(text))
            }
        }
    }

    fn screen_json(
        &self,
        value: &mut serde_json::Value,
        redacted: &mut Vec<String>,
        released: bool,
    ) -> Result<(), ServiceError> {
        match value {
            serde_json::Value::String(text) => {
                if let Some(new) = self.screen_text(text, redacted, released)? {
                    *text = new;
                }
            }
            serde_json::Value::Array(items) => {
                for item in items {
                    self.screen_json(item, redacted, released)?;
                }
            }
            serde_json::Value::Object(map) => {
                for item in map.values_mut() {
                    self.screen_json(item, redacted, released)?;
                }
            }
            _ => {}
        }
        Ok(())
    }

    async fn write_valid(&self, valid: ValidWrite) -> Result<WriteResult, ServiceError> {
        if let Some(skipped) = self.below_importance(&valid) {
            return Ok(skipped);
        }
        self.ensure_embedder_matches()?;
        let embedding = self.embed_one(valid.content.as_str()).await?;

        let (namespace, memory_type) = (valid.namespace.clone(), valid.memory_type);
        self.under_scope_locks(namespace.as_str(), memory_type, async {
            let applied = self.apply(valid, embedding, &[], None, None).await?;
            self.sync_index(&applied.changed).await;
            Ok(applied.result)
        })
        .await
    }

    /// A write under the importance gate: not stored.
    pub(super) fn below_importance(&self, valid: &ValidWrite) -> Option<WriteResult> {
        (valid.importance.value() < self.rules.min_importance).then(|| WriteResult {
            status: WriteStatus::Skipped,
            memory_id: None,
            reason: Some("low_importance".to_owned()),
            duplicate_of: None,
            superseded: vec![],
            superseded_by: None,
            redacted: vec![],
            quarantine_id: None,
            look_alike: None,
        })
    }

    /// `work` (a dedup check and what it decides, then the index update) under one turn of the
    /// scope's locks: the process's, then, beside a shared index, the database's. Replicas
    /// sharing the database and the index queue there, held until the scope's new rows are in
    /// the index so their dedup probe sees them. An embedded index has the database to itself
    /// (startup claims it), so the process's lock on the scope is enough.
    pub(super) async fn under_scope_locks<T>(
        &self,
        namespace: &str,
        memory_type: MemoryType,
        work: impl std::future::Future<Output = Result<T, ServiceError>>,
    ) -> Result<T, ServiceError> {
        let _guard = self.write_locks.scope(namespace, memory_type).await;
        let scope = if self.index.is_shared() {
            let key = format!("dedup\u{1f}{namespace}\u{1f}{}", memory_type.as_str());
            Some(self.store.lock(&key).await?)
        } else {
            None
        };
        let result = work.await;
        // Let the next writer of this scope in now, not when the pool reuses the connection.
        if let Some(scope) = scope {
            scope.release().await;
        }
        result
    }

    /// Merge the write into its near-duplicate or store it new, under the scope's locks.
    /// `pending`: rows of the scope this batch changed that the index does not show yet.
    /// `probed`: what the index answered the write's dedup probe, when a batch asked it for
    /// all its writes of the scope at once; `None`: ask it here.
    /// `unstored`: a batch's new rows that state no fact, held back to be stored together
    /// (`MemoryStore::insert_many`); a write that merges stores them first, since it may
    /// merge into one of them. `None`: a new row is stored at once.
    pub(super) async fn apply(
        &self,
        valid: ValidWrite,
        embedding: Vec<f32>,
        pending: &[Memory],
        probed: Option<Vec<Hit>>,
        unstored: Option<&mut Vec<Memory>>,
    ) -> Result<Applied, ServiceError> {
        match self.decide(&valid, &embedding, pending, probed).await? {
            Decision::Merge(existing) => {
                if let Some(unstored) = unstored {
                    self.store_unstored(unstored).await?;
                }
                self.merge_into(*existing, valid, embedding).await
            }
            Decision::Store {
                replaces,
                look_alike,
            } => match unstored {
                Some(unstored)
                    if replaces.is_empty()
                        && FactKey::of(valid.entity.as_deref(), valid.attribute.as_deref())
                            .is_none() =>
                {
                    let memory = self.new_memory(&valid, &embedding);
                    unstored.push(memory.clone());
                    let mut result = stored_result(memory.id, None, vec![]);
                    result.note_look_alike(look_alike);
                    Ok(Applied {
                        result,
                        changed: vec![memory],
                    })
                }
                unstored => {
                    // A row it updates may be one the batch holds back: stored first.
                    if let Some(unstored) = unstored {
                        self.store_unstored(unstored).await?;
                    }
                    let mut applied = self.insert_new(&valid, &embedding, &replaces).await?;
                    applied.result.note_look_alike(look_alike);
                    Ok(applied)
                }
            },
        }
    }

    /// Store a batch's held-back new rows, in one transaction.
    pub(super) async fn store_unstored(
        &self,
        unstored: &mut Vec<Memory>,
    ) -> Result<(), ServiceError> {
        self.store.insert_many(unstored).await?;
        unstored.clear();
        Ok(())
    }

    /// What a write does about the active memories of its namespace and type that look like it
    /// (`Decision`). An exact repeat is looked up in the store first: the vector index's walk
    /// is approximate and misses a few stored points outright (`PROBE_EF`), a repeat's own
    /// among them; the store's index does not. Then the index's nearest few above the
    /// embedder's revision floor (`embed::calibration`), each read against the write by the
    /// revision rules (`revision::compare`):
    /// - a restatement, or a rewording naming the same values, above the dedup threshold is
    ///   merged into (the most similar one);
    /// - an update is retired by the write (or retires it, if it happened later);
    /// - anything else stays beside it.
    ///
    /// A keyed fact (entity + attribute) merges only into an exact repeat of the same key: with
    /// other content it supersedes its key's active row (the store does that), and it never
    /// merges into another key's fact. `pending` rows are not in the vector index yet: they
    /// are compared here.
    async fn decide(
        &self,
        valid: &ValidWrite,
        embedding: &[f32],
        pending: &[Memory],
        probed: Option<Vec<Hit>>,
    ) -> Result<Decision, ServiceError> {
        let threshold = self.rules.dedup_threshold;
        let key = FactKey::of(valid.entity.as_deref(), valid.attribute.as_deref());
        let content = valid.content.as_str();
        let now = Utc::now();
        let repeat = self
            .store
            .active_repeats(valid.namespace.as_str(), valid.memory_type, content)
            .await?
            .into_iter()
            .find(|m| {
                // At 1.0 nothing merges, a repeat included.
                !m.is_expired_at(now)
                    && f64::from(cosine(&m.embedding, embedding)) > threshold
                    && FactKey::may_merge(key.as_ref(), m)
            });
        if let Some(repeat) = repeat {
            return Ok(Decision::Merge(Box::new(repeat)));
        }
        let (namespace, memory_type) = (valid.namespace.as_str(), valid.memory_type);
        let revision_floor = f64::from(calibration(self.embedder.id()).revision_min_cosine);
        let floor = (threshold - 0.01).min(revision_floor);
        let mut neighbours = match probed {
            Some(hits) => {
                self.neighbours_among(hits, namespace, memory_type, embedding, floor)
                    .await?
            }
            None => {
                self.active_neighbours(namespace, memory_type, embedding, floor)
                    .await?
            }
        };
        if !pending.is_empty() {
            let found: std::collections::HashSet<_> =
                neighbours.iter().map(|(_, m)| m.id).collect();
            neighbours.extend(
                pending
                    .iter()
                    .filter(|m| {
                        !found.contains(&m.id)
                            && m.status == Status::Active
                            && !m.is_expired_at(now)
                            && m.namespace == valid.namespace.as_str()
                            && m.memory_type == valid.memory_type
                    })
                    .map(|m| (f64::from(cosine(&m.embedding, embedding)), m.clone()))
                    .filter(|(sim, _)| *sim > floor),
            );
            neighbours.sort_by(|a, b| b.0.total_cmp(&a.0));
        }
        let mut replaces = Vec::new();
        let mut look_alike = None;
        let retired = |m: Memory, reason: &str| Retired {
            id: m.id,
            content: m.content,
            reason: reason.to_owned(),
        };
        for (sim, m) in neighbours {
            let existing_key = FactKey::of(m.entity.as_deref(), m.attribute.as_deref());
            if key.is_some() && existing_key.is_some() {
                // Two facts: the same key's versions are the store's to supersede (an exact
                // repeat merged above); another key's fact is another fact.
                continue;
            }
            let relation = revision::compare(&m.content, content);
            let judged = match &self.update_model {
                Some(model) if relation.is_undecided() => model.judge(&m.content, content).await,
                _ => None,
            };
            match judged {
                Some(Judged::Update) => {
                    replaces.push(retired(m, "update:model"));
                    continue;
                }
                // Never two statements naming different values: the rules keep that one.
                Some(Judged::Restatement) if relation.may_merge() && key.is_none() => {
                    return Ok(Decision::Merge(Box::new(m)));
                }
                Some(Judged::Distinct) => {
                    if sim > threshold && look_alike.is_none() {
                        look_alike = Some((m.id, "distinct:model"));
                    }
                    continue;
                }
                _ => {}
            }
            if let Relation::Update(_) = relation {
                replaces.push(retired(m, relation.as_str()));
            } else if relation.may_merge() {
                // A keyed write keeps its key: it is not folded into a row without one. The
                // same words but for function words merge below the threshold too; a
                // rewording only above it.
                let restated = relation == Relation::Restatement && threshold < 1.0;
                if key.is_none() && (sim > threshold || restated) {
                    return Ok(Decision::Merge(Box::new(m)));
                }
            } else if sim > threshold && look_alike.is_none() {
                look_alike = Some((m.id, relation.as_str()));
            }
        }
        Ok(Decision::Store {
            replaces,
            look_alike,
        })
    }

    /// What `request` would do to the active memories that look like it, were it written now
    /// (nothing is written): the memory it would merge into, and those it would retire — the
    /// look-alikes it updates and, for a keyed fact, its key's active version unless it repeats
    /// it. The review queue shows it beside a candidate. `embedding`: the text's vector when
    /// the caller has it (a candidate keeps its draft's).
    pub async fn preview_write(
        &self,
        request: &WriteRequest,
        embedding: Option<Vec<f32>>,
    ) -> Result<Preview, ServiceError> {
        self.ensure_embedder_matches()?;
        let valid = request.validate(self.rules.max_content_chars)?;
        let embedding = match embedding {
            Some(v) if v.len() == self.embedder.dimension() => v,
            _ => self.embed_one(valid.content.as_str()).await?,
        };
        let mut preview = Preview::default();
        match self.decide(&valid, &embedding, &[], None).await? {
            Decision::Merge(m) => preview.merges_into = Some(m.id),
            Decision::Store { replaces, .. } => {
                preview.retires = replaces;
                if let (Some(entity), Some(attribute)) = (&valid.entity, &valid.attribute) {
                    for m in self
                        .store
                        .active_facts(&valid.namespace, entity, attribute)
                        .await?
                    {
                        if !preview.retires.iter().any(|r| r.id == m.id) {
                            preview.retires.push(Retired {
                                id: m.id,
                                content: m.content,
                                reason: "update:fact".to_owned(),
                            });
                        }
                    }
                }
            }
        }
        Ok(preview)
    }

    /// Active, unexpired memories of `namespace` and `memory_type` near `vector`, with their
    /// exact cosine on the stored vectors, best first. The index may be approximate: it only
    /// shortlists its nearest few scoring above `floor`; the rows decide. The write path's
    /// dedup and the distill job's dedup against semantic memories both ask this.
    pub async fn active_neighbours(
        &self,
        namespace: &str,
        memory_type: MemoryType,
        vector: &[f32],
        floor: f64,
    ) -> Result<Vec<(f64, Memory)>, ServiceError> {
        let hits = self
            .index
            .search(probe_query(namespace, memory_type, vector))
            .await?;
        self.neighbours_among(hits, namespace, memory_type, vector, floor)
            .await
    }

    /// Of the index's `hits` scoring above `floor`, the rows that are active, unexpired
    /// memories of `namespace` and `memory_type`, with their exact cosine to `vector` on the
    /// stored vectors, best first.
    async fn neighbours_among(
        &self,
        hits: Vec<Hit>,
        namespace: &str,
        memory_type: MemoryType,
        vector: &[f32],
        floor: f64,
    ) -> Result<Vec<(f64, Memory)>, ServiceError> {
        let ids: Vec<_> = hits
            .iter()
            .filter(|h| f64::from(h.score) > floor)
            .map(|h| h.id)
            .collect();
        if ids.is_empty() {
            return Ok(vec![]);
        }
        let now = Utc::now();
        let mut neighbours: Vec<(f64, Memory)> = self
            .store
            .get_many(&ids)
            .await?
            .into_iter()
            .filter(|m| {
                m.status == Status::Active
                    && !m.is_expired_at(now)
                    && m.namespace == namespace
                    && m.memory_type == memory_type
            })
            .map(|m| (f64::from(cosine(&m.embedding, vector)), m))
            .collect();
        neighbours.sort_by(|a, b| b.0.total_cmp(&a.0));
        Ok(neighbours)
    }

    async fn merge_into(
        &self,
        existing: Memory,
        valid: ValidWrite,
        embedding: Vec<f32>,
    ) -> Result<Applied, ServiceError> {
        let now = Utc::now();
        // Working and episodic memories describe the present: the newer wording wins. A semantic
        // fact keeps its reviewed wording; the new write only adds provenance.
        let replace = matches!(
            valid.memory_type,
            MemoryType::Working | MemoryType::Episodic
        ) && existing.content != valid.content.as_str();
        let occurred_at = valid.occurred_at.unwrap_or(now);
        let mut entry = json!({ "at": now, "occurred_at": occurred_at, "source": valid.source });
        if replace {
            entry["replaced_content"] = json!(existing.content);
        }
        let update = MergeUpdate {
            id: existing.id,
            replace_content: replace
                .then(|| (valid.content.as_str().to_owned(), embedding.clone())),
            importance: valid.importance.value(),
            merged_source: entry,
            expires_at: self.expiry(&valid, now),
            occurred_at,
            at: now,
        };
        let Some(merged) = self.store.merge(&update).await? else {
            // The duplicate stopped being active between the check and the merge.
            return self.insert_new(&valid, &embedding, &[]).await;
        };
        tracing::debug!(memory_id = %existing.id, "write merged into near-duplicate");
        let changed = if replace { vec![merged] } else { vec![] };
        let result = WriteResult {
            status: WriteStatus::Merged,
            memory_id: Some(existing.id),
            reason: Some("duplicate".to_owned()),
            duplicate_of: Some(existing.id),
            superseded: vec![],
            superseded_by: None,
            redacted: vec![],
            quarantine_id: None,
            look_alike: None,
        };
        Ok(Applied { result, changed })
    }

    /// The row a write stores when it merges into none.
    fn new_memory(&self, valid: &ValidWrite, embedding: &[f32]) -> Memory {
        let now = Utc::now();
        NewMemory {
            id: Uuid::now_v7(),
            namespace: valid.namespace.clone(),
            memory_type: valid.memory_type,
            content: valid.content.clone(),
            importance: valid.importance,
            entity: valid.entity.clone(),
            attribute: valid.attribute.clone(),
            source: valid.source.clone(),
            metadata: valid.metadata.clone(),
            created_at: now,
            occurred_at: valid.occurred_at.unwrap_or(now),
            expires_at: self.expiry(valid, now),
            embedding_model: self.embedder.id().to_owned(),
            embedding: embedding.to_vec(),
        }
        .into_memory()
    }

    /// Store the write as a new row, retiring the look-alikes it updates (`replaces`) and its
    /// fact's older versions.
    async fn insert_new(
        &self,
        valid: &ValidWrite,
        embedding: &[f32],
        replaces: &[Retired],
    ) -> Result<Applied, ServiceError> {
        let memory = self.new_memory(valid, embedding);
        let now = memory.created_at;
        let ids: Vec<MemoryId> = replaces.iter().map(|r| r.id).collect();
        // The store supersedes the fact's active rows in the insert's own transaction, so
        // concurrent writers of one fact (in any process) queue there instead of racing.
        let inserted = self.store.insert_revising(&memory, &ids).await?;
        let superseded_ids: Vec<_> = inserted.superseded.iter().map(|m| m.id).collect();

        let stored = memory
            .clone()
            .deprecated_on_arrival(inserted.superseded_by, now);
        let mut changed = vec![stored];
        changed.extend(inserted.superseded);
        let mut result = stored_result(memory.id, inserted.superseded_by, superseded_ids);
        if result.reason.is_none() && !result.superseded.is_empty() {
            // What made it an update: the first look-alike it retired, or the fact's key.
            let retired_look_alike = changed.iter().any(|m| ids.contains(&m.id));
            result.reason = Some(match replaces.first() {
                Some(first) if retired_look_alike => first.reason.clone(),
                _ => "update:fact".to_owned(),
            });
        }
        Ok(Applied { result, changed })
    }

    fn expiry(
        &self,
        valid: &ValidWrite,
        now: chrono::DateTime<Utc>,
    ) -> Option<chrono::DateTime<Utc>> {
        let default_ttl = (valid.memory_type == MemoryType::Working)
            .then(|| Duration::milliseconds((self.rules.working_ttl_hours * 3_600_000.0) as i64));
        valid.ttl.or(default_ttl).map(|ttl| now + ttl)
    }
}

/// A write stored as a new row; `superseded_by`: a fact that happened later already holds
/// (history written out of order).
fn stored_result(
    id: MemoryId,
    superseded_by: Option<MemoryId>,
    superseded: Vec<MemoryId>,
) -> WriteResult {
    WriteResult {
        status: WriteStatus::Stored,
        memory_id: Some(id),
        reason: superseded_by.map(|_| "newer_fact_holds".to_owned()),
        duplicate_of: None,
        superseded,
        superseded_by,
        redacted: vec![],
        quarantine_id: None,
        look_alike: None,
    }
}
