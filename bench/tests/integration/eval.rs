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
        // Where each search's time went, stage by stage, in the order they run.
        let stages: Vec<(&str, f64, f64)> = report["stages"]
            .as_array()
            .unwrap()
            .iter()
            .map(|s| {
                let ms = |k: &str| s[k].as_f64().unwrap();
                (s["stage"].as_str().unwrap(), ms("p50_ms"), ms("p99_ms"))
            })
            .collect();
        let names: Vec<&str> = stages.iter().map(|s| s.0).collect();
        assert_eq!(
            names,
            [
                "embed", "dense", "lexical", "fetch", "verify", "rank", "access"
            ],
            "{report}"
        );
        assert!(
            stages.iter().all(|(_, p50, p99)| 0.0 <= *p50 && p50 <= p99),
            "{report}"
        );
        // Both arms and the row fetch do real work on every search; no stage takes longer
        // than the slowest whole search.
        let max = report["search_max_ms"].as_f64().unwrap();
        for (stage, p50, p99) in &stages {
            if ["dense", "lexical", "fetch"].contains(stage) {
                assert!(*p50 > 0.0, "{stage}: {report}");
            }
            assert!(*p99 <= max + 1e-3, "{stage}: {report}");
        }
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

/// `bench vectors` writes the corpus `bench search` loads, for another store to load the same
/// (`scripts/side-by-side.sh`): one unit vector per memory and query, each row's namespace
/// (and type), and the same planted near-duplicates (a row at cosine 0.93–0.97 to an earlier
/// one of its namespace).
#[test]
fn bench_vectors_writes_the_search_bench_corpus() {
    let data = tempfile::tempdir().unwrap();
    let out = data.path().join("vectors");
    let (ok, stdout, stderr) = common::cli_with(
        data.path(),
        data.path(),
        &[],
        &[
            "bench",
            "vectors",
            "--n",
            "300",
            "--dimension",
            "16",
            "--queries",
            "7",
            "--out",
            out.to_str().unwrap(),
        ],
    );
    assert!(ok, "{stderr}");
    assert!(stdout.contains("\"bench\":\"vectors\""), "{stdout}");
    let rows = |name: &str, d: usize| -> Vec<Vec<f32>> {
        let bytes = std::fs::read(out.join(name)).unwrap();
        assert_eq!(bytes.len() % (4 * d), 0, "{name}");
        bytes
            .chunks(4 * d)
            .map(|row| {
                row.chunks(4)
                    .map(|b| f32::from_le_bytes(b.try_into().unwrap()))
                    .collect()
            })
            .collect()
    };
    let (memories, queries) = (rows("memories.f32", 16), rows("queries.f32", 16));
    assert_eq!((memories.len(), queries.len()), (300, 7));
    for v in memories.iter().chain(&queries) {
        let norm: f32 = v.iter().map(|x| x * x).sum::<f32>().sqrt();
        assert!((norm - 1.0).abs() < 1e-4, "{norm}");
    }
    let memory_rows = std::fs::read_to_string(out.join("memories.tsv")).unwrap();
    let meta: Vec<Vec<&str>> = memory_rows
        .lines()
        .map(|l| l.split('\t').collect())
        .collect();
    assert_eq!(meta.len(), 300);
    assert_eq!(meta[0], ["alpha", "episodic"]);
    assert_eq!(meta[5], ["beta", "working"]);
    let query_rows = std::fs::read_to_string(out.join("queries.tsv")).unwrap();
    assert_eq!(query_rows.lines().count(), 7);
    // Every 25th write re-says an earlier memory of its namespace.
    let dot = |a: &[f32], b: &[f32]| a.iter().zip(b).map(|(x, y)| x * y).sum::<f32>();
    let near = |i: usize| {
        (0..i).any(|j| meta[j][0] == meta[i][0] && dot(&memories[i], &memories[j]) > 0.92)
    };
    assert!(near(49) && near(74), "planted near-duplicates");
    assert!(!near(50), "an ordinary write is near no earlier one");

    // One user's store: every memory and query in one namespace; a count that would split a
    // restatement from what it re-says is refused.
    let one = data.path().join("one");
    let (ok, _, stderr) = common::cli_with(
        data.path(),
        data.path(),
        &[],
        &[
            "bench",
            "vectors",
            "--n",
            "40",
            "--dimension",
            "8",
            "--queries",
            "3",
            "--namespaces",
            "1",
            "--out",
            one.to_str().unwrap(),
        ],
    );
    assert!(ok, "{stderr}");
    let rows = std::fs::read_to_string(one.join("memories.tsv")).unwrap();
    assert!(rows.lines().all(|l| l.starts_with("alpha\t")), "{rows}");
    let (ok, _, stderr) = common::cli_with(
        data.path(),
        data.path(),
        &[],
        &[
            "bench",
            "vectors",
            "--namespaces",
            "3",
            "--out",
            one.to_str().unwrap(),
        ],
    );
    assert!(!ok && stderr.contains("--namespaces"), "{stderr}");
}
