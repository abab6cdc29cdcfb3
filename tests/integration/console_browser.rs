//! The console in real browsers, headless, over the W3C WebDriver protocol: Chromium (Debian's
//! `chromium` through its `chromedriver`) and Firefox (Debian's `firefox-esr` through Mozilla's
//! `geckodriver`, from crates.io), each against a daemon with a seeded review queue. Log in,
//! approve one candidate with an edit (keyboard: j, e, Escape, a), reject the other with a
//! note, find the approved memory in the browser's search and open its provenance page;
//! screenshots of each page. In Chromium any error in the browser's console fails the test;
//! geckodriver cannot read Firefox's console, so there the test checks that the stylesheet
//! applied and the script ran (the keyboard steps need it), which a CSP refusal would break.
//!
//! Needs `chromedriver` and `chromium` (`HINDSIGHT_TEST_CHROMEDRIVER`, `HINDSIGHT_TEST_CHROMIUM`;
//! default /usr/bin/…), `geckodriver` and `firefox-esr` (`HINDSIGHT_TEST_GECKODRIVER`, default
//! the first on PATH or ~/.cargo/bin; `HINDSIGHT_TEST_FIREFOX`, default /usr/bin/firefox-esr):
//! `.ci/run` installs all four. Screenshots go to `HINDSIGHT_SCREENSHOTS_DIR`, else the test's
//! temp dir under target/.

use crate::common;

use std::path::PathBuf;
use std::time::Duration;

use base64::Engine;
use common::console::{TOKEN, api_get, pending, seeded_daemon};
use serde_json::{Value, json};

const ELEMENT: &str = "element-6066-11e4-a52e-4f735466cecf";

fn tool(env: &str, default: PathBuf, install: &str) -> PathBuf {
    let path = std::env::var(env).map_or(default, PathBuf::from);
    assert!(
        path.exists(),
        "{} is missing: the browser test needs it ({install}; .ci/run does), or {env} \
         pointing at it",
        path.display()
    );
    path
}

#[derive(Clone, Copy, PartialEq)]
enum Browser {
    Chromium,
    Firefox,
}

impl Browser {
    fn name(self) -> &'static str {
        match self {
            Browser::Chromium => "chromium",
            Browser::Firefox => "firefox",
        }
    }

    /// The WebDriver server and the session's capabilities.
    fn driver_and_capabilities(self) -> (PathBuf, Value) {
        match self {
            Browser::Chromium => {
                let driver = tool(
                    "HINDSIGHT_TEST_CHROMEDRIVER",
                    "/usr/bin/chromedriver".into(),
                    "apt-get install chromium-driver",
                );
                let chromium = tool(
                    "HINDSIGHT_TEST_CHROMIUM",
                    "/usr/bin/chromium".into(),
                    "apt-get install chromium",
                );
                let capabilities = json!({
                    "browserName": "chrome",
                    "goog:chromeOptions": {
                        "binary": chromium,
                        "args": ["--headless=new", "--no-sandbox", "--disable-gpu",
                                 "--disable-dev-shm-usage", "--window-size=1280,1000"],
                    },
                    "goog:loggingPrefs": {"browser": "ALL"},
                });
                (driver, capabilities)
            }
            Browser::Firefox => {
                let on_path = std::env::var_os("PATH")
                    .and_then(|paths| {
                        std::env::split_paths(&paths)
                            .map(|dir| dir.join("geckodriver"))
                            .find(|p| p.exists())
                    })
                    .or_else(|| {
                        std::env::var_os("HOME")
                            .map(|home| PathBuf::from(home).join(".cargo/bin/geckodriver"))
                    })
                    .unwrap_or_default();
                let driver = tool(
                    "HINDSIGHT_TEST_GECKODRIVER",
                    on_path,
                    "cargo install geckodriver",
                );
                let firefox = tool(
                    "HINDSIGHT_TEST_FIREFOX",
                    "/usr/bin/firefox-esr".into(),
                    "apt-get install firefox-esr",
                );
                let capabilities = json!({
                    "browserName": "firefox",
                    "moz:firefoxOptions": {
                        "binary": firefox,
                        "args": ["-headless", "-width=1280", "-height=1000"],
                    },
                });
                (driver, capabilities)
            }
        }
    }
}

