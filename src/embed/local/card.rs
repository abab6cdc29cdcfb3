//! What a model's card says about using it: how token vectors are pooled into one, and which
//! prefixes queries and passages get. Read from the sentence-transformers files the model
//! ships (`1_Pooling/config.json`, `config_sentence_transformers.json`, `sentence_bert_config.json`)
//! and, where those are silent, from the family's published card.

use std::path::Path;

use serde::Deserialize;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Pooling {
    /// Mean of the token vectors under the attention mask (MiniLM, e5, mpnet).
    Mean,
    /// The `[CLS]` token's vector (bge).
    Cls,
}

/// How to embed with one model.
#[derive(Debug, Clone, PartialEq)]
pub struct ModelCard {
    pub pooling: Pooling,
    pub query_prefix: String,
    pub passage_prefix: String,
    /// Longer inputs are truncated to this many tokens (sentence-transformers' `max_seq_length`).
    pub max_tokens: usize,
}

#[derive(Deserialize, Default)]
struct PoolingFile {
    #[serde(default)]
    pooling_mode_cls_token: bool,
    #[serde(default)]
    pooling_mode_mean_tokens: bool,
}

#[derive(Deserialize, Default)]
struct SentenceBertFile {
    max_seq_length: Option<usize>,
}

#[derive(Deserialize, Default)]
struct SentenceTransformersFile {
    #[serde(default)]
    prompts: std::collections::HashMap<String, String>,
}

/// Prefixes by family, from the model cards, for models whose files don't carry `prompts`:
/// e5 ("query: " / "passage: ", intfloat/e5-*), bge v1.5 (an instruction on queries only,
/// BAAI/bge-*-en-v1.5 and its Chinese counterpart for bge-*-zh).
fn family_prefixes(model: &str) -> (String, String) {
    let name = model.to_ascii_lowercase();
    let base = name.rsplit('/').next().unwrap_or(&name);
    if base.contains("e5-") || base.starts_with("e5") {
        ("query: ".to_owned(), "passage: ".to_owned())
    } else if base.starts_with("bge-") && base.contains("-zh") {
        (
            "为这个句子生成表示以用于检索相关文章：".to_owned(),
            String::new(),
        )
    } else if base.starts_with("bge-") && !base.starts_with("bge-m3") {
        (
            "Represent this sentence for searching relevant passages: ".to_owned(),
            String::new(),
        )
    } else {
        (String::new(), String::new())
    }
}

fn read_json<T: for<'de> Deserialize<'de> + Default>(path: &Path) -> Result<T, String> {
    match std::fs::read(path) {
        Ok(bytes) => serde_json::from_slice(&bytes).map_err(|e| format!("{}: {e}", path.display())),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(T::default()),
        Err(e) => Err(format!("{}: {e}", path.display())),
    }
}

impl ModelCard {
    /// The card for the model in `dir` (named `model`, for the family rules), capped at the
    /// model's own `max_position_embeddings`.
    pub fn read(dir: &Path, model: &str, max_positions: usize) -> Result<Self, String> {
        let pooling_file: PoolingFile = read_json(&dir.join("1_Pooling/config.json"))?;
        let pooling =
            if pooling_file.pooling_mode_cls_token && !pooling_file.pooling_mode_mean_tokens {
                Pooling::Cls
            } else {
                Pooling::Mean
            };
        let sbert: SentenceBertFile = read_json(&dir.join("sentence_bert_config.json"))?;
        let st: SentenceTransformersFile =
            read_json(&dir.join("config_sentence_transformers.json"))?;
        let (mut query_prefix, mut passage_prefix) = family_prefixes(model);
        if let Some(q) = st.prompts.get("query") {
            query_prefix = q.clone();
        }
        if let Some(p) = st.prompts.get("passage").or(st.prompts.get("document")) {
            passage_prefix = p.clone();
        }
        let max_tokens = sbert
            .max_seq_length
            .unwrap_or(max_positions)
            .min(max_positions)
            .max(8);
        Ok(Self {
            pooling,
            query_prefix,
            passage_prefix,
            max_tokens,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn families_get_their_cards_prefixes() {
        assert_eq!(
            family_prefixes("sentence-transformers/all-MiniLM-L6-v2").0,
            ""
        );
        assert_eq!(family_prefixes("intfloat/e5-small-v2").1, "passage: ");
        assert_eq!(
            family_prefixes("intfloat/multilingual-e5-small").0,
            "query: "
        );
        assert!(
            family_prefixes("BAAI/bge-small-en-v1.5")
                .0
                .starts_with("Represent")
        );
        assert_eq!(family_prefixes("BAAI/bge-small-en-v1.5").1, "");
        assert!(
            family_prefixes("BAAI/bge-small-zh-v1.5")
                .0
                .starts_with("为")
        );
    }

    #[test]
    fn the_files_say_pooling_length_and_prompts() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::create_dir_all(dir.path().join("1_Pooling")).unwrap();
        std::fs::write(
            dir.path().join("1_Pooling/config.json"),
            r#"{"pooling_mode_cls_token": true, "pooling_mode_mean_tokens": false}"#,
        )
        .unwrap();
        std::fs::write(
            dir.path().join("sentence_bert_config.json"),
            r#"{"max_seq_length": 1024}"#,
        )
        .unwrap();
        std::fs::write(
            dir.path().join("config_sentence_transformers.json"),
            r#"{"prompts": {"query": "q> ", "document": "d> "}}"#,
        )
        .unwrap();
        let card = ModelCard::read(dir.path(), "acme/encoder", 512).unwrap();
        assert_eq!(card.pooling, Pooling::Cls);
        assert_eq!(card.max_tokens, 512, "capped by the position table");
        assert_eq!(
            (card.query_prefix.as_str(), card.passage_prefix.as_str()),
            ("q> ", "d> ")
        );

        std::fs::write(dir.path().join("sentence_bert_config.json"), "{not json").unwrap();
        let err = ModelCard::read(dir.path(), "acme/encoder", 512).unwrap_err();
        assert!(err.contains("sentence_bert_config.json"), "{err}");
    }
}
