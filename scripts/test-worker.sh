#!/usr/bin/env bash
# `make test-worker`: set-up (wasm-bindgen, worker-build, npm ci in worker/), the Worker
# crate's unit tests (native, with the test hooks), the test build and the production build
# (each skipped when up to date), then the end-to-end tests in workerd (Miniflare and
# wrangler dev on 127.0.0.1, temp persistence) against the test build, and the production
# bundle's check (worker/test/production-bundle.test.mjs), bounded.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/setup.sh worker,npm
export PATH="$HOME/.cargo/bin:$PATH"
export CLOUDFLARE_CF_FETCH_ENABLED=false WRANGLER_SEND_METRICS=false
cargo test --quiet -p tollgate-worker --features test-hooks
sh worker/scripts/build.sh --test
sh worker/scripts/build.sh
cd worker
# Each file starts and stops its own runtime; one at a time keeps 2-core machines calm.
# Sync mode with 10,000 active keys runs on its own, with its own bound: about 2.5 minutes on
# an idle 2-core machine (about 30,000 object calls).
timeout 900 node --test --test-concurrency=1 --test-timeout=180000 $(ls test/*.test.mjs | grep -v '/sync-keys.test.mjs$')
TOLLGATE_SYNC_KEYS=10000 timeout 900 node --test --test-timeout=880000 test/sync-keys.test.mjs
