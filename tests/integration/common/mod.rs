//! Shared test helpers: an in-process service on a temp dir, and the real binary as a child
//! process (daemon or stdio server) with an rmcp client.
#![allow(dead_code)]

use std::path::{Path, PathBuf};
use std::process::Stdio;
use std::sync::Arc;
use std::time::Duration;

pub mod console;
pub mod data;
pub mod openai;
pub mod pg;

#[allow(unused_imports)] // each test module uses some
pub use data::{locomo, minilm_dir};

use hindsight::embed::{BuiltinEmbedder, Embedder};
use hindsight::index::{EdgeIndex, HnswParams, VectorIndex};
use hindsight::lock::{Endpoint, read_endpoint};
use hindsight::service::{MemoryService, Rules};
use hindsight::store::SqliteStore;
use rmcp::model::{CallToolRequestParams, CallToolResult};
use rmcp::service::RunningService;
use rmcp::transport::streamable_http_client::StreamableHttpClientTransportConfig;
use rmcp::transport::{ConfigureCommandExt, StreamableHttpClientTransport, TokioChildProcess};
use rmcp::{RoleClient, ServiceExt};
use serde_json::Value;

/// Five ways a user asked for the same thing: one cluster for the distill job, whichever
/// embedder (they share most of their words).
pub const ALIKE_EPISODES: [&str; 5] = [
    "On Monday the user asked for the quarterly sales report and wanted every data source cited",
    "The user requested the quarterly sales report again and insisted that every data source be cited",
    "For the quarterly sales report the user asked that each data source be cited at the end",
    "The user sent back the quarterly sales report because a data source was not cited",
    "Again the user wanted the quarterly sales report with every data source cited in full",
];

pub async fn open_index(dir: &Path, dimension: usize) -> Arc<EdgeIndex> {
    Arc::new(
        EdgeIndex::open(&dir.join("index"), dimension, HnswParams::default())
            .await
            .unwrap(),
    )
}

/// A service over a real SQLite file and a real embedded index in `dir`.
pub async fn service_with(
    dir: &Path,
    index: Arc<dyn VectorIndex>,
    embedder: Arc<dyn Embedder>,
) -> MemoryService {
    let store = Arc::new(
        SqliteStore::open(&dir.join("hindsight.db"), signer(dir))
            .await
            .unwrap(),
    );
    MemoryService::start(store, index, embedder, Rules::default())
        .await
        .unwrap()
}

/// The builtin embedder, counting its `embed` calls (a write's, a batch's) in `calls` and
/// keeping every text it embedded, queries included, in `texts`.
pub struct CountingEmbedder {
    inner: BuiltinEmbedder,
    pub calls: Arc<std::sync::atomic::AtomicUsize>,
    pub texts: std::sync::Mutex<Vec<String>>,
}

impl CountingEmbedder {
    pub fn new(calls: Arc<std::sync::atomic::AtomicUsize>) -> Self {
        Self {
            inner: BuiltinEmbedder::new(),
            calls,
            texts: std::sync::Mutex::new(Vec::new()),
        }
    }

    /// How many times `text` was embedded.
    pub fn embedded(&self, text: &str) -> usize {
        self.texts
            .lock()
            .unwrap()
            .iter()
            .filter(|t| *t == text)
            .count()
    }
}

#[async_trait::async_trait]
impl Embedder for CountingEmbedder {
    fn id(&self) -> &str {
        self.inner.id()
    }

    fn dimension(&self) -> usize {
        self.inner.dimension()
    }

    async fn embed(&self, texts: &[String]) -> Result<Vec<Vec<f32>>, hindsight::embed::EmbedError> {
        self.calls.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
        self.texts.lock().unwrap().extend(texts.iter().cloned());
        self.inner.embed(texts).await
    }

    async fn embed_query(&self, text: &str) -> Result<Vec<f32>, hindsight::embed::EmbedError> {
        self.texts.lock().unwrap().push(text.to_owned());
        self.inner.embed_query(text).await
    }
}

