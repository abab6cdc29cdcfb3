//! `hindsight eval retrieval` on a slice of LoCoMo's dev split (`../shared/data/locomo/`, beside
//! the checkout, as CI lays it; `HINDSIGHT_TEST_LOCOMO` names another copy): the binary writes
//! one conversation's turns through the write path, asks its questions per arm and prints one
//! JSON report per arm. The full split's figures are in docs/search.md.

use crate::common;

use serde_json::Value;

/// `bench embed` with the local model: 20-word queries cut from the turns, and bulk.
#[test]
#[ignore = "needs the all-MiniLM-L6-v2 weights and LoCoMo: full tier"]
fn bench_embed_times_queries_and_bulk_with_the_local_model() {
    let data = tempfile::tempdir().unwrap();
    let model = common::minilm_dir();
    let (ok, stdout, stderr) = common::cli_with(
        data.path(),
        data.path(),
        &[
            ("HINDSIGHT_EMBED_MODEL_DIR", model.to_str().unwrap()),
            ("RAYON_NUM_THREADS", "1"),
        ],
        &[
            "--embedder",
            "local",
            "bench",
            "embed",
            "--locomo",
            &common::locomo(),
            "--queries",
            "20",
            "--words",
            "12",
            "--bulk",
            "100",
        ],
    );
    assert!(ok, "{stderr}");
    let report: Value = serde_json::from_str(&stdout).unwrap();
    assert_eq!(
        report["embedder"],
        "local:sentence-transformers/all-MiniLM-L6-v2/384"
    );
    assert_eq!(
        (report["threads"].as_u64(), report["queries"].as_u64()),
        (Some(1), Some(20))
    );
    assert_eq!(report["query_words"], 12);
    assert!(report["query_p50_ms"].as_f64().unwrap() > 0.0, "{report}");
    assert!(
        report["query_p99_ms"].as_f64() >= report["query_p50_ms"].as_f64(),
        "{report}"
    );
    assert_eq!(report["bulk_texts"], 100, "{report}");
    assert!(
        report["bulk_per_second"].as_f64().unwrap() > 0.0,
        "{report}"
    );
}

/// `bench search` with writes in flight together, one by one and in batches
/// (`write_batch`): every write lands, the planted near-duplicates and nothing else merge, each
/// into the memory it re-says (the results are taken in write order), recall checks each
/// memory against the vector it holds, and the report says how many writers there were.
#[test]
fn bench_search_loads_with_concurrent_writers() {
    let data = tempfile::tempdir().unwrap();
    for (n, batch) in [("400", "1"), ("600", "16")] {
        let (ok, stdout, stderr) = common::cli_with(
            data.path(),
            data.path(),
            &[],
            &[
                "bench",
                "search",
                "--n",
                n,
                "--dimension",
                "64",
                "--queries",
                "20",
                "--writers",
                "4",
                "--batch",
                batch,
            ],
        );
        assert!(ok, "{stderr}");
        let report: Value = serde_json::from_str(&stdout).unwrap();
        assert_eq!(
            (
                report["writers"].as_u64(),
                report["n"].as_u64().map(|n| n.to_string()),
                report["batch"].as_u64().map(|b| b.to_string())
            ),
            (Some(4), Some(n.to_owned()), Some(batch.to_owned()))
        );
        let planted = report["planted_duplicates"].as_u64().unwrap();
        assert!(planted >= 10, "{report}");
        assert_eq!(report["planted_merged"].as_u64(), Some(planted), "{report}");
        assert_eq!(report["merged_on_load"].as_u64(), Some(planted), "{report}");
        assert_eq!(report["dedup_recall"].as_f64(), Some(1.0), "{report}");
        // Small scopes are scanned exactly: the probe finds every stored memory's own vector.
        assert_eq!(report["probe_recall"].as_f64(), Some(1.0), "{report}");
        assert!(
            report["writes_per_second"].as_f64().unwrap() > 0.0,
            "{report}"
        );
        assert!(report["recall_at_10"].as_f64().unwrap() > 0.9, "{report}");
    }
    let (ok, _, stderr) = common::cli_with(
        data.path(),
        data.path(),
        &[],
        &["bench", "search", "--n", "10", "--writers", "0"],
    );
    assert!(!ok && stderr.contains("--writers"), "{stderr}");
}

