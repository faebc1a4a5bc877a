#!/usr/bin/env bash
# `make run`: the rate-limit service on http://127.0.0.1:8787 — the Worker under
# `wrangler dev` (workerd, no Cloudflare account), the API at /v1, the playground (www/) at /
# and its guide at /guide/,
# Durable Object state persisted under worker/.state (survives restarts). One foreground
# process; Ctrl-C stops it. PUBLIC=true: the local API needs no token (a deployed Worker
# serves /v1 only with the API_TOKEN secret set).
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/setup.sh worker,npm
export PATH="$HOME/.cargo/bin:$PATH"
export CLOUDFLARE_CF_FETCH_ENABLED=false WRANGLER_SEND_METRICS=false
# The configuration check, the playground's copy of the wasm package (www/vendor/tollgate)
# and the Worker, each skipped when current: a bad wrangler.toml stops here, naming the field.
sh worker/scripts/build.sh
cd worker
# The build above is fresh, so wrangler's own [build] step (the same script) only checks.
exec node_modules/.bin/wrangler dev --ip 127.0.0.1 --port "${PORT:-8787}" --persist-to .state --var PUBLIC:true
