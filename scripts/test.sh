#!/usr/bin/env bash
# The project's test command (README "Tests"; .ci/run calls it): formatting, lints, the Rust
# suites (unit, store, service, MCP over stdio and HTTP), and the official Python MCP SDK as an
# independent client against the built binary.
set -euo pipefail
cd "$(dirname "$0")/.."
export CARGO_TARGET_DIR="${CARGO_TARGET_DIR:-$HOME/.cache/hindsight-target}"
PYTHON="${HINDSIGHT_PYTHON:-python3}"

echo "== cargo fmt --check"
cargo fmt --all -- --check
echo "== cargo clippy"
cargo clippy --locked --all-targets -- -D warnings
echo "== cargo test"
cargo test --locked
echo "== Python MCP SDK client (stdio + HTTP)"
cargo build --locked
"$PYTHON" tests/python/mcp_sdk_client.py "$CARGO_TARGET_DIR/debug/hindsight"
