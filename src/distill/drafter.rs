//! One cluster drafted by the language model: the prompt rendered, one call made with the
//! reply's schema, the reply checked against it. A reply that breaks the schema gets exactly one
//! more call, which is not the same request: it shows the model its reply and what was wrong
//! with it. If that one fails too, the cluster fails (the job leaves it unrecorded, so the next
//! run tries it again). What every call cost is reported either way, for the run's token budget.

use std::path::Path;

use super::llm::{FormatUsed, LlmClient, LlmError, Turn};
use super::prompt::{Draft, EpisodeLine, Prompt, PromptError, ReplyError, parse_reply};
use super::schema::{
    MAX_DRAFT_CHARS, MAX_DRAFT_REPLY_CHARS, MAX_DRAFTS, REPLY_OVERHEAD_CHARS, reply_schema,
};
use crate::domain::MemoryId;

/// The prompt shipped with the binary: used when `prompts_dir` has no `distill.md`.
pub const BUILTIN_PROMPT: &str = include_str!("../../prompts/distill.md");

#[derive(Debug, thiserror::Error)]
pub enum PromptLoadError {
    #[error("prompt {path}: {source}")]
    Read {
        path: String,
        source: std::io::Error,
    },
    #[error("prompt {path}: {source}")]
    Invalid { path: String, source: PromptError },
}

/// `dir/distill.md`, or the built-in copy when the file is not there.
pub fn load_prompt(dir: &Path) -> Result<Prompt, PromptLoadError> {
    let path = dir.join("distill.md");
    let (text, shown) = match std::fs::read_to_string(&path) {
        Ok(text) => (text, path.display().to_string()),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => (
            BUILTIN_PROMPT.to_owned(),
            "(built-in distill.md)".to_owned(),
        ),
        Err(source) => {
            return Err(PromptLoadError::Read {
                path: path.display().to_string(),
                source,
            });
        }
    };
    Prompt::parse(&text).map_err(|source| PromptLoadError::Invalid {
        path: shown,
        source,
    })
}

/// The model, the prompt and the limits of one daemon's distill runs.
pub struct LlmDrafter {
    client: LlmClient,
    prompt: Prompt,
    /// Each draft's content bound (the write path's `max_content_chars`).
    max_chars: usize,
    /// Calls in flight at once.
    pub max_concurrency: usize,
    /// Tokens (prompt + reply) one run may spend.
    pub token_budget: u64,
}

/// What drafting one cluster produced and cost.
#[derive(Debug)]
pub struct Drafted {
    /// The checked drafts (possibly none: the model found nothing durable), or why not.
    pub result: Result<Vec<Draft>, DraftFailure>,
    pub calls: u32,
    pub tokens_in: u64,
    pub tokens_out: u64,
}

#[derive(Debug, thiserror::Error)]
pub enum DraftFailure {
    #[error(transparent)]
    Llm(#[from] LlmError),
    #[error("the reply broke the schema twice: {0}")]
    Schema(String),
}

impl LlmDrafter {
    pub fn new(
        client: LlmClient,
        prompt: Prompt,
        max_chars: usize,
        max_concurrency: usize,
        token_budget: u64,
    ) -> Self {
        Self {
            client,
            prompt,
            max_chars,
            max_concurrency: max_concurrency.max(1),
            token_budget,
        }
    }

    pub fn model(&self) -> &str {
        self.client.model()
    }

    pub fn prompt_version(&self) -> &str {
        &self.prompt.version
    }

    pub fn prompt(&self) -> &Prompt {
        &self.prompt
    }

    /// The response format requests carry now (`llm_structured_output`, after any fallback).
    pub fn format_used(&self) -> FormatUsed {
        self.client.format_used()
    }

    /// Drafts one reply may hold so that the longest reply the schema allows fits
    /// `llm_max_tokens` even at a token per character (2 at the default 1,024). Whitespace a
    /// server lets the model put between the JSON's tokens is not bounded by any schema.
    fn max_drafts(&self) -> usize {
        max_drafts(self.client.max_tokens())
    }

