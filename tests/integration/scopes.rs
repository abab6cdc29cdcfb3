//! Tokens with namespace scopes, against the real daemon: for the REST API and MCP over HTTP,
//! each of write / search / get / forget-by-id / forget-by-filter / review inside and outside
//! an agent token's scopes is allowed or refused (403, or a tool error naming the scope), and a
//! refused call changes nothing. The operator's routes refuse agents; a revoked or unknown
//! token is a 401. (The CLI and the stdio owner act as the operator: `tests/integration/mcp.rs`.)

use crate::common;

use common::Daemon;
use hindsight::secret::Secret;
use reqwest::StatusCode;
use serde_json::{Value, json};

const OPERATOR: &str = "operator-token-for-the-scope-tests";

struct Api {
    http: reqwest::Client,
    base: String,
}

impl Api {
    async fn call(
        &self,
        token: &str,
        method: &str,
        path: &str,
        body: Value,
    ) -> (StatusCode, Value) {
        let url = format!("{}{path}", self.base);
        let request = match method {
            "GET" => self.http.get(&url),
            _ => self.http.post(&url).json(&body),
        };
        let response = request.bearer_auth(token).send().await.unwrap();
        let status = response.status();
        let value = response.json().await.unwrap_or(Value::Null);
        (status, value)
    }

    async fn ok(&self, token: &str, method: &str, path: &str, body: Value) -> Value {
        let (status, value) = self.call(token, method, path, body).await;
        assert_eq!(status, StatusCode::OK, "{method} {path}: {value}");
        value
    }

    async fn refused(&self, token: &str, method: &str, path: &str, body: Value) -> String {
        let (status, value) = self.call(token, method, path, body).await;
        assert_eq!(status, StatusCode::FORBIDDEN, "{method} {path}: {value}");
        value["error"].as_str().unwrap_or_default().to_owned()
    }

