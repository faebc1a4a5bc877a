#!/usr/bin/env bash
# `make test-lease`: LeasedPacer (the npm package's client for capacity leases) against the
# real Worker in workerd, as a user gets it. Set-up (Rust targets, wasm-bindgen, worker-build,
# npm ci) through scripts/setup.sh; pkg/ and worker/build/ are built only when absent or
# older than their sources (the same scripts as `make pkg` and `make test-worker`); the
# packed tarball is installed into tests/lease/node_modules/tollgate; then node --test.
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

work=$(mktemp -d) && trap 'rm -rf "$work"' EXIT
tarball=$(cd pkg && npm pack --silent --pack-destination "$work")
rm -rf tests/lease/node_modules && mkdir -p tests/lease/node_modules/tollgate
tar -xzf "$work/$tarball" -C tests/lease/node_modules/tollgate --strip-components=1
# Each file starts its own Worker; the tests mostly wait on the real clock, so the files run
# side by side (their safety checks do not depend on timing, their liveness bounds are loose).
timeout 300 node --test --test-concurrency=3 --test-timeout=120000 tests/lease/