/// A WebDriver server child on a free port, and one browser session in it.
struct Driver {
    browser: Browser,
    _child: tokio::process::Child,
    http: reqwest::Client,
    session: String,
}

impl Driver {
    async fn start(browser: Browser) -> Self {
        let (driver, capabilities) = browser.driver_and_capabilities();
        let port = std::net::TcpListener::bind("127.0.0.1:0")
            .unwrap()
            .local_addr()
            .unwrap()
            .port();
        let child = tokio::process::Command::new(&driver)
            .arg(format!("--port={port}"))
            .stdout(std::process::Stdio::null())
            .stderr(std::process::Stdio::null())
            .kill_on_drop(true)
            .spawn()
            .expect("start chromedriver");
        let http = reqwest::Client::new();
        let base = format!("http://127.0.0.1:{port}");
        let mut ready = false;
        for _ in 0..100 {
            if let Ok(r) = http.get(format!("{base}/status")).send().await
                && let Ok(status) = r.json::<Value>().await
                && status["value"]["ready"] == json!(true)
            {
                ready = true;
                break;
            }
            tokio::time::sleep(Duration::from_millis(100)).await;
        }
        assert!(
            ready,
            "{} did not become ready on port {port}",
            driver.display()
        );
        let created: Value = http
            .post(format!("{base}/session"))
            .json(&json!({"capabilities": {"alwaysMatch": capabilities}}))
            .send()
            .await
            .unwrap()
            .json()
            .await
            .unwrap();
        let session = created["value"]["sessionId"]
            .as_str()
            .unwrap_or_else(|| panic!("no browser session: {created}"))
            .to_owned();
        Driver {
            browser,
            _child: child,
            http,
            session: format!("{base}/session/{session}"),
        }
    }

    async fn call(&self, method: reqwest::Method, path: &str, body: Option<Value>) -> Value {
        let mut request = self.http.request(method, format!("{}{path}", self.session));
        if let Some(body) = body {
            request = request.json(&body);
        }
        let answer: Value = request.send().await.unwrap().json().await.unwrap();
        if let Some(error) = answer["value"]["error"].as_str() {
            panic!("WebDriver {path}: {error}: {}", answer["value"]["message"]);
        }
        answer["value"].clone()
    }

    async fn post(&self, path: &str, body: Value) -> Value {
        self.call(reqwest::Method::POST, path, Some(body)).await
    }

    async fn get(&self, path: &str) -> Value {
        self.call(reqwest::Method::GET, path, None).await
    }

    async fn go(&self, url: &str) {
        self.post("/url", json!({"url": url})).await;
    }

    async fn url(&self) -> String {
        self.get("/url").await.as_str().unwrap().to_owned()
    }

    async fn source(&self) -> String {
        self.get("/source").await.as_str().unwrap().to_owned()
    }

    async fn find(&self, css: &str) -> String {
        let found = self
            .post("/element", json!({"using": "css selector", "value": css}))
            .await;
        found[ELEMENT].as_str().unwrap().to_owned()
    }

    async fn type_into(&self, css: &str, text: &str) {
        let element = self.find(css).await;
        self.post(&format!("/element/{element}/value"), json!({"text": text}))
            .await;
    }

    async fn click(&self, css: &str) {
        let element = self.find(css).await;
        self.post(&format!("/element/{element}/click"), json!({}))
            .await;
    }

    async fn attribute(&self, css: &str, name: &str) -> String {
        let element = self.find(css).await;
        self.get(&format!("/element/{element}/attribute/{name}"))
            .await
            .as_str()
            .unwrap_or_default()
            .to_owned()
    }

