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
scripts/timed.sh test-worker/cargo-test cargo test --quiet -p tollgate-worker --features test-hooks
# (The wasm builds started in the background: this waits for them.)
scripts/timed.sh test-worker/builds sh -c 'sh worker/scripts/build.sh --test && sh worker/scripts/build.sh'
cd worker
# Each file starts and stops its own runtime; one at a time keeps 2-core machines calm.
../scripts/timed.sh test-worker/workerd timeout 900 node --test --test-concurrency=1 --test-timeout=180000 $(ls test/*.test.mjs | grep -v '/sync-keys.test.mjs$')
# Sync mode with 10,000 active keys runs on its own, with its own bound: about 2.5 minutes on
# an idle 2-core machine (about 30,000 object calls). Every key is a Durable Object whose SQLite
# database the local runtime keeps open, all in one process: past what the open-files limit
# holds, SQLite fails (SQLITE_NOMEM) and pushes fail. Measured under a limit of 20,000: 3,000 keys
# clean, 3,600 with failed pushes, 5,000 failing; so the run takes 10,000 keys where the limit is
# at least 62,000 (six per key, plus 2,000), else as many as it holds, and says so.
files=$(ulimit -n)
keys=10000
if [ "$files" != unlimited ] && [ $(( (files - 2000) / 6 )) -lt $keys ]; then
  keys=$(( (files - 2000) / 6 / 100 * 100 ))
  echo "sync-keys: $keys keys, not 10,000: the open-files limit (ulimit -n) is $files, and 10,000 keys need 62,000"
fi
TOLLGATE_SYNC_KEYS=$keys ../scripts/timed.sh test-worker/sync-keys timeout 900 node --test --test-timeout=880000 test/sync-keys.test.mjs
