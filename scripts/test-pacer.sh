#!/usr/bin/env bash
# The JS pacer end to end, as a user gets it: pkg/ current and packed (scripts/pkg-current.sh,
# which builds only when stale), the tarball installed into tests/pacer/node_modules/tollgate,
# then node --test tests/pacer/ (simulated time: no test sleeps on the real clock except one
# short real-timer check).
set -euo pipefail
cd "$(dirname "$0")/.."
export PATH="$HOME/.cargo/bin:$PATH"
scripts/pkg-current.sh tests/pacer
node --test tests/pacer/
