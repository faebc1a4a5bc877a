#!/usr/bin/env sh
# Builds the Worker with worker-build, offline-safe:
#  - `build.sh`: the production build, build/index.js + build/index_bg.wasm (what wrangler.toml's
#    `main` names: `make run`, `wrangler dev` and `wrangler deploy` run this), without any
#    test hook;
#  - `build.sh --test`: the test build, build-test/ (feature `test-hooks`: injected faults, the
#    /v1/test/ routes, a request's `now`, all behind TEST_MODE), which the workerd tests run
#    (worker/test/harness.mjs).
# Both use:
#  - wasm-bindgen from PATH (cargo install wasm-bindgen-cli 0.2.130), never a GitHub download
#  - wasm-opt from npm `binaryen` (node_modules/.bin/wasm-opt) via WASM_OPT_BIN
#  - esbuild from npm `esbuild` via ESBUILD_BIN
# Skips when <out>/index.js is newer than every input (wrangler dev and deploy run this too),
# or whenever SKIP_WORKER_BUILD=1 and <out>/ exists. FORCE_WORKER_BUILD=1 forces a build.
#
# Always first for the production build, even when the build is skipped: the configuration check. The wrangler.toml
# being built (the one in the directory wrangler runs this from, else worker/wrangler.toml;
# TOLLGATE_WRANGLER_CONFIG names another) is read by the Worker's own parser, natively
# (examples/check_config.rs), and a bad POLICIES/POOLS/PROXY fails here with the var, the
# field and the reason, before anything can serve it.
#
# Then the playground's assets (www/vendor/tollgate, scripts/build-www.sh, skipped when
# current), so that a plain `wrangler deploy` ships a page that can load its module.
#
# One build at a time: the script holds a lock (target/worker-build.lock) while it runs, so a
# call made while another builds waits for it and then finds build/ current. `make test` starts
# the Rust part early in the background (scripts/prebuild-worker.sh, WORKER_PREBUILD=1: the
# wasm build only, the lock already taken for it), and the first test target that needs the
# Worker waits here for it. The wasm build has its own cargo target directory
# (target/worker-wasm), so that it does not hold the workspace's cargo lock during its long
# link while the other crates build and test; the two builds share it (only the Worker crate
# itself is compiled apart for each).
set -eu
caller="$PWD"
cd "$(dirname "$0")/.."
out=build
features=""
if [ "${1:-}" = "--test" ]; then
  shift
  out=build-test
  features="--features test-hooks"
fi
export PATH="$HOME/.cargo/bin:$PATH"
if [ "${TOLLGATE_WORKER_BUILD_LOCKED:-0}" != "1" ]; then
  mkdir -p ../target
  exec 9>../target/worker-build.lock
  flock 9
fi
config="${TOLLGATE_WRANGLER_CONFIG:-}"
if [ -z "$config" ]; then
  if [ -f "$caller/wrangler.toml" ]; then config="$caller/wrangler.toml"; else config="$PWD/wrangler.toml"; fi
fi
prebuild="${WORKER_PREBUILD:-0}"
if [ "$prebuild" != "1" ]; then
  if [ "$out" = build ]; then
    cargo run --quiet -p tollgate-worker --example check_config -- "$config"
  fi
  if [ "${SKIP_WWW_BUILD:-0}" != "1" ]; then
    ../scripts/build-www.sh
  fi
fi
if [ -f "$out/index.js" ] && [ "${FORCE_WORKER_BUILD:-0}" != "1" ]; then
  if [ "${SKIP_WORKER_BUILD:-0}" = "1" ]; then
    echo "SKIP_WORKER_BUILD=1: reusing $out/"; exit 0
  fi
  if [ -z "$(find src Cargo.toml ../src ../Cargo.toml ../Cargo.lock -newer "$out/index.js" 2>/dev/null | head -1)" ]; then
    echo "$out/ is up to date: skipping worker-build"; exit 0
  fi
fi
export WASM_BINDGEN_BIN="${WASM_BINDGEN_BIN:-$(command -v wasm-bindgen)}"
export ESBUILD_BIN="${ESBUILD_BIN:-$PWD/node_modules/esbuild/bin/esbuild}"
if [ -x node_modules/.bin/wasm-opt ]; then
  export WASM_OPT_BIN="${WASM_OPT_BIN:-$PWD/node_modules/.bin/wasm-opt}"
fi
# shellcheck disable=SC2086 # $features is empty or two words
CARGO_TARGET_DIR="$PWD/../target/worker-wasm" worker-build --release --out-dir "$out" "$@" $features