    /// The operator's view of one namespace: how many active memories it holds.
    async fn count(&self, namespace: &str) -> usize {
        let found = self
            .ok(
                OPERATOR,
                "POST",
                "/api/memories/search",
                json!({"query": "note rule secret plan", "namespace": namespace, "top_k": 50}),
            )
            .await;
        found["memories"].as_array().unwrap().len()
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn each_call_is_held_to_the_tokens_scopes_on_every_transport() {
    let data = tempfile::tempdir().unwrap();
    let jobs = tempfile::tempdir().unwrap();
    let daemon = Daemon::start(
        data.path(),
        &[
            ("HINDSIGHT_AUTH_TOKEN", OPERATOR),
            ("HINDSIGHT_JOBS_DIR", jobs.path().to_str().unwrap()),
        ],
    )
    .await;
    let api = Api {
        http: reqwest::Client::new(),
        base: daemon.base_url(),
    };

    // The operator gives out two tokens.
    let writer = api
        .ok(
            OPERATOR,
            "POST",
            "/admin/tokens",
            json!({"name": "writer-agent", "grants": {
                "read": ["global", "team/analytics", "private/writer-agent"],
                "write": ["team/analytics", "private/writer-agent"],
                "review": ["team/analytics"]}}),
        )
        .await;
    let writer = writer["secret"].as_str().unwrap().to_owned();
    let other = api
        .ok(
            OPERATOR,
            "POST",
            "/admin/tokens",
            json!({"name": "other-agent", "grants": {
                "read": ["private/other-agent"], "write": ["private/other-agent"]}}),
        )
        .await;
    let other = other["secret"].as_str().unwrap().to_owned();
    let listed = api.ok(OPERATOR, "GET", "/admin/tokens", json!({})).await;
    assert_eq!(listed.as_array().unwrap().len(), 2);
    assert!(!listed.to_string().contains(&writer), "no secret is listed");

    // What is there: one memory per tier, written by the operator.
    let mut ids = std::collections::HashMap::new();
    for (namespace, text) in [
        ("private/other-agent", "The other agent's secret plan"),
        ("team/analytics", "The analytics team note on churn"),
        ("global", "The global rule: cite data sources"),
    ] {
        let stored = api
            .ok(
                OPERATOR,
                "POST",
                "/api/memories",
                json!({"content": text, "namespace": namespace, "importance": 0.8}),
            )
            .await;
        ids.insert(namespace, stored["memory_id"].as_str().unwrap().to_owned());
    }

    // REST, inside the scopes.
    api.ok(
        &writer,
        "POST",
        "/api/memories",
        json!({"content": "Writer's own note", "namespace": "private/writer-agent"}),
    )
    .await;
    let found = api
        .ok(
            &writer,
            "POST",
            "/api/memories/search",
            json!({"query": "churn note", "namespace": "team/analytics"}),
        )
        .await;
    assert_eq!(found["memories"][0]["id"], json!(ids["team/analytics"]));
    api.ok(
        &writer,
        "GET",
        &format!("/api/memories/{}", ids["global"]),
        json!({}),
    )
    .await;

    // Naming no namespace, an agent searches every one it may read, ranked together, each hit
    // naming its own; never another agent's private one.
    let everywhere = api
        .ok(
            &writer,
            "POST",
            "/api/memories/search",
            json!({"query": "secret plan note rule churn", "top_k": 20}),
        )
        .await;
    let mut seen: Vec<&str> = everywhere["memories"]
        .as_array()
        .unwrap()
        .iter()
        .map(|m| m["namespace"].as_str().unwrap())
        .collect();
    seen.sort();
    seen.dedup();
    assert_eq!(
        seen,
        ["global", "private/writer-agent", "team/analytics"],
        "{everywhere}"
    );
    // Listing them is the same; listing another's is refused.
    api.ok(
        &writer,
        "POST",
        "/api/memories/search",
        json!({"query": "note", "namespaces": ["global", "team/analytics"]}),
    )
    .await;
    api.refused(
        &writer,
        "POST",
        "/api/memories/search",
        json!({"query": "plan", "namespaces": ["global", "private/other-agent"]}),
    )
    .await;
    // A pattern scope covers the namespaces it matches.
    let teams = api
        .ok(
            OPERATOR,
            "POST",
            "/admin/tokens",
            json!({"name": "team-reader", "grants": {"read": ["team/*"]}}),
        )
        .await;
    let teams = teams["secret"].as_str().unwrap().to_owned();
    let found = api
        .ok(
            &teams,
            "POST",
            "/api/memories/search",
            json!({"query": "secret plan note rule churn", "top_k": 20}),
        )
        .await;
    let namespaces: Vec<&str> = found["memories"]
        .as_array()
        .unwrap()
        .iter()
        .map(|m| m["namespace"].as_str().unwrap())
        .collect();
    assert!(
        !namespaces.is_empty() && namespaces.iter().all(|n| *n == "team/analytics"),
        "{found}"
    );

    // REST, outside: refused, naming the scope, and nothing changes.
    let before = api.count("private/other-agent").await;
    let error = api
        .refused(
            &writer,
            "POST",
            "/api/memories",
            json!({"content": "Planted by the writer", "namespace": "private/other-agent"}),
        )
        .await;
    assert!(
        error.contains("writer-agent")
            && error.contains("private/other-agent")
            && error.contains("write scopes"),
        "{error}"
    );
    api.refused(
        &writer,
        "POST",
        "/api/memories",
        json!({"content": "Planted in global", "namespace": "global"}),
    )
    .await;
    // A batch with one memory outside the scopes is refused whole, its others too.
    let own = api.count("private/writer-agent").await;
    let error = api
        .refused(
            &writer,
            "POST",
            "/api/memories/batch",
            json!({"memories": [
                {"content": "Writer's second note on the rollout", "namespace": "private/writer-agent"},
                {"content": "Planted by a batch", "namespace": "private/other-agent"},
            ]}),
        )
        .await;
    assert!(error.contains("private/other-agent"), "{error}");
    assert_eq!(api.count("private/writer-agent").await, own);
    let batch = api
        .ok(
            &writer,
            "POST",
            "/api/memories/batch",
            json!({"memories": [
                {"content": "Writer's second note on the rollout", "namespace": "private/writer-agent"},
            ]}),
        )
        .await;
    assert_eq!(batch["results"][0]["status"], json!("stored"), "{batch}");
    assert_eq!(api.count("private/writer-agent").await, own + 1);
    api.refused(
        &writer,
        "POST",
        "/api/memories/search",
        json!({"query": "secret plan", "namespace": "private/other-agent"}),
    )
    .await;
    api.refused(
        &writer,
        "GET",
        &format!("/api/memories/{}", ids["private/other-agent"]),
        json!({}),
    )
    .await;
    api.refused(
        &writer,
        "POST",
        "/api/memories/forget",
        json!({"memory_id": ids["private/other-agent"], "hard": true}),
    )
    .await;
    api.refused(
        &writer,
        "POST",
        "/api/memories/forget",
        json!({"filter": {"namespace": "private/other-agent"}}),
    )
    .await;
    // Read is not write: global is readable, not forgettable.
    api.refused(
        &writer,
        "POST",
        "/api/memories/forget",
        json!({"memory_id": ids["global"]}),
    )
    .await;
    assert_eq!(api.count("private/other-agent").await, before);
    assert_eq!(api.count("global").await, 1);
    // Stats show only what the token may read.
    let stats = api.ok(&writer, "GET", "/api/stats", json!({})).await;
    assert!(
        !stats.to_string().contains("private/other-agent"),
        "{stats}"
    );
    assert!(stats.to_string().contains("team/analytics"), "{stats}");

    // The operator's routes.
    for (method, path) in [
        ("GET", "/metrics"),
        ("GET", "/admin/jobs"),
        ("GET", "/admin/jobs/history"),
        ("POST", "/admin/jobs/expire/run"),
        ("POST", "/admin/archive/purge"),
        ("GET", "/admin/tokens"),
        ("POST", "/admin/tokens/other-agent/revoke"),
    ] {
        api.refused(&writer, method, path, json!({})).await;
    }
    api.refused(
        &writer,
        "POST",
        "/admin/tokens",
        json!({"name": "escalated", "operator": true}),
    )
    .await;

    // MCP over HTTP: the same rules, as tool errors.
    let mut endpoint = daemon.endpoint.clone();
    endpoint.token = Some(Secret::new(writer.clone()));
    let client = common::http_client(&endpoint).await;
    common::call_ok(
        &client,
        "memory_write",
        json!({"content": "Written over MCP by the writer", "namespace": "team/analytics"}),
    )
    .await;
    let error = common::call_err(
        &client,
        "memory_write",
        json!({"content": "Planted over MCP", "namespace": "private/other-agent"}),
    )
    .await;
    assert!(error.contains("may not write"), "{error}");
    let error = common::call_err(
        &client,
        "memory_search",
        json!({"query": "secret plan", "namespace": "private/other-agent"}),
    )
    .await;
    assert!(error.contains("may not read"), "{error}");
    let error = common::call_err(
        &client,
        "memory_forget",
        json!({"memory_id": ids["private/other-agent"], "hard": true}),
    )
    .await;
    assert!(error.contains("may not write"), "{error}");
    let error = common::call_err(
        &client,
        "memory_forget",
        json!({"filter": {"namespace": "private/other-agent"}}),
    )
    .await;
    assert!(error.contains("may not write"), "{error}");
    assert_eq!(api.count("private/other-agent").await, before);
    // Inside its write scope, a forget by id works.
    let own = common::call_ok(
        &client,
        "memory_write",
        json!({"content": "A scratch note to forget", "namespace": "private/writer-agent"}),
    )
    .await;
    let forgotten = common::call_ok(
        &client,
        "memory_forget",
        json!({"memory_id": own["memory_id"]}),
    )
    .await;
    assert_eq!(forgotten["forgotten"], json!(1));
    client.cancel().await.unwrap();

    // Review: a candidate of team/analytics, drafted by the distill job.
    for text in common::ALIKE_EPISODES {
        api.ok(
            OPERATOR,
            "POST",
            "/api/memories",
            json!({"content": text, "memory_type": "episodic", "namespace": "team/analytics"}),
        )
        .await;
    }
    let run = api
        .ok(OPERATOR, "POST", "/admin/jobs/distill/run", json!({}))
        .await;
    assert_eq!(run["stats"]["candidates_created"], json!(1), "{run}");
    let listed = api
        .ok(
            &writer,
            "GET",
            "/api/candidates?namespace=team/analytics",
            json!({}),
        )
        .await;
    let candidate = listed["candidates"][0]["id"].as_str().unwrap().to_owned();
    // The other agent reviews nothing: its listing is empty, a decision refused.
    let theirs = api.ok(&other, "GET", "/api/candidates", json!({})).await;
    assert_eq!(theirs["candidates"], json!([]), "{theirs}");
    api.refused(
        &other,
        "GET",
        "/api/candidates?namespace=team/analytics",
        json!({}),
    )
    .await;
    api.refused(
        &other,
        "POST",
        &format!("/api/candidates/{candidate}/approve"),
        json!({}),
    )
    .await;
    api.refused(
        &other,
        "GET",
        &format!("/api/candidates/{candidate}"),
        json!({}),
    )
    .await;
    let pending = api
        .ok(
            OPERATOR,
            "GET",
            &format!("/api/candidates/{candidate}"),
            json!({}),
        )
        .await;
    assert_eq!(pending["status"], json!("pending"));
    // The writer may review it; the decision is recorded under its token's name.
    let rejected = api
        .ok(
            &writer,
            "POST",
            &format!("/api/candidates/{candidate}/reject"),
            json!({"note": "not a rule", "reviewer": "someone else"}),
        )
        .await;
    assert_eq!(rejected["status"], json!("rejected"));
    assert_eq!(rejected["reviewer"], json!("writer-agent"));

    // The audit trail: who did what, allowed or refused, and never the content.
    let trail = api
        .ok(OPERATOR, "GET", "/admin/audit?limit=1000", json!({}))
        .await;
    let entries = trail.as_array().unwrap();
    let has = |actor: &str, action: &str, namespace: &str, outcome: &str| {
        entries.iter().any(|e| {
            e["actor"] == json!(actor)
                && e["action"] == json!(action)
                && e["namespace"] == json!(namespace)
                && e["outcome"] == json!(outcome)
        })
    };
    assert!(
        has("writer-agent", "write", "private/writer-agent", "stored"),
        "{trail}"
    );
    assert!(
        has("writer-agent", "write", "private/other-agent", "refused"),
        "{trail}"
    );
    assert!(
        has("writer-agent", "forget", "private/other-agent", "refused"),
        "{trail}"
    );
    assert!(
        has("writer-agent", "forget", "private/writer-agent", "ok"),
        "{trail}"
    );
    assert!(
        has("writer-agent", "reject", "team/analytics", "ok"),
        "{trail}"
    );
    let by = |actor: &str, action: &str| {
        entries
            .iter()
            .filter(|e| e["actor"] == json!(actor) && e["action"] == json!(action))
            .collect::<Vec<_>>()
    };
    assert_eq!(by("other-agent", "approve")[0]["outcome"], json!("refused"));
    assert_eq!(
        by("operator", "token_create")[0]["detail"],
        json!("writer-agent")
    );
    for content in ["secret plan", "Planted", "churn", "scratch note"] {
        assert!(
            !trail.to_string().contains(content),
            "{content} in the audit trail"
        );
    }
    api.refused(&writer, "GET", "/admin/audit", json!({})).await;

    // Revoked and unknown tokens are not let in.
    api.ok(
        OPERATOR,
        "POST",
        "/admin/tokens/writer-agent/revoke",
        json!({}),
    )
    .await;
    let (status, _) = api
        .call(
            &writer,
            "POST",
            "/api/memories/search",
            json!({"query": "x"}),
        )
        .await;
    assert_eq!(status, StatusCode::UNAUTHORIZED);
    let (status, _) = api
        .call("hs_not-a-token", "GET", "/api/stats", json!({}))
        .await;
    assert_eq!(status, StatusCode::UNAUTHORIZED);
    assert!(daemon.stop().await.success());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_fresh_daemon_wants_a_token_and_its_own_machine_has_it() {
    let data = tempfile::tempdir().unwrap();
    let jobs = tempfile::tempdir().unwrap();
    let daemon = Daemon::start(data.path(), &[]).await;
    let http = reqwest::Client::new();
    let base = daemon.base_url();

    // Nothing but the health check answers without a token.
    let open = http.get(format!("{base}/api/stats")).send().await.unwrap();
    assert_eq!(open.status(), StatusCode::UNAUTHORIZED);
    let health = http.get(format!("{base}/healthz")).send().await.unwrap();
    assert_eq!(health.status(), StatusCode::OK);

    // The operator token was created in the data dir, for the owner only, and published to
    // this machine's CLI and relays in the endpoint file.
    let path = hindsight::auth::operator_token_path(data.path());
    let token = std::fs::read_to_string(&path).unwrap();
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        let mode = std::fs::metadata(&path).unwrap().permissions().mode();
        assert_eq!(mode & 0o777, 0o600, "{}", path.display());
    }
    assert_eq!(
        daemon
            .endpoint
            .token
            .as_ref()
            .map(|t| t.expose().to_owned()),
        Some(token.trim().to_owned())
    );
    let authed = http
        .get(format!("{base}/api/stats"))
        .bearer_auth(token.trim())
        .send()
        .await
        .unwrap();
    assert_eq!(authed.status(), StatusCode::OK);

    // The CLI goes through the daemon with it, and so does a stdio relay.
    let (ok, out, err) = common::cli_with(
        data.path(),
        jobs.path(),
        &[],
        &[
            "memory",
            "write",
            "Written from the shell",
            "--importance",
            "0.8",
        ],
    );
    assert!(ok, "{err}");
    assert!(out.contains("stored"), "{out}");
    let relay = common::stdio_client(data.path()).await;
    let found = common::call_ok(
        &relay,
        "memory_search",
        json!({"query": "written from the shell"}),
    )
    .await;
    assert_eq!(
        found["memories"][0]["content"],
        json!("Written from the shell")
    );
    relay.cancel().await.unwrap();
    assert!(daemon.stop().await.success());

    // The same token at the next start.
    let again = Daemon::start(data.path(), &[]).await;
    assert_eq!(
        again.endpoint.token.as_ref().map(|t| t.expose().to_owned()),
        Some(token.trim().to_owned())
    );
    assert!(again.stop().await.success());

    // `auth = "none"`: today's open loopback daemon, for those who ask for it.
    let none = tempfile::tempdir().unwrap();
    let open = Daemon::start(none.path(), &[("HINDSIGHT_AUTH", "none")]).await;
    let stats = http
        .get(format!("{}/api/stats", open.base_url()))
        .send()
        .await
        .unwrap();
    assert_eq!(stats.status(), StatusCode::OK);
    assert!(!hindsight::auth::operator_token_path(none.path()).exists());
    assert!(open.stop().await.success());
}
