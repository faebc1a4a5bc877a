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
#
# The tests' npm installs (scripts/setup.sh npm: tests/targets' runtimes and bundlers, the
# package's and the playground's test tools) start here too, in the background: they wait on
# the network and the disk more than on the CPU, so they overlap the core's tests. Each folder
# is installed under its own lock, so a later `setup.sh npm` waits for it and finds it
# current (target/npm-prebuild.log).
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/setup.sh worker >/dev/null
mkdir -p target
exec 9>target/worker-build.lock
flock 9
TOLLGATE_WORKER_BUILD_LOCKED=1 WORKER_PREBUILD=1 nohup sh -c 'scripts/timed.sh prebuild/npm-worker scripts/setup.sh npm-worker && scripts/timed.sh prebuild/worker-test-build sh worker/scripts/build.sh --test && scripts/timed.sh prebuild/worker-build sh worker/scripts/build.sh' \
  >target/worker-prebuild.log 2>&1 </dev/null &
echo "the Worker's wasm builds (test, then production) run in the background (target/worker-prebuild.log)"
exec 9>&-
nohup scripts/timed.sh prebuild/npm scripts/setup.sh npm >target/npm-prebuild.log 2>&1 </dev/null &
echo "the tests' npm installs run in the background (target/npm-prebuild.log)"
