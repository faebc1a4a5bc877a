// The package's `workerd` entry in the real workerd runtime (Miniflare): the wasm module is
// imported as a compiled module and instantiated synchronously; decisions work in a Worker, and
// the pacer (in the same module) decides inside a request.
import test from "node:test";
import assert from "node:assert/strict";
import { copyFileSync, mkdtempSync, readdirSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { Miniflare } from "miniflare";
import { build } from "esbuild";

const dist = resolve(dirname(fileURLToPath(import.meta.url)), "../../pkg/dist");

/** Runs `script` (an ES module Worker importing from `dist`) in workerd; gives `use` its Miniflare. */
async function inWorkerd(script, use) {
  // Bundled as wrangler does (the "workerd" condition picks the package's loaders for its
  // "#wasm" imports; the .wasm files left external, imported by workerd as compiled modules),
  // into a folder of its own with the package's .wasm files one level up, where the loaders'
  // ../*.wasm find them (nothing is written into pkg/, which other tests pack).
  const root = mkdtempSync(join(tmpdir(), "tollgate-workerd-"));
  for (const f of readdirSync(dist).filter((f) => f.endsWith(".wasm"))) copyFileSync(join(dist, f), join(root, f));
  const outfile = join(root, "worker/worker.js");
  await build({
    stdin: { contents: script, resolveDir: dist, loader: "js" },
    bundle: true, format: "esm", platform: "neutral", conditions: ["workerd", "worker", "browser"],
    mainFields: ["module", "main"], external: ["*.wasm"], outfile, logLevel: "warning",
  });
  const mf = new Miniflare({
    modules: true,
    modulesRoot: root,
    scriptPath: outfile,
    modulesRules: [
      { type: "ESModule", include: ["**/*.js"] },
      { type: "CompiledWasm", include: ["**/*.wasm"] },
    ],
    compatibilityDate: "2025-01-01",
  });
  try {
    return await use(mf);
  } finally {
    await mf.dispose();
    rmSync(root, { recursive: true, force: true });
  }
}

/** Runs `script` in workerd; returns its JSON answer to one request. */
const answerOf = (script) => inWorkerd(script, async (mf) => (await mf.dispatchFetch("http://localhost/")).json());

test("the workerd entry decides inside workerd", async () => {
  const answer = await answerOf(`
    import { RateLimiter, Pacer } from "./lib/index.js";
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
    import { RateLimiter, KeyHandle } from "./lib/limiter.js";
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

test("the workerd entry of tollgate/lite decides inside workerd", async () => {
  const answer = await answerOf(`
    import { RateLimiter } from "./lib/lite.js";
    const limiter = new RateLimiter({ algorithm: "fixed-window", limit: 2, window: "1s", align: "first-hit" });
    export default {
      fetch(request) {
        const now = 1_700_000_000_000;
        const d = [1, 2, 3].map(() => limiter.limit("ip:1", { now }).allowed);
        d.push(limiter.limit("ip:1", { now: now + 1000 }).allowed);
        return Response.json(d);
      },
    };`);
  assert.deepEqual(answer, [true, true, false, true]);
});

test("rateLimitFetch wraps a Worker's fetch handler inside workerd: env and ctx reach it, the 429 is its own", async () => {
  await inWorkerd(`
    import { rateLimitFetch } from "./lib/index.js";
    const limited = rateLimitFetch({
      algorithm: "gcra",
      quota: "2/1h",
      key: (request) => request.headers.get("CF-Connecting-IP"),
    });
    export default {
      fetch: limited((request, env, ctx) => Response.json({ env: typeof env, waitUntil: typeof ctx.waitUntil })),
    };`, async (mf) => {
    const from = (ip) => mf.dispatchFetch("http://localhost/", { headers: { "CF-Connecting-IP": ip } });
    const answers = [];
    for (let i = 0; i < 3; i++) {
      const r = await from("203.0.113.7");
      answers.push([r.status, r.headers.get("X-RateLimit-Remaining"), await r.json()]);
    }
    const allowed = { env: "object", waitUntil: "function" };
    assert.deepEqual(answers.slice(0, 2), [[200, "1", allowed], [200, "0", allowed]]);
    assert.equal(answers[2][0], 429);
    assert.equal(answers[2][2].error.code, "rate_limited");
    assert.equal((await from("203.0.113.8")).status, 200, "another client has its own quota");
  });
});
