#!/usr/bin/env bash
# The npm package as every test target gets it, built and packed at most once per change of
# its sources (one stamp for all targets, instead of a check of pkg/ in each script):
#   1. pkg/ is built (scripts/build-pkg.sh, release) when the stamp target/pkg-stamp/built is
#      missing or older than any source of the package (or pkg/ is gone, or the last build was
#      `make pkg-debug`, which removes the stamp);
#   2. with --tarball or any <dir>, it is packed once (`npm pack`) into
#      target/pkg-stamp/tollgate.tgz, again only when the build is newer than the tarball
#      (--tarball prints the tarball's path);
#   3. the tarball is extracted into <dir>/node_modules/tollgate for every <dir> given, as a
#      user's `npm install` of it would lay it out.
# Usage: scripts/pkg-current.sh [--tarball] [dir...]
set -euo pipefail
cd "$(dirname "$0")/.."
export PATH="$HOME/.cargo/bin:$PATH"

stamps=target/pkg-stamp
built=$stamps/built
tarball=$stamps/tollgate.tgz
sources=(src wasm-common wasm wasm-extras pkg-template Cargo.toml Cargo.lock LICENSE-MIT LICENSE-APACHE scripts/build-pkg.sh scripts/cjs-types.mjs scripts/wasm-sizes.mjs)

stale() { # stale <output> <inputs...>: the output is missing or an input is newer
  [ ! -e "$1" ] || [ -n "$(find "${@:2}" -newer "$1" -type f -print -quit 2>/dev/null)" ]
}

# One caller at a time (test lanes run side by side): a second waits, then finds pkg/ current.
mkdir -p "$stamps" && exec 9>"$stamps/lock" && flock 9
if [ ! -f pkg/package.json ] || stale "$built" "${sources[@]}"; then
  scripts/build-pkg.sh >&2 # writes $built when it succeeds; its log on stderr, stdout is the tarball
fi
print=false
if [ "${1:-}" = --tarball ]; then print=true; shift; fi
[ "$print" = true ] || [ $# -gt 0 ] || exit 0
if stale "$tarball" "$built"; then
  work=$(mktemp -d) && trap 'rm -rf "$work"' EXIT
  name=$(cd pkg && npm pack --silent --pack-destination "$work" | tail -1)
  mv "$work/$name" "$tarball"
fi
for dir in "$@"; do
  rm -rf "$dir/node_modules/tollgate" && mkdir -p "$dir/node_modules/tollgate"
  tar -xzf "$tarball" -C "$dir/node_modules/tollgate" --strip-components=1
done
if [ "$print" = true ]; then echo "$PWD/$tarball"; fi
