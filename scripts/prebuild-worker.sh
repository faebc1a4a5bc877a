#!/usr/bin/env bash
# Starts the Worker's two wasm builds (worker/scripts/build.sh --test, the test build the
# workerd tests run, then worker/scripts/build.sh, the production build whose bundle
# test-worker checks; both with WORKER_PREBUILD=1) in the background, one after the other,
# and returns at once: `make test` runs this first, so that the build's long,
# mostly single-threaded link overlaps the core's tests instead of waiting for test-worker.
# The lock is taken here, before this script returns, and handed to the builds (which keep it
# until both end), so every later call of worker/scripts/build.sh waits for them and then
# finds build-test/ and build/ current. Its output: target/worker-prebuild.log (a failure there is repeated,
# and shown, by the next call).
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/setup.sh worker,npm >/dev/null
mkdir -p target
exec 9>target/worker-build.lock
flock 9
TOLLGATE_WORKER_BUILD_LOCKED=1 WORKER_PREBUILD=1 nohup sh -c 'sh worker/scripts/build.sh --test && sh worker/scripts/build.sh' \
  >target/worker-prebuild.log 2>&1 </dev/null &
echo "the Worker's wasm builds (test, then production) run in the background (target/worker-prebuild.log)"
