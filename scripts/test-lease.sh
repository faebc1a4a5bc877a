#!/usr/bin/env bash
# `make test-lease`: LeasedPacer (the npm package's client for capacity leases) against the
# real Worker in workerd, as a user gets it. scripts/worker-current.sh: set-up, pkg/ and
# worker/build/ built only when stale, the packed tarball installed into
# tests/lease/node_modules/tollgate; then node --test.
set -euo pipefail
cd "$(dirname "$0")/.."
. scripts/worker-current.sh tests/lease
# Each file starts its own Worker; the tests mostly wait on the real clock, so the files run
# side by side (their safety checks do not depend on timing, their liveness bounds are loose).
timeout 300 node --test --test-concurrency=3 --test-timeout=120000 tests/lease/
