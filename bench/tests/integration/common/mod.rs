//! The bench member's test harness: the `hindsight-bench` binary cargo built for these tests,
//! the daemon beside it (the benches that start one, and `hindsight bench|eval`, which runs
//! this binary), and the test data (`tests/integration/common/data.rs`, shared with the daemon's tests).
#![allow(dead_code)]

use std::path::{Path, PathBuf};

#[path = "../../../../tests/integration/common/data.rs"]
mod data;

#[allow(unused_imports)] // each test module uses some
pub use data::{locomo, minilm_dir, repository};

pub fn binary() -> PathBuf {
    PathBuf::from(env!("CARGO_BIN_EXE_hindsight-bench"))
}

/// The daemon's binary in the same target directory. `cargo test` in the repository builds
/// both members (`default-members`); run alone (`-p hindsight-bench`), build it first.
pub fn daemon() -> PathBuf {
    let daemon = binary().with_file_name(format!("hindsight{}", std::env::consts::EXE_SUFFIX));
    assert!(
        daemon.is_file(),
        "{} is missing: these tests start the daemon; `cargo test` in the repository builds \
         both members (or `cargo build -p hindsight` first)",
        daemon.display()
    );
    daemon
}

/// `hindsight-bench ARGS` with this data dir and jobs dir (and `envs`), the daemon beside it
/// as `HINDSIGHT_BIN`; (exit ok, stdout, stderr).
pub fn cli_with(
    data_dir: &Path,
    jobs_dir: &Path,
    envs: &[(&str, &str)],
    args: &[&str],
) -> (bool, String, String) {
    let daemon = daemon();
    let mut all = vec![("HINDSIGHT_BIN", daemon.to_str().unwrap())];
    all.extend_from_slice(envs);
    data::run_cli(&binary(), data_dir, jobs_dir, &all, args)
}