pub async fn service(dir: &Path) -> MemoryService {
    let embedder = Arc::new(BuiltinEmbedder::new());
    let index = open_index(dir, embedder.dimension()).await;
    service_with(dir, index, embedder).await
}

pub fn binary() -> PathBuf {
    PathBuf::from(env!("CARGO_BIN_EXE_hindsight"))
}

/// `hindsight serve` on a random port; killed when dropped.
pub struct Daemon {
    pub child: tokio::process::Child,
    pub endpoint: Endpoint,
}

impl Daemon {
    pub async fn start(data_dir: &Path, envs: &[(&str, &str)]) -> Daemon {
        Self::try_start(data_dir, envs)
            .await
            .expect("hindsight serve exited early")
    }

    /// `None` if the daemon exits before it serves.
    pub async fn try_start(data_dir: &Path, envs: &[(&str, &str)]) -> Option<Daemon> {
        let mut command = tokio::process::Command::new(binary());
        command
            .args(["serve", "--listen", "127.0.0.1:0", "--data-dir"])
            .arg(data_dir)
            .env("HINDSIGHT_CONFIG", data_dir.join("no-such-config.toml"))
            .env_remove("HINDSIGHT_AUTH_TOKEN")
            .env_remove("HINDSIGHT_AUTH")
            // `embedder = "auto"` without a model in reach: builtin, as the tests expect,
            // never a download (tests that want the local model say so).
            .env("HF_HUB_OFFLINE", "1")
            .env("HF_HUB_CACHE", data_dir.join("no-hub-cache"))
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::inherit())
            .kill_on_drop(true);
        for (k, v) in envs {
            command.env(k, v);
        }
        let mut child = command.spawn().expect("spawn hindsight serve");
        let pid = child.id().expect("pid");
        let endpoint = try_wait_for_endpoint(data_dir, pid, &mut child).await?;
        Some(Daemon { child, endpoint })
    }

    pub fn base_url(&self) -> String {
        self.endpoint.url.trim_end_matches("/mcp").to_owned()
    }

    /// SIGTERM and wait for a clean exit.
    pub async fn stop(mut self) -> std::process::ExitStatus {
        if let Some(pid) = self.child.id() {
            unsafe_kill(pid, "TERM");
        }
        tokio::time::timeout(Duration::from_secs(20), self.child.wait())
            .await
            .expect("daemon exits within 20 s of SIGTERM")
            .expect("wait")
    }

    /// SIGKILL: no chance to flush anything.
    pub async fn crash(mut self) {
        self.child.start_kill().expect("kill");
        let _ = self.child.wait().await;
    }
}

fn unsafe_kill(pid: u32, signal: &str) {
    let status = std::process::Command::new("kill")
        .arg(format!("-{signal}"))
        .arg(pid.to_string())
        .status()
        .expect("run kill");
    assert!(status.success());
}

/// Wait until the process `pid` has published its endpoint in `data_dir`.
pub async fn wait_for_endpoint(
    data_dir: &Path,
    pid: u32,
    child: &mut tokio::process::Child,
) -> Endpoint {
    try_wait_for_endpoint(data_dir, pid, child)
        .await
        .expect("hindsight exited early")
}