    /// Keys pressed on whatever has focus, as a person types them.
    async fn keys(&self, keys: &[&str]) {
        let actions: Vec<Value> = keys
            .iter()
            .flat_map(|k| {
                [
                    json!({"type": "keyDown", "value": k}),
                    json!({"type": "keyUp", "value": k}),
                ]
            })
            .collect();
        self.post(
            "/actions",
            json!({"actions": [{"type": "key", "id": "keyboard", "actions": actions}]}),
        )
        .await;
    }

    /// Wait until the address contains `part`.
    async fn wait_for_url(&self, part: &str) -> String {
        for _ in 0..100 {
            let url = self.url().await;
            if url.contains(part) {
                return url;
            }
            tokio::time::sleep(Duration::from_millis(100)).await;
        }
        panic!(
            "the browser never reached a URL with {part:?}: at {}, showing {}",
            self.url().await,
            self.source().await
        );
    }

    async fn screenshot(&self, dir: &std::path::Path, name: &str) {
        let png = self.get("/screenshot").await;
        let bytes = base64::engine::general_purpose::STANDARD
            .decode(png.as_str().unwrap())
            .unwrap();
        assert!(bytes.starts_with(b"\x89PNG"), "a PNG");
        std::fs::write(dir.join(name), bytes).unwrap();
    }

    /// What the page logged to the browser's console since the last call (Chromium only:
    /// geckodriver has no log endpoint, so Firefox reports none here).
    async fn console_errors(&self) -> Vec<String> {
        if self.browser == Browser::Firefox {
            return Vec::new();
        }
        let entries = self.post("/se/log", json!({"type": "browser"})).await;
        entries
            .as_array()
            .unwrap()
            .iter()
            .filter(|e| e["level"] == json!("SEVERE"))
            .map(|e| e["message"].as_str().unwrap_or_default().to_owned())
            .collect()
    }

