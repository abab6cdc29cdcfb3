#!/usr/bin/env bash
# hindsight and chromadb side by side, in one run, on the same vectors: the comparison issue 59
# asks for, reproducible by anyone. Prints each system's JSON line, then one table with the
# ratios (hindsight / chromadb).
#
#   scripts/side-by-side.sh [N] [DIMENSION] [QUERIES] [NAMESPACES]   (defaults: 100000 384 1000 1)
#
# NAMESPACES 1 is one user's store of N memories (the issue's comparison); 2 or 4 split them,
# each query asking one namespace (chromadb then filters by a metadata field).
# 1. `hindsight-bench bench vectors` writes the synthetic corpus `bench search` loads (random
#    unit vectors, every 25th memory a planted near-duplicate) to a directory.
# 2. chromadb (PyPI, in a venv under ~/.cache) loads those vectors in batches of 500 into a
#    PersistentClient collection (cosine) and answers the same queries
#    (scripts/side_by_side/chroma_bench.py).
# 3. `hindsight bench search` loads the same corpus through hindsight's write path (dedup on),
#    once one write per call and once in batches of 64 with 8 writers, then times the same
#    queries (hybrid search).
# Each system runs alone, one after the other; nothing else should run on the machine.
set -euo pipefail
cd "$(dirname "$0")/.."

N="${1:-100000}"
DIMENSION="${2:-384}"
QUERIES="${3:-1000}"
NAMESPACES="${4:-1}"
CHROMADB_VERSION="${CHROMADB_VERSION:-1.5.9}"
VENV="${HINDSIGHT_CHROMA_VENV:-$HOME/.cache/hindsight-chroma-venv}"
export CARGO_TARGET_DIR="${CARGO_TARGET_DIR:-$HOME/.cache/hindsight-target}"

if ! "$VENV/bin/python" -c "import chromadb, sys; sys.exit(chromadb.__version__ != '$CHROMADB_VERSION')" 2>/dev/null; then
  python3 -m venv "$VENV"
  "$VENV/bin/pip" install --quiet --disable-pip-version-check "chromadb==$CHROMADB_VERSION" numpy
fi
cargo build --quiet --release --locked -p hindsight -p hindsight-bench
BENCH="$CARGO_TARGET_DIR/release/hindsight-bench"

WORK="$(mktemp -d)"
trap 'rm -rf "$WORK"' EXIT
"$BENCH" bench vectors --n "$N" --dimension "$DIMENSION" --queries "$QUERIES" --namespaces "$NAMESPACES" --out "$WORK/vectors" >/dev/null

echo "== chromadb $CHROMADB_VERSION" >&2
"$VENV/bin/python" scripts/side_by_side/chroma_bench.py "$WORK/vectors" --batch 500 | tee "$WORK/chroma.json"
echo "== hindsight, one write per call" >&2
"$BENCH" bench search --n "$N" --dimension "$DIMENSION" --queries "$QUERIES" --namespaces "$NAMESPACES" | tee "$WORK/single.json"
echo "== hindsight, batches of 64, 8 writers" >&2
"$BENCH" bench search --n "$N" --dimension "$DIMENSION" --queries "$QUERIES" --namespaces "$NAMESPACES" --batch 64 --writers 8 | tee "$WORK/batched.json"

python3 - "$WORK" <<'EOF'
import json, sys
from pathlib import Path
work = Path(sys.argv[1])
chroma = json.loads((work / "chroma.json").read_text())
runs = {"one per call": json.loads((work / "single.json").read_text()),
        "batches of 64": json.loads((work / "batched.json").read_text())}
print()
print(f"| system | writes/s | search p50 ms | p99 ms | recall@10 | RSS MB | peak MB |")
print(f"|---|---|---|---|---|---|---|")
print(f"| chromadb {chroma['version']}, batches of {chroma['batch']} | {chroma['inserts_per_second']:.0f} "
      f"| {chroma['search_p50_ms']:.2f} | {chroma['search_p99_ms']:.2f} | {chroma['recall_at_10']:.3f} "
      f"| {chroma['rss_mb']:.0f} | {chroma['peak_rss_mb']:.0f} |")
for name, r in runs.items():
    print(f"| hindsight, {name} | {r['writes_per_second']:.0f} | {r['search_p50_ms']:.2f} "
          f"| {r['search_p99_ms']:.2f} | {r['recall_at_10']:.3f} | {r['rss_mb']:.0f} | {r['peak_rss_mb']:.0f} |")
print()
print("ratios, hindsight / chromadb (writes: higher is better; the rest: lower is better)")
for name, r in runs.items():
    print(f"  {name}: writes {r['writes_per_second'] / chroma['inserts_per_second']:.2f}x, "
          f"search p99 {r['search_p99_ms'] / chroma['search_p99_ms']:.2f}x, "
          f"RSS {r['rss_mb'] / chroma['rss_mb']:.2f}x, peak {r['peak_rss_mb'] / chroma['peak_rss_mb']:.2f}x")
print()
print("hindsight's search by stage, p50 / p99 ms (batches of 64 run):")
for s in runs["batches of 64"]["stages"]:
    print(f"  {s['stage']:8} {s['p50_ms']:7.3f} {s['p99_ms']:7.3f}")
EOF
