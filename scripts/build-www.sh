#!/usr/bin/env bash
# `make www`: puts the tollgate package's web build where the playground imports it,
# www/vendor/tollgate/ (git-ignored: a build output, copied, never edited). pkg/ comes from
# scripts/pkg-current.sh, which builds it only when it is missing or older than its sources,
# so `make run` and `make test-www` pay nothing when it is current. The copy keeps pkg/dist's
# layout (web/*.js import ../tollgate_wasm*.js), so the page imports vendor/tollgate/web/lite.js
# (`tollgate/lite`: RateLimiter of one limit, so the browser fetches only the lite module).
# The Worker's build (worker/scripts/build.sh) runs it, so `wrangler deploy` ships the page
# with its module.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/pkg-current.sh
stamp=pkg/dist/web/index.js
out=www/vendor/tollgate
# The Worker's build calls this too (every wrangler dev/deploy): a current copy stays as it is.
if [ -f "$out/web/index.js" ] && [ "$out/web/index.js" -nt "$stamp" ]; then
  echo "www/vendor/tollgate is up to date"; exit 0
fi
rm -rf "$out" && mkdir -p "$out/web"
cp pkg/dist/tollgate_wasm*.js pkg/dist/tollgate_wasm*_bg.wasm "$out/"
cp pkg/dist/web/*.js "$out/web/"
echo "www/vendor/tollgate: the package's web build ($(stat -c %s "$out/tollgate_wasm_lite_bg.wasm") bytes of wasm for the page)"
