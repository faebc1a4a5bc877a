#!/usr/bin/env bash
# Lines of each part of the tree (`.rs`, `.js` and `.mjs` files git tracks, tests inside a part
# included), for CONTRIBUTING.md's map: counted, never typed by hand.
#   scripts/line-counts.sh          the working tree
#   scripts/line-counts.sh <rev>    the tree at a commit (e.g. a "before" figure)
# "The edges" are everything around the core that turns its decisions into JS values, HTTP
# and storage: the wasm bindings, the JS package's lib and the Worker's source.
set -euo pipefail
cd "$(dirname "$0")/.."
rev="${1:-}"

# files <path>: the counted files under path
files() {
  if [ -n "$rev" ]; then git ls-tree -r --name-only "$rev" -- "$1"; else git ls-files -- "$1"; fi |
    grep -E '\.(rs|js|mjs)$' || true
}

# lines <path...>: their lines together
lines() {
  local total=0 n f
  for path in "$@"; do
    while read -r f; do
      [ -n "$f" ] || continue
      if [ -n "$rev" ]; then n=$(git show "$rev:$f" | wc -l); else n=$(wc -l < "$f"); fi
      total=$((total + n))
    done < <(files "$path")
  done
  echo "$total"
}

row() { # row <part> <what> <path...>
  printf '| %s | %s | %s |\n' "$1" "$2" "$(lines "${@:3}" | sed -E ':a;s/^([0-9]+)([0-9]{3})/\1,\2/;ta')"
}

echo "| part | path | lines |"
echo "|---|---|---:|"
row "core" '`src/`' src
row "wasm bindings: the limiter's module (and the lite module)" '`wasm/`' wasm
row "wasm bindings: the extras module" '`wasm-extras/`' wasm-extras
row "shared wasm crate" '`wasm-common/`' wasm-common
row "JS package" '`pkg-template/lib/`' pkg-template/lib
row "Worker" '`worker/src/`' worker/src
row "playground" '`www/app/`' www/app
row "the playground's wasm module" '`www-wasm/`' www-wasm
row "**the edges**" 'wasm/ + wasm-extras/ + wasm-common/ + pkg-template/lib + worker/src' \
  wasm wasm-extras wasm-common pkg-template/lib worker/src
