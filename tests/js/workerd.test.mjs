// The package's `workerd` entry in the real workerd runtime (Miniflare): the wasm module is
// imported as a compiled module and instantiated synchronously; decisions work in a Worker, and
// the extras module (here: the pacer) is instantiated on first use, inside a request.
import test from "node:test";
import assert from "node:assert/strict";
import { dirname, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { Miniflare } from "miniflare";

const dist = resolve(dirname(fileURLToPath(import.meta.url)), "../../pkg/dist");

/** Runs `script` (an ES module Worker importing from `dist`) in workerd; returns its JSON answer. */
async function answerOf(script) {
  const mf = new Miniflare({
    modules: true,
    modulesRoot: dist,
    scriptPath: resolve(dist, "worker.js"),
    script,
    modulesRules: [
      { type: "ESModule", include: ["**/*.js"] },
      { type: "CompiledWasm", include: ["**/*.wasm"] },
    ],
    compatibilityDate: "2025-01-01",
  });
  try {
    return await (await mf.dispatchFetch("http://localhost/")).json();
  } finally {
    await mf.dispose();
  }
}

test("the workerd entry decides inside workerd", async () => {
  const answer = await answerOf(`
    import { RateLimiter, Pacer } from "./workerd/index.js";
    const limiter = new RateLimiter({ algorithm: "gcra", quota: "2/s" });
    export default {
      fetch(request) {
        const now = 1_700_000_000_000;
        const d = [1, 2, 3].map(() => limiter.limit("ip:1", { now }).allowed);
        d.push(new Pacer({ rate: "10/s", grain: "100ms" }).maxCost);
        return Response.json(d);
      },
    };`);
  assert.deepEqual(answer, [true, true, false, 1]);
});

test("the workerd entry of tollgate/limiter decides inside workerd", async () => {
  const answer = await answerOf(`
    import { RateLimiter, KeyHandle } from "./workerd/limiter.js";
    const limiter = new RateLimiter({ algorithm: "token-bucket", limit: 1, window: "1s", burst: 2 });
    export default {
      fetch(request) {
        const now = 1_700_000_000_000;
        const user = limiter.key("user:42");
        const d = [1, 2, 3].map(() => limiter.limit(user, { now }).allowed);
        d.push(user instanceof KeyHandle);
        return Response.json(d);
      },
    };`);
  assert.deepEqual(answer, [true, true, false, true]);
});
