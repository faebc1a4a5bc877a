#!/usr/bin/env bash
# `make bench-worker`: the Worker's load test (autocannon on loopback: 5 scenarios x 8 s, 16
# connections), sync-mode over-admission (3 isolate counts x 5 sync settings x 2 s, flat out and
# paced), leased quota against exact mode on one hot key (two isolates, 4 runs x 8 s), in
# workerd via Miniflare, and sync mode with 10,000 active keys (test/sync-keys.test.mjs on the
# test build, the test's 1,000 raised; about 30,000 object calls). Bounded: about 4 minutes after the build on an
# idle machine. Prints Markdown tables
# for docs/benchmarks.md.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/setup.sh worker,npm
export PATH="$HOME/.cargo/bin:$PATH"
export CLOUDFLARE_CF_FETCH_ENABLED=false WRANGLER_SEND_METRICS=false
sh worker/scripts/build.sh
# test/sync-keys.test.mjs runs the test build (its requests carry the test clock).
sh worker/scripts/build.sh --test
cd worker
echo "## decisions per second and latency (node bench/load.mjs ${LOAD_SECONDS:-8} ${LOAD_CONNECTIONS:-16})"
timeout 300 node bench/load.mjs "${LOAD_SECONDS:-8}" "${LOAD_CONNECTIONS:-16}"
echo
echo "## sync-mode over-admission (node bench/overadmission.mjs ${OVER_SECONDS:-2} ${OVER_CONCURRENCY:-8})"
timeout 300 node bench/overadmission.mjs "${OVER_SECONDS:-2}" "${OVER_CONCURRENCY:-8}"
echo
echo "## sync-mode over-admission, paced at 200 hits/s (node bench/overadmission.mjs 2 8 200)"
timeout 300 node bench/overadmission.mjs 2 8 200
echo
echo "## leased quota: one hot key, two isolates, leased against exact (node bench/leased.mjs ${LEASED_SECONDS:-8} ${LEASED_CLIENTS:-32})"
timeout 300 node bench/leased.mjs "${LEASED_SECONDS:-8}" "${LEASED_CLIENTS:-32}"
echo
echo "## sync mode with many keys (TOLLGATE_SYNC_KEYS=10000 node --test test/sync-keys.test.mjs)"
TOLLGATE_SYNC_KEYS="${SYNC_KEYS:-10000}" timeout 600 node --test --test-timeout=580000 test/sync-keys.test.mjs
