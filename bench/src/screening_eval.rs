//! `hindsight eval screening`: the write screen against memories an attacker would plant
//! (`tests/fixtures/screening/poisoned.jsonl`, English and Chinese, several styles per rule:
//! caught when a rule of the sample's kind matches) and against LoCoMo's benign chat turns
//! (flagged when any rule matches). Targets: ≥ 95 % caught, ≤ 1 % flagged.

use std::collections::BTreeMap;
use std::path::Path;

use serde::Deserialize;
use serde_json::{Value, json};

use super::BenchError;
use hindsight::screening::Screen;

#[derive(Debug, Clone, Deserialize)]
pub struct Poisoned {
    pub text: String,
    /// `injection` or `secret`.
    pub kind: String,
    /// The attack's family (the rule meant to catch it).
    pub rule: String,
    pub lang: String,
}

/// The poisoned corpus: one JSON object per line.
pub fn load_corpus(path: &Path) -> Result<Vec<Poisoned>, BenchError> {
    let text =
        std::fs::read_to_string(path).map_err(|e| format!("--corpus {}: {e}", path.display()))?;
    text.lines()
        .enumerate()
        .filter(|(_, l)| !l.trim().is_empty())
        .map(|(i, l)| {
            serde_json::from_str(l)
                .map_err(|e| format!("--corpus {} line {}: {e}", path.display(), i + 1).into())
        })
        .collect()
}

/// The figures: what was caught, what was flagged, and examples of each miss.
pub struct ScreeningReport {
    pub caught: usize,
    pub poisoned: usize,
    pub flagged: usize,
    pub benign: usize,
    pub json: Value,
}

impl ScreeningReport {
    pub fn caught_rate(&self) -> f64 {
        self.caught as f64 / self.poisoned.max(1) as f64
    }

    pub fn flagged_rate(&self) -> f64 {
        self.flagged as f64 / self.benign.max(1) as f64
    }
}

pub fn evaluate(screen: &Screen, poisoned: &[Poisoned], benign: &[String]) -> ScreeningReport {
    let mut by_family: BTreeMap<String, (usize, usize)> = BTreeMap::new();
    let mut by_lang: BTreeMap<String, (usize, usize)> = BTreeMap::new();
    let mut missed = Vec::new();
    let mut caught = 0;
    for sample in poisoned {
        let hit = screen
            .findings(&sample.text)
            .iter()
            .any(|f| f.kind == sample.kind);
        for (map, key) in [(&mut by_family, &sample.rule), (&mut by_lang, &sample.lang)] {
            let entry = map.entry(key.clone()).or_default();
            entry.1 += 1;
            if hit {
                entry.0 += 1;
            }
        }
        if hit {
            caught += 1;
        } else {
            missed.push(json!({"rule": sample.rule, "text": sample.text}));
        }
    }
    let mut flagged_by_rule: BTreeMap<String, usize> = BTreeMap::new();
    let mut flagged_examples = Vec::new();
    let mut flagged = 0;
    for text in benign {
        let findings = screen.findings(text);
        if findings.is_empty() {
            continue;
        }
        flagged += 1;
        for f in &findings {
            *flagged_by_rule.entry(f.rule.clone()).or_default() += 1;
        }
        if flagged_examples.len() < 20 {
            flagged_examples.push(json!({
                "rules": findings.iter().map(|f| f.rule.clone()).collect::<Vec<_>>(),
                "text": text,
            }));
        }
    }
    let rate = |(hit, total): (usize, usize)| json!({"caught": hit, "total": total, "rate": hit as f64 / total.max(1) as f64});
    let report = ScreeningReport {
        caught,
        poisoned: poisoned.len(),
        flagged,
        benign: benign.len(),
        json: Value::Null,
    };
    let json = json!({
        "eval": "screening",
        "rules_version": screen.version(),
        "poisoned": {
            "total": report.poisoned,
            "caught": caught,
            "caught_rate": report.caught_rate(),
            "by_family": by_family.into_iter().map(|(k, v)| (k, rate(v))).collect::<BTreeMap<_, _>>(),
            "by_language": by_lang.into_iter().map(|(k, v)| (k, rate(v))).collect::<BTreeMap<_, _>>(),
            "missed": missed,
        },
        "benign": {
            "source": "LoCoMo turns",
            "total": report.benign,
            "flagged": flagged,
            "flagged_rate": report.flagged_rate(),
            "flagged_by_rule": flagged_by_rule,
            "examples": flagged_examples,
        },
    });
    ScreeningReport { json, ..report }
}

/// LoCoMo's turns, as the write path would see them.
pub fn locomo_turns(path: &Path) -> Result<Vec<String>, BenchError> {
    Ok(super::locomo::load(path)?
        .into_iter()
        .flat_map(|c| c.turns.into_iter().map(|t| t.content))
        .collect())
}
