//! Real MCP clients (rmcp) against the real binary, over stdio and Streamable HTTP: tool
//! listing, the four tools, bad input, malformed JSON-RPC, bearer auth, the stdio→daemon relay,
//! data-dir ownership, and persistence across a clean stop and a SIGKILL.

use crate::common;

use std::process::Stdio;
use std::time::Duration;

use common::{Daemon, call_err, call_ok, http_client, stdio_client, stdio_client_with};
use rmcp::model::CallToolRequestParams;
use serde_json::{Value, json};
use tokio::io::{AsyncBufReadExt, AsyncWriteExt, BufReader};

async fn exercise_tools(client: &common::Client) {
    let tools = client.list_all_tools().await.expect("tools/list");
    let mut names: Vec<_> = tools.iter().map(|t| t.name.to_string()).collect();
    names.sort();
    assert_eq!(
        names,
        [
            "memory_forget",
            "memory_search",
            "memory_write",
            "memory_write_batch"
        ]
    );
    for tool in &tools {
        let description = tool.description.as_deref().unwrap_or_default();
        assert!(
            description.len() > 80,
            "{} needs a real description",
            tool.name
        );
        assert!(
            tool.output_schema.is_some(),
            "{} declares its output schema",
            tool.name
        );
        // Standard JSON Schema: no Rust integer widths as formats, which clients' validators
        // do not know (the TypeScript SDK warns on each call).
        for schema in [
            serde_json::to_value(&tool.input_schema).unwrap(),
            serde_json::to_value(&tool.output_schema).unwrap(),
        ] {
            let odd = hindsight::mcp::schema::nonstandard_formats(&schema);
            assert!(odd.is_empty(), "{}: {odd:?}", tool.name);
        }
    }
    let counts = serde_json::to_value(
        &tools
            .iter()
            .find(|t| t.name == "memory_forget")
            .unwrap()
            .output_schema,
    )
    .unwrap();
    assert_eq!(
        counts["properties"]["forgotten"]["minimum"], 0,
        "unsigned counts keep their bound: {counts}"
    );
    let write_schema = serde_json::to_value(
        &tools
            .iter()
            .find(|t| t.name == "memory_write")
            .unwrap()
            .input_schema,
    )
    .unwrap();
    for field in [
        "content",
        "memory_type",
        "importance",
        "ttl_days",
        "namespace",
        "entity",
        "attribute",
        "source",
        "metadata",
        "occurred_at",
    ] {
        assert!(
            write_schema["properties"].get(field).is_some(),
            "memory_write schema lacks {field}: {write_schema}"
        );
    }
    assert_eq!(write_schema["required"], json!(["content"]));

    let written = call_ok(
        client,
        "memory_write",
        json!({
            "content": "The user keeps their dotfiles in a private GitHub repo",
            "memory_type": "semantic", "importance": 0.8, "namespace": "mcp-test",
            "source": {"conversation": "c-7"}, "metadata": {"tag": "setup"},
            "occurred_at": "2024-05-01T09:30:00+02:00"
        }),
    )
    .await;
    assert_eq!(written["status"], "stored");
    let id = written["memory_id"].as_str().unwrap().to_owned();
    assert_eq!(written["superseded"], json!([]));

    let found = call_ok(
        client,
        "memory_search",
        json!({"query": "where are the dotfiles", "namespace": "mcp-test", "top_k": 3}),
    )
    .await;
    let first = &found["memories"][0];
    assert_eq!(first["id"], json!(id));
    assert_eq!(first["source"], json!({"conversation": "c-7"}));
    assert_eq!(first["memory_type"], "semantic");
    assert_eq!(first["occurred_at"], "2024-05-01T07:30:00Z");
    assert_ne!(first["created_at"], first["occurred_at"]);
    for key in [
        "score",
        "similarity",
        "recency",
        "importance",
        "created_at",
        "namespace",
        "content",
    ] {
        assert!(first.get(key).is_some(), "search hit lacks {key}");
    }

    // Several at once: one result per memory, in order; the repeat merges into the first.
    let batch = call_ok(
        client,
        "memory_write_batch",
        json!({"memories": [
            {"content": "The user's laptop runs NixOS with a tiling window manager",
             "memory_type": "semantic", "namespace": "mcp-batch"},
            {"content": "The user's team ships a release every second Thursday",
             "namespace": "mcp-batch", "importance": 0.7},
            {"content": "the user's laptop runs nixos with a tiling window manager",
             "memory_type": "semantic", "namespace": "mcp-batch"},
        ]}),
    )
    .await;
    let results = batch["results"].as_array().unwrap();
    let statuses: Vec<&str> = results
        .iter()
        .map(|r| r["status"].as_str().unwrap())
        .collect();
    assert_eq!(statuses, ["stored", "stored", "merged"], "{batch}");
    assert_eq!(results[2]["duplicate_of"], results[0]["memory_id"]);
    let found = call_ok(
        client,
        "memory_search",
        json!({"query": "which release cadence does the team ship", "namespace": "mcp-batch", "top_k": 1}),
    )
    .await;
    assert_eq!(found["memories"][0]["id"], results[1]["memory_id"]);

    revisions_say_what_they_did(client).await;

    let forgotten = call_ok(client, "memory_forget", json!({"memory_id": id})).await;
    assert_eq!(forgotten["forgotten"], 1);
    assert_eq!(forgotten["ids"], json!([id]));
    let found = call_ok(
        client,
        "memory_search",
        json!({"query": "where are the dotfiles", "namespace": "mcp-test"}),
    )
    .await;
    assert_eq!(found["memories"], json!([]));
}

