//! LoCoMo (`../shared/data/locomo/`), read for the evals: each conversation's turns (`speaker:
//! text`, a shared photo's caption appended, dated by their session), its reference facts
//! (`session_N_observation`) and its questions with their evidence turns.

use std::path::Path;

use chrono::{DateTime, Duration, NaiveDateTime, Utc};
use serde_json::Value;

use super::BenchError;

pub struct Turn {
    /// `D<session>:<turn>`
    pub dia_id: String,
    pub content: String,
    /// The session's date, a second apart per turn so they keep their order.
    pub at: DateTime<Utc>,
}

pub struct Question {
    pub question: String,
    /// 1 multi-hop, 2 temporal, 3 open-domain, 4 single-hop, 5 adversarial.
    pub category: u8,
    /// The turns that hold the answer (`dia_id`s, malformed ones recovered).
    pub evidence: Vec<String>,
}

pub struct Conversation {
    /// The sample id (`conv-26`), used as the namespace.
    pub namespace: String,
    pub turns: Vec<Turn>,
    /// (fact, its evidence turns)
    pub facts: Vec<(String, Vec<String>)>,
    pub questions: Vec<Question>,
}

/// The conversations of a LoCoMo JSON file.
pub fn load(path: &Path) -> Result<Vec<Conversation>, BenchError> {
    let data: Value = serde_json::from_str(
        &std::fs::read_to_string(path).map_err(|e| format!("--locomo {}: {e}", path.display()))?,
    )
    .map_err(|e| format!("--locomo {}: not JSON: {e}", path.display()))?;
    parse(&data)
}

pub fn parse(data: &Value) -> Result<Vec<Conversation>, BenchError> {
    let items = data
        .as_array()
        .ok_or("--locomo: expected a JSON list of conversations")?;
    items
        .iter()
        .enumerate()
        .map(|(i, item)| conversation(i, item))
        .collect()
}

fn conversation(index: usize, item: &Value) -> Result<Conversation, BenchError> {
    let namespace = item["sample_id"]
        .as_str()
        .map(str::to_owned)
        .unwrap_or_else(|| format!("conv-{index}"));
    let dialogue = item["conversation"]
        .as_object()
        .ok_or_else(|| format!("conversation {index}: no `conversation` object"))?;
    let mut turns = Vec::new();
    for session in 1.. {
        let Some(list) = dialogue
            .get(&format!("session_{session}"))
            .and_then(Value::as_array)
        else {
            break;
        };
        let date = dialogue
            .get(&format!("session_{session}_date_time"))
            .and_then(Value::as_str)
            .and_then(session_date)
            .ok_or_else(|| format!("{namespace}: session {session} has no readable date"))?;
        for (n, turn) in list.iter().enumerate() {
            let (Some(speaker), Some(text), Some(dia_id)) = (
                turn["speaker"].as_str(),
                turn["text"].as_str(),
                turn["dia_id"].as_str(),
            ) else {
                continue;
            };
            let mut content = format!("{speaker}: {text}");
            if let Some(caption) = turn["blip_caption"].as_str() {
                content.push_str(&format!(" [shares a photo: {caption}]"));
            }
            turns.push(Turn {
                dia_id: dia_id.to_owned(),
                content,
                // A second apart, in order, within the session.
                at: date + Duration::seconds(n as i64),
            });
        }
    }
    let mut facts = Vec::new();
    if let Some(observations) = item["observation"].as_object() {
        for speakers in observations.values().filter_map(Value::as_object) {
            for list in speakers.values().filter_map(Value::as_array) {
                for fact in list.iter().filter_map(Value::as_array) {
                    let text = fact.first().and_then(Value::as_str).unwrap_or_default();
                    let evidence: Vec<String> = match fact.get(1) {
                        Some(Value::String(id)) => vec![id.clone()],
                        Some(Value::Array(ids)) => ids
                            .iter()
                            .filter_map(Value::as_str)
                            .map(str::to_owned)
                            .collect(),
                        _ => vec![],
                    };
                    if !evidence.is_empty() {
                        facts.push((text.to_owned(), evidence));
                    }
                }
            }
        }
    }
    let questions = item["qa"]
        .as_array()
        .map(|qa| qa.iter().filter_map(question).collect())
        .unwrap_or_default();
    Ok(Conversation {
        namespace,
        turns,
        facts,
        questions,
    })
}

fn question(item: &Value) -> Option<Question> {
    let evidence = item["evidence"]
        .as_array()?
        .iter()
        .filter_map(Value::as_str)
        .flat_map(evidence_ids)
        .collect();
    Some(Question {
        question: item["question"].as_str()?.to_owned(),
        category: u8::try_from(item["category"].as_u64()?).ok()?,
        evidence,
    })
}

/// `D3:7`, and the malformed forms the data holds (`D8:6; D9:17`, `D30:05`, `D:11:2`): every
/// `D<session>:<turn>` in the text, leading zeros dropped.
fn evidence_ids(text: &str) -> Vec<String> {
    let mut ids = Vec::new();
    for part in text.split(|c: char| c == ';' || c == ',' || c.is_whitespace()) {
        let Some(rest) = part.trim().strip_prefix('D') else {
            continue;
        };
        let rest = rest.trim_start_matches(':');
        let Some((session, turn)) = rest.split_once(':') else {
            continue;
        };
        let (Ok(session), Ok(turn)) = (session.parse::<u32>(), turn.parse::<u32>()) else {
            continue;
        };
        ids.push(format!("D{session}:{turn}"));
    }
    ids
}

/// "1:56 pm on 8 May, 2023"
fn session_date(text: &str) -> Option<DateTime<Utc>> {
    let normalised = text.trim().replace(" am ", " AM ").replace(" pm ", " PM ");
    NaiveDateTime::parse_from_str(&normalised, "%I:%M %p on %d %B, %Y")
        .ok()
        .map(|naive| naive.and_utc())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn recovers_malformed_evidence_ids() {
        assert_eq!(evidence_ids("D3:7"), ["D3:7"]);
        assert_eq!(evidence_ids("D8:6; D9:17"), ["D8:6", "D9:17"]);
        assert_eq!(evidence_ids("D30:05"), ["D30:5"]);
        assert_eq!(evidence_ids("D:11:2"), ["D11:2"]);
        assert!(evidence_ids("nothing").is_empty());
    }

    #[test]
    fn reads_locomo_session_dates() {
        let at = session_date("1:56 pm on 8 May, 2023").unwrap();
        assert_eq!(at.to_rfc3339(), "2023-05-08T13:56:00+00:00");
        let at = session_date("10:37 am on 27 June, 2023").unwrap();
        assert_eq!(at.to_rfc3339(), "2023-06-27T10:37:00+00:00");
        assert!(session_date("yesterday").is_none());
    }
}
