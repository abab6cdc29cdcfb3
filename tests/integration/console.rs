//! The operator console's routes against the real daemon: a session is needed everywhere but
//! the login page and the assets; every form post needs the session's CSRF token (and the
//! guard's Origin rule still holds); decisions answer 404/409/400 as the API does; what a page
//! does is what the API then shows. The browser-driven walk is `tests/integration/console_browser.rs`.

use crate::common;

use common::console::{Browser, TOKEN, api_get, pending, seeded_daemon};
use serde_json::{Value, json};

fn assert_page(page: &common::console::Page, status: u16, context: &str) {
    assert_eq!(page.status, status, "{context}: {}", page.body);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn console_routes_need_a_session_and_a_csrf_token_and_answer_like_the_api() {
    let data = tempfile::tempdir().unwrap();
    let jobs = tempfile::tempdir().unwrap();
    let daemon = seeded_daemon(data.path(), jobs.path()).await;
    let base = daemon.base_url();
    let api = reqwest::Client::new();
    let candidates = pending(&base).await;
    assert_eq!(candidates.len(), 2);
    let first = candidates[0]["id"].as_str().unwrap().to_owned();
    let second = candidates[1]["id"].as_str().unwrap().to_owned();

    // Without a session: pages send the browser to the login page, posts are refused, and
    // nothing changes. The login page and the assets need none.
    let mut anonymous = Browser::new(&base);
    for path in [
        "/ui",
        "/ui/review",
        "/ui/memories",
        "/ui/jobs",
        "/ui/jobs/expire",
    ] {
        let page = anonymous.get(path).await;
        assert_page(&page, 303, path);
        assert!(
            page.location().starts_with("/ui/login?next="),
            "{path}: {}",
            page.location()
        );
    }
    for path in [
        format!("/ui/candidates/{first}/approve"),
        format!("/ui/candidates/{first}/reject"),
        "/ui/candidates/reject".to_owned(),
        "/ui/jobs/expire/run".to_owned(),
        "/ui/logout".to_owned(),
    ] {
        let page = anonymous
            .post(&path, &[("note", "x"), ("dry_run", "true")])
            .await;
        assert_page(&page, 401, &path);
    }
    let login = anonymous.get("/ui/login?next=/ui/jobs").await;
    assert_page(&login, 200, "login page");
    assert!(login.body.contains("name=\"token\""));
    let csp = login.headers["content-security-policy"].to_str().unwrap();
    assert!(
        csp.contains("script-src 'self'") && csp.contains("frame-ancestors 'none'"),
        "{csp}"
    );
    assert_eq!(login.headers["cache-control"], "no-store");
    let css_path = login
        .body
        .split("href=\"")
        .nth(1)
        .unwrap()
        .split('"')
        .next()
        .unwrap()
        .to_owned();
    let css = anonymous.get(&css_path).await;
    assert_page(&css, 200, "stylesheet");
    assert!(
        css.headers["content-type"]
            .to_str()
            .unwrap()
            .starts_with("text/css")
    );

    // A wrong token is refused; the right one becomes a cookie scripts cannot read, sent
    // only to this site.
    let refused = anonymous.login("not-the-token").await;
    assert_page(&refused, 401, "wrong token");
    assert!(anonymous.cookie.is_none());
    let mut operator = Browser::new(&base);
    let logged_in = operator.login(TOKEN).await;
    assert_page(&logged_in, 303, "login");
    assert_eq!(logged_in.location(), "/ui/review");
    let set = logged_in.headers["set-cookie"].to_str().unwrap();
    for attribute in ["HttpOnly", "Secure", "SameSite=Strict", "Path=/ui"] {
        assert!(set.contains(attribute), "{attribute}: {set}");
    }
    let outside = operator
        .post(
            "/ui/login",
            &[("token", TOKEN), ("next", "https://attacker.example/")],
        )
        .await;
    assert_eq!(
        outside.location(),
        "/ui",
        "a login never sends the browser elsewhere"
    );

    // The queue: both candidates, most evidence first, each with its episodes marked.
    let queue = operator.get("/ui/review").await;
    assert_page(&queue, 200, "queue");
    for c in &candidates {
        assert!(
            queue.body.contains(c["id"].as_str().unwrap()),
            "{}",
            c["id"]
        );
    }
    assert!(queue.body.contains("<mark>"), "evidence words marked");
    assert!(queue.body.contains("Evidence: 5 episodes"));
    assert!(
        queue.body.contains("conversation: chat-"),
        "each episode's provenance"
    );
    let csrf = queue.csrf();

    // A token that may review `ana` but not read it still gets the queue: its cards say why
    // the close memories are missing instead of failing.
    let created: Value = api
        .post(format!("{base}/admin/tokens"))
        .bearer_auth(TOKEN)
        .json(&json!({"name": "review-only", "grants": {"review": ["ana"]}}))
        .send()
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    let mut review_only = Browser::new(&base);
    assert_page(
        &review_only.login(created["secret"].as_str().unwrap()).await,
        303,
        "review-only login",
    );
    let their_queue = review_only.get("/ui/review?namespace=ana").await;
    assert_page(&their_queue, 200, "review-only queue");
    for c in &candidates {
        assert!(their_queue.body.contains(c["id"].as_str().unwrap()));
    }
    assert!(
        their_queue.body.contains("Not shown:"),
        "{}",
        their_queue.body
    );

    // Form posts: the session's CSRF token or nothing happens.
    let approve = format!("/ui/candidates/{first}/approve");
    for given in [None, Some("0".repeat(64))] {
        let mut form = vec![("importance", "0.9")];
        if let Some(token) = &given {
            form.push(("csrf", token.as_str()));
        }
        let page = operator.post(&approve, &form).await;
        assert_page(&page, 403, "approve without this session's CSRF token");
    }
    assert_eq!(pending(&base).await.len(), 2, "nothing decided");
    // The guard still refuses another site's page, and bodies of other kinds.
    let foreign = operator
        .http
        .post(format!("{base}{approve}"))
        .header("cookie", operator.cookie.clone().unwrap())
        .header("origin", "http://attacker.example")
        .header("content-type", "application/x-www-form-urlencoded")
        .body(format!("csrf={csrf}"))
        .send()
        .await
        .unwrap();
    assert_eq!(foreign.status().as_u16(), 403);
    let plain = operator
        .http
        .post(format!("{base}{approve}"))
        .header("cookie", operator.cookie.clone().unwrap())
        .header("content-type", "text/plain")
        .body(format!("csrf={csrf}"))
        .send()
        .await
        .unwrap();
    assert_eq!(plain.status().as_u16(), 415);
    assert_eq!(pending(&base).await.len(), 2, "still nothing decided");

    // Bad input names the field; unknown ids are 404 as in the API.
    let page = operator
        .post(&approve, &[("csrf", &csrf), ("importance", "lots")])
        .await;
    assert_page(&page, 400, "importance not a number");
    assert!(page.body.contains("importance"));
    let page = operator
        .post(
            &format!("/ui/candidates/{second}/reject"),
            &[("csrf", &csrf), ("note", " ")],
        )
        .await;
    assert_page(&page, 400, "reject without a note");
    assert!(page.body.contains("note"));
    let unknown = uuid::Uuid::now_v7();
    let page = operator
        .post(
            &format!("/ui/candidates/{unknown}/reject"),
            &[("csrf", &csrf), ("note", "x")],
        )
        .await;
    assert_page(&page, 404, "unknown candidate");
    let page = operator
        .post("/ui/candidates/not-an-id/approve", &[("csrf", &csrf)])
        .await;
    assert_page(&page, 404, "not an id");

    // Approve with an edit: the memory holds the reviewer's wording and importance.
    let wording = "The user wants every data source cited in the quarterly sales report";
    let page = operator
        .post(
            &approve,
            &[
                ("csrf", &csrf),
                ("namespace", "ana"),
                ("draft", candidates[0]["content"].as_str().unwrap()),
                ("content", wording),
                ("importance", "0.9"),
            ],
        )
        .await;
    assert_page(&page, 303, "approve");
    assert!(
        page.location()
            .starts_with("/ui/review?namespace=ana&done=approved&memory="),
        "{}",
        page.location()
    );
    let memory_id = page.location().rsplit('=').next().unwrap().to_owned();
    let memory: Value = api_get(&base, &format!("/api/memories/{memory_id}")).await;
    assert_eq!(memory["content"], json!(wording));
    assert_eq!(memory["memory_type"], json!("semantic"));
    assert_eq!(memory["importance"], json!(0.9));
    assert_eq!(memory["source"]["distill"]["reviewer"], json!("operator"));
    let notice = operator.get(page.location()).await;
    assert!(
        notice.body.contains(&format!("/ui/memories/{memory_id}")),
        "the notice links the memory"
    );
    let again = operator.post(&approve, &[("csrf", &csrf)]).await;
    assert_page(&again, 409, "a decided candidate");

    // The browser: search shows each score's parts and records no access; the memory's page
    // shows where it came from.
    let before = memory["access_count"].as_i64().unwrap();
    let found = operator
        .get("/ui/memories?q=data+source+cited+report&namespace=ana")
        .await;
    assert_page(&found, 200, "search");
    assert!(found.body.contains(&memory_id), "{}", found.body);
    for part in ["relevance", "cosine", "lexical rank", "recency"] {
        assert!(found.body.contains(part), "{part}");
    }
    let after: Value = api_get(&base, &format!("/api/memories/{memory_id}")).await;
    assert_eq!(
        after["access_count"].as_i64().unwrap(),
        before,
        "browsing is not an access"
    );
    let listed = operator
        .get("/ui/memories?namespace=ana&type=semantic")
        .await;
    assert_page(&listed, 200, "browse");
    assert!(listed.body.contains(&memory_id));
    let bad_day = operator.get("/ui/memories?from=yesterday").await;
    assert_page(&bad_day, 400, "a bad day");
    let shown = operator.get(&format!("/ui/memories/{memory_id}")).await;
    assert_page(&shown, 200, "memory page");
    assert!(shown.body.contains("Distilled from") && shown.body.contains(&first));
    assert!(
        shown.body.contains(common::ALIKE_EPISODES[0])
            || shown.body.contains(common::ALIKE_EPISODES[1])
    );
    assert_page(
        &operator.get(&format!("/ui/memories/{unknown}")).await,
        404,
        "unknown memory",
    );
    assert_page(&operator.get("/ui/memories/nope").await, 404, "not an id");

    // Forget needs the confirmation; soft keeps the row.
    let forget = format!("/ui/memories/{memory_id}/forget");
    let page = operator
        .post(&forget, &[("csrf", &csrf), ("mode", "soft")])
        .await;
    assert_page(&page, 400, "forget unconfirmed");
    let page = operator
        .post(
            &forget,
            &[("csrf", &csrf), ("mode", "soft"), ("confirm", "yes")],
        )
        .await;
    assert_page(&page, 303, "forget");
    let forgotten: Value = api_get(&base, &format!("/api/memories/{memory_id}")).await;
    assert_eq!(forgotten["status"], json!("forgotten"));
    let page = operator
        .post(
            &forget,
            &[("csrf", &csrf), ("mode", "soft"), ("confirm", "yes")],
        )
        .await;
    assert_page(&page, 409, "forgotten already");

    // Bulk reject: every selected one, with the note.
    let page = operator
        .post(
            "/ui/candidates/reject",
            &[
                ("csrf", &csrf),
                ("namespace", "ana"),
                ("note", "too vague"),
                ("id", &second),
            ],
        )
        .await;
    assert_page(&page, 303, "bulk reject");
    assert!(pending(&base).await.is_empty());
    let page = operator
        .post("/ui/candidates/reject", &[("csrf", &csrf), ("note", "x")])
        .await;
    assert_page(&page, 400, "bulk reject of nothing");

    // Held writes wait in the same queue, with the rule that caught them.
    let queue = operator.get("/ui/review?namespace=ana").await;
    assert!(queue.body.contains("standing_order"), "the rule shown");
    let held: Value = api_get(&base, "/api/quarantine?namespace=ana").await;
    let held = held["quarantined"].as_array().unwrap().clone();
    assert_eq!(held.len(), 2, "{held:?}");
    let (keep, drop) = (
        held[0]["id"].as_str().unwrap(),
        held[1]["id"].as_str().unwrap(),
    );
    for h in &held {
        assert!(queue.body.contains(h["id"].as_str().unwrap()));
    }
    let page = operator
        .post(
            &format!("/ui/held/{keep}/release"),
            &[("csrf", &csrf), ("namespace", "ana")],
        )
        .await;
    assert_page(&page, 303, "release");
    assert!(
        page.location().contains("done=released&memory="),
        "{}",
        page.location()
    );
    let page = operator
        .post(&format!("/ui/held/{keep}/release"), &[("csrf", &csrf)])
        .await;
    assert_page(&page, 409, "released already");
    let page = operator
        .post(&format!("/ui/held/{drop}/discard"), &[("csrf", &csrf)])
        .await;
    assert_page(&page, 400, "discard without a note");
    let page = operator
        .post(
            &format!("/ui/held/{drop}/discard"),
            &[("csrf", &csrf), ("note", "an advert")],
        )
        .await;
    assert_page(&page, 303, "discard");
    let page = operator
        .post(
            &format!("/ui/held/{}/discard", uuid::Uuid::now_v7()),
            &[("csrf", &csrf), ("note", "x")],
        )
        .await;
    assert_page(&page, 404, "unknown held write");

    // Jobs: the list, a dry run showing what it would do, an unknown job.
    let jobs_page = operator.get("/ui/jobs").await;
    assert_page(&jobs_page, 200, "jobs");
    for name in ["expire", "archive", "capacity", "distill"] {
        assert!(
            jobs_page.body.contains(&format!("id=\"job-{name}\"")),
            "{name}"
        );
    }
    assert!(
        jobs_page.body.contains("<meter"),
        "capacity against its limit"
    );
    let dry = operator
        .post(
            "/ui/jobs/capacity/run",
            &[("csrf", &csrf), ("dry_run", "true")],
        )
        .await;
    assert_page(&dry, 200, "dry run");
    assert!(dry.body.contains("active_total"), "{}", dry.body);
    let page = operator
        .post(
            "/ui/jobs/no-such-job/run",
            &[("csrf", &csrf), ("dry_run", "true")],
        )
        .await;
    assert_page(&page, 404, "unknown job");
    let page = operator
        .post(
            "/ui/jobs/expire/run",
            &[("csrf", &csrf), ("dry_run", "maybe")],
        )
        .await;
    assert_page(&page, 400, "dry_run not a boolean");
    assert_page(
        &operator.get("/ui/jobs/no-such-job").await,
        404,
        "unknown job page",
    );
    assert_page(&operator.get("/ui/jobs/distill").await, 200, "job history");

    // A scoped token sees its own namespaces only and may not decide elsewhere.
    let created: Value = api
        .post(format!("{base}/admin/tokens"))
        .bearer_auth(TOKEN)
        .json(&json!({"name": "reviewer-bo", "grants": {"read": ["bo"], "review": ["bo"]}}))
        .send()
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    let secret = created["secret"].as_str().unwrap().to_owned();
    let mut reviewer = Browser::new(&base);
    assert_page(&reviewer.login(&secret).await, 303, "scoped login");
    let page = reviewer.get("/ui/memories?namespace=ana").await;
    assert_page(&page, 403, "another namespace");
    let page = reviewer.get("/ui/memories").await;
    assert_page(&page, 200, "its own namespaces (none with memories yet)");
    assert!(
        !page.body.contains(common::ALIKE_EPISODES[0]),
        "nothing of ana's"
    );
    let reviewer_csrf = reviewer.get("/ui/review?namespace=bo").await.csrf();
    assert_ne!(reviewer_csrf, csrf, "each session its own CSRF token");
    let page = reviewer
        .post(
            "/ui/jobs/expire/run",
            &[("csrf", &reviewer_csrf), ("dry_run", "true")],
        )
        .await;
    assert_page(&page, 403, "jobs are the operator's");
    // Revoking the token ends its sessions.
    api.post(format!("{base}/admin/tokens/reviewer-bo/revoke"))
        .bearer_auth(TOKEN)
        .json(&json!({}))
        .send()
        .await
        .unwrap();
    let page = reviewer.get("/ui/review").await;
    assert_page(&page, 303, "revoked");

    // Logging out clears the cookie.
    let page = operator.post("/ui/logout", &[("csrf", &csrf)]).await;
    assert_page(&page, 303, "logout");
    assert!(operator.cookie.is_none());
    assert_page(&operator.get("/ui/review").await, 303, "logged out");
    daemon.stop().await;
}