/// A changed value or a "not" retires the older memory (kept, deprecated by the newer); a
/// restatement merges; a look-alike that is also true is stored beside it, and the result says
/// which, naming the memory it compared with.
async fn revisions_say_what_they_did(client: &common::Client) {
    let write = |content: &str, namespace: &str, occurred: &str| {
        json!({"content": content, "namespace": namespace, "memory_type": "semantic",
               "occurred_at": occurred})
    };
    let pairs = [
        (
            "The weekly report goes out on Mondays",
            "The weekly report goes out on Wednesdays",
            "update:value",
        ),
        (
            "The user is allergic to penicillin",
            "The user is not allergic to penicillin",
            "update:polarity",
        ),
        (
            "用户的直属领导是刘洋",
            "用户的直属领导是陈静",
            "update:value",
        ),
    ];
    for (i, (older, newer, reason)) in pairs.into_iter().enumerate() {
        let namespace = format!("mcp-revise-{i}");
        let first = call_ok(
            client,
            "memory_write",
            write(older, &namespace, "2024-05-01T09:00:00Z"),
        )
        .await;
        let second = call_ok(
            client,
            "memory_write",
            write(newer, &namespace, "2024-05-04T09:00:00Z"),
        )
        .await;
        assert_eq!(second["status"], "stored", "{second}");
        assert_eq!(second["reason"], reason, "{second}");
        assert_eq!(
            second["superseded"],
            json!([first["memory_id"]]),
            "{second}"
        );
        let found = call_ok(
            client,
            "memory_search",
            json!({"query": older, "namespace": namespace}),
        )
        .await;
        let ids: Vec<&Value> = found["memories"]
            .as_array()
            .unwrap()
            .iter()
            .map(|m| &m["id"])
            .collect();
        assert_eq!(
            ids,
            [&second["memory_id"]],
            "only the newer is found: {found}"
        );
        let all = call_ok(
            client,
            "memory_search",
            json!({"query": older, "namespace": namespace, "include_deprecated": true}),
        )
        .await;
        let retired = all["memories"]
            .as_array()
            .unwrap()
            .iter()
            .find(|m| m["id"] == first["memory_id"])
            .unwrap_or_else(|| panic!("the older is kept: {all}"));
        assert_eq!(retired["status"], "deprecated");
        assert_eq!(retired["deprecated_by"], second["memory_id"]);
    }

    let first = call_ok(
        client,
        "memory_write",
        write("Ana's mentor is Raj", "mcp-apart", "2024-05-01T09:00:00Z"),
    )
    .await;
    let other = call_ok(
        client,
        "memory_write",
        write("Ben's mentor is Raj", "mcp-apart", "2024-05-02T09:00:00Z"),
    )
    .await;
    assert_eq!(other["status"], "stored", "{other}");
    assert_eq!(other["superseded"], json!([]), "{other}");
    if other.get("look_alike").is_some() {
        assert_eq!(other["look_alike"], first["memory_id"]);
        assert_eq!(other["reason"], "distinct:other_subject");
    }
    let again = call_ok(
        client,
        "memory_write",
        write("ana's mentor is Raj.", "mcp-apart", "2024-05-03T09:00:00Z"),
    )
    .await;
    assert_eq!(again["status"], "merged", "{again}");
    assert_eq!(again["duplicate_of"], first["memory_id"]);
}

