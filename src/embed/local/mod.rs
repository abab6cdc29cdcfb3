//! The local embedder: a BERT-family sentence encoder (all-MiniLM-L6-v2, bge-small, e5-small,
//! paraphrase-multilingual-MiniLM, …) run in-process with candle, from the files a model ships
//! with: `config.json`, `tokenizer.json`, `model.safetensors` and the sentence-transformers
//! extras (pooling, maximum length, prompts).
//!
//! Work runs on tokio's blocking pool, never on the async threads. Bulk inputs are sorted by
//! length and batched, so a batch pads to similar lengths; the vectors come back in input order.

mod card;

use std::path::Path;
use std::sync::Arc;

use async_trait::async_trait;
use candle_core::{DType, Device, IndexOp, Tensor};
use candle_nn::VarBuilder;
use candle_transformers::models::bert::{BertModel, Config};
use tokenizers::{PaddingParams, PaddingStrategy, Tokenizer, TruncationParams};

pub use card::{ModelCard, Pooling};

use super::{EmbedError, Embedder, l2_normalize};

/// Inputs per forward pass: sentence-transformers' default.
const BATCH: usize = 32;

/// Files a model directory must hold.
pub const REQUIRED_FILES: &[&str] = &["config.json", "tokenizer.json", "model.safetensors"];
/// Files read when present (sentence-transformers' description of the model).
pub const OPTIONAL_FILES: &[&str] = &[
    "1_Pooling/config.json",
    "sentence_bert_config.json",
    "config_sentence_transformers.json",
    "modules.json",
];

#[derive(serde::Deserialize)]
struct Architecture {
    #[serde(default)]
    architectures: Vec<String>,
    #[serde(default)]
    model_type: Option<String>,
}

struct Model {
    bert: BertModel,
    tokenizer: Tokenizer,
    card: ModelCard,
    device: Device,
}

pub struct LocalEmbedder {
    model: Arc<Model>,
    id: String,
    dimension: usize,
}

fn model_error(dir: &Path, reason: impl std::fmt::Display) -> EmbedError {
    EmbedError::Model(format!("{}: {reason}", dir.display()))
}

impl LocalEmbedder {
    /// Load the model in `dir`; `name` (its hub id, e.g. `sentence-transformers/all-MiniLM-L6-v2`)
    /// names the vector space in the embedder id and picks the family's prefixes.
    pub fn load(dir: &Path, name: &str) -> Result<Self, EmbedError> {
        for file in REQUIRED_FILES {
            if !dir.join(file).is_file() {
                return Err(model_error(dir, format!("{file} is missing")));
            }
        }
        let config_bytes =
            std::fs::read(dir.join("config.json")).map_err(|e| model_error(dir, e))?;
        let arch: Architecture = serde_json::from_slice(&config_bytes)
            .map_err(|e| model_error(dir, format!("config.json: {e}")))?;
        let is_bert = arch.model_type.as_deref() == Some("bert")
            || arch.architectures.iter().any(|a| a.starts_with("Bert"));
        if !is_bert {
            return Err(model_error(
                dir,
                format!(
                    "model type {} ({}) is not supported: the local embedder runs BERT-family \
                     encoders (all-MiniLM, bge, e5, paraphrase-multilingual-MiniLM)",
                    arch.model_type.as_deref().unwrap_or("unknown"),
                    arch.architectures.join(", ")
                ),
            ));
        }
        let config: Config = serde_json::from_slice(&config_bytes)
            .map_err(|e| model_error(dir, format!("config.json: {e}")))?;
        let max_positions = serde_json::from_slice::<serde_json::Value>(&config_bytes)
            .ok()
            .and_then(|v| v["max_position_embeddings"].as_u64())
            .unwrap_or(512) as usize;
        let card = ModelCard::read(dir, name, max_positions).map_err(|e| model_error(dir, e))?;

        let mut tokenizer = Tokenizer::from_file(dir.join("tokenizer.json"))
            .map_err(|e| model_error(dir, format!("tokenizer.json: {e}")))?;
        let pad_id = tokenizer.get_padding().map(|p| p.pad_id).unwrap_or(0);
        let pad_token = tokenizer
            .get_padding()
            .map(|p| p.pad_token.clone())
            .unwrap_or_else(|| "[PAD]".to_owned());
        // The shipped tokenizer.json often pads every input to a fixed length (128 for
        // MiniLM); pad each batch to its longest input instead, and truncate where
        // sentence-transformers does.
        tokenizer.with_padding(Some(PaddingParams {
            strategy: PaddingStrategy::BatchLongest,
            pad_id,
            pad_token,
            ..Default::default()
        }));
        tokenizer
            .with_truncation(Some(TruncationParams {
                max_length: card.max_tokens,
                ..Default::default()
            }))
            .map_err(|e| model_error(dir, format!("tokenizer: {e}")))?;

        let device = Device::Cpu;
        // SAFETY: the weights file is memory-mapped read-only; the model directory is ours
        // (the hub cache or the configured dir) and is not rewritten while the daemon runs.
        let vb = unsafe {
            VarBuilder::from_mmaped_safetensors(
                &[dir.join("model.safetensors")],
                DType::F32,
                &device,
            )
        }
        .map_err(|e| model_error(dir, format!("model.safetensors: {e}")))?;
        let bert = BertModel::load(vb, &config)
            .map_err(|e| model_error(dir, format!("model.safetensors: {e}")))?;
        let dimension = config.hidden_size;
        Ok(Self {
            model: Arc::new(Model {
                bert,
                tokenizer,
                card,
                device,
            }),
            id: format!("local:{name}/{dimension}"),
            dimension,
        })
    }