    /// Draft one cluster. `episodes` are the cluster's members, as the prompt shows them.
    pub async fn draft(&self, episodes: &[EpisodeLine<'_>]) -> Drafted {
        let ids: Vec<MemoryId> = episodes.iter().map(|e| e.id).collect();
        let prompt = self.prompt.render(episodes);
        let schema = reply_schema(ids.len(), self.max_drafts());
        let mut turns = vec![Turn::User(prompt.clone())];
        let mut drafted = Drafted {
            result: Ok(vec![]),
            calls: 0,
            tokens_in: 0,
            tokens_out: 0,
        };
        let mut schema_errors = Vec::new();
        // The first call, and one more when the reply breaks the schema.
        while drafted.calls < 2 {
            drafted.calls += 1;
            let completion = match self.client.complete(&turns, Some(&schema)).await {
                Ok(completion) => completion,
                Err(e) => {
                    // Servers that answer at all report usage; a failed call cost the prompt at
                    // most, and is counted so a flapping endpoint still drains the budget.
                    drafted.tokens_in += estimate_tokens(&prompt);
                    drafted.result = Err(DraftFailure::Llm(e));
                    return drafted;
                }
            };
            // Some local servers omit `usage`; then four characters make a token.
            drafted.tokens_in += match completion.prompt_tokens {
                0 => estimate_tokens(&prompt),
                n => n,
            };
            drafted.tokens_out += match completion.completion_tokens {
                0 => estimate_tokens(&completion.text),
                n => n,
            };
            match parse_reply(&completion.text, &ids, self.max_chars) {
                Ok(drafts) => {
                    drafted.result = Ok(drafts);
                    return drafted;
                }
                Err(e) => {
                    tracing::warn!(error = %e, call = drafted.calls, truncated = completion.truncated,
                        "LLM reply broke the schema");
                    schema_errors.push(e.to_string());
                    let feedback = feedback(&e, completion.truncated, ids.len(), self.max_drafts());
                    turns = vec![
                        Turn::User(prompt.clone()),
                        Turn::Assistant(completion.text),
                        Turn::User(feedback),
                    ];
                }
            }
        }
        drafted.result = Err(DraftFailure::Schema(schema_errors.join("; then: ")));
        drafted
    }
}

fn max_drafts(max_tokens: u32) -> usize {
    ((max_tokens as usize).saturating_sub(REPLY_OVERHEAD_CHARS) / MAX_DRAFT_REPLY_CHARS)
        .clamp(1, MAX_DRAFTS)
}

/// What the retry tells the model about its broken reply.
fn feedback(error: &ReplyError, truncated: bool, episodes: usize, max_drafts: usize) -> String {
    let what = if truncated {
        "it was cut off before it ended: write fewer and shorter candidates".to_owned()
    } else {
        error.to_string()
    };
    format!(
        "That reply could not be used: {what}. Reply again with one JSON object and nothing \
         else: {{\"candidates\": [...]}} with at most {max_drafts} candidates, each \
         {{\"content\": one sentence of at most {MAX_DRAFT_CHARS} characters, \"entity\": \
         string or null, \"attribute\": string or null, \"confidence\": 0 to 1, \
         \"sources\": episode numbers from 1 to {episodes}}}."
    )
}

fn estimate_tokens(text: &str) -> u64 {
    (text.chars().count() as u64).div_ceil(4)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_builtin_prompt_parses_and_a_file_overrides_it() {
        let dir = tempfile::tempdir().unwrap();
        assert_eq!(load_prompt(dir.path()).unwrap().version, "distill-v2");
        std::fs::write(
            dir.path().join("distill.md"),
            "version: house-v3\nSay it short.\n{{episodes}}\n",
        )
        .unwrap();
        assert_eq!(load_prompt(dir.path()).unwrap().version, "house-v3");
        std::fs::write(dir.path().join("distill.md"), "no version here\n").unwrap();
        let err = load_prompt(dir.path()).unwrap_err().to_string();
        assert!(
            err.contains("distill.md") && err.contains("version"),
            "{err}"
        );
    }

    #[test]
    fn the_longest_reply_the_schema_allows_fits_the_token_cap() {
        assert_eq!(max_drafts(1_024), 2);
        assert_eq!(max_drafts(100), 1, "never none");
        assert_eq!(max_drafts(100_000), MAX_DRAFTS);
        for cap in [600, 1_024, 1_536, 4_096] {
            let drafts = max_drafts(cap);
            if drafts > 1 {
                assert!(REPLY_OVERHEAD_CHARS + drafts * MAX_DRAFT_REPLY_CHARS <= cap as usize);
            }
        }
    }

    #[test]
    fn the_retry_says_what_was_wrong_and_what_to_send() {
        let error = ReplyError::Invalid {
            index: 0,
            field: "sources".to_owned(),
            rule: "must list only the episodes' numbers, 1 to 4, got 9".to_owned(),
        };
        let text = feedback(&error, false, 4, 3);
        assert!(text.contains("draft 0: sources must list only"), "{text}");
        assert!(
            text.contains("from 1 to 4") && text.contains("at most 3"),
            "{text}"
        );
        let text = feedback(&error, true, 4, 3);
        assert!(text.contains("cut off"), "{text}");
    }
}
