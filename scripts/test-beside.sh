#!/usr/bin/env bash
# `make test`'s suites after test-worker, with the equivalence suite running beside them.
#
# The equivalence suite is the longest (the Worker fixture's 120,000 hits over HTTP) and keeps
# workerd busy on one core, while the package, pacer, lease and playground suites in turn
# mostly build on one core or wait on their own servers: side by side they use both cores of
# a 2-core machine instead of taking turns. Nothing they share is written by two at once: the
# npm package and the Worker are built (and the tarball packed) here first, every later
# `worker/scripts/build.sh` finds them current under its lock, each suite starts its own
# servers on free ports, and each extracts the tarball into its own folder.
#
# test-redis runs last, after the equivalence suite ended: its stores wait 500 ms for Redis by
# default, which a machine this busy need not keep to.
#
# The target apps (test-targets: Next.js, Vite, webpack, edge-runtime, Bun, Deno and esbuild
# builds and servers) run beside them too, under `nice`: their builds take the CPU time the
# other suites leave while they wait on their servers and browsers, rather than a turn of their
# own. Chromium is installed here first, so that two suites never run apt at once.
#
# The equivalence suite's output is kept in target/test-logs/equivalence.log, the target apps'
# in target/test-logs/targets.log, each printed when it ends; a failure of any side fails the
# run (and stops the others).
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/timed.sh test-beside/set-up bash -c '. scripts/worker-current.sh && scripts/pkg-current.sh --tarball >/dev/null'
scripts/setup.sh browser,npm >/dev/null

mkdir -p target/test-logs
log=target/test-logs/equivalence.log
targets_log=target/test-logs/targets.log
# Each in its own process group, so that a failure here stops the whole suite with its servers.
setsid scripts/timed.sh test-equivalence make --no-print-directory test-equivalence >"$log" 2>&1 </dev/null &
beside=$!
setsid nice -n 10 scripts/timed.sh test-targets make --no-print-directory test-targets >"$targets_log" 2>&1 </dev/null &
targets=$!
trap 'kill -TERM -- -"$beside" -"$targets" 2>/dev/null || true' EXIT
echo "test-equivalence and test-targets run beside the suites below (their output: $log, $targets_log, printed when each ends)"

for target in test-pkg test-pacer test-lease test-www; do
  scripts/timed.sh "$target" make --no-print-directory "$target"
done

status=0
wait "$beside" || status=$?
echo "== test-equivalence (ran beside test-pkg, test-pacer, test-lease and test-www)"
cat "$log"
[ "$status" -eq 0 ] || { echo "test-equivalence failed (exit $status)"; exit "$status"; }
wait "$targets" || status=$?
trap - EXIT
echo "== test-targets (ran beside test-pkg, test-pacer, test-lease and test-www)"
cat "$targets_log"
[ "$status" -eq 0 ] || { echo "test-targets failed (exit $status)"; exit "$status"; }

scripts/timed.sh test-redis make --no-print-directory test-redis
