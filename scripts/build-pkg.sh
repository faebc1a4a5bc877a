#!/usr/bin/env bash
# Builds the npm package into pkg/: cargo builds of its two wasm modules (wasm/, the limiter's,
# with wasm-extras/ linked in: the pacer, the lease holder and the Redis store's classes; and
# the same crate without its `full` feature, the lite module; both depend on wasm-common/, the
# bindings every module shares; see docs/js-layer.md), then per module wasm-bindgen for the
# `web` glue and wasm-opt. Each .wasm file is shipped once, in dist/, with its glue. Then the
# one copy of the JavaScript (pkg-template/lib, dist/lib/), the loaders per runtime (dist/load/)
# and the CommonJS build (dist/cjs/lib/, lib/ converted to
# CommonJS module by module; the entries in dist/cjs/ a few lines each over it), and the type
# declarations (.d.cts, and per entry a .d.ts for `import` that re-exports its .d.cts).
#   scripts/build-pkg.sh          release (size-optimised, no panic hook)
#   scripts/build-pkg.sh debug    debug build with console_error_panic_hook
# A release build ends by writing target/pkg-stamp/built, dated when it began, the one stamp
# scripts/pkg-current.sh (every test target's way to the package) checks; a debug build
# removes it, so the next test run rebuilds the release package.
set -euo pipefail
cd "$(dirname "$0")/.."
export PATH="$HOME/.cargo/bin:$PATH"
mode="${1:-release}"

scripts/setup.sh wasm >/dev/null
tools=tests/js/node_modules/.bin
if [ ! -x "$tools/esbuild" ] || [ ! -x "$tools/wasm-opt" ]; then
  (cd tests/js && npm ci --no-audit --no-fund --loglevel=error)
fi

modules="tollgate_wasm tollgate_wasm_lite"
work=$(mktemp -d) && trap 'rm -rf "$work"' EXIT
stamp=target/pkg-stamp/built
mkdir -p "$(dirname "$stamp")" && rm -f "$stamp" && touch "$work/began"
# The lite module (`tollgate/lite`) is the limiter's crate without its default `full` feature:
# a second build of the same crate, copied aside under its own name before the first overwrites
# the file (cargo keeps both builds, so each is incremental).
if [ "$mode" = debug ]; then
  built=target/wasm32-unknown-unknown/debug
  cargo build -p tollgate-wasm --no-default-features --features debug --target wasm32-unknown-unknown
  cp "$built/tollgate_wasm.wasm" "$work/tollgate_wasm_lite.wasm"
  cargo build -p tollgate-wasm --features debug --target wasm32-unknown-unknown
else
  built=target/wasm32-unknown-unknown/wasm-release
  cargo build -p tollgate-wasm --no-default-features --target wasm32-unknown-unknown --profile wasm-release
  cp "$built/tollgate_wasm.wasm" "$work/tollgate_wasm_lite.wasm"
  cargo build -p tollgate-wasm --target wasm32-unknown-unknown --profile wasm-release
fi
cp "$built/tollgate_wasm.wasm" "$work/"

out=pkg
rm -rf "$out" && mkdir -p "$out/dist/cjs"
# The CommonJS files are minified as esbuild converts them (a release build): the minifying pass
# at the end would keep the names of esbuild's helpers in each, about 45 KB installed more.
# Class and function names are kept, as in that pass.
minify=(); if [ "$mode" = release ]; then minify=(--minify --keep-names); fi

