#!/usr/bin/env bash
# `make test-equivalence`: the equivalence fixture (also through the npm WorkerStore) and the pacer's and lease holder's decisions
# across the HTTP boundary, through the real Worker in workerd (Miniflare) against the npm
# package as a user gets it. scripts/worker-current.sh: set-up, pkg/ and worker/build/ built
# only when stale, the packed tarball installed into tests/equivalence/node_modules/tollgate;
# then node --test, one file at a time.
set -euo pipefail
cd "$(dirname "$0")/.."
. scripts/worker-current.sh tests/equivalence
# The fixture's native decisions (tests/js/fixture.mjs runs this example), in the dev profile
# that the core's `cargo test` builds too.
cargo build --quiet --example equivalence_fixture
timeout 2400 node --test --test-concurrency=1 --test-timeout=1800000 tests/equivalence/