#[tokio::test]
async fn tools_work_over_stdio() {
    let dir = tempfile::tempdir().unwrap();
    let client = stdio_client(dir.path()).await;
    let info = client.peer_info().expect("server info");
    assert_eq!(
        info.server_info.as_ref().map(|i| i.name.as_str()),
        Some("hindsight")
    );
    exercise_tools(&client).await;
    client.cancel().await.unwrap();
}

/// Agents are told the rules in force: a daemon configured with another importance floor,
/// TTL, dedup threshold and weights says so in its instructions and tool descriptions (they
/// once hard-coded the defaults).
#[tokio::test]
async fn tools_tell_agents_the_rules_in_force() {
    let dir = tempfile::tempdir().unwrap();
    let client = stdio_client_with(
        dir.path(),
        &[
            ("HINDSIGHT_MIN_IMPORTANCE", "0.45"),
            ("HINDSIGHT_WORKING_TTL_HOURS", "72"),
            ("HINDSIGHT_DEDUP_THRESHOLD", "0.95"),
            ("HINDSIGHT_WEIGHT_SIMILARITY", "0.6"),
            ("HINDSIGHT_WEIGHT_RECENCY", "0.3"),
        ],
    )
    .await;
    let instructions = client
        .peer_info()
        .and_then(|i| i.instructions.clone())
        .expect("instructions");
    assert!(
        instructions.contains("expires after 72 h"),
        "{instructions}"
    );
    assert!(!instructions.contains("24 h"), "{instructions}");
    let tools = client.list_all_tools().await.expect("tools/list");
    let description = |name: &str| {
        tools
            .iter()
            .find(|t| t.name == name)
            .and_then(|t| t.description.as_deref())
            .unwrap_or_default()
            .to_owned()
    };
    let write = description("memory_write");
    assert!(
        write.contains("Importance below 0.45 is skipped"),
        "{write}"
    );
    assert!(write.contains("cosine above 0.95"), "{write}");
    assert!(write.contains("after 72 h"), "{write}");
    let search = description("memory_search");
    assert!(
        search.contains("0.6·relevance + 0.3·recency + 0.1·importance"),
        "{search}"
    );
    // And the rule is the one applied: importance 0.4 is below the floor.
    let skipped = call_ok(
        &client,
        "memory_write",
        json!({"content": "a passing remark", "importance": 0.4}),
    )
    .await;
    assert_eq!(skipped["status"], "skipped");
    client.cancel().await.unwrap();
}

