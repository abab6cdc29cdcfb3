//! The `openai` embedder against a scripted OpenAI-compatible server (real HTTP, the real
//! `/v1/embeddings` wire format), so async-openai is exercised for real: batching and ordering,
//! dimension probing, endpoint errors, and the full binary switching embedders with `reindex`.

use crate::common;

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

use axum::extract::State;
use axum::http::StatusCode;
use axum::response::IntoResponse;
use axum::routing::post;
use axum::{Json, Router};
use common::{Daemon, call_err, call_ok, http_client};
use hindsight::embed::{
    BuiltinEmbedder, EmbedError, Embedder, OpenAiEmbedder, OpenAiEmbedderConfig, probe_dimension,
};
use serde_json::{Value, json};

const DIM: usize = 64;

#[derive(Default)]
struct Script {
    requests: AtomicUsize,
    /// Answer every request with this status instead of embeddings.
    fail_with: Option<u16>,
}

/// Deterministic meaning-ish vectors: the builtin embedding folded down to DIM dimensions.
fn vector_for(text: &str) -> Vec<f32> {
    let full = BuiltinEmbedder::new().embed_one(text);
    let mut v = vec![0.0f32; DIM];
    for (i, x) in full.iter().enumerate() {
        v[i % DIM] += x;
    }
    v
}

async fn embeddings(
    State(script): State<Arc<Script>>,
    Json(body): Json<Value>,
) -> impl IntoResponse {
    script.requests.fetch_add(1, Ordering::SeqCst);
    if let Some(code) = script.fail_with {
        let status = StatusCode::from_u16(code).unwrap();
        return (status, Json(json!({"error": {"message": "scripted failure", "type": "server_error", "param": null, "code": null}}))).into_response();
    }
    let inputs: Vec<String> = match &body["input"] {
        Value::String(s) => vec![s.clone()],
        Value::Array(items) => items
            .iter()
            .map(|v| v.as_str().unwrap_or_default().to_owned())
            .collect(),
        _ => return (StatusCode::BAD_REQUEST, "bad input").into_response(),
    };
    // Reversed on purpose: clients must order by `index`, not by position.
    let data: Vec<Value> = inputs
        .iter()
        .enumerate()
        .rev()
        .map(|(i, text)| json!({"object": "embedding", "index": i, "embedding": vector_for(text)}))
        .collect();
    Json(json!({
        "object": "list",
        "model": body["model"],
        "data": data,
        "usage": {"prompt_tokens": inputs.len(), "total_tokens": inputs.len()}
    }))
    .into_response()
}

/// Start the scripted server; returns its `/v1` base URL.
async fn scripted_server(script: Arc<Script>) -> String {
    let app = Router::new()
        .route("/v1/embeddings", post(embeddings))
        .with_state(script);
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    tokio::spawn(async move { axum::serve(listener, app).await.unwrap() });
    format!("http://{addr}/v1")
}

fn config(base_url: String) -> OpenAiEmbedderConfig {
    OpenAiEmbedderConfig {
        base_url,
        model: "scripted-embed".into(),
        api_key: Some("sk-test".into()),
        dimension: DIM,
        timeout: Duration::from_secs(5),
        batch_size: 2,
    }
}

#[tokio::test]
async fn embeds_in_batches_in_input_order_and_normalised() {
    let script = Arc::new(Script::default());
    let base = scripted_server(script.clone()).await;
    let embedder = OpenAiEmbedder::new(config(base)).unwrap();
    assert_eq!(embedder.id(), "openai:scripted-embed/64");
    let texts: Vec<String> = ["alpha report", "beta deploy", "gamma review"]
        .iter()
        .map(|s| s.to_string())
        .collect();
    let vectors = embedder.embed(&texts).await.unwrap();
    assert_eq!(vectors.len(), 3);
    assert_eq!(
        script.requests.load(Ordering::SeqCst),
        2,
        "batch_size 2 → two requests for three inputs"
    );
    for (text, v) in texts.iter().zip(&vectors) {
        let mut expected = vector_for(text);
        hindsight::embed::l2_normalize(&mut expected);
        assert!(
            hindsight::embed::cosine(v, &expected) > 0.9999,
            "vector for {text} out of order"
        );
        let norm: f32 = v.iter().map(|x| x * x).sum::<f32>().sqrt();
        assert!((norm - 1.0).abs() < 1e-5);
    }
}

