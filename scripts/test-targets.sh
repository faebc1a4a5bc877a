#!/usr/bin/env bash
# `make test-targets`: the npm package where users build and serve it (tests/targets/): Next.js
# 16 (proxy.ts, Edge middleware, Node and Edge Route Handlers; Turbopack and webpack builds,
# next start and next dev), Vite 8 and webpack 5 browser apps in headless Chromium, the
# edge-runtime with wasm code generation off, Bun, Deno and esbuild Node bundles. The runtimes
# and bundlers are the npm packages pinned in tests/targets/package-lock.json (scripts/setup.sh
# npm); the package is the packed tarball, extracted into tests/targets/node_modules/tollgate
# as `npm install` lays it out (scripts/pkg-current.sh). Every server runs on a free 127.0.0.1
# port under a time limit and is stopped by its test (each build and server is bounded by its own
# time limit, the whole run by `timeout`). One test file at a time: the Next.js
# builds alone use both cores.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/setup.sh browser,npm >/dev/null
scripts/pkg-current.sh tests/targets
rm -rf tests/targets/.build tests/targets/node_modules/.vite
timeout 2400 node --test --test-concurrency=1 tests/targets/
