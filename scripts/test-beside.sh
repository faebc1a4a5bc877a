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
# The equivalence suite's output is kept in target/test-logs/equivalence.log and printed
# when it ends; a failure of either side fails the run (and stops the other).
set -euo pipefail
cd "$(dirname "$0")/.."
. scripts/worker-current.sh
scripts/pkg-current.sh --tarball >/dev/null

mkdir -p target/test-logs
log=target/test-logs/equivalence.log
# Its own process group, so that a failure here stops the whole suite with its servers.
setsid make --no-print-directory test-equivalence >"$log" 2>&1 </dev/null &
beside=$!
trap 'kill -TERM -- -"$beside" 2>/dev/null || true' EXIT
echo "test-equivalence runs beside the suites below (its output: $log, printed when it ends)"

for target in test-pkg test-pacer test-lease test-www; do
  make --no-print-directory "$target"
done

status=0
wait "$beside" || status=$?
trap - EXIT
echo "== test-equivalence (ran beside test-pkg, test-pacer, test-lease and test-www)"
cat "$log"
[ "$status" -eq 0 ] || { echo "test-equivalence failed (exit $status)"; exit "$status"; }

make --no-print-directory test-redis
