//! One chat completion against any OpenAI-compatible endpoint (OpenAI, vLLM, Ollama, llama.cpp)
//! through async-openai, with the retry policy distillation needs. async-openai's default
//! client already retries 429, 5xx and refused connections (3 times, exponential backoff from
//! 100 ms, honouring `Retry-After`); what it leaves is a reply that never comes, so timeouts are
//! retried here, `retries` times with our own backoff. Anything else (a 400, a bad key, a 5xx
//! that outlived the library's retries) fails the call.

use std::time::Duration;

use async_openai::Client;
use async_openai::config::OpenAIConfig;
use async_openai::error::OpenAIError;
use async_openai::types::chat::{
    ChatCompletionRequestUserMessage, CreateChatCompletionRequestArgs,
};

#[derive(Debug, Clone)]
pub struct LlmConfig {
    /// e.g. `https://api.openai.com/v1` or `http://localhost:11434/v1`
    pub base_url: String,
    pub model: String,
    pub api_key: Option<String>,
    /// Per attempt.
    pub timeout: Duration,
    /// Attempts after the first, for timed-out calls.
    pub retries: u32,
    /// The first backoff; doubled each retry.
    pub backoff: Duration,
    /// Upper bound on the reply's tokens.
    pub max_tokens: u32,
}

/// A reply and what it cost.
#[derive(Debug, Clone, PartialEq)]
pub struct Completion {
    pub text: String,
    pub prompt_tokens: u64,
    pub completion_tokens: u64,
    /// Attempts it took (1 = no retry).
    pub attempts: u32,
}

#[derive(Debug, thiserror::Error)]
pub enum LlmError {
    #[error("the endpoint answered {status}: {message}")]
    Status { status: u16, message: String },
    #[error("no reply within {0:?}")]
    Timeout(Duration),
    #[error("could not reach the endpoint: {0}")]
    Transport(String),
    #[error("the reply has no message content")]
    Empty,
    #[error("the request could not be built: {0}")]
    Request(String),
}

impl LlmError {
    /// Worth another attempt here: the endpoint did not answer in time. (Busy and failing
    /// servers were retried inside async-openai already.)
    pub fn is_retryable(&self) -> bool {
        matches!(self, LlmError::Timeout(_))
    }
}

pub struct LlmClient {
    client: Client<OpenAIConfig>,
    config: LlmConfig,
}

impl LlmClient {
    pub fn new(config: LlmConfig) -> Result<Self, LlmError> {
        // Local servers take no key; async-openai would otherwise read OPENAI_API_KEY.
        let openai = OpenAIConfig::new()
            .with_api_base(config.base_url.trim_end_matches('/'))
            .with_api_key(config.api_key.clone().unwrap_or_default());
        let http = reqwest::Client::builder()
            .timeout(config.timeout)
            .build()
            .map_err(|e| LlmError::Request(e.to_string()))?;
        Ok(Self {
            client: Client::with_config(openai).with_http_client(http),
            config,
        })
    }

    pub fn model(&self) -> &str {
        &self.config.model
    }

    /// Ask once, retrying what is worth retrying.
    pub async fn complete(&self, prompt: &str) -> Result<Completion, LlmError> {
        let mut attempt = 1;
        loop {
            match self.attempt(prompt).await {
                Ok(mut completion) => {
                    completion.attempts = attempt;
                    return Ok(completion);
                }
                Err(e) if e.is_retryable() && attempt <= self.config.retries => {
                    let wait = self.config.backoff * 2u32.saturating_pow(attempt - 1);
                    tracing::warn!(error = %e, attempt, ?wait, "LLM call failed; retrying");
                    tokio::time::sleep(wait).await;
                    attempt += 1;
                }
                Err(e) => return Err(e),
            }
        }
    }

    async fn attempt(&self, prompt: &str) -> Result<Completion, LlmError> {
        let request = CreateChatCompletionRequestArgs::default()
            .model(self.config.model.clone())
            .messages(vec![ChatCompletionRequestUserMessage::from(prompt).into()])
            .temperature(0.0)
            .max_completion_tokens(self.config.max_tokens)
            .build()
            .map_err(|e| LlmError::Request(e.to_string()))?;
        let response = self
            .client
            .chat()
            .create(request)
            .await
            .map_err(|e| self.classify(e))?;
        let text = response
            .choices
            .into_iter()
            .next()
            .and_then(|choice| choice.message.content)
            .ok_or(LlmError::Empty)?;
        let (prompt_tokens, completion_tokens) = response
            .usage
            .map(|u| (u64::from(u.prompt_tokens), u64::from(u.completion_tokens)))
            .unwrap_or_default();
        Ok(Completion {
            text,
            prompt_tokens,
            completion_tokens,
            attempts: 1,
        })
    }

    fn classify(&self, error: OpenAIError) -> LlmError {
        match error {
            OpenAIError::ApiError(api) => LlmError::Status {
                status: api.status_code.as_u16(),
                message: api.api_error.message,
            },
            OpenAIError::Reqwest(e) if e.is_timeout() => LlmError::Timeout(self.config.timeout),
            OpenAIError::Reqwest(e) => match e.status() {
                Some(status) => LlmError::Status {
                    status: status.as_u16(),
                    message: e.to_string(),
                },
                None => LlmError::Transport(e.to_string()),
            },
            other => LlmError::Request(other.to_string()),
        }
    }
}
