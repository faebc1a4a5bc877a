#!/usr/bin/env bash
# `make bench-worker-store`: WorkerStore against the real Worker (workerd through Miniflare, on
# loopback) beside RedisStore against a local redis-server, in one run: decisions/s and
# latency on one hot key and on 10,000 keys. Prints a Markdown table for docs/benchmarks.md.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/setup.sh worker,redis,npm,npm-bench >/dev/null
scripts/pkg-current.sh
sh worker/scripts/build.sh >/dev/null
(cd bench/redis && [ -d node_modules/redis ] || npm ci --no-audit --no-fund --loglevel=error)
export CLOUDFLARE_CF_FETCH_ENABLED=false WRANGLER_SEND_METRICS=false
timeout 300 node bench/redis/worker-store.mjs