#[tokio::test]
async fn tools_work_over_http_with_bearer_auth_and_healthz() {
    let dir = tempfile::tempdir().unwrap();
    let token = "test-token-0123456789abcdef";
    let daemon = Daemon::start(dir.path(), &[("HINDSIGHT_AUTH_TOKEN", token)]).await;
    assert_eq!(
        daemon.endpoint.token.as_ref().map(|t| t.expose()),
        Some(token)
    );
    let http = reqwest::Client::new();

    let health = http
        .get(format!("{}/healthz", daemon.base_url()))
        .send()
        .await
        .unwrap();
    assert_eq!(health.status(), 200);
    assert_eq!(health.json::<Value>().await.unwrap()["status"], "ok");

    let unauthorized = http
        .post(&daemon.endpoint.url)
        .header("content-type", "application/json")
        .header("accept", "application/json, text/event-stream")
        .body(r#"{"jsonrpc":"2.0","id":1,"method":"tools/list"}"#)
        .send()
        .await
        .unwrap();
    assert_eq!(unauthorized.status(), 401);
    let wrong = http
        .post(&daemon.endpoint.url)
        .bearer_auth("wrong-token-0123456789")
        .header("content-type", "application/json")
        .body("{}")
        .send()
        .await
        .unwrap();
    assert_eq!(wrong.status(), 401);
    // The scheme is case-insensitive (RFC 9110): `bearer` and `BEARER` are the same token.
    for scheme in ["bearer", "BEARER", "Bearer"] {
        let response = http
            .get(format!("{}/metrics", daemon.base_url()))
            .header("authorization", format!("{scheme} {token}"))
            .send()
            .await
            .unwrap();
        assert_eq!(response.status(), 200, "{scheme}");
        let response = http
            .get(format!("{}/metrics", daemon.base_url()))
            .header("authorization", format!("{scheme} not-{token}"))
            .send()
            .await
            .unwrap();
        assert_eq!(response.status(), 401, "{scheme} with a wrong token");
    }

    let client = http_client(&daemon.endpoint).await;
    exercise_tools(&client).await;
    client.cancel().await.unwrap();
    assert!(daemon.stop().await.success(), "clean exit on SIGTERM");
}

async fn bad_input_is_refused(client: &common::Client) {
    let cases: &[(&str, Value, &str)] = &[
        (
            "memory_write",
            json!({"content": "x", "importance": 1.5}),
            "importance",
        ),
        (
            "memory_write",
            json!({"content": "x", "importance": "high"}),
            "importance",
        ),
        (
            "memory_write",
            json!({"content": "x", "memory_type": "fact"}),
            "memory_type",
        ),
        (
            "memory_write",
            json!({"content": "x".repeat(8_001)}),
            "content",
        ),
        ("memory_write", json!({"importance": 0.9}), "content"),
        (
            "memory_write",
            json!({"content": "x", "colour": "red"}),
            "colour",
        ),
        (
            "memory_write",
            json!({"content": "x", "namespace": "has space"}),
            "namespace",
        ),
        (
            "memory_write",
            json!({"content": "x", "metadata": [1, 2]}),
            "metadata",
        ),
        (
            "memory_write",
            json!({"content": "x", "ttl_days": 0}),
            "ttl_days",
        ),
        (
            "memory_write",
            json!({"content": "x", "attribute": "city"}),
            "attribute",
        ),
        (
            "memory_write",
            json!({"content": "x", "occurred_at": "2999-01-01T00:00:00Z"}),
            "occurred_at",
        ),
        ("memory_search", json!({"query": "x", "top_k": 0}), "top_k"),
        ("memory_search", json!({"query": "x", "top_k": 51}), "top_k"),
        ("memory_search", json!({"query": ""}), "query"),
        (
            "memory_search",
            json!({"query": "x", "memory_types": ["facts"]}),
            "memory_types",
        ),
        (
            "memory_search",
            json!({"query": "x", "time_range": {"from": "last week"}}),
            "time_range.from",
        ),
        ("memory_write_batch", json!({}), "memories"),
        (
            "memory_write_batch",
            json!({"memories": [{"content": "fine"}, {"content": "x", "importance": 2}]}),
            "memories[1].importance",
        ),
        (
            "memory_write_batch",
            json!({"memories": [{"content": "fine"}, {"text": "x"}]}),
            "memories[1]",
        ),
        ("memory_forget", json!({}), "memory_id"),
        (
            "memory_forget",
            json!({"memory_id": "not-a-uuid"}),
            "memory_id",
        ),
        (
            "memory_forget",
            json!({"filter": {"memory_type": "episodic"}}),
            "namespace",
        ),
    ];
    for (tool, args, field) in cases {
        let message = call_err(client, tool, args.clone()).await;
        assert!(
            message.contains(field),
            "{tool} {args}: error should name `{field}`: {message}"
        );
    }
    // Unknown tool: a JSON-RPC error, and the server keeps serving.
    let unknown = client
        .call_tool(CallToolRequestParams::new("memory_explode").with_arguments(Default::default()))
        .await;
    assert!(unknown.is_err(), "unknown tool must fail");
    // Nothing was written by any of the above.
    let found = call_ok(client, "memory_search", json!({"query": "x", "top_k": 50})).await;
    assert_eq!(found["memories"], json!([]));
    let ok = call_ok(
        client,
        "memory_write",
        json!({"content": "still serving after bad input"}),
    )
    .await;
    assert_eq!(ok["status"], "stored");
}

#[tokio::test]
async fn bad_input_over_stdio_gives_tool_errors_naming_the_field() {
    let dir = tempfile::tempdir().unwrap();
    let client = stdio_client(dir.path()).await;
    bad_input_is_refused(&client).await;
    client.cancel().await.unwrap();
}

#[tokio::test]
async fn bad_input_over_http_gives_tool_errors_naming_the_field() {
    let dir = tempfile::tempdir().unwrap();
    let daemon = Daemon::start(dir.path(), &[]).await;
    let client = http_client(&daemon.endpoint).await;
    bad_input_is_refused(&client).await;
    client.cancel().await.unwrap();

    // Malformed JSON-RPC bodies are refused without hurting the daemon.
    let http = reqwest::Client::new();
    for body in ["{not json", r#"{"jsonrpc":"2.0"}"#, "[]"] {
        let response = http
            .post(&daemon.endpoint.url)
            .header("content-type", "application/json")
            .header("accept", "application/json, text/event-stream")
            .body(body)
            .send()
            .await
            .unwrap();
        assert!(
            response.status().is_client_error(),
            "{body}: {}",
            response.status()
        );
    }
    let health = http
        .get(format!("{}/healthz", daemon.base_url()))
        .send()
        .await
        .unwrap();
    assert_eq!(health.status(), 200);
}

#[tokio::test]
async fn malformed_json_rpc_over_stdio_does_not_kill_the_server() {
    let dir = tempfile::tempdir().unwrap();
    let mut child = tokio::process::Command::new(common::binary())
        .arg("mcp")
        .arg("--data-dir")
        .arg(dir.path())
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::inherit())
        .kill_on_drop(true)
        .spawn()
        .unwrap();
    let mut stdin = child.stdin.take().unwrap();
    let mut lines = BufReader::new(child.stdout.take().unwrap()).lines();
    let mut send = async |line: &str| {
        stdin.write_all(line.as_bytes()).await.unwrap();
        stdin.write_all(b"\n").await.unwrap();
        stdin.flush().await.unwrap();
    };
    send("this is not json").await;
    send(r#"{"jsonrpc":"2.0","id":"x","method":"initialize"}"#).await; // params missing
    send(r#"{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"raw","version":"0"}}}"#).await;
    // Error replies to the garbage may come first; every line must still be JSON-RPC.
    loop {
        let line = tokio::time::timeout(Duration::from_secs(30), lines.next_line())
            .await
            .expect("server answers within 30 s")
            .unwrap()
            .expect("server still running after garbage");
        let message: Value = serde_json::from_str(&line).expect("stdout carries only JSON-RPC");
        if message["id"] == 1 {
            assert_eq!(message["result"]["serverInfo"]["name"], "hindsight");
            break;
        }
    }
    send(r#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#).await;
    send(r#"{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"memory_write","arguments":{"content":"raw stdio write","importance":0.9}}}"#).await;
    let line = tokio::time::timeout(Duration::from_secs(30), lines.next_line())
        .await
        .unwrap()
        .unwrap()
        .unwrap();
    let message: Value = serde_json::from_str(&line).unwrap();
    assert_eq!(message["id"], 2);
    assert_eq!(message["result"]["structuredContent"]["status"], "stored");
    let _ = child.kill().await;
}

#[tokio::test]
async fn stdio_relays_to_the_daemon_that_owns_the_data_dir() {
    let dir = tempfile::tempdir().unwrap();
    let daemon = Daemon::start(dir.path(), &[]).await;
    let relayed = stdio_client(dir.path()).await;
    let written = call_ok(
        &relayed,
        "memory_write",
        json!({"content": "Written through the stdio relay", "importance": 0.7}),
    )
    .await;
    assert_eq!(written["status"], "stored");

    let direct = http_client(&daemon.endpoint).await;
    assert_eq!(
        common::top_hit_id(&direct, json!({"query": "stdio relay"})).await,
        written["memory_id"]
    );
    relayed.cancel().await.unwrap();
    direct.cancel().await.unwrap();

    // The daemon still owns the dir: a second daemon refuses to start, naming the owner.
    let output = tokio::process::Command::new(common::binary())
        .args(["serve", "--listen", "127.0.0.1:0", "--data-dir"])
        .arg(dir.path())
        .output()
        .await
        .unwrap();
    assert!(!output.status.success());
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(
        stderr.contains("in use") && stderr.contains(&daemon.endpoint.pid.to_string()),
        "{stderr}"
    );
}

#[tokio::test]
async fn a_second_stdio_server_relays_to_the_first() {
    let dir = tempfile::tempdir().unwrap();
    let first = stdio_client(dir.path()).await;
    // The first now owns the dir and publishes a private endpoint with a random token.
    let endpoint = loop {
        if let Some(e) = hindsight::lock::read_endpoint(dir.path()) {
            break e;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    };
    assert_eq!(endpoint.mode, "mcp");
    assert!(
        endpoint
            .token
            .as_ref()
            .map(|t| t.expose())
            .is_some_and(|t| t.len() >= 32)
    );
    let second = stdio_client(dir.path()).await;
    let written = call_ok(
        &second,
        "memory_write",
        json!({"content": "Cursor and Claude Desktop share one memory", "importance": 0.6}),
    )
    .await;
    assert_eq!(
        common::top_hit_id(&first, json!({"query": "share one memory"})).await,
        written["memory_id"]
    );
    second.cancel().await.unwrap();
    first.cancel().await.unwrap();
}

#[tokio::test]
async fn memories_survive_a_clean_stop_and_a_sigkill() {
    let dir = tempfile::tempdir().unwrap();
    let daemon = Daemon::start(dir.path(), &[]).await;
    let client = http_client(&daemon.endpoint).await;
    let clean = call_ok(
        &client,
        "memory_write",
        json!({"content": "Survives a clean restart", "importance": 0.7}),
    )
    .await;
    client.cancel().await.unwrap();
    assert!(daemon.stop().await.success());

    let daemon = Daemon::start(dir.path(), &[]).await;
    let client = http_client(&daemon.endpoint).await;
    assert_eq!(
        common::top_hit_id(&client, json!({"query": "survives a clean restart"})).await,
        clean["memory_id"]
    );
    // Killed right after the write: the index had no time to flush.
    let crashed = call_ok(
        &client,
        "memory_write",
        json!({"content": "Survives kill -9 right after the write", "importance": 0.7}),
    )
    .await;
    client.cancel().await.unwrap();
    daemon.crash().await;

    let daemon = Daemon::start(dir.path(), &[]).await;
    let client = http_client(&daemon.endpoint).await;
    assert_eq!(
        common::top_hit_id(
            &client,
            json!({"query": "survives kill -9 right after the write"})
        )
        .await,
        crashed["memory_id"]
    );
    assert_eq!(
        common::top_hit_id(&client, json!({"query": "survives a clean restart"})).await,
        clean["memory_id"]
    );
    client.cancel().await.unwrap();
}

#[tokio::test]
async fn cli_commands_go_through_the_running_daemon() {
    let dir = tempfile::tempdir().unwrap();
    let daemon = Daemon::start(dir.path(), &[]).await;
    let run = |args: Vec<&str>| {
        let mut command = std::process::Command::new(common::binary());
        command.args(args).arg("--data-dir").arg(dir.path());
        command
    };
    let output = run(vec![
        "memory",
        "write",
        "Written by the CLI while the daemon runs",
        "--importance",
        "0.8",
    ])
    .output()
    .unwrap();
    assert!(
        output.status.success(),
        "{}",
        String::from_utf8_lossy(&output.stderr)
    );
    let written: Value = serde_json::from_slice(&output.stdout).unwrap();
    assert_eq!(written["status"], "stored");

    let client = http_client(&daemon.endpoint).await;
    assert_eq!(
        common::top_hit_id(&client, json!({"query": "written by the CLI"})).await,
        written["memory_id"]
    );
    client.cancel().await.unwrap();

    let output = run(vec![
        "memory",
        "get",
        written["memory_id"].as_str().unwrap(),
    ])
    .output()
    .unwrap();
    assert!(output.status.success());
    let row: Value = serde_json::from_slice(&output.stdout).unwrap();
    assert_eq!(row["content"], "Written by the CLI while the daemon runs");

    let output = run(vec!["stats"]).output().unwrap();
    let stats: Value = serde_json::from_slice(&output.stdout).unwrap();
    assert_eq!(stats["total"], 1);

    // Search and forget go to the daemon too (its index holds the vectors).
    let output = run(vec!["memory", "search", "written by the CLI"])
        .output()
        .unwrap();
    assert!(output.status.success());
    let found: Value = serde_json::from_slice(&output.stdout).unwrap();
    assert_eq!(found["memories"][0]["id"], written["memory_id"], "{found}");
    let unknown = uuid::Uuid::now_v7().to_string();
    let output = run(vec!["memory", "get", &unknown]).output().unwrap();
    assert!(!output.status.success());
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(
        stderr.contains("no memory with id") && stderr.contains("404"),
        "{stderr}"
    );
    let output = run(vec![
        "memory",
        "forget",
        "--id",
        written["memory_id"].as_str().unwrap(),
    ])
    .output()
    .unwrap();
    assert!(output.status.success());
    let forgotten: Value = serde_json::from_slice(&output.stdout).unwrap();
    assert_eq!(forgotten["forgotten"], 1, "{forgotten}");
    let output = run(vec!["memory", "search", "written by the CLI"])
        .output()
        .unwrap();
    let found: Value = serde_json::from_slice(&output.stdout).unwrap();
    assert_eq!(found["memories"], json!([]), "{found}");

    let output = run(vec!["memory", "write", "bad", "--importance", "2"])
        .output()
        .unwrap();
    assert!(!output.status.success());
    assert!(String::from_utf8_lossy(&output.stderr).contains("importance"));

    let output = run(vec!["reindex"]).output().unwrap();
    assert!(
        !output.status.success(),
        "reindex needs the data dir to itself"
    );
    assert!(String::from_utf8_lossy(&output.stderr).contains("in use"));
}
