#!/usr/bin/env bash
# Regenerates vendor/qdrant-edge from the crates.io tarball of qdrant-edge 0.7.0 and the patch
# series in vendor/qdrant-edge-patches/ (applied in file-name order), or, with --check, fails
# when the committed tree differs from tarball + patches (CI runs the check).
#
#   scripts/vendor-qdrant-edge.sh           # rewrite vendor/qdrant-edge
#   scripts/vendor-qdrant-edge.sh --check   # compare only
#
# To change the engine: edit a tree made by this script, commit the change as a new patch
# (`git format-patch`, its message saying what and why and what was measured), add it to the
# series, and run this script. Never edit vendor/qdrant-edge by hand: --check fails.
set -euo pipefail
cd "$(dirname "$0")/.."

VERSION="0.7.0"
SHA256="714dd06d7635624d53e5c6718081f914d83c76532c598747b5157c38169e2546"
CHECK=0
case "${1:-}" in
  --check) CHECK=1 ;;
  "") ;;
  *) echo "usage: $0 [--check]" >&2; exit 2 ;;
esac

WORK="$(mktemp -d)"
trap 'rm -rf "$WORK"' EXIT
CRATE="$WORK/qdrant-edge-$VERSION.crate"

# cargo's download cache first (no network needed), else crates.io's static host.
CACHED="$(ls "${CARGO_HOME:-$HOME/.cargo}"/registry/cache/*/qdrant-edge-$VERSION.crate 2>/dev/null | head -1 || true)"
if [ -n "$CACHED" ]; then
  cp "$CACHED" "$CRATE"
else
  curl -sSfL -o "$CRATE" "https://static.crates.io/crates/qdrant-edge/qdrant-edge-$VERSION.crate"
fi
echo "$SHA256  $CRATE" | sha256sum --check --quiet - || {
  echo "qdrant-edge-$VERSION.crate does not have the checksum crates.io published" >&2
  exit 1
}

tar xzf "$CRATE" -C "$WORK"
TREE="$WORK/qdrant-edge-$VERSION"
for p in vendor/qdrant-edge-patches/*.patch; do
  git -C "$TREE" apply --whitespace=nowarn "$PWD/$p" || {
    echo "$p does not apply to qdrant-edge $VERSION + the patches before it" >&2
    exit 1
  }
done

if [ "$CHECK" = 1 ]; then
  if ! diff -r "$TREE" vendor/qdrant-edge >"$WORK/diff"; then
    echo "vendor/qdrant-edge differs from qdrant-edge $VERSION + vendor/qdrant-edge-patches:" >&2
    head -50 "$WORK/diff" >&2
    exit 1
  fi
  echo "vendor/qdrant-edge = qdrant-edge $VERSION + $(ls vendor/qdrant-edge-patches/*.patch | wc -l) patches"
else
  # Only the files that differ are written, so cargo does not rebuild an unchanged engine.
  mkdir -p vendor/qdrant-edge
  changed=0
  while IFS= read -r -d '' f; do
    rel="${f#"$TREE"/}"
    if ! cmp -s "$f" "vendor/qdrant-edge/$rel"; then
      mkdir -p "$(dirname "vendor/qdrant-edge/$rel")"
      cp "$f" "vendor/qdrant-edge/$rel"
      changed=$((changed + 1))
    fi
  done < <(find "$TREE" -type f -print0)
  while IFS= read -r -d '' f; do
    rel="${f#vendor/qdrant-edge/}"
    if [ ! -e "$TREE/$rel" ]; then
      rm "$f"
      changed=$((changed + 1))
    fi
  done < <(find vendor/qdrant-edge -type f -print0)
  find vendor/qdrant-edge -type d -empty -delete
  echo "vendor/qdrant-edge regenerated: $changed files written or removed"
fi