for m in $modules; do
  # The `web` glue, with `initSync` and an async `init`: Node, Bun, Deno and workerd call
  # initSync with the module's bytes or compiled module, browsers and bundlers the async init.
  wasm-bindgen --target web --out-dir "$work/web" --no-typescript "$work/$m.wasm"
  # initSync takes a compiled module by its brand, not by `instanceof`: the Next.js Edge runtime
  # compiles a `?module` import in another realm than the sandbox the glue runs in, where
  # `instanceof WebAssembly.Module` is false and the glue would try to compile the module as bytes.
  sed -i 's/if (!(module instanceof WebAssembly\.Module)) {/if (!(module instanceof WebAssembly.Module) \&\& Object.prototype.toString.call(module) !== "[object WebAssembly.Module]") {/' "$work/web/$m.js"
  grep -q '"\[object WebAssembly.Module\]"' "$work/web/$m.js" || { echo "build-pkg: $m.js: initSync's module check not found" >&2; exit 1; }
  if [ "$mode" = release ]; then
    # -Oz after bindgen (which adds its own tables; sizes in docs/benchmarks.md), repeated
    # until it gains nothing more (--converge: about 0.5 KB of the limiter's module). The
    # producers and target-features sections are for tools only.
    "$tools/wasm-opt" -Oz --converge --enable-bulk-memory --enable-nontrapping-float-to-int --enable-sign-ext \
      --enable-mutable-globals --strip-producers --strip-target-features \
      "$work/web/${m}_bg.wasm" -o "$work/web/${m}_bg.wasm"
  fi
  cp "$work/web/$m.js" "$work/web/${m}_bg.wasm" "$out/dist/"
  # The same glue as CommonJS (its async init, which reads import.meta.url, is never called
  # there: the CommonJS targets call initSync with ../<module>_bg.wasm).
  # Minified as it is converted in a release build, as dist/cjs/lib/ below.
  "$tools/esbuild" "$work/web/$m.js" --format=cjs --platform=node "${minify[@]}" --log-level=warning \
    --log-override:empty-import-meta=silent --outfile="$out/dist/cjs/$m.js"
done
echo '{ "type": "commonjs" }' > "$out/dist/cjs/package.json"

# One copy of the JavaScript, dist/lib/ (pkg-template/lib as it is, ESM). Its imports of a wasm
# module, ./wasm.js and ./extras.js (the limiter's module: its classes, and `extras()`, the
# module's glue, for the classes a RateLimiter never uses), and ./lite-wasm.js (the lite
# module's) become the package's own specifiers #wasm and #wasm-lite, which package.json's
# "imports" maps per runtime to a loader in dist/load/ (from pkg-template/targets/): node, bun,
# deno, workerd, edge-light, and browsers and bundlers.
mkdir -p "$out/dist/lib" "$out/dist/load"
for f in $(cd pkg-template/lib && find . -name '*.js'); do
  mkdir -p "$(dirname "$out/dist/lib/$f")"
  sed -E -e 's#from "(\./|(\.\./)+)wasm\.js"#from "\#wasm"#' -e 's#from "(\./|(\.\./)+)lite-wasm\.js"#from "\#wasm-lite"#' \
    -e 's#from "(\./|(\.\./)+)extras\.js"#from "\#wasm"#' "pkg-template/lib/$f" > "$out/dist/lib/$f"
done
if grep -rlE 'from "(\./|(\.\./)+)(wasm|lite-wasm|extras)\.js"' "$out"/dist/lib; then
  echo "build-pkg: an import of a loader was left unrewritten (above)" >&2; exit 1
fi
# The loaders are shipped as written (each bundler reads its own form of the wasm's reference),
# less their comment lines (about 5 KB; pkg-template/targets/ has them).
for f in node bun deno workerd edge web node-lite bun-lite deno-lite workerd-lite edge-lite web-lite start node-file; do
  sed -E -e '/^\s*\/\//d' -e '/^\/\*\*.*\*\/$/d' -e '/^\/\*\*/,/\*\/$/d' "pkg-template/targets/$f.js" > "$out/dist/load/$f.js"
done
# CommonJS: a real CommonJS build, so that what cannot require ES modules (Jest's CommonJS
# mode, Node before 20.19) loads `require("tollgate")`. Each module of lib/ converted to
# CommonJS on its own (dist/cjs/lib/, the same names as dist/lib/: npm packs files of one name
# side by side, so the tarball's gzip finds most of each in its ES twin, about 20 KB less than
# one bundle), over the limiter's module's glue (converted to CommonJS above), which
# targets/cjs.js, as dist/cjs/lib/wasm.js, instantiates and hands to both lib/wasm.js and
# lib/extras.js; each entry is a few lines over them (pkg-template/targets/cjs-*.js), so
# `instanceof` and key handles agree across them (not with `import`, which has its own copy).
# tollgate/lite's lib/lite.js reaches the lite module's glue only (targets/cjs-lite.js as
# dist/cjs/lib/lite-wasm.js), so requiring it never loads the limiter's module.
mkdir -p "$work/cjslib" "$out/dist/cjs/lib" && cp -r pkg-template/lib/. "$work/cjslib/"
cp pkg-template/targets/cjs.js "$work/cjslib/wasm.js"
cp pkg-template/targets/cjs-lite.js "$work/cjslib/lite-wasm.js"
find "$work/cjslib" -name '*.js' -exec sed -i -E 's#from "(\./|(\.\./)+)extras\.js"#from "\1wasm.js"#' {} +
# Minified as they are converted (a release build; see `minify` above).
for f in $(cd "$work/cjslib" && find . -name '*.js'); do
  "$tools/esbuild" "$work/cjslib/$f" --format=cjs --platform=node "${minify[@]}" --log-level=warning --outfile="$out/dist/cjs/lib/$f"