#[test]
#[ignore = "needs LoCoMo (../shared/data/locomo beside the checkout, HINDSIGHT_TEST_LOCOMO): full tier"]
fn eval_retrieval_reports_each_arm_on_a_locomo_slice() {
    let locomo = common::locomo();
    let data = tempfile::tempdir().unwrap();
    let (ok, stdout, stderr) = common::cli_with(
        data.path(),
        data.path(),
        &[],
        &[
            "eval",
            "retrieval",
            "--locomo",
            &locomo,
            "--conversations",
            "1",
            "--arms",
            "lexical,dense,hybrid",
        ],
    );
    assert!(ok, "{stderr}");
    let reports: Vec<Value> = stdout
        .lines()
        .map(|line| serde_json::from_str(line).unwrap())
        .collect();
    let arms: Vec<&str> = reports
        .iter()
        .map(|r| r["arms"].as_str().unwrap())
        .collect();
    assert_eq!(arms, ["lexical", "dense", "hybrid"]);
    for report in &reports {
        let overall = &report["overall"];
        assert!(overall["questions"].as_u64().unwrap() > 50, "{report}");
        let (hit5, hit10) = (
            overall["hit_at_5"].as_f64().unwrap(),
            overall["hit_at_10"].as_f64().unwrap(),
        );
        assert!(hit5 <= hit10 && hit10 <= 1.0, "{report}");
        assert!(
            overall["recall_at_10"].as_f64().unwrap() <= hit10,
            "recall ≤ hit: {report}"
        );
        for category in ["multi_hop", "temporal", "open_domain", "single_hop"] {
            assert!(report["per_category"][category]["questions"].is_u64());
        }
        assert!(report["turns"].as_u64().unwrap() > 100);
        assert!(report["search_p99_ms"].as_f64().unwrap() > 0.0);
    }
    // Far from chance on one conversation (hundreds of turns, ten returned): the arms work.
    let hit10 = |i: usize| reports[i]["overall"]["hit_at_10"].as_f64().unwrap();
    assert!(hit10(0) > 0.4, "lexical: {}", reports[0]);
    assert!(hit10(2) > 0.4, "hybrid: {}", reports[2]);
}

/// `hindsight eval updates` on a slice of the shipped pairs, as a user runs it (the daemon's
/// binary running this one with its arguments): every pair of
/// the slice decided as its class says, nothing lost. (The full figures are in docs/updates.md.)
#[test]
fn eval_updates_on_a_slice_loses_nothing() {
    let dir = tempfile::tempdir().unwrap();
    let output = std::process::Command::new(common::daemon())
        .args([
            "eval",
            "updates",
            "--classes",
            "value,polarity,restatement,other_subject",
        ])
        .env("HINDSIGHT_DATA_DIR", dir.path())
        .env("HINDSIGHT_EMBEDDER", "builtin")
        .output()
        .unwrap();
    assert!(
        output.status.success(),
        "{}",
        String::from_utf8_lossy(&output.stderr)
    );
    let report: serde_json::Value = serde_json::from_slice(&output.stdout).unwrap();
    assert_eq!(report["eval"], "updates");
    assert_eq!(report["lost"], 0, "{report}");
    assert!(report["pairs"].as_u64().unwrap() >= 100, "{report}");
    for class in ["value", "polarity", "restatement", "other_subject"] {
        let right = report["per_class"][class]["decided_right"]
            .as_f64()
            .unwrap();
        assert!(right >= 0.9, "{class}: {right} ({report})");
    }
}
