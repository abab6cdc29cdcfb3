//! What the CLI prints for people and for scripts: listing commands print a table at a
//! terminal and JSON with `--json` or into a pipe; long tasks draw a progress bar at a terminal
//! and plain lines in a log. A terminal is a real pseudo-terminal (util-linux `script`).

use crate::common;

use std::path::Path;
use std::process::Command;

use serde_json::Value;

fn hindsight(data: &Path, jobs: &Path, args: &[&str]) -> (bool, String, String) {
    common::cli_with(data, jobs, &[], args)
}

/// `hindsight ARGS` with stdout and stderr on a pseudo-terminal; what the terminal showed.
fn at_a_terminal(data: &Path, jobs: &Path, args: &[&str]) -> String {
    let command = std::iter::once(common::binary().display().to_string())
        .chain(args.iter().map(|a| format!("'{a}'")))
        .chain(["--data-dir".to_owned(), format!("'{}'", data.display())])
        .collect::<Vec<_>>()
        .join(" ");
    let output = Command::new("script")
        .args(["-qefc", &command, "/dev/null"])
        .env("HINDSIGHT_CONFIG", data.join("no-such-config.toml"))
        .env("HINDSIGHT_JOBS_DIR", jobs)
        .env("HF_HUB_OFFLINE", "1")
        .env("HF_HUB_CACHE", data.join("no-hub-cache"))
        .env("COLUMNS", "160")
        .output()
        .expect("util-linux `script` runs the CLI on a pseudo-terminal");
    assert!(output.status.success(), "{command}: {:?}", output);
    String::from_utf8_lossy(&output.stdout).into_owned()
}

#[test]
fn listings_are_tables_at_a_terminal_and_json_elsewhere() {
    let data = tempfile::tempdir().unwrap();
    let jobs = tempfile::tempdir().unwrap();
    for text in ["The user likes green tea", "The user lives in Lyon"] {
        let (ok, _, err) = hindsight(
            data.path(),
            jobs.path(),
            &[
                "memory",
                "write",
                text,
                "--namespace",
                "cli",
                "--type",
                "semantic",
            ],
        );
        assert!(ok, "{err}");
    }
    // Into a pipe: JSON, as scripts have always read it; --json says so at a terminal too.
    let (ok, out, err) = hindsight(
        data.path(),
        jobs.path(),
        &["memory", "list", "--namespace", "cli"],
    );
    assert!(ok, "{err}");
    let listed: Value = serde_json::from_str(&out).unwrap_or_else(|e| panic!("{e}: {out}"));
    assert_eq!(listed["memories"].as_array().unwrap().len(), 2);
    assert_eq!(
        listed["memories"][0]["content"], "The user lives in Lyon",
        "newest first"
    );
    let json = at_a_terminal(
        data.path(),
        jobs.path(),
        &["memory", "list", "--namespace", "cli", "--json"],
    );
    let listed: Value = serde_json::from_str(json.trim()).unwrap_or_else(|e| panic!("{e}: {json}"));
    assert_eq!(listed["memories"].as_array().unwrap().len(), 2);

    // At a terminal: a table.
    let table = at_a_terminal(
        data.path(),
        jobs.path(),
        &["memory", "list", "--namespace", "cli"],
    );
    let lines: Vec<&str> = table.lines().collect();
    assert!(
        lines[0].starts_with("ID")
            && lines[0].contains("NAMESPACE")
            && lines[0].contains("CONTENT"),
        "{table}"
    );
    assert!(
        lines[1].contains("The user lives in Lyon") && lines[2].contains("green tea"),
        "{table}"
    );
    assert!(!table.contains('{'), "{table}");
    let jobs_table = at_a_terminal(data.path(), jobs.path(), &["jobs", "list"]);
    assert!(
        jobs_table.starts_with("JOB") && jobs_table.contains("expire"),
        "{jobs_table}"
    );
    let (ok, out, _) = hindsight(data.path(), jobs.path(), &["jobs", "list"]);
    assert!(ok && serde_json::from_str::<Value>(&out).is_ok(), "{out}");
    let (ok, _, err) = hindsight(
        data.path(),
        jobs.path(),
        &["memory", "list", "--limit", "0"],
    );
    assert!(!ok && err.contains("limit"), "{err}");
}

#[test]
fn long_tasks_draw_a_bar_at_a_terminal_and_lines_in_a_log() {
    let data = tempfile::tempdir().unwrap();
    let jobs = tempfile::tempdir().unwrap();
    let (ok, _, err) = hindsight(
        data.path(),
        jobs.path(),
        &["memory", "write", "The user likes green tea"],
    );
    assert!(ok, "{err}");
    let (ok, out, err) = hindsight(data.path(), jobs.path(), &["reindex"]);
    assert!(ok, "{err}");
    assert!(err.contains("indexing 1/1"), "a plain line in a log: {err}");
    assert!(
        !err.contains('\r') && !err.contains("[="),
        "no bar in a log: {err:?}"
    );
    assert!(serde_json::from_str::<Value>(&out).is_ok(), "{out}");
    let shown = at_a_terminal(data.path(), jobs.path(), &["reindex"]);
    assert!(
        shown.contains("indexing") && shown.contains("[===="),
        "a bar: {shown:?}"
    );
    assert!(shown.contains("\"reindexed\":1"), "{shown}");
    // A store command records itself in the audit trail (it does not go through `Operations`).
    let (ok, out, err) = hindsight(data.path(), jobs.path(), &["audit", "--json"]);
    assert!(ok, "{err}");
    let trail: Vec<Value> = serde_json::from_str(&out).unwrap();
    let reindexes: Vec<&Value> = trail.iter().filter(|e| e["action"] == "reindex").collect();
    assert_eq!(reindexes.len(), 2, "{trail:?}");
    assert_eq!(reindexes[0]["actor"], "cli");
    assert!(
        reindexes[0]["detail"]
            .as_str()
            .unwrap()
            .starts_with("1 rows with "),
        "{trail:?}"
    );
}
