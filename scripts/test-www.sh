#!/usr/bin/env bash
# `make test-www`: the playground in Debian's headless Chromium (playwright-core, never a
# downloaded browser). Set-up: Chromium, the npm folders (tests/www, worker), the Worker's
# build (for live mode, skipped when current) and the page's copy of the wasm package
# (scripts/build-www.sh, which builds pkg/ only when stale). The tests start and stop their
# own servers on 127.0.0.1: a static server for www/, and the Worker in workerd (Miniflare)
# for live mode. Screenshots go to artifacts/www/.
set -euo pipefail
cd "$(dirname "$0")/.."
export PATH="$HOME/.cargo/bin:$PATH"
export CLOUDFLARE_CF_FETCH_ENABLED=false WRANGLER_SEND_METRICS=false
scripts/setup.sh worker,browser,npm
scripts/build-www.sh
sh worker/scripts/build.sh
rm -rf artifacts/www
timeout 600 node --test --test-concurrency=1 --test-timeout=300000 tests/www/
echo "screenshots: $(ls artifacts/www | tr '\n' ' ')"
