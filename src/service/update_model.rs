//! The write path's optional judge (`update_llm = true`): a pair the revision rules cannot
//! decide (`revision::Relation::is_undecided`: the predicate itself is worded differently, or
//! no predicate is shared) is put to the language model (`llm_*`) in one structured call —
//! does the newer statement restate the older one, replace it, or stand beside it? Answers are
//! cached per pair, calls capped per UTC day (`update_llm_daily_calls`); a failed call, an
//! unreadable reply or a spent budget leaves the rules' decision. The model never merges
//! two statements that name different values (numbers, times, names): the rules keep that
//! one.

use std::sync::Arc;

use serde_json::json;

use super::model_calls::{Ask, ModelCalls, key};
use crate::distill::llm::{LlmClient, Turn};

const PROMPT: &str = "You keep an AI assistant's long-term memory true. An older memory and a \
newer one look alike. Decide how the newer relates to the older:\n\
- \"restatement\": it says the same thing in other words (keep one);\n\
- \"update\": it says the same single-valued thing with another value, or the opposite, so \
the older is no longer true (a changed address, time, amount, owner, a \"not\");\n\
- \"distinct\": both can be true at once (another subject, another item of a list, another \
event, an added detail).\n\
Reply with JSON {\"relation\": \"restatement\" | \"update\" | \"distinct\"} only.\n\n";

/// The model's answer.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Judged {
    Restatement,
    Update,
    Distinct,
}

pub struct UpdateModel {
    client: Arc<LlmClient>,
    calls: ModelCalls<Judged>,
}

impl UpdateModel {
    pub fn new(client: Arc<LlmClient>, daily_calls: u64) -> Self {
        Self {
            client,
            calls: ModelCalls::new(daily_calls),
        }
    }

    /// The model's reading of `newer` against `older`, or `None` (budget spent, call failed,
    /// reply unreadable): the rules' decision then holds.
    pub async fn judge(&self, older: &str, newer: &str) -> Option<Judged> {
        let key = key(&[older, newer]);
        match self.calls.ask(&key) {
            Ask::Cached(judged) => return Some(judged),
            Ask::Spent => {
                tracing::debug!("update model: today's calls are spent; the rules decide");
                return None;
            }
            Ask::Call => {}
        }
        let schema = json!({
            "type": "object",
            "properties": {
                "relation": {"type": "string", "enum": ["restatement", "update", "distinct"]}
            },
            "required": ["relation"],
            "additionalProperties": false,
        });
        let prompt = format!("{PROMPT}Older: {older}\nNewer: {newer}\n");
        let reply = match self
            .client
            .complete(&[Turn::User(prompt)], Some(&schema))
            .await
        {
            Ok(reply) => reply,
            Err(e) => {
                tracing::warn!(error = %e, "update model call failed; the rules decide");
                return None;
            }
        };
        let judged = serde_json::from_str::<serde_json::Value>(reply.text.trim())
            .ok()
            .and_then(|v| match v["relation"].as_str()? {
                "restatement" => Some(Judged::Restatement),
                "update" => Some(Judged::Update),
                "distinct" => Some(Judged::Distinct),
                _ => None,
            });
        let Some(judged) = judged else {
            tracing::warn!("update model reply is not {{\"relation\": …}}; the rules decide");
            return None;
        };
        self.calls.remember(key, judged);
        Some(judged)
    }
}
