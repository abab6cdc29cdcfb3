//! One cluster drafted by the language model: the prompt rendered, one call made, the reply
//! checked against the schema. A reply that breaks the schema gets exactly one more call; if
//! that one fails too, the cluster fails (the job leaves it unrecorded, so the next run tries
//! it again). What every call cost is reported either way, for the run's token budget.

use std::path::Path;

use super::draft::{Draft, EpisodeLine, Prompt, PromptError, parse_reply};
use super::llm::{LlmClient, LlmError};
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

    /// Draft one cluster. `episodes` are the cluster's members, as the prompt shows them.
    pub async fn draft(&self, episodes: &[EpisodeLine<'_>]) -> Drafted {
        let ids: Vec<MemoryId> = episodes.iter().map(|e| e.id).collect();
        let prompt = self.prompt.render(episodes);
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
            let completion = match self.client.complete(&prompt).await {
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
                    tracing::warn!(error = %e, call = drafted.calls, "LLM reply broke the schema");
                    schema_errors.push(e.to_string());
                }
            }
        }
        drafted.result = Err(DraftFailure::Schema(schema_errors.join("; then: ")));
        drafted
    }
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
        assert_eq!(load_prompt(dir.path()).unwrap().version, "distill-v1");
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
}
