#!/usr/bin/env bash
# `make test-equivalence`: the equivalence fixture (also through the npm WorkerStore) and the
# pacer's and lease holder's decisions across the HTTP boundary, through the real Worker in workerd (Miniflare) against the npm
# package as a user gets it. Set-up through scripts/setup.sh; pkg/ and worker/build/ are built
# only when absent or older than their sources; the packed tarball is installed into
# tests/equivalence/node_modules/tollgate; then node --test, one file at a time.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/setup.sh worker,npm
export PATH="$HOME/.cargo/bin:$PATH"
export CLOUDFLARE_CF_FETCH_ENABLED=false WRANGLER_SEND_METRICS=false

stale() { # stale <output> <inputs...>: the output is missing or an input is newer
  [ ! -e "$1" ] || [ -n "$(find "${@:2}" -newer "$1" -type f 2>/dev/null | head -1)" ]
}
if stale pkg/package.json src wasm/src wasm/Cargo.toml wasm-extras pkg-template Cargo.toml Cargo.lock; then
  scripts/build-pkg.sh
fi
sh worker/scripts/build.sh
# The fixture's native decisions (tests/js/fixture.mjs runs this example).
cargo build --quiet --release --example equivalence_fixture

work=$(mktemp -d) && trap 'rm -rf "$work"' EXIT
tarball=$(cd pkg && npm pack --silent --pack-destination "$work")
rm -rf tests/equivalence/node_modules && mkdir -p tests/equivalence/node_modules/tollgate
tar -xzf "$work/$tarball" -C tests/equivalence/node_modules/tollgate --strip-components=1
timeout 2400 node --test --test-concurrency=1 --test-timeout=1800000 tests/equivalence/
