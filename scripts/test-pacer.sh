#!/usr/bin/env bash
# The JS pacer end to end, as a user gets it: build pkg/ (make pkg), pack it, install the
# tarball into tests/pacer/node_modules/tollgate, then node --test tests/pacer/ (simulated
# time: no test sleeps on the real clock except one short real-timer check).
set -euo pipefail
cd "$(dirname "$0")/.."
export PATH="$HOME/.cargo/bin:$PATH"
make --no-print-directory pkg
work=$(mktemp -d) && trap 'rm -rf "$work"' EXIT
tarball=$(cd pkg && npm pack --silent --pack-destination "$work")
rm -rf tests/pacer/node_modules && mkdir -p tests/pacer/node_modules/tollgate
tar -xzf "$work/$tarball" -C tests/pacer/node_modules/tollgate --strip-components=1
node --test tests/pacer/
