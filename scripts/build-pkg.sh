#!/usr/bin/env bash
# Builds the npm package into pkg/: one cargo build of wasm/, wasm-opt, wasm-bindgen for the
# `web` glue (shared by Node ESM, browsers, bundlers and workerd) and the `nodejs` glue
# (CommonJS), then the JS layer of pkg-template/lib copied next to each target's wasm.js.
#   scripts/build-pkg.sh          release (size-optimised, no panic hook)
#   scripts/build-pkg.sh debug    debug build with console_error_panic_hook
set -euo pipefail
cd "$(dirname "$0")/.."
export PATH="$HOME/.cargo/bin:$PATH"
mode="${1:-release}"

scripts/setup.sh wasm >/dev/null
tools=tests/js/node_modules/.bin
if [ ! -x "$tools/esbuild" ] || [ ! -x "$tools/wasm-opt" ]; then
  (cd tests/js && npm ci --no-audit --no-fund --loglevel=error)
fi

if [ "$mode" = debug ]; then
  cargo build -p tollgate-wasm --target wasm32-unknown-unknown --features debug
  wasm=target/wasm32-unknown-unknown/debug/tollgate_wasm.wasm
else
  cargo build -p tollgate-wasm --target wasm32-unknown-unknown --profile wasm-release
  wasm=target/wasm32-unknown-unknown/wasm-release/tollgate_wasm.wasm
fi

out=pkg
rm -rf "$out" && mkdir -p "$out/dist/cjs"
work=$(mktemp -d) && trap 'rm -rf "$work"' EXIT

# The `web` glue, with `initSync` and an async `init`: Node ESM and workerd call initSync.
wasm-bindgen --target web --out-dir "$work/web" --no-typescript "$wasm"
wasm-bindgen --target nodejs --out-dir "$work/cjs" --no-typescript "$wasm"
for t in web cjs; do
  if [ "$mode" = release ]; then
    # -Oz after bindgen (which adds its own tables); measured in docs/benchmarks.md.
    "$tools/wasm-opt" -Oz --enable-bulk-memory --enable-nontrapping-float-to-int --enable-sign-ext \
      --enable-mutable-globals "$work/$t/tollgate_wasm_bg.wasm" -o "$work/$t/tollgate_wasm_bg.wasm"
  fi
done
cp "$work/web/tollgate_wasm.js" "$work/web/tollgate_wasm_bg.wasm" "$out/dist/"
cp "$work/cjs/tollgate_wasm.js" "$work/cjs/tollgate_wasm_bg.wasm" "$out/dist/cjs/"
echo '{ "type": "commonjs" }' > "$out/dist/cjs/package.json"

for t in node web workerd; do
  mkdir -p "$out/dist/$t"
  cp pkg-template/lib/*.js "$out/dist/$t/"
  cp "pkg-template/targets/$t.js" "$out/dist/$t/wasm.js"
done
# CommonJS: one bundled file; the nodejs glue stays a separate module it requires.
mkdir -p "$work/cjslib" && cp pkg-template/lib/*.js "$work/cjslib/" && cp pkg-template/targets/cjs.js "$work/cjslib/wasm.js"
"$tools/esbuild" "$work/cjslib/index.js" --bundle --format=cjs --platform=node --log-level=warning \
  --external:./tollgate_wasm.js --outfile="$out/dist/cjs/index.js"

cp pkg-template/package.json pkg-template/README.md "$out/"
cp pkg-template/types/*.d.ts "$out/"
cp LICENSE* "$out/" 2>/dev/null || true

raw=$(stat -c %s "$out/dist/tollgate_wasm_bg.wasm")
gz=$(gzip -9 -c "$out/dist/tollgate_wasm_bg.wasm" | wc -c)
echo "pkg/ built ($mode): wasm $raw bytes raw, $gz bytes gzipped"
