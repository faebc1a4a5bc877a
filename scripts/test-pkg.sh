#!/usr/bin/env bash
# The npm package end to end: pkg/ current (scripts/pkg-current.sh, built only when stale),
# the wasm-bindgen tests under Node and headless Chromium, then node --test against the packed
# tarball (packed once; tests/js/packed.mjs installs it into temporary projects).
set -euo pipefail
cd "$(dirname "$0")/.."
export PATH="$HOME/.cargo/bin:$PATH"
scripts/setup.sh wasm,browser,worker,npm >/dev/null
export TOLLGATE_TARBALL
TOLLGATE_TARBALL=$(scripts/pkg-current.sh --tarball | tail -1)

echo "== wasm layer unit tests (native: the exact time conversions of the batch loop, the core's messages)"
scripts/timed.sh test-pkg/wasm-unit cargo test -q -p tollgate-wasm-common -p tollgate-wasm --lib

export CARGO_TARGET_WASM32_UNKNOWN_UNKNOWN_RUNNER=wasm-bindgen-test-runner
echo "== wasm-bindgen-test (Node)"
scripts/timed.sh test-pkg/wasm-bindgen-node cargo test -p tollgate-wasm --features std --target wasm32-unknown-unknown --test web
echo "== wasm-bindgen-test (headless Chromium)"
WASM_BINDGEN_USE_BROWSER=1 CHROMEDRIVER=/usr/bin/chromedriver \
  scripts/timed.sh test-pkg/wasm-bindgen-chromium cargo test -p tollgate-wasm --features std --target wasm32-unknown-unknown --test web

# tests/js/headers-parity.test.mjs compares the middleware with the built Worker in workerd
# (its test build: the hits carry the test clock).
sh worker/scripts/build.sh --test

echo "== node --test (packed tarball)"
scripts/timed.sh test-pkg/node-test node --test tests/js/