done
for e in index fastify hono limiter; do cp "pkg-template/targets/cjs-$e.js" "$out/dist/cjs/$e.js"; done
cp pkg-template/targets/cjs-lite-entry.js "$out/dist/cjs/lite.js"

# Shipped minified (whitespace, syntax, local names): the tarball's size budget
# (tests/js/tarball.test.mjs); the comments are pkg-template's, the types' docs are kept whole.
# The ES modules without --keep-names: esbuild renames only what a module does not export, so
# every exported class and function keeps its name (`constructor.name`, stack traces), and the
# `__name` call kept for each inner function cost about 15 KB installed (tests/js/tarball.test.mjs
# holds every export's name). The CommonJS entries keep theirs (in CommonJS every top-level name
# is the module's own and would be renamed).
if [ "$mode" = release ]; then
  for f in $(find "$out/dist/lib" -name '*.js') "$out"/dist/*.js; do
    "$tools/esbuild" "$f" --minify --log-level=warning --outfile="$f.min" && mv "$f.min" "$f"
  done
  for f in "$out"/dist/cjs/{index,fastify,hono,limiter,lite}.js; do
    "$tools/esbuild" "$f" --minify --keep-names --log-level=warning --outfile="$f.min" && mv "$f.min" "$f"
  done
fi
# The docs' tables of the wasm modules' sizes (README.md, pkg-template/README.md, docs/js-layer.md),
# rewritten from these modules when they changed; tests/js/size.test.mjs holds the docs to them.
if [ "$mode" = release ]; then node scripts/wasm-sizes.mjs --write; fi
cp pkg-template/package.json pkg-template/README.md LICENSE-MIT LICENSE-APACHE "$out/"
# Types: the .d.ts files answer `import` (the package is "type": "module"); the same
# declarations as .d.cts, their relative imports renamed to .cjs, answer `require`, so that
# TypeScript sees a CommonJS module where Node loads one.
for f in pkg-template/types/*.d.ts; do
  base=$(basename "$f" .d.ts)
  cp "$f" "$out/$base.d.ts"
  sed -E 's#(from "\./[A-Za-z0-9_.-]+)\.js"#\1.cjs"#g' "$f" > "$out/$base.d.cts"
done
# `require("tollgate")` is rateLimit itself with the named exports on it (dist/cjs/index.js): its
# named declarations become tollgate.d.cts, and index.d.cts their `export =` form.
mv "$out/index.d.cts" "$out/tollgate.d.cts"
sed -i 's#from "\./index\.cjs"#from "./tollgate.cjs"#g' "$out"/*.d.cts
node scripts/cjs-types.mjs "$out"
# The declarations are shipped once, as the .d.cts files: each entry's .d.ts (what `import`
# resolves) re-exports its CommonJS twin, which an ES module may import, and its default export
# by the name it also has; the files no entry names are not shipped as .d.ts. (Twins cost the
# tarball about 20 KB packed and 70 KB installed.)
rm "$out"/*.d.ts
for e in index limiter lite fastify hono; do
  twin=$e; [ "$e" = index ] && twin=tollgate
  printf 'export * from "./%s.cjs";\n' "$twin" > "$out/$e.d.ts"
done
echo 'export { rateLimit as default } from "./tollgate.cjs";' >> "$out/index.d.ts"
echo 'export { fastifyRateLimit as default } from "./fastify.cjs";' >> "$out/fastify.d.ts"

sizes=""
for m in $modules; do
  f="$out/dist/${m}_bg.wasm"
  sizes+="${sizes:+; }$m $(stat -c %s "$f") bytes raw, $(gzip -9 -c "$f" | wc -c) gzipped"
done
echo "pkg/ built ($mode): wasm $sizes"
if [ "$mode" = release ]; then touch -r "$work/began" "$stamp"; fi
