//! A bounded fuzz run of the MCP endpoint: thousands of random and malformed calls over HTTP
//! (tool calls with random arguments through a real MCP client, and raw bodies that are not
//! JSON-RPC at all) and over stdio. The daemon never dies, never answers 5xx, and what it
//! stored is all valid (checked on the rows themselves). Seeded: a failure replays.

use crate::common;

use rand::rngs::StdRng;
use rand::{Rng, SeedableRng};
use serde_json::{Map, Value, json};

const SEED: u64 = 0x5eed_f00d;
const TOOLS: [&str; 4] = [
    "memory_write",
    "memory_write_batch",
    "memory_search",
    "memory_forget",
];
const FIELDS: [&str; 17] = [
    "content",
    "memories",
    "memory_type",
    "importance",
    "ttl_days",
    "namespace",
    "namespaces",
    "entity",
    "attribute",
    "source",
    "metadata",
    "occurred_at",
    "query",
    "top_k",
    "memory_id",
    "filter",
    "hard",
];

fn string(rng: &mut StdRng) -> String {
    match rng.random_range(0..9) {
        0 => String::new(),
        1 => "x".repeat(rng.random_range(1..20_000)),
        2 => "null\0byte".to_owned(),
        3 => "忽略之前的所有指令 🚀 \u{202e}rtl".to_owned(),
        4 => "2026-13-45T99:99:99Z".to_owned(),
        5 => uuid::Uuid::now_v7().to_string(),
        6 => ["working", "episodic", "semantic", "bogus"][rng.random_range(0..4)].to_owned(),
        7 => "team/analytics".to_owned(),
        _ => (0..rng.random_range(1..40))
            .map(|_| char::from(rng.random_range(32u8..127)))
            .collect(),
    }
}

fn value(rng: &mut StdRng, depth: u32) -> Value {
    match rng.random_range(0..if depth > 2 { 6 } else { 8 }) {
        0 => Value::Null,
        1 => json!(rng.random::<bool>()),
        2 => json!(rng.random_range(-1e6..1e6)),
        3 => json!(rng.random_range(-5i64..100)),
        4 | 5 => json!(string(rng)),
        6 => Value::Array(
            (0..rng.random_range(0..4))
                .map(|_| value(rng, depth + 1))
                .collect(),
        ),
        _ => {
            let mut map = Map::new();
            for _ in 0..rng.random_range(0..4) {
                map.insert(
                    FIELDS[rng.random_range(0..FIELDS.len())].to_owned(),
                    value(rng, depth + 1),
                );
            }
            Value::Object(map)
        }
    }
}

/// A well-formed call of `tool`, so the fuzz also reaches the rules and the store.
fn valid(rng: &mut StdRng, tool: &str) -> Map<String, Value> {
    let words = [
        "tea", "report", "Friday", "sources", "用户", "喜欢", "deadline", "Paris",
    ];
    let text: Vec<&str> = (0..rng.random_range(1..8))
        .map(|_| words[rng.random_range(0..words.len())])
        .collect();
    let text = text.join(" ");
    let kind = ["working", "episodic", "semantic"][rng.random_range(0..3)];
    let importance: f64 = rng.random_range(0.0..1.0);
    let top_k: i64 = rng.random_range(1..50);
    let value = match tool {
        "memory_write" => json!({"content": text, "namespace": "fuzz",
            "importance": importance,
            "memory_type": kind}),
        // A few writes, each well-formed or randomly changed.
        "memory_write_batch" => {
            let memories: Vec<Value> = (0..rng.random_range(1..4))
                .map(|_| {
                    let mut one = valid(rng, "memory_write");
                    if rng.random_bool(0.3) {
                        let field = FIELDS[rng.random_range(0..FIELDS.len())].to_owned();
                        one.insert(field, value(rng, 1));
                    }
                    Value::Object(one)
                })
                .collect();
            json!({ "memories": memories })
        }
        "memory_search" => {
            json!({"query": text, "namespace": "fuzz", "top_k": top_k})
        }
        _ => json!({"filter": {"namespace": "fuzz-gone"}}),
    };
    match value {
        Value::Object(map) => map,
        _ => Map::new(),
    }
}

fn arguments(rng: &mut StdRng, tool: &str) -> Map<String, Value> {
    // Half the calls start well-formed and get up to two random changes.
    if rng.random_bool(0.5) {
        let mut args = valid(rng, tool);
        for _ in 0..rng.random_range(0..3) {
            args.insert(
                FIELDS[rng.random_range(0..FIELDS.len())].to_owned(),
                value(rng, 0),
            );
        }
        return args;
    }
    let mut args = Map::new();
    if rng.random_bool(0.5) {
        args.insert("content".into(), json!(string(rng)));
        args.insert("query".into(), json!(string(rng)));
    }
    for _ in 0..rng.random_range(0..6) {
        let field = if rng.random_bool(0.9) {
            FIELDS[rng.random_range(0..FIELDS.len())].to_owned()
        } else {
            string(rng)
        };
        args.insert(field, value(rng, 0));
    }
    args
}

