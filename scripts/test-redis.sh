#!/usr/bin/env bash
# The Redis store end to end, as a user gets it: Debian's redis-server (scripts/setup.sh
# redis), the test clients (node-redis and ioredis, npm ci in tests/redis), the package built
# (make pkg) and packed, its tarball installed as tests/redis/node_modules/tollgate, then
# node --test tests/redis/. Each test file starts its own redis-server on 127.0.0.1 and a
# throwaway port and stops it.
set -euo pipefail
cd "$(dirname "$0")/.."
export PATH="$HOME/.cargo/bin:$PATH"
scripts/setup.sh redis,npm >/dev/null
make --no-print-directory pkg
work=$(mktemp -d) && trap 'rm -rf "$work"' EXIT
tarball=$(cd pkg && npm pack --silent --pack-destination "$work")
rm -rf tests/redis/node_modules/tollgate && mkdir -p tests/redis/node_modules/tollgate
tar -xzf "$work/$tarball" -C tests/redis/node_modules/tollgate --strip-components=1
node --test --test-concurrency=2 tests/redis/
