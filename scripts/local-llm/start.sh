#!/usr/bin/env bash
# Start the local OpenAI-compatible model server in the background (install.sh first) and print
# its base URL (http://127.0.0.1:PORT/v1) once the model is loaded. Stop it with stop.sh.
#   start.sh [--model FILE.gguf] [--port N] [--threads N]
#   (default: SmolLM2 135M Instruct, a free port, one thread)
set -euo pipefail
HERE="$(cd "$(dirname "$0")" && pwd)"
LLM_HOME="${HINDSIGHT_LLM_HOME:-$HOME/.cache/hindsight-llm}"
MODEL="$LLM_HOME/models/SmolLM2-135M-Instruct.Q4_1.gguf"
PORT=0
THREADS=1
while [ $# -gt 0 ]; do
  case "$1" in
    --model) MODEL="$2"; shift 2 ;;
    --port) PORT="$2"; shift 2 ;;
    --threads) THREADS="$2"; shift 2 ;;
    *) echo "start.sh: unknown argument $1" >&2; exit 2 ;;
  esac
done
[ -d "$LLM_HOME/node_modules/node-llama-cpp" ] || { echo "start.sh: run install.sh first" >&2; exit 1; }
[ -s "$MODEL" ] || { echo "start.sh: no model at $MODEL" >&2; exit 1; }
if [ -f "$LLM_HOME/server.pid" ] && kill -0 "$(cat "$LLM_HOME/server.pid")" 2>/dev/null; then
  echo "start.sh: already running (pid $(cat "$LLM_HOME/server.pid")); stop.sh first" >&2
  exit 1
fi
# Run from the install dir so node finds node_modules.
cp "$HERE/server.mjs" "$LLM_HOME/server.mjs"
: >"$LLM_HOME/server.log"
nohup node "$LLM_HOME/server.mjs" --model "$MODEL" --port "$PORT" --threads "$THREADS" >"$LLM_HOME/server.log" 2>&1 &
echo $! >"$LLM_HOME/server.pid"
for _ in $(seq 1 300); do
  URL="$(sed -n 's/^listening //p' "$LLM_HOME/server.log")"
  if [ -n "$URL" ]; then
    echo "$URL"
    exit 0
  fi
  kill -0 "$(cat "$LLM_HOME/server.pid")" 2>/dev/null || break
  sleep 0.2
done
echo "start.sh: the server did not start; see $LLM_HOME/server.log" >&2
cat "$LLM_HOME/server.log" >&2
exit 1
