// The Edge runtime as on Vercel: the npm package `edge-runtime` (Vercel's), with wasm code
// generation off (`codeGeneration: { wasm: false }`: no module compiled from bytes at run
// time). The app (edge/handler.js, a fetch handler) is bundled as a script with the
// `edge-light` condition, as Next.js and Vercel bundle Edge code; a `.wasm` import (plain or
// `?module`) is a WebAssembly.Module the platform compiles before the code runs and binds to a
// global, as Vercel and Next.js's Edge sandbox do. It answers 200, 200, 200, then 429 with
// RateLimit headers.
import test from "node:test";
import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { dirname, resolve } from "node:path";
import { build } from "esbuild";
import { EdgeRuntime, runServer } from "edge-runtime";
import { assertLimited, freePort, here } from "./harness.mjs";

/** esbuild plugin: each imported .wasm file becomes `export default globalThis[binding]`. */
function wasmModules(bindings) {
  return {
    name: "wasm-modules",
    setup(b) {
      b.onResolve({ filter: /\.wasm(\?module)?$/ }, (args) => ({
        path: resolve(args.resolveDir, args.path.replace(/\?module$/, "")),
        namespace: "wasm-module",
      }));
      b.onLoad({ filter: /.*/, namespace: "wasm-module" }, (args) => {
        const name = `__wasm_${bindings.size}`;
        bindings.set(name, args.path);
        return { contents: `export default globalThis[${JSON.stringify(name)}];`, loader: "js", resolveDir: dirname(args.path) };
      });
    },
  };
}

test("edge-runtime with wasm code generation off", async () => {
  const bindings = new Map();
  const bundle = await build({
    entryPoints: [resolve(here, "edge/handler.js")],
    bundle: true,
    write: false,
    platform: "neutral",
    conditions: ["edge-light", "worker", "browser"],
    mainFields: ["module", "main"],
    format: "iife",
    target: "es2022",
    plugins: [wasmModules(bindings)],
    logLevel: "silent",
  });
  const modules = {};
  for (const [name, file] of bindings) modules[name] = await WebAssembly.compile(readFileSync(file));
  assert.ok(bindings.size > 0, "the edge-light build imports its wasm as a module");
  const runtime = new EdgeRuntime({
    initialCode: bundle.outputFiles[0].text,
    codeGeneration: { strings: false, wasm: false },
    extend: (context) => Object.assign(context, modules),
  });
  const port = await freePort();
  const server = await runServer({ runtime, host: "127.0.0.1", port });
  try {
    await assertLimited(server.url.replace(/\/?$/, "/"), "edge-runtime");
  } finally {
    await server.close();
  }
});