    async fn close(&self) {
        let _ = self.http.delete(&self.session).send().await;
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
#[ignore = "needs Chromium, Firefox and their WebDriver servers: full tier"]
async fn a_reviewer_approves_with_an_edit_rejects_and_finds_the_memory_in_chromium() {
    review_walk(Browser::Chromium).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
#[ignore = "needs Chromium, Firefox and their WebDriver servers: full tier"]
async fn a_reviewer_approves_with_an_edit_rejects_and_finds_the_memory_in_firefox() {
    review_walk(Browser::Firefox).await;
}

async fn review_walk(kind: Browser) {
    let data = tempfile::tempdir().unwrap();
    let jobs = tempfile::tempdir().unwrap();
    let daemon = seeded_daemon(data.path(), jobs.path()).await;
    let base = daemon.base_url();
    let shots = std::env::var("HINDSIGHT_SCREENSHOTS_DIR")
        .map(PathBuf::from)
        .unwrap_or_else(|_| PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join("console-screenshots"));
    std::fs::create_dir_all(&shots).unwrap();
    let browser = Driver::start(kind).await;
    // Chromium's screenshots are docs/review.md's; Firefox's are named for it.
    let shot = |name: &str| match kind {
        Browser::Chromium => name.to_owned(),
        Browser::Firefox => format!("{}-{name}", kind.name()),
    };
    let mut errors = Vec::new();

    // Log in: the console sends an unknown browser to its login page first.
    browser.go(&format!("{base}/ui")).await;
    browser.wait_for_url("/ui/login").await;
    browser.type_into("#token", TOKEN).await;
    browser.click("section.login button[type=submit]").await;
    browser.wait_for_url("/ui/review").await;
    let queue = browser.source().await;
    // The stylesheet applied (a CSP refusal or a wrong type would leave the bar unstyled).
    let display = browser
        .post(
            "/execute/sync",
            json!({"script": "return getComputedStyle(document.querySelector('header.top')).display", "args": []}),
        )
        .await;
    assert_eq!(display, json!("flex"), "the console's stylesheet applied");
    assert_eq!(
        queue.matches("<article class=\"card candidate").count(),
        2,
        "{queue}"
    );
    browser
        .screenshot(&shots, &shot("console-review.png"))
        .await;
    errors.extend(browser.console_errors().await);

    // Approve the first with an edit, from the keyboard: j selects it, e opens the wording,
    // Escape leaves the text box, a approves.
    browser.keys(&["j"]).await;
    let first = browser.attribute("article.card.selected", "data-id").await;
    assert!(!first.is_empty(), "j selected a card");
    browser.keys(&["e"]).await;
    let wording = "The user wants every data source cited in the quarterly sales report";
    let area = browser
        .find("article.card.selected details.edit textarea")
        .await;
    browser
        .post(&format!("/element/{area}/clear"), json!({}))
        .await;
    browser
        .type_into("article.card.selected details.edit textarea", wording)
        .await;
    browser.keys(&["\u{E00C}", "a"]).await; // Escape, then a
    let approved = browser.wait_for_url("done=approved").await;
    let memory_id = approved.rsplit("memory=").next().unwrap().to_owned();
    errors.extend(browser.console_errors().await);

    // Reject the other with a note (typed, then Enter).
    let remaining = browser.attribute("article.card.candidate", "data-id").await;
    assert_ne!(remaining, first);
    browser
        .type_into(
            "article.card.candidate form.reject input[name=note]",
            "a scheduling habit, not a rule\u{E007}",
        )
        .await;
    browser.wait_for_url("done=rejected").await;
    assert!(pending(&base).await.is_empty(), "both decided");
    let listed: Value = api_get(&base, "/api/candidates?namespace=ana&status=all").await;
    let decided = listed["candidates"].as_array().unwrap();
    let approved_one = decided.iter().find(|c| c["id"] == json!(first)).unwrap();
    let rejected_one = decided
        .iter()
        .find(|c| c["id"] == json!(remaining))
        .unwrap();
    assert_eq!(approved_one["status"], json!("approved"));
    assert_eq!(approved_one["memory_id"], json!(memory_id));
    assert_eq!(rejected_one["status"], json!("rejected"));
    assert_eq!(
        rejected_one["note"],
        json!("a scheduling habit, not a rule")
    );
    errors.extend(browser.console_errors().await);

    // Find it as an agent would, then open its provenance page.
    browser.go(&format!("{base}/ui/memories")).await;
    browser
        .type_into(
            "form.search input[name=q]",
            "which data sources to cite in the sales report\u{E007}",
        )
        .await;
    browser.wait_for_url("q=").await;
    browser
        .click(&format!("td.content a[href=\"/ui/memories/{memory_id}\"]"))
        .await;
    browser
        .wait_for_url(&format!("/ui/memories/{memory_id}"))
        .await;
    let page = browser.source().await;
    assert!(page.contains(wording), "the reviewer's wording");
    assert!(
        page.contains("Distilled from") && page.contains(&first),
        "its candidate"
    );
    assert!(page.contains("Episodes (5)"), "its episodes");
    browser
        .screenshot(&shots, &shot("console-memory.png"))
        .await;
    errors.extend(browser.console_errors().await);

    browser.go(&format!("{base}/ui/jobs")).await;
    browser.wait_for_url("/ui/jobs").await;
    assert!(browser.source().await.contains("id=\"job-distill\""));
    browser.screenshot(&shots, &shot("console-jobs.png")).await;
    errors.extend(browser.console_errors().await);

    // The check above can fail: a page answered with an error status is logged as one.
    if kind == Browser::Chromium {
        browser
            .go(&format!("{base}/ui/memories/{}", uuid::Uuid::now_v7()))
            .await;
        let control = browser.console_errors().await;
        assert!(
            control.iter().any(|e| e.contains("404")),
            "the browser's log is read: {control:?}"
        );
    }

    browser.close().await;
    daemon.stop().await;
    eprintln!("screenshots in {}", shots.display());
    assert!(
        errors.is_empty(),
        "the browser's console logged errors: {errors:#?}"
    );
}
