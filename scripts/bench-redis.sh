#!/usr/bin/env bash
# `make bench-redis`: the Redis store against rate-limiter-flexible's RateLimiterRedis on a
# local redis-server (decisions/s, Redis commands per decision), then the sync modes'
# over-admission with 4 processes. Bounded: about a minute and a half after the build.
# Prints Markdown tables for docs/benchmarks.md.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/setup.sh redis,npm >/dev/null
make --no-print-directory pkg
echo "## decisions per second (node bench/redis/bench.mjs, 3 s per run; BENCH_SECONDS to change)"
timeout 300 node bench/redis/bench.mjs
echo
echo "## sync-mode over-admission (node bench/redis/overadmission.mjs)"
timeout 300 node bench/redis/overadmission.mjs
