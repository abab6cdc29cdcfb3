//! One chat completion against any OpenAI-compatible endpoint (OpenAI, vLLM, Ollama, llama.cpp)
//! through async-openai, with the retry policy distillation needs. async-openai's default
//! client already retries 429, 5xx and refused connections (3 times, exponential backoff from
//! 100 ms, honouring `Retry-After`); what it leaves is a reply that never comes, so timeouts are
//! retried here, `retries` times with our own backoff. Anything else (a 400, a bad key, a 5xx
//! that outlived the library's retries) fails the call.
//!
//! Structured output: with a schema, the request carries it as `response_format` of type
//! `json_schema` (strict), which OpenAI, vLLM, llama.cpp's server, Ollama and LM Studio
//! enforce while generating. In `auto`, an endpoint that refuses it (400/422 naming nothing but
//! the request) is asked again with `json_object`, then with no format at all, and the client
//! keeps to what worked for the rest of its life; `format_used` says which.

use std::sync::atomic::{AtomicU8, Ordering};
use std::time::Duration;

use async_openai::Client;
use async_openai::config::OpenAIConfig;
use async_openai::error::OpenAIError;
use async_openai::types::chat::{
    ChatCompletionRequestAssistantMessage, ChatCompletionRequestMessage,
    ChatCompletionRequestUserMessage, CreateChatCompletionRequestArgs, FinishReason,
    ResponseFormat, ResponseFormatJsonSchema,
};

/// How the reply's shape is asked for (`llm_structured_output`).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum StructuredOutput {
    /// `json_schema`, falling back to `json_object`, then `off`, when the endpoint refuses.
    #[default]
    Auto,
    JsonSchema,
    JsonObject,
    /// The schema in the prompt only.
    Off,
}

impl StructuredOutput {
    pub fn parse(text: &str) -> Result<Self, String> {
        match text.trim() {
            "auto" => Ok(Self::Auto),
            "json_schema" => Ok(Self::JsonSchema),
            "json_object" => Ok(Self::JsonObject),
            "off" => Ok(Self::Off),
            other => Err(format!(
                "must be auto, json_schema, json_object or off, got {other:?}"
            )),
        }
    }
}

/// What a request actually carried.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FormatUsed {
    JsonSchema,
    JsonObject,
    Off,
}

impl FormatUsed {
    pub fn as_str(self) -> &'static str {
        match self {
            Self::JsonSchema => "json_schema",
            Self::JsonObject => "json_object",
            Self::Off => "off",
        }
    }

    fn code(self) -> u8 {
        self as u8
    }

    fn from_code(code: u8) -> Self {
        match code {
            0 => Self::JsonSchema,
            1 => Self::JsonObject,
            _ => Self::Off,
        }
    }

    /// The next format down, in `auto`.
    fn weaker(self) -> Option<Self> {
        match self {
            Self::JsonSchema => Some(Self::JsonObject),
            Self::JsonObject => Some(Self::Off),
            Self::Off => None,
        }
    }
}

/// One message of a conversation with the model.
#[derive(Debug, Clone, PartialEq)]
pub enum Turn {
    User(String),
    /// What the model said before (a broken reply, shown back to it on a retry).
    Assistant(String),
}

#[derive(Debug, Clone)]
pub struct LlmConfig {
    /// e.g. `https://api.openai.com/v1` or `http://localhost:11434/v1`
    pub base_url: String,
    pub model: String,
    pub api_key: Option<crate::secret::Secret>,
    /// Per attempt.
    pub timeout: Duration,
    /// Attempts after the first, for timed-out calls.
    pub retries: u32,
    /// The first backoff; doubled each retry.
    pub backoff: Duration,
    /// Upper bound on the reply's tokens.
    pub max_tokens: u32,
    pub structured_output: StructuredOutput,
}

/// A reply and what it cost.
#[derive(Debug, Clone, PartialEq)]
pub struct Completion {
    pub text: String,
    pub prompt_tokens: u64,
    pub completion_tokens: u64,
    /// Attempts it took (1 = no retry).
    pub attempts: u32,
    /// The reply stopped at `max_tokens`.
    pub truncated: bool,
    pub format: FormatUsed,
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
    /// The format requests carry now (`FormatUsed` as a code): lowered in `auto` when the
    /// endpoint refuses one.
    format: AtomicU8,
}

