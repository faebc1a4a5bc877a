#!/usr/bin/env bash
# `make test-www`: the playground in Debian's headless Chromium (playwright-core, never a
# downloaded browser). Set-up: Chromium, then scripts/worker-current.sh (the npm folders, pkg/
# and the Worker's build for live mode, each only when stale; the Worker's build puts the
# page's copy of the wasm package in www/vendor/tollgate). The tests start and stop their own
# servers on 127.0.0.1: a static server for www/, and the Worker in workerd (Miniflare) for
# live mode. Screenshots go to artifacts/www/.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/setup.sh browser
. scripts/worker-current.sh
# deploy.test.mjs bundles the production build (wrangler deploy --dry-run reuses build/).
sh worker/scripts/build.sh
# The copy-as-code test installs the package as a user would: the tarball packed for this build.
TOLLGATE_TARBALL=$(scripts/pkg-current.sh --tarball)
export TOLLGATE_TARBALL
rm -rf artifacts/www
timeout 600 node --test --test-concurrency=1 --test-timeout=300000 tests/www/
echo "screenshots: $(ls artifacts/www | tr '\n' ' ')"
