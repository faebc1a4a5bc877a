#!/usr/bin/env bash
# `make www`: puts the tollgate package's web build where the playground imports it,
# www/vendor/tollgate/ (git-ignored: a build output, copied, never edited). pkg/ comes from
# scripts/pkg-current.sh, which builds it only when it is missing or older than its sources,
# so `make run` and `make test-www` pay nothing when it is current. The copy keeps pkg/dist's
# layout (web/*.js, pkg/dist/lib's, import ../load/web*.js), so the page imports vendor/tollgate/web/lite.js
# (`tollgate/lite`: RateLimiter of one limit, so the browser fetches only the lite module).
# Then the playground's own module (www-wasm/, describeState) into www/vendor/tollgate-www/.
# The Worker's build (worker/scripts/build.sh) runs it, so `wrangler deploy` ships the page
# with its module.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/pkg-current.sh
stamp=pkg/dist/lib/index.js
out=www/vendor/tollgate
# The Worker's build calls this too (every wrangler dev/deploy): a current copy stays as it is.
if [ -f "$out/web/index.js" ] && [ "$out/web/index.js" -nt "$stamp" ]; then
  echo "www/vendor/tollgate is up to date"
else
  rm -rf "$out" && mkdir -p "$out/web" "$out/load"
  cp pkg/dist/tollgate_wasm*.js pkg/dist/tollgate_wasm*_bg.wasm "$out/"
  # The package's one copy of its JavaScript, its "#wasm" imports pointed at the browser loaders
  # (package.json's "imports", as a bundler would resolve them for a browser).
  cp pkg/dist/load/web*.js pkg/dist/load/start.js "$out/load/"
  for f in $(cd pkg/dist/lib && find . -name '*.js'); do
    up=$(printf '../%.0s' $(seq "$(tr -cd / <<<"$f" | wc -c)")) # one ../ per folder, and one to web/
    mkdir -p "$(dirname "$out/web/$f")"
    sed -E "s#\"\\#wasm\"#\"${up}load/web.js\"#g; s#\"\\#wasm-lite\"#\"${up}load/web-lite.js\"#g" "pkg/dist/lib/$f" > "$out/web/$f"
  done
  echo "www/vendor/tollgate: the package's web build ($(stat -c %s "$out/tollgate_wasm_lite_bg.wasm") bytes of wasm for the page)"
fi

# The playground's own module (www-wasm/: the core's description of a key's state for the
# readout beside each hit), not part of the npm package: built here, when stale.
own=www/vendor/tollgate-www
if [ ! -f "$own/tollgate_www_bg.wasm" ] || [ -n "$(find src wasm-common www-wasm Cargo.toml Cargo.lock -newer "$own/tollgate_www_bg.wasm" -print -quit)" ]; then
  export PATH="$HOME/.cargo/bin:$PATH"
  scripts/setup.sh wasm >/dev/null # the wasm32 target and the wasm-bindgen CLI
  cargo build --quiet -p tollgate-www --target wasm32-unknown-unknown --profile wasm-release
  rm -rf "$own" && mkdir -p "$own"
  wasm-bindgen --target web --no-typescript --out-dir "$own" target/wasm32-unknown-unknown/wasm-release/tollgate_www.wasm
  opt=tests/js/node_modules/.bin/wasm-opt
  if [ -x "$opt" ]; then
    "$opt" -Oz --enable-bulk-memory --enable-nontrapping-float-to-int --enable-sign-ext --enable-mutable-globals \
      --strip-producers --strip-target-features "$own/tollgate_www_bg.wasm" -o "$own/tollgate_www_bg.wasm"
  fi
  echo "www/vendor/tollgate-www: the playground's describeState module ($(stat -c %s "$own/tollgate_www_bg.wasm") bytes)"
fi