/// As `wait_for_endpoint`, but `None` if the process exits first.
pub async fn try_wait_for_endpoint(
    data_dir: &Path,
    pid: u32,
    child: &mut tokio::process::Child,
) -> Option<Endpoint> {
    // Generous: a start repairs the index first, which takes a while for the crash tests' 20k
    // rows in a debug build. Only a failing start waits this long.
    for _ in 0..2400 {
        if let Some(endpoint) = read_endpoint(data_dir)
            && endpoint.pid == pid
            && tokio::net::TcpStream::connect(
                endpoint
                    .url
                    .trim_start_matches("http://")
                    .trim_end_matches("/mcp"),
            )
            .await
            .is_ok()
        {
            return Some(endpoint);
        }
        if let Ok(Some(status)) = child.try_wait() {
            eprintln!("hindsight exited early with {status}");
            return None;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    panic!(
        "no endpoint published in {} after 120 s",
        data_dir.display()
    );
}

pub type Client = RunningService<RoleClient, ()>;

pub async fn http_client(endpoint: &Endpoint) -> Client {
    let mut config = StreamableHttpClientTransportConfig::with_uri(endpoint.url.clone());
    if let Some(token) = &endpoint.token {
        config = config.auth_header(token.expose().to_owned());
    }
    ().serve(StreamableHttpClientTransport::from_config(config))
        .await
        .expect("MCP over HTTP")
}

/// `hindsight mcp --data-dir DIR` as a child speaking MCP over stdio.
pub async fn stdio_client(data_dir: &Path) -> Client {
    stdio_client_with(data_dir, &[]).await
}

/// `stdio_client` with more environment (`HINDSIGHT_*` settings).
pub async fn stdio_client_with(data_dir: &Path, envs: &[(&str, &str)]) -> Client {
    let command = tokio::process::Command::new(binary()).configure(|c| {
        c.arg("mcp")
            .arg("--data-dir")
            .arg(data_dir)
            .env("HINDSIGHT_CONFIG", data_dir.join("no-such-config.toml"))
            .env("HF_HUB_OFFLINE", "1")
            .env("HF_HUB_CACHE", data_dir.join("no-hub-cache"))
            .envs(envs.iter().copied());
    });
    let (transport, _stderr) = TokioChildProcess::builder(command)
        .stderr(Stdio::inherit())
        .spawn()
        .expect("spawn hindsight mcp");
    ().serve(transport).await.expect("MCP over stdio")
}

pub async fn call(client: &Client, tool: &str, args: Value) -> CallToolResult {
    let args = args.as_object().cloned().expect("arguments are an object");
    client
        .call_tool(CallToolRequestParams::new(tool.to_owned()).with_arguments(args))
        .await
        .expect("tool call completes")
}

/// Call a tool that must succeed; return its structured result.
pub async fn call_ok(client: &Client, tool: &str, args: Value) -> Value {
    let result = call(client, tool, args).await;
    assert_ne!(
        result.is_error,
        Some(true),
        "{tool} failed: {:?}",
        result.content
    );
    let structured = result
        .structured_content
        .clone()
        .expect("structured content");
    // The same JSON object is sent as text content.
    let text = result
        .content
        .first()
        .and_then(|c| c.as_text())
        .map(|t| t.text.clone())
        .expect("text content");
    assert_eq!(serde_json::from_str::<Value>(&text).unwrap(), structured);
    structured
}

/// Call a tool that must fail with a tool error; return its message.
pub async fn call_err(client: &Client, tool: &str, args: Value) -> String {
    let result = call(client, tool, args).await;
    assert_eq!(
        result.is_error,
        Some(true),
        "{tool} should have failed: {:?}",
        result.structured_content
    );
    result
        .content
        .iter()
        .filter_map(|c| c.as_text().map(|t| t.text.clone()))
        .collect::<Vec<_>>()
        .join("\n")
}

/// The id of the best `memory_search` hit for `args` (null when nothing matched).
pub async fn top_hit_id(client: &Client, args: Value) -> Value {
    call_ok(client, "memory_search", args).await["memories"][0]["id"].clone()
}

/// `hindsight ARGS` with this data dir and jobs dir (and `envs`); (exit ok, stdout, stderr).
pub fn cli_with(
    data_dir: &Path,
    jobs_dir: &Path,
    envs: &[(&str, &str)],
    args: &[&str],
) -> (bool, String, String) {
    data::run_cli(&binary(), data_dir, jobs_dir, envs, args)
}

/// The local embedder over the real MiniLM files.
pub fn minilm() -> Arc<hindsight::embed::LocalEmbedder> {
    Arc::new(
        hindsight::embed::LocalEmbedder::load(
            &minilm_dir(),
            hindsight::configuration::DEFAULT_LOCAL_MODEL,
        )
        .expect("load all-MiniLM-L6-v2"),
    )
}

/// Fails when a suite function is not instantiated on every backend. A suite is a set of
/// `pub async fn NAME(<param>)` in `files` (paths under `tests/integration/`), run on each backend by the
/// list in `macro_rules! <suite>` (the `@tests $open;` arm's names): a function missing from
/// that list would never run, and nothing else would say so.
pub fn assert_suite_lists_every_function(
    suite: &str,
    macro_file: &str,
    files: &[&str],
    param: &str,
) {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/integration");
    let read = |file: &str| {
        std::fs::read_to_string(root.join(file)).unwrap_or_else(|e| panic!("{file}: {e}"))
    };
    let mut defined: Vec<String> = files
        .iter()
        .flat_map(|file| {
            read(file)
                .lines()
                .filter_map(|line| {
                    let rest = line.strip_prefix("pub async fn ")?;
                    let (name, args) = rest.split_once('(')?;
                    args.starts_with(param).then(|| name.trim().to_owned())
                })
                .collect::<Vec<_>>()
        })
        .collect();
    defined.sort();
    let text = read(macro_file);
    let start = text
        .find(&format!("macro_rules! {suite}"))
        .and_then(|at| text[at..].find("@tests $open").map(|i| at + i))
        .unwrap_or_else(|| panic!("{macro_file}: no `macro_rules! {suite}` with an @tests arm"));
    let list = &text[start..];
    let list = &list[list.find(';').unwrap_or(0) + 1..list.find(");").unwrap_or(list.len())];
    let mut listed: Vec<String> = list
        .split(',')
        .map(|name| name.trim().to_owned())
        .filter(|name| !name.is_empty())
        .collect();
    listed.sort();
    assert!(
        !defined.is_empty(),
        "no suite function takes `{param}` in {files:?}"
    );
    let missing: Vec<&String> = defined.iter().filter(|d| !listed.contains(d)).collect();
    assert!(
        missing.is_empty(),
        "{suite}: {missing:?} never run: add them to the list in {macro_file}"
    );
    let unknown: Vec<&String> = listed.iter().filter(|l| !defined.contains(l)).collect();
    assert!(
        unknown.is_empty(),
        "{suite}: {unknown:?} listed but not defined"
    );
}

/// The row-signing key of a store in `dir`: its `signing.key`, as the daemon with that data
/// dir reads it (created by whichever comes first).
pub fn signer(dir: &Path) -> hindsight::signing::Signer {
    hindsight::signing::Signer::for_data_dir(dir, None, &[]).unwrap()
}

/// One fixed key for stores on a shared PostgreSQL database opened by several pools or
/// processes of the tests (replicas must share a key).
pub fn test_signer() -> hindsight::signing::Signer {
    hindsight::signing::Signer::new(
        hindsight::secret::Secret::new("hindsight-tests-shared-signing-key-0001"),
        vec![],
    )
    .unwrap()
}

/// An episodic row in namespace `tests`, ready for `MemoryStore::insert`.
pub fn store_row(content: &str) -> hindsight::domain::Memory {
    let now = chrono::Utc::now();
    hindsight::domain::NewMemory {
        id: uuid::Uuid::now_v7(),
        namespace: hindsight::domain::Namespace::parse("tests").unwrap(),
        memory_type: hindsight::domain::MemoryType::Episodic,
        content: hindsight::domain::Content::parse(content, 10_000).unwrap(),
        importance: hindsight::domain::Importance::parse(0.5).unwrap(),
        entity: None,
        attribute: None,
        source: serde_json::json!({"test": true, "n": 1.0}),
        metadata: serde_json::json!({}),
        created_at: now,
        occurred_at: now,
        expires_at: None,
        embedding_model: "test".to_owned(),
        embedding: vec![0.25; 8],
    }
    .into_memory()
}
