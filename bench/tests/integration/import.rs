//! `hindsight-bench bench import` end to end: the import, export and backup children, a daemon
//! on the data, recall against brute force; on synthetic and on real text (LoCoMo).

use crate::common;

use std::path::Path;

use serde_json::Value;

fn cli(dir: &Path, envs: &[(&str, &str)], args: &[&str]) -> (bool, String, String) {
    let jobs = dir.join("jobs");
    std::fs::create_dir_all(&jobs).unwrap();
    common::cli_with(dir, &jobs, envs, args)
}

/// `bench import` at a small size, end to end: the import, export and backup children, a
/// daemon on the data, recall against brute force; and, where this machine has a memory
/// cgroup controller, the import held under `--memory-limit-mb` (elsewhere the bench must
/// refuse the flag by name).
#[test]
fn bench_import_reports_rates_memory_latency_and_recall() {
    let dir = tempfile::tempdir().unwrap();
    let bench = |extra: &[&str]| {
        let mut args = vec!["bench", "import", "--n", "2000"];
        args.extend_from_slice(extra);
        cli(dir.path(), &[], &args)
    };
    let (ok, out, err) = bench(&[]);
    assert!(ok, "{out}{err}");
    let report: Value = serde_json::from_str(out.trim()).unwrap();
    assert_eq!(
        (report["n"].as_u64(), report["backend"].as_str()),
        (Some(2000), Some("sqlite"))
    );
    assert_eq!(report["corpus"], "fixed", "{report}");
    assert!(report["daemon_evidence_hit_at_10"].is_null(), "{report}");
    let number = |field: &str| {
        report[field]
            .as_f64()
            .unwrap_or_else(|| panic!("{field} in {report}"))
    };
    assert!(number("imported_per_second") > 0.0, "{report}");
    assert!(
        0.0 < number("import_peak_anon_mb")
            && number("import_peak_anon_mb") <= number("import_peak_rss_mb"),
        "{report}"
    );
    assert!(
        number("daemon_search_p99_ms") >= number("daemon_search_p50_ms"),
        "{report}"
    );
    // 200 points a namespace: a filtered search that small is near exact.
    assert!(number("recall_at_10") >= 0.9, "{report}");
    // Each line's own vector, asked of the write path's dedup probe, in a scanned namespace.
    assert_eq!(number("probe_recall"), 1.0, "{report}");
    assert_eq!(report["recall_queries"], 50, "{report}");
    let by_ef = report["recall_at_10_by_hnsw_ef"].as_array().unwrap();
    let efs: Vec<u64> = by_ef
        .iter()
        .map(|r| r["hnsw_ef"].as_u64().unwrap())
        .collect();
    assert_eq!(efs, [64, 128, 256, 512], "{report}");
    let at_128 = by_ef.iter().find(|r| r["hnsw_ef"] == 128).unwrap();
    assert_eq!(at_128["recall_at_10"], report["recall_at_10"], "{report}");
    assert!(report["import_memory_limit_mb"].is_null(), "{report}");

    let (ok, out, err) = bench(&["--memory-limit-mb", "300"]);
    if !can_make_a_memory_cgroup() {
        assert!(!ok && err.contains("--memory-limit-mb"), "{out}{err}");
        eprintln!("no memory cgroup can be made here: only the refusal was checked");
        return;
    }
    assert!(ok, "{out}{err}");
    let limited: Value = serde_json::from_str(out.trim()).unwrap();
    assert_eq!(limited["import_memory_limit_mb"], 300, "{limited}");
    let peak = limited["import_cgroup_peak_mb"].as_f64().unwrap();
    assert!(0.0 < peak && peak <= 300.0, "{limited}");
}

/// `bench import --locomo`: real text (LoCoMo's turns, one repetition) with the builtin
/// embedder's vectors; the daemon asked every question of categories 1–4 in its namespace.
#[test]
#[ignore = "needs LoCoMo (../shared/data/locomo beside the checkout, HINDSIGHT_TEST_LOCOMO): full tier"]
fn bench_import_on_real_text_reports_evidence_found_and_recall() {
    let dir = tempfile::tempdir().unwrap();
    let locomo = common::locomo();
    let (ok, out, err) = cli(
        dir.path(),
        &[],
        &["bench", "import", "--n", "100", "--locomo", &locomo],
    );
    assert!(
        !ok && err.contains("--n: with --locomo at least"),
        "{out}{err}"
    );

    let turns: usize = serde_json::from_str::<Value>(&std::fs::read_to_string(&locomo).unwrap())
        .unwrap()
        .as_array()
        .unwrap()
        .iter()
        .map(|c| {
            let sessions = c["conversation"].as_object().unwrap();
            sessions
                .iter()
                .filter(|(k, v)| k.starts_with("session_") && v.is_array())
                .map(|(_, v)| v.as_array().unwrap().len())
                .sum::<usize>()
        })
        .sum();
    let n = turns.to_string();
    let (ok, out, err) = cli(
        dir.path(),
        &[],
        &["bench", "import", "--n", &n, "--locomo", &locomo],
    );
    assert!(ok, "{out}{err}");
    let report: Value = serde_json::from_str(out.trim()).unwrap();
    assert_eq!(report["corpus"], "locomo", "{report}");
    assert!(
        report["daemon_searches"].as_u64().unwrap() > 100,
        "{report}"
    );
    // The builtin embedder's hybrid search finds an evidence turn for about six questions in
    // ten on this split; a namespace or evidence mix-up finds none.
    let hit = report["daemon_evidence_hit_at_10"].as_f64().unwrap();
    assert!(hit >= 0.4, "{report}");
    // Namespaces of a few hundred turns: scanned, not walked, and rescored from three times
    // the candidates, so near exact.
    assert!(report["recall_at_10"].as_f64().unwrap() >= 0.97, "{report}");
    assert_eq!(report["probe_recall"].as_f64(), Some(1.0), "{report}");

    // Large namespaces: turns joined two by two, one namespace per conversation.
    let pairs = |n: &str| {
        cli(
            dir.path(),
            &[],
            &[
                "bench",
                "import",
                "--n",
                n,
                "--locomo",
                &locomo,
                "--large-namespaces",
            ],
        )
    };
    let (ok, out, err) = pairs("100000000");
    assert!(
        !ok && err.contains("--n: with --large-namespaces at most"),
        "{out}{err}"
    );
    let (ok, out, err) = pairs(&n);
    assert!(ok, "{out}{err}");
    let report: Value = serde_json::from_str(out.trim()).unwrap();
    assert_eq!(report["corpus"], "locomo-pairs", "{report}");
    assert!(
        report["daemon_evidence_hit_at_10"].as_f64().unwrap() >= 0.4,
        "{report}"
    );
    assert!(report["recall_at_10"].as_f64().unwrap() >= 0.9, "{report}");
    assert_eq!(report["probe_recall"].as_f64(), Some(1.0), "{report}");
}

/// A memory cgroup controller (v1, or v2's at the root) under which this user may make a group.
fn can_make_a_memory_cgroup() -> bool {
    let v2 = std::fs::read_to_string("/sys/fs/cgroup/cgroup.subtree_control")
        .is_ok_and(|c| c.split_whitespace().any(|c| c == "memory"));
    let parent = if v2 {
        Path::new("/sys/fs/cgroup")
    } else {
        Path::new("/sys/fs/cgroup/memory")
    };
    let probe = parent.join(format!("hindsight-test-probe-{}", std::process::id()));
    std::fs::create_dir(&probe).is_ok() && std::fs::remove_dir(&probe).is_ok()
}