impl LlmClient {
    pub fn new(config: LlmConfig) -> Result<Self, LlmError> {
        // Local servers take no key; async-openai would otherwise read OPENAI_API_KEY.
        let openai = OpenAIConfig::new()
            .with_api_base(config.base_url.trim_end_matches('/'))
            .with_api_key(
                config
                    .api_key
                    .as_ref()
                    .map(|k| k.expose())
                    .unwrap_or_default(),
            );
        let http = reqwest::Client::builder()
            .timeout(config.timeout)
            .build()
            .map_err(|e| LlmError::Request(e.to_string()))?;
        let format = match config.structured_output {
            StructuredOutput::Auto | StructuredOutput::JsonSchema => FormatUsed::JsonSchema,
            StructuredOutput::JsonObject => FormatUsed::JsonObject,
            StructuredOutput::Off => FormatUsed::Off,
        };
        Ok(Self {
            client: Client::with_config(openai).with_http_client(http),
            config,
            format: AtomicU8::new(format.code()),
        })
    }

    pub fn model(&self) -> &str {
        &self.config.model
    }

    pub fn max_tokens(&self) -> u32 {
        self.config.max_tokens
    }

    /// The format requests carry now (in `auto`, what the endpoint last accepted).
    pub fn format_used(&self) -> FormatUsed {
        FormatUsed::from_code(self.format.load(Ordering::Relaxed))
    }

    /// Ask once, retrying what is worth retrying. `schema`: the reply's JSON Schema, sent as
    /// the configured `response_format` (ignored with `off`).
    pub async fn complete(
        &self,
        turns: &[Turn],
        schema: Option<&serde_json::Value>,
    ) -> Result<Completion, LlmError> {
        let mut attempt = 1;
        loop {
            let format = self.format_used();
            match self.attempt(turns, schema, format).await {
                Ok(mut completion) => {
                    completion.attempts = attempt;
                    return Ok(completion);
                }
                Err(LlmError::Status { status, message })
                    if schema.is_some()
                        && matches!(status, 400 | 422)
                        && self.config.structured_output == StructuredOutput::Auto
                        && format != FormatUsed::Off =>
                {
                    // A format the endpoint cannot do: one step down, for this call and the
                    // rest (a request refused before generating cost nothing).
                    let weaker = format.weaker().unwrap_or(FormatUsed::Off);
                    tracing::warn!(status, error = %message, refused = format.as_str(),
                        next = weaker.as_str(), "LLM endpoint refused the response format");
                    let _ = self.format.compare_exchange(
                        format.code(),
                        weaker.code(),
                        Ordering::Relaxed,
                        Ordering::Relaxed,
                    );
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

    async fn attempt(
        &self,
        turns: &[Turn],
        schema: Option<&serde_json::Value>,
        format: FormatUsed,
    ) -> Result<Completion, LlmError> {
        let messages: Vec<ChatCompletionRequestMessage> = turns
            .iter()
            .map(|turn| match turn {
                Turn::User(text) => ChatCompletionRequestUserMessage::from(text.as_str()).into(),
                Turn::Assistant(text) => {
                    ChatCompletionRequestAssistantMessage::from(text.as_str()).into()
                }
            })
            .collect();
        let mut args = CreateChatCompletionRequestArgs::default();
        args.model(self.config.model.clone())
            .messages(messages)
            .temperature(0.0)
            .max_completion_tokens(self.config.max_tokens);
        match (schema, format) {
            (Some(schema), FormatUsed::JsonSchema) => {
                args.response_format(ResponseFormat::JsonSchema {
                    json_schema: ResponseFormatJsonSchema {
                        description: None,
                        name: "distill_reply".to_owned(),
                        schema: schema.clone(),
                        strict: Some(true),
                    },
                });
            }
            (Some(_), FormatUsed::JsonObject) => {
                args.response_format(ResponseFormat::JsonObject);
            }
            _ => {}
        }
        let request = args.build().map_err(|e| LlmError::Request(e.to_string()))?;
        let response = self
            .client
            .chat()
            .create(request)
            .await
            .map_err(|e| self.classify(e))?;
        let choice = response.choices.into_iter().next().ok_or(LlmError::Empty)?;
        let truncated = choice.finish_reason == Some(FinishReason::Length);
        let text = choice.message.content.ok_or(LlmError::Empty)?;
        let (prompt_tokens, completion_tokens) = response
            .usage
            .map(|u| (u64::from(u.prompt_tokens), u64::from(u.completion_tokens)))
            .unwrap_or_default();
        Ok(Completion {
            text,
            prompt_tokens,
            completion_tokens,
            attempts: 1,
            truncated,
            format: if schema.is_some() {
                format
            } else {
                FormatUsed::Off
            },
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
