//! Write triage's optional model call (`triage_llm = true`): what `screening.toml`'s rules
//! leave undecided (the `default` rule) is scored by the language model (`llm_*`), one call per
//! distinct text: answers are cached (the last `CACHE` texts), calls are capped per UTC day
//! (`triage_llm_daily_calls`), and a failed or refused call, or a spent budget, leaves the
//! rules' default — a write never waits on a broken model for more than its timeout, and is
//! never refused for it.

use std::collections::{HashMap, VecDeque};
use std::sync::{Arc, Mutex};

use chrono::{NaiveDate, Utc};
use serde_json::json;
use sha2::{Digest, Sha256};

use crate::distill::llm::{LlmClient, Turn};

/// Texts whose score is remembered.
const CACHE: usize = 10_000;

const PROMPT: &str = "You decide what a long-term memory for an AI assistant keeps. Rate how \
worth remembering for later conversations this message is, from 0 (small talk, nothing to \
remember) to 1 (a lasting preference, rule, decision, deadline or fact). Reply with JSON \
{\"score\": <number between 0 and 1>} only.\n\nMessage:\n";

pub struct TriageModel {
    client: Arc<LlmClient>,
    daily_calls: u64,
    state: Mutex<State>,
}

#[derive(Default)]
struct State {
    scores: HashMap<[u8; 32], f64>,
    order: VecDeque<[u8; 32]>,
    day: Option<NaiveDate>,
    calls: u64,
}

impl TriageModel {
    pub fn new(client: Arc<LlmClient>, daily_calls: u64) -> Self {
        Self {
            client,
            daily_calls,
            state: Mutex::new(State::default()),
        }
    }

    fn state(&self) -> std::sync::MutexGuard<'_, State> {
        self.state.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// The model's score for `text`, or `None` (budget spent, call failed, reply unreadable).
    pub async fn score(&self, text: &str) -> Option<f64> {
        let key: [u8; 32] = Sha256::digest(text.as_bytes()).into();
        {
            let mut state = self.state();
            if let Some(score) = state.scores.get(&key) {
                return Some(*score);
            }
            let today = Utc::now().date_naive();
            if state.day != Some(today) {
                state.day = Some(today);
                state.calls = 0;
            }
            if state.calls >= self.daily_calls {
                tracing::debug!("triage model: today's calls are spent; the rules' default holds");
                return None;
            }
            state.calls += 1;
        }
        let schema = json!({
            "type": "object",
            "properties": {"score": {"type": "number", "minimum": 0, "maximum": 1}},
            "required": ["score"],
            "additionalProperties": false,
        });
        let reply = match self
            .client
            .complete(&[Turn::User(format!("{PROMPT}{text}"))], Some(&schema))
            .await
        {
            Ok(reply) => reply,
            Err(e) => {
                tracing::warn!(error = %e, "triage model call failed; the rules' default holds");
                return None;
            }
        };
        let score = serde_json::from_str::<serde_json::Value>(reply.text.trim())
            .ok()
            .and_then(|v| v["score"].as_f64())
            .filter(|s| (0.0..=1.0).contains(s));
        let Some(score) = score else {
            tracing::warn!(
                "triage model reply is not {{\"score\": 0..1}}; the rules' default holds"
            );
            return None;
        };
        let mut state = self.state();
        if state.order.len() >= CACHE
            && let Some(old) = state.order.pop_front()
        {
            state.scores.remove(&old);
        }
        state.order.push_back(key);
        state.scores.insert(key, score);
        Some(score)
    }
}
