//! `hindsight eval updates`: whether a changed fact replaces the old one and a look-alike
//! stays beside it. Each labelled pair (`update_pairs.jsonl`, English and Chinese) is written
//! through the real write path into a namespace of its own — the older sentence, then three
//! days later the newer — and searched through the real search path with the older sentence as
//! the query. Per class:
//! - `decided_right`: the write did what the class says (update: retired the older or was
//!   retired by a later one; restatement: merged; the rest: stored beside it);
//! - `newer_first`: the newer is the first hit (update classes);
//! - `older_retired`: the older is deprecated and not among a default search's hits (update
//!   classes);
//! - `both_found`: both are among the hits (look-alike classes);
//! - `lost`: the newer was merged into the older though the class says it says something else.

use std::collections::BTreeMap;
use std::path::Path;
use std::sync::Arc;

use chrono::{Duration, Utc};
use serde::{Deserialize, Serialize};

use super::BenchError;
use hindsight::domain::Status;
use hindsight::embed::Embedder;
use hindsight::service::{
    MemoryService, Rules, SearchRequest, WriteRequest, WriteResult, WriteStatus,
};

/// The labelled pairs shipped with the binary.
pub const PAIRS: &str = include_str!("update_pairs.jsonl");

/// One labelled pair.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct UpdatePair {
    pub class: String,
    pub lang: String,
    pub older: String,
    pub newer: String,
    #[serde(default)]
    pub entity: Option<String>,
    #[serde(default)]
    pub attribute: Option<String>,
    /// The memory type both are written as (default semantic).
    #[serde(default, rename = "type")]
    pub memory_type: Option<String>,
}

/// What a class expects of the newer write.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Outcome {
    Update,
    Merge,
    Distinct,
}

/// The classes, and what each expects.
pub const CLASSES: [(&str, Outcome); 9] = [
    ("value", Outcome::Update),
    ("polarity", Outcome::Update),
    ("keyed", Outcome::Update),
    ("single_valued", Outcome::Update),
    ("restatement", Outcome::Merge),
    ("added_detail", Outcome::Distinct),
    ("other_subject", Outcome::Distinct),
    ("many_valued", Outcome::Distinct),
    ("events", Outcome::Distinct),
];

fn expected(class: &str) -> Option<Outcome> {
    CLASSES.iter().find(|(c, _)| *c == class).map(|(_, o)| *o)
}

/// Parse JSON Lines of pairs; an unknown class is an error naming its line.
pub fn load(text: &str) -> Result<Vec<UpdatePair>, BenchError> {
    let mut pairs = Vec::new();
    for (n, line) in text
        .lines()
        .enumerate()
        .filter(|(_, l)| !l.trim().is_empty())
    {
        let pair: UpdatePair =
            serde_json::from_str(line).map_err(|e| format!("line {}: {e}", n + 1))?;
        if expected(&pair.class).is_none() {
            return Err(format!("line {}: unknown class {:?}", n + 1, pair.class).into());
        }
        pairs.push(pair);
    }
    Ok(pairs)
}

#[derive(Debug, Default, Clone, Serialize)]
pub struct ClassScores {
    pub pairs: usize,
    pub decided_right: f64,
    /// Update classes only.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub newer_first: Option<f64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub older_retired: Option<f64>,
    /// Look-alike classes only.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub both_found: Option<f64>,
    pub lost: usize,
}

/// A pair the write path decided otherwise than its class says.
#[derive(Debug, Clone, Serialize)]
pub struct Miss {
    pub class: String,
    pub older: String,
    pub newer: String,
    pub decided: Outcome,
    pub reason: Option<String>,
    /// The embedder's cosine between the two sentences.
    pub cosine: f64,
}

#[derive(Debug, Serialize)]
pub struct UpdatesReport {
    pub eval: &'static str,
    pub embedder: String,
    pub pairs: usize,
    pub per_class: BTreeMap<String, ClassScores>,
    pub per_language: BTreeMap<String, ClassScores>,
    /// Writes lost over every class (a newer statement merged into an older one it differs
    /// from).
    pub lost: usize,
    pub misses: Vec<Miss>,
}

#[derive(Default)]
struct Tally {
    pairs: usize,
    right: usize,
    updates: usize,
    newer_first: usize,
    older_retired: usize,
    look_alikes: usize,
    both_found: usize,
    lost: usize,
}

impl Tally {
    fn scores(&self) -> ClassScores {
        let share = |n: usize, of: usize| (of > 0).then(|| round(n as f64 / of as f64));
        ClassScores {
            pairs: self.pairs,
            decided_right: share(self.right, self.pairs).unwrap_or(0.0),
            newer_first: share(self.newer_first, self.updates),
            older_retired: share(self.older_retired, self.updates),
            both_found: share(self.both_found, self.look_alikes),
            lost: self.lost,
        }
    }
}

fn round(x: f64) -> f64 {
    (x * 1000.0).round() / 1000.0
}

