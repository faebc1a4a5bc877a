// The package's `workerd` entry in the real workerd runtime (Miniflare): the wasm module is
// imported as a compiled module and instantiated synchronously; decisions work in a Worker.
import test from "node:test";
import assert from "node:assert/strict";
import { dirname, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { Miniflare } from "miniflare";

const dist = resolve(dirname(fileURLToPath(import.meta.url)), "../../pkg/dist");

test("the workerd entry decides inside workerd", async () => {
  const mf = new Miniflare({
    modules: true,
    modulesRoot: dist,
    scriptPath: resolve(dist, "worker.js"),
    script: `
      import { RateLimiter } from "./workerd/index.js";
      const limiter = new RateLimiter({ algorithm: "gcra", quota: "2/s" });
      export default {
        fetch(request) {
          const now = 1_700_000_000_000;
          const d = [1, 2, 3].map(() => limiter.limit("ip:1", { now }).allowed);
          return Response.json(d);
        },
      };`,
    modulesRules: [
      { type: "ESModule", include: ["**/*.js"] },
      { type: "CompiledWasm", include: ["**/*.wasm"] },
    ],
    compatibilityDate: "2025-01-01",
  });
  try {
    const res = await mf.dispatchFetch("http://localhost/");
    assert.deepEqual(await res.json(), [true, true, false]);
  } finally {
    await mf.dispose();
  }
});