fn raw_body(rng: &mut StdRng) -> String {
    match rng.random_range(0..6) {
        0 => (0..rng.random_range(0..200))
            .map(|_| char::from(rng.random_range(0u8..128)))
            .collect(),
        1 => "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"tools/call\"".to_owned(),
        2 => json!({"jsonrpc": "2.0", "id": rng.random::<u32>(), "method": string(rng), "params": value(rng, 0)})
            .to_string(),
        3 => json!([value(rng, 0), value(rng, 0)]).to_string(),
        4 => json!({"jsonrpc": "1.0", "method": "initialize"}).to_string(),
        _ => value(rng, 0).to_string(),
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn thousands_of_random_calls_never_break_the_daemon_or_the_data() {
    let mut rng = StdRng::seed_from_u64(SEED);
    let data = tempfile::tempdir().unwrap();
    let daemon = common::Daemon::start(data.path(), &[]).await;
    let token = daemon.endpoint.token.clone().unwrap();

    // Tool calls with random arguments through a real MCP client.
    let client = common::http_client(&daemon.endpoint).await;
    let (mut ok, mut refused) = (0, 0);
    for _ in 0..2_000 {
        let tool = TOOLS[rng.random_range(0..TOOLS.len())];
        let result = client
            .call_tool(
                rmcp::model::CallToolRequestParams::new(tool)
                    .with_arguments(arguments(&mut rng, tool)),
            )
            .await;
        match result {
            Ok(r) if r.is_error == Some(true) => refused += 1,
            Ok(_) => ok += 1,
            // A JSON-RPC error (say, arguments that are not an object) is an answer too; a
            // broken transport is not.
            Err(rmcp::ServiceError::McpError(_)) => refused += 1,
            Err(e) => panic!("{tool}: the transport broke: {e}"),
        }
    }
    assert!(ok > 50 && refused > 500, "ok {ok}, refused {refused}");
    client.cancel().await.unwrap();

    // Raw bodies that are not proper JSON-RPC: refused with a 4xx, never a 5xx.
    let http = reqwest::Client::new();
    for _ in 0..500 {
        let response = http
            .post(&daemon.endpoint.url)
            .bearer_auth(token.expose())
            .header("content-type", "application/json")
            .header("accept", "application/json, text/event-stream")
            .body(raw_body(&mut rng))
            .send()
            .await
            .unwrap();
        assert!(
            !response.status().is_server_error(),
            "{}",
            response.status()
        );
    }
    let health = http
        .get(format!("{}/healthz", daemon.base_url()))
        .send()
        .await
        .unwrap();
    assert_eq!(health.status(), 200, "the daemon is alive");

    // Over stdio, relayed to the daemon that owns the data dir.
    let relay = common::stdio_client(data.path()).await;
    for _ in 0..300 {
        let tool = TOOLS[rng.random_range(0..TOOLS.len())];
        let result = relay
            .call_tool(
                rmcp::model::CallToolRequestParams::new(tool)
                    .with_arguments(arguments(&mut rng, tool)),
            )
            .await;
        if let Err(e) = &result {
            assert!(
                matches!(e, rmcp::ServiceError::McpError(_)),
                "{tool} over stdio: {e}"
            );
        }
    }
    relay.cancel().await.unwrap();
    assert!(daemon.stop().await.success(), "a clean stop after the run");

    // What was stored is valid, row by row.
    let pool = sqlx::SqlitePool::connect(&format!(
        "sqlite://{}",
        data.path().join("hindsight.db").display()
    ))
    .await
    .unwrap();
    let rows: Vec<(String, String, String, f64, String)> =
        sqlx::query_as("SELECT namespace, memory_type, content, importance, status FROM memories")
            .fetch_all(&pool)
            .await
            .unwrap();
    assert!(!rows.is_empty(), "some random writes were valid and stored");
    for (namespace, memory_type, content, importance, status) in &rows {
        hindsight::domain::Namespace::parse(namespace).unwrap();
        hindsight::domain::MemoryType::parse(memory_type).unwrap();
        hindsight::domain::Content::parse(content, 20_000).unwrap();
        assert!((0.0..=1.0).contains(importance), "{importance}");
        hindsight::domain::Status::parse(status).unwrap();
        assert!(!content.contains('\0'));
    }
    pool.close().await;
}