#[tokio::test]
async fn probes_the_dimension_and_reports_endpoint_errors() {
    let base = scripted_server(Arc::new(Script::default())).await;
    assert_eq!(probe_dimension(&config(base)).await.unwrap(), DIM);

    let failing = scripted_server(Arc::new(Script {
        fail_with: Some(500),
        ..Script::default()
    }))
    .await;
    let err = OpenAiEmbedder::new(config(failing))
        .unwrap()
        .embed(&["x".into()])
        .await
        .unwrap_err();
    assert!(matches!(err, EmbedError::Endpoint(_)), "{err}");

    let wrong_dim = scripted_server(Arc::new(Script::default())).await;
    let err = OpenAiEmbedder::new(OpenAiEmbedderConfig {
        dimension: 32,
        ..config(wrong_dim)
    })
    .unwrap()
    .embed(&["x".into()])
    .await
    .unwrap_err();
    assert!(
        matches!(
            err,
            EmbedError::Dimension {
                expected: 32,
                got: 64
            }
        ),
        "{err}"
    );

    // Nothing listens on port 9 of loopback: a clear endpoint error, no hang.
    let err = probe_dimension(&config("http://127.0.0.1:9/v1".into()))
        .await
        .unwrap_err();
    assert!(err.to_string().contains("127.0.0.1:9"), "{err}");
}

#[tokio::test]
async fn the_daemon_switches_embedders_only_through_reindex() {
    let script = Arc::new(Script::default());
    let base = scripted_server(script.clone()).await;
    let dir = tempfile::tempdir().unwrap();

    // Written with the builtin embedder.
    let daemon = Daemon::start(dir.path(), &[]).await;
    let client = http_client(&daemon.endpoint).await;
    let written = call_ok(
        &client,
        "memory_write",
        json!({"content": "The release train leaves every second Tuesday", "importance": 0.8}),
    )
    .await;
    client.cancel().await.unwrap();
    assert!(daemon.stop().await.success());

    // Restarted with an OpenAI-compatible embedder: search refuses and says what to do.
    let openai_env = [
        ("HINDSIGHT_EMBEDDER", "openai"),
        ("HINDSIGHT_EMBED_BASE_URL", base.as_str()),
        ("HINDSIGHT_EMBED_MODEL", "scripted-embed"),
    ];
    let daemon = Daemon::start(dir.path(), &openai_env).await;
    let client = http_client(&daemon.endpoint).await;
    let message = call_err(
        &client,
        "memory_search",
        json!({"query": "when does the release train leave"}),
    )
    .await;
    assert!(message.contains("hindsight reindex"), "{message}");
    client.cancel().await.unwrap();
    assert!(daemon.stop().await.success());

    let output = tokio::process::Command::new(common::binary())
        .arg("reindex")
        .arg("--data-dir")
        .arg(dir.path())
        .envs(openai_env)
        .output()
        .await
        .unwrap();
    assert!(
        output.status.success(),
        "{}",
        String::from_utf8_lossy(&output.stderr)
    );
    let report: Value = serde_json::from_slice(&output.stdout).unwrap();
    assert_eq!(report["reindexed"], 1);
    let progress = String::from_utf8_lossy(&output.stderr);
    assert!(
        progress.contains("re-embedding 1/1") && progress.contains("indexing 1/1"),
        "progress of both phases: {progress}"
    );
    assert_eq!(report["embedder"], "openai:scripted-embed/64");

    let daemon = Daemon::start(dir.path(), &openai_env).await;
    let client = http_client(&daemon.endpoint).await;
    assert_eq!(
        common::top_hit_id(
            &client,
            json!({"query": "when does the release train leave"})
        )
        .await,
        written["memory_id"]
    );
    let more = call_ok(
        &client,
        "memory_write",
        json!({"content": "Hotfixes skip the release train", "importance": 0.6}),
    )
    .await;
    assert_eq!(more["status"], "stored");
    client.cancel().await.unwrap();
    assert!(
        script.requests.load(Ordering::SeqCst) >= 4,
        "probe, reindex, search and write all went to the endpoint"
    );
}
