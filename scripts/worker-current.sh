# Sourced (`. scripts/worker-current.sh [dir...]`) by the test scripts that run the Worker in
# workerd: set-up (Rust targets, wasm-bindgen, worker-build, npm ci), the environment that keeps
# wrangler/Miniflare offline, the package current and its tarball installed into each <dir>
# (scripts/pkg-current.sh), then worker/build/ current (worker/scripts/build.sh, which skips
# when nothing changed).
scripts/setup.sh worker,npm
export PATH="$HOME/.cargo/bin:$PATH"
export CLOUDFLARE_CF_FETCH_ENABLED=false WRANGLER_SEND_METRICS=false
scripts/pkg-current.sh "$@"
sh worker/scripts/build.sh
