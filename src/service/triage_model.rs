//! Write triage's optional model call (`triage_llm = true`): what `screening.toml`'s rules
//! leave undecided (the `default` rule) is scored by the language model (`llm_*`), one call per
//! distinct text: answers are cached, calls are capped per UTC day (`triage_llm_daily_calls`,
//! `model_calls`), and a failed or refused call, or a spent budget, leaves the rules' default —
//! a write never waits on a broken model for more than its timeout, and is never refused for
//! it.

use std::sync::Arc;

use serde_json::json;

use super::model_calls::{Ask, ModelCalls, key};
use crate::distill::llm::{LlmClient, Turn};

const PROMPT: &str = "You decide what a long-term memory for an AI assistant keeps. Rate how \
worth remembering for later conversations this message is, from 0 (small talk, nothing to \
remember) to 1 (a lasting preference, rule, decision, deadline or fact). Reply with JSON \
{\"score\": <number between 0 and 1>} only.\n\nMessage:\n";

pub struct TriageModel {
    client: Arc<LlmClient>,
    calls: ModelCalls<f64>,
}

impl TriageModel {
    pub fn new(client: Arc<LlmClient>, daily_calls: u64) -> Self {
        Self {
            client,
            calls: ModelCalls::new(daily_calls),
        }
    }

    /// The model's score for `text`, or `None` (budget spent, call failed, reply unreadable).
    pub async fn score(&self, text: &str) -> Option<f64> {
        let key = key(&[text]);
        match self.calls.ask(&key) {
            Ask::Cached(score) => return Some(score),
            Ask::Spent => {
                tracing::debug!("triage model: today's calls are spent; the rules' default holds");
                return None;
            }
            Ask::Call => {}
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
        self.calls.remember(key, score);
        Some(score)
    }
}
