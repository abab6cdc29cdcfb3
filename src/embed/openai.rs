//! Any OpenAI-compatible `/v1/embeddings` endpoint (OpenAI, Ollama, vLLM, TEI) via async-openai.

use std::time::Duration;

use async_openai::Client;
use async_openai::config::OpenAIConfig;
use async_openai::types::embeddings::{CreateEmbeddingRequest, EmbeddingInput};
use async_trait::async_trait;

use super::{EmbedError, Embedder, l2_normalize};

#[derive(Debug, Clone)]
pub struct OpenAiEmbedderConfig {
    /// e.g. `https://api.openai.com/v1` or `http://localhost:11434/v1`
    pub base_url: String,
    pub model: String,
    pub api_key: Option<crate::secret::Secret>,
    pub dimension: usize,
    pub timeout: Duration,
    /// Inputs per request.
    pub batch_size: usize,
}

pub struct OpenAiEmbedder {
    client: Client<OpenAIConfig>,
    config: OpenAiEmbedderConfig,
    id: String,
}

impl OpenAiEmbedder {
    pub fn new(config: OpenAiEmbedderConfig) -> Result<Self, EmbedError> {
        let mut openai = OpenAIConfig::new().with_api_base(config.base_url.trim_end_matches('/'));
        // Local servers (Ollama, TEI) take no key; async-openai would otherwise read OPENAI_API_KEY.
        openai = openai.with_api_key(
            config
                .api_key
                .as_ref()
                .map(|k| k.expose())
                .unwrap_or_default(),
        );
        let http = reqwest::Client::builder()
            .timeout(config.timeout)
            .build()
            .map_err(|e| EmbedError::Endpoint(e.to_string()))?;
        let id = format!("openai:{}/{}", config.model, config.dimension);
        Ok(Self {
            client: Client::with_config(openai).with_http_client(http),
            config,
            id,
        })
    }

    async fn embed_batch(&self, texts: &[String]) -> Result<Vec<Vec<f32>>, EmbedError> {
        let request = CreateEmbeddingRequest {
            model: self.config.model.clone(),
            input: EmbeddingInput::StringArray(texts.to_vec()),
            encoding_format: None,
            user: None,
            dimensions: None,
        };
        let mut response = self
            .client
            .embeddings()
            .create(request)
            .await
            .map_err(|e| EmbedError::Endpoint(e.to_string()))?;
        if response.data.len() != texts.len() {
            return Err(EmbedError::Count {
                expected: texts.len(),
                got: response.data.len(),
            });
        }
        response.data.sort_by_key(|d| d.index);
        response
            .data
            .into_iter()
            .map(|d| {
                let mut v = d.embedding;
                if v.len() != self.config.dimension {
                    return Err(EmbedError::Dimension {
                        expected: self.config.dimension,
                        got: v.len(),
                    });
                }
                l2_normalize(&mut v);
                Ok(v)
            })
            .collect()
    }
}

#[async_trait]
impl Embedder for OpenAiEmbedder {
    fn id(&self) -> &str {
        &self.id
    }

    fn dimension(&self) -> usize {
        self.config.dimension
    }

    async fn embed(&self, texts: &[String]) -> Result<Vec<Vec<f32>>, EmbedError> {
        let mut out = Vec::with_capacity(texts.len());
        for chunk in texts.chunks(self.config.batch_size.max(1)) {
            out.extend(self.embed_batch(chunk).await?);
        }
        Ok(out)
    }
}

/// Ask the endpoint for one embedding to learn its vector size.
pub async fn probe_dimension(config: &OpenAiEmbedderConfig) -> Result<usize, EmbedError> {
    let probe = OpenAiEmbedder::new(OpenAiEmbedderConfig {
        dimension: 0,
        ..config.clone()
    })?;
    let request = CreateEmbeddingRequest {
        model: config.model.clone(),
        input: EmbeddingInput::StringArray(vec!["dimension probe".to_owned()]),
        encoding_format: None,
        user: None,
        dimensions: None,
    };
    let response = probe
        .client
        .embeddings()
        .create(request)
        .await
        .map_err(|e| EmbedError::Endpoint(format!("{e} (while probing {})", config.base_url)))?;
    response
        .data
        .first()
        .map(|d| d.embedding.len())
        .filter(|n| *n > 0)
        .ok_or(EmbedError::Count {
            expected: 1,
            got: 0,
        })
}
