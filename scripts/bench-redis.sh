#!/usr/bin/env bash
# `make bench-redis`: the Redis store against rate-limiter-flexible's RateLimiterRedis on a
# local redis-server (decisions/s, Redis commands per decision), then the sync modes'
# over-admission with 4 processes, then one hot key from 32 processes against 32 distinct keys,
# tollgate and rate-limiter-flexible in the same run, then 32 processes on one key of a limit
# of 2,000 with the store's defaults, repeated (admissions, and decisions taken for an outage).
# Bounded: a few minutes after the build.
# Prints Markdown tables for docs/benchmarks.md.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/setup.sh redis,npm,npm-bench >/dev/null
scripts/pkg-current.sh tests/redis
echo "## decisions per second (node bench/redis/bench.mjs, 3 s per run; BENCH_SECONDS to change)"
timeout 300 node bench/redis/bench.mjs
echo
echo "## sync-mode over-admission (node bench/redis/overadmission.mjs)"
timeout 300 node bench/redis/overadmission.mjs
echo
echo "## one hot key from 32 processes vs 32 distinct keys (node bench/redis/hotkey.mjs; BENCH_PROCESSES, BENCH_SECONDS, BENCH_REPEATS)"
timeout 900 node bench/redis/hotkey.mjs
echo
echo "## starved processes on one key: admitted vs the limit (node bench/redis/busy-hotkey.mjs; BENCH_PROCESSES, BENCH_HITS, BENCH_REPEATS)"
timeout 900 node bench/redis/busy-hotkey.mjs
