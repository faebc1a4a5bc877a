# Sourced (`. scripts/worker-current.sh [dir...]`) by the test scripts that run the Worker in
# workerd: set-up (Rust targets, wasm-bindgen, worker-build, npm ci), the environment that keeps
# wrangler/Miniflare offline, the package current and its tarball installed into each <dir>
# (scripts/pkg-current.sh), then the Worker's test build, worker/build-test/, current
# (worker/scripts/build.sh --test, which skips when nothing changed): the build the workerd
# tests run (worker/test/harness.mjs). The production build (build/) is the caller's to make
# when it needs it.
scripts/setup.sh worker,npm
export PATH="$HOME/.cargo/bin:$PATH"
export CLOUDFLARE_CF_FETCH_ENABLED=false WRANGLER_SEND_METRICS=false
scripts/pkg-current.sh "$@"
sh worker/scripts/build.sh --test