/// What the newer write did, by its result.
fn decided(result: &WriteResult, older: hindsight::domain::MemoryId) -> Outcome {
    match result.status {
        WriteStatus::Merged => Outcome::Merge,
        _ if result.superseded.contains(&older) || result.superseded_by == Some(older) => {
            Outcome::Update
        }
        _ => Outcome::Distinct,
    }
}

pub async fn updates_eval(
    pairs: &[UpdatePair],
    scratch: &Path,
    embedder: Arc<dyn Embedder>,
    rules: &Rules,
    progress: super::Tick<'_>,
) -> Result<UpdatesReport, BenchError> {
    let (store, index) = super::scratch_store(scratch, embedder.dimension()).await?;
    let service =
        MemoryService::start(store.clone(), index, embedder.clone(), rules.clone()).await?;
    let base = Utc::now() - Duration::days(30);
    let mut per_class: BTreeMap<String, Tally> = BTreeMap::new();
    let mut per_language: BTreeMap<String, Tally> = BTreeMap::new();
    let mut misses = Vec::new();
    for (i, pair) in pairs.iter().enumerate() {
        let expect =
            expected(&pair.class).ok_or_else(|| format!("unknown class {}", pair.class))?;
        let namespace = format!("pair-{i}");
        let write = |content: &str, days: i64| WriteRequest {
            content: content.to_owned(),
            namespace: Some(namespace.clone()),
            memory_type: Some(pair.memory_type.clone().unwrap_or("semantic".to_owned())),
            entity: pair.entity.clone(),
            attribute: pair.attribute.clone(),
            importance: Some(0.6),
            occurred_at: Some((base + Duration::days(days)).to_rfc3339()),
            ..WriteRequest::default()
        };
        let first = service.write(&write(&pair.older, 0)).await?;
        let older = first
            .memory_id
            .ok_or_else(|| format!("pair {i}: the older sentence was not stored"))?;
        let second = service.write(&write(&pair.newer, 3)).await?;
        let decision = decided(&second, older);
        let hits = service
            .search(&SearchRequest {
                query: pair.older.clone(),
                namespaces: Some(vec![namespace.clone()]),
                ..SearchRequest::default()
            })
            .await?
            .memories;
        let newer = second.memory_id;
        let older_found = hits.iter().any(|h| h.id == older);
        let newer_found = newer.is_some_and(|id| hits.iter().any(|h| h.id == id));
        let older_status = store.get(older).await?.map(|m| m.status);
        for tally in [
            per_class.entry(pair.class.clone()).or_default(),
            per_language.entry(pair.lang.clone()).or_default(),
        ] {
            tally.pairs += 1;
            tally.right += usize::from(decision == expect);
            tally.lost += usize::from(decision == Outcome::Merge && expect != Outcome::Merge);
            match expect {
                Outcome::Update => {
                    tally.updates += 1;
                    tally.newer_first +=
                        usize::from(newer.is_some() && hits.first().map(|h| h.id) == newer);
                    tally.older_retired += usize::from(
                        !older_found && older_status.is_some_and(|s| s != Status::Active),
                    );
                }
                Outcome::Distinct => {
                    tally.look_alikes += 1;
                    tally.both_found += usize::from(older_found && newer_found);
                }
                Outcome::Merge => {}
            }
        }
        if decision != expect {
            let vectors = embedder
                .embed(&[pair.older.clone(), pair.newer.clone()])
                .await?;
            let cosine = match vectors.as_slice() {
                [a, b] => f64::from(hindsight::embed::cosine(a, b)),
                _ => f64::NAN,
            };
            misses.push(Miss {
                cosine: round(cosine),
                class: pair.class.clone(),
                older: pair.older.clone(),
                newer: pair.newer.clone(),
                decided: decision,
                reason: second.reason.clone(),
            });
        }
        progress("pairs", i as u64 + 1, Some(pairs.len() as u64));
    }
    let lost = per_class.values().map(|t| t.lost).sum();
    Ok(UpdatesReport {
        eval: "updates",
        embedder: embedder.id().to_owned(),
        pairs: pairs.len(),
        per_class: per_class
            .into_iter()
            .map(|(k, t)| (k, t.scores()))
            .collect(),
        per_language: per_language
            .into_iter()
            .map(|(k, t)| (k, t.scores()))
            .collect(),
        lost,
        misses,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_shipped_pairs_parse_and_cover_every_class_in_both_languages() {
        let pairs = load(PAIRS).unwrap();
        assert!(pairs.len() >= 200, "{} pairs", pairs.len());
        for (class, _) in CLASSES {
            for lang in ["en", "zh"] {
                assert!(
                    pairs.iter().any(|p| p.class == class && p.lang == lang),
                    "no {lang} pair of class {class}"
                );
            }
        }
        assert!(
            load("{\"class\":\"nope\",\"lang\":\"en\",\"older\":\"a\",\"newer\":\"b\"}").is_err()
        );
    }
}