    pub fn card(&self) -> &ModelCard {
        &self.model.card
    }

    async fn run(&self, texts: Vec<String>) -> Result<Vec<Vec<f32>>, EmbedError> {
        let model = self.model.clone();
        tokio::task::spawn_blocking(move || model.encode_all(&texts))
            .await
            .map_err(|e| EmbedError::Model(format!("embedding task failed: {e}")))?
    }
}

impl Model {
    /// Vectors for `texts` (already prefixed), in input order.
    fn encode_all(&self, texts: &[String]) -> Result<Vec<Vec<f32>>, EmbedError> {
        let mut order: Vec<usize> = (0..texts.len()).collect();
        order.sort_by_key(|&i| texts[i].len());
        let mut out: Vec<Vec<f32>> = vec![Vec::new(); texts.len()];
        for chunk in order.chunks(BATCH) {
            let batch: Vec<&str> = chunk.iter().map(|&i| texts[i].as_str()).collect();
            for (&i, vector) in chunk.iter().zip(self.encode_batch(&batch)?) {
                out[i] = vector;
            }
        }
        Ok(out)
    }

    fn encode_batch(&self, texts: &[&str]) -> Result<Vec<Vec<f32>>, EmbedError> {
        let fail = |e: &dyn std::fmt::Display| EmbedError::Model(format!("local model: {e}"));
        let encodings = self
            .tokenizer
            .encode_batch(texts.to_vec(), true)
            .map_err(|e| fail(&e))?;
        let n = encodings.len();
        let len = encodings.first().map(|e| e.get_ids().len()).unwrap_or(0);
        let mut ids = Vec::with_capacity(n * len);
        let mut types = Vec::with_capacity(n * len);
        let mut mask = Vec::with_capacity(n * len);
        for e in &encodings {
            ids.extend_from_slice(e.get_ids());
            types.extend_from_slice(e.get_type_ids());
            mask.extend_from_slice(e.get_attention_mask());
        }
        let tensor = |v: Vec<u32>| Tensor::from_vec(v, (n, len), &self.device);
        let (ids, types, mask) = (
            tensor(ids).map_err(|e| fail(&e))?,
            tensor(types).map_err(|e| fail(&e))?,
            tensor(mask).map_err(|e| fail(&e))?,
        );
        let hidden = self
            .bert
            .forward(&ids, &types, Some(&mask))
            .map_err(|e| fail(&e))?;
        let pooled = match self.card.pooling {
            Pooling::Cls => hidden.i((.., 0)).map_err(|e| fail(&e))?,
            Pooling::Mean => {
                let weights = mask
                    .to_dtype(DType::F32)
                    .and_then(|m| m.unsqueeze(2))
                    .map_err(|e| fail(&e))?;
                let summed = hidden
                    .broadcast_mul(&weights)
                    .and_then(|t| t.sum(1))
                    .map_err(|e| fail(&e))?;
                let counts = weights
                    .sum(1)
                    .and_then(|c| c.clamp(1e-9, f64::MAX))
                    .map_err(|e| fail(&e))?;
                summed.broadcast_div(&counts).map_err(|e| fail(&e))?
            }
        };
        let mut vectors: Vec<Vec<f32>> = pooled.to_vec2().map_err(|e| fail(&e))?;
        vectors.iter_mut().for_each(|v| l2_normalize(v));
        Ok(vectors)
    }
}

#[async_trait]
impl Embedder for LocalEmbedder {
    fn id(&self) -> &str {
        &self.id
    }

    fn dimension(&self) -> usize {
        self.dimension
    }

    /// Passages (what is stored): with the family's passage prefix.
    async fn embed(&self, texts: &[String]) -> Result<Vec<Vec<f32>>, EmbedError> {
        let prefix = &self.model.card.passage_prefix;
        self.run(texts.iter().map(|t| format!("{prefix}{t}")).collect())
            .await
    }

    async fn embed_query(&self, text: &str) -> Result<Vec<f32>, EmbedError> {
        let prefix = &self.model.card.query_prefix;
        let mut vectors = self.run(vec![format!("{prefix}{text}")]).await?;
        vectors.pop().ok_or(EmbedError::Count {
            expected: 1,
            got: 0,
        })
    }
}
