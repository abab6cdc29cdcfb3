//! Distillation end to end, through the real binary: episodes written over MCP (Streamable
//! HTTP) to `hindsight serve`, which drafts with a language model configured by
//! `HINDSIGHT_LLM_*` (the scripted OpenAI-compatible server); `hindsight jobs run distill`;
//! `hindsight candidates list | show | approve` and the review API; then `memory_search` over
//! MCP finds the approved semantic memory with its provenance.

use crate::common;

use common::Daemon;
use common::openai::Reply;
use serde_json::{Value, json};

/// Two one-offs, besides the five alike (`common::ALIKE_EPISODES`).
const ONE_OFFS: [&str; 2] = [
    "The user booked a dentist appointment for Thursday morning",
    "The office coffee machine was broken again on Wednesday",
];

const KNOWLEDGE: &str = "The user wants every data source cited in the quarterly sales report.";

fn json_out(ok: bool, stdout: &str, stderr: &str) -> Value {
    assert!(ok, "command failed: {stderr}\n{stdout}");
    serde_json::from_str(stdout).unwrap_or_else(|e| panic!("{e}: {stdout}"))
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn episodes_over_mcp_become_a_reviewed_semantic_memory_with_provenance() {
    let llm = common::openai::start(vec![]).await;
    llm.script.set_fallback(Reply::from_prompt(|prompt| {
        let ids = common::openai::episode_numbers(prompt);
        Reply::Content(
            json!([{"content": KNOWLEDGE, "entity": "user", "attribute": "report_citations",
                    "confidence": 0.9, "sources": ids}])
            .to_string(),
        )
    }));
    let data = tempfile::tempdir().unwrap();
    let jobs = tempfile::tempdir().unwrap();
    let token = "review-e2e-token-0123456789";
    let envs = [
        ("HINDSIGHT_LLM_BASE_URL", llm.base_url.as_str()),
        ("HINDSIGHT_LLM_MODEL", "scripted-model"),
        ("HINDSIGHT_LLM_API_KEY", "sk-test-secret"),
        ("HINDSIGHT_JOBS_DIR", jobs.path().to_str().unwrap()),
        ("HINDSIGHT_AUTH_TOKEN", token),
    ];
    let daemon = Daemon::start(data.path(), &envs).await;
    let client = common::http_client(&daemon.endpoint).await;
    let mut written = Vec::new();
    let episodes: Vec<&str> = common::ALIKE_EPISODES.into_iter().chain(ONE_OFFS).collect();
    for text in &episodes {
        let result = common::call_ok(
            &client,
            "memory_write",
            json!({"content": text, "memory_type": "episodic", "namespace": "ana"}),
        )
        .await;
        assert_eq!(result["status"], json!("stored"), "{text}: {result}");
        written.push(result["memory_id"].as_str().unwrap().to_owned());
    }
    let cli = |args: &[&str]| common::cli_with(data.path(), jobs.path(), &envs[..3], args);

    let (ok, out, err) = cli(&["jobs", "run", "distill"]);
    let run = json_out(ok, &out, &err);
    let stats = &run["stats"];
    assert_eq!(stats["clusters"], json!(1), "{run}");
    assert_eq!(stats["candidates_created"], json!(1), "{run}");
    assert_eq!(stats["llm_calls"], json!(1));
    assert_eq!(llm.script.request_count(), 1);
    let asked = common::openai::episode_texts(&llm.script.prompts()[0]);
    assert_eq!(asked.len(), 5, "the five alike, not the one-offs");
    assert!(
        asked
            .iter()
            .all(|text| episodes[..5].contains(&text.as_str()))
    );

    let (ok, out, err) = cli(&["candidates", "list", "--namespace", "ana"]);
    let listed = json_out(ok, &out, &err);
    let candidates = listed["candidates"].as_array().unwrap();
    assert_eq!(candidates.len(), 1, "{listed}");
    let candidate = &candidates[0];
    let id = candidate["id"].as_str().unwrap().to_owned();
    assert_eq!(candidate["content"], json!(KNOWLEDGE));
    assert_eq!(candidate["status"], json!("pending"));
    assert_eq!(candidate["method"], json!("llm"));
    assert_eq!(candidate["model"], json!("scripted-model"));
    assert_eq!(candidate["prompt_version"], json!("distill-v2"));

    let (ok, out, err) = cli(&["candidates", "show", &id]);
    let shown = json_out(ok, &out, &err);
    let episodes: Vec<&str> = shown["episodes"]
        .as_array()
        .unwrap()
        .iter()
        .map(|e| e["content"].as_str().unwrap())
        .collect();
    assert_eq!(episodes.len(), 5, "{shown}");
    assert!(episodes.iter().all(|e| common::ALIKE_EPISODES.contains(e)));

    // The review API wants the bearer token, refuses bad input naming the field, and changes
    // nothing.
    let http = reqwest::Client::new();
    let base = daemon.base_url();
    let response = http
        .get(format!("{base}/api/candidates"))
        .send()
        .await
        .unwrap();
    assert_eq!(response.status().as_u16(), 401);
    let response = http
        .get(format!("{base}/api/candidates?status=maybe"))
        .bearer_auth(token)
        .send()
        .await
        .unwrap();
    assert_eq!(response.status().as_u16(), 400);
    let body: Value = response.json().await.unwrap();
    assert!(body["error"].as_str().unwrap().contains("status"), "{body}");
    let response = http
        .post(format!("{base}/api/candidates/{id}/reject"))
        .bearer_auth(token)
        .json(&json!({"note": ""}))
        .send()
        .await
        .unwrap();
    assert_eq!(response.status().as_u16(), 400);
    let body: Value = response.json().await.unwrap();
    assert!(body["error"].as_str().unwrap().contains("note"), "{body}");
    let response = http
        .post(format!("{base}/api/candidates/not-an-id/approve"))
        .bearer_auth(token)
        .json(&json!({}))
        .send()
        .await
        .unwrap();
    assert_eq!(response.status().as_u16(), 400);

    // Approve from the shell: the daemon owns the data dir, so it does the write.
    let (ok, out, err) = cli(&["candidates", "approve", &id, "--reviewer", "ana"]);
    let approved = json_out(ok, &out, &err);
    assert_eq!(approved["status"], json!("approved"), "{approved}");
    assert_eq!(approved["reviewer"], json!("ana"));
    let memory_id = approved["memory_id"].as_str().unwrap().to_owned();
    let (ok, _, err) = cli(&["candidates", "approve", &id]);
    assert!(!ok && err.contains("approved already"), "{err}");

    let found = common::call_ok(
        &client,
        "memory_search",
        json!({"query": "which data sources to cite in the sales report",
               "namespace": "ana", "memory_types": ["semantic"]}),
    )
    .await;
    let hit = &found["memories"][0];
    assert_eq!(hit["id"], json!(memory_id), "{found}");
    assert_eq!(hit["content"], json!(KNOWLEDGE));
    assert_eq!(hit["memory_type"], json!("semantic"));
    assert_eq!(hit["entity"], json!("user"));
    let provenance = &hit["source"]["distill"];
    assert_eq!(provenance["candidate_id"], json!(id));
    let mut cited: Vec<String> = serde_json::from_value(provenance["episode_ids"].clone()).unwrap();
    cited.sort();
    let mut expected = written[..5].to_vec();
    expected.sort();
    assert_eq!(cited, expected);
    assert_eq!(provenance["model"], json!("scripted-model"));
    assert_eq!(provenance["reviewer"], json!("ana"));

    // The API lists it as approved; nothing is drafted twice.
    let listed: Value = http
        .get(format!(
            "{base}/api/candidates?status=approved&namespace=ana"
        ))
        .bearer_auth(token)
        .send()
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    assert_eq!(listed["candidates"][0]["id"], json!(id), "{listed}");
    let (ok, out, err) = cli(&["jobs", "run", "distill"]);
    let again = json_out(ok, &out, &err);
    assert_eq!(again["stats"]["llm_calls"], json!(0), "{again}");
    client.cancel().await.unwrap();
    assert!(daemon.stop().await.success());
}
