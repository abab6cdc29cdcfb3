#!/usr/bin/env bash
# Stop the server start.sh started (by its PID file).
set -euo pipefail
LLM_HOME="${HINDSIGHT_LLM_HOME:-$HOME/.cache/hindsight-llm}"
PID_FILE="$LLM_HOME/server.pid"
[ -f "$PID_FILE" ] || { echo "stop.sh: not running (no $PID_FILE)"; exit 0; }
PID="$(cat "$PID_FILE")"
if kill "$PID" 2>/dev/null; then
  for _ in $(seq 1 50); do kill -0 "$PID" 2>/dev/null || break; sleep 0.1; done
  kill -9 "$PID" 2>/dev/null || true
fi
rm -f "$PID_FILE"
