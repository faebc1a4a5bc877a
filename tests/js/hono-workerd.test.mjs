// `tollgate/hono` in workerd: a small Hono Worker bundled (esbuild, the `workerd` condition)
// from the packed package, run by Miniflare beside the tollgate Worker. One route limits in the
// Worker's isolate (memory), the other through `WorkerStore` over a service binding to the
// tollgate Worker, whose policy decides; both answer hono-rate-limiter's headers and body.
import { test, before, after } from "node:test";
import assert from "node:assert/strict";
import { mkdirSync, symlinkSync, writeFileSync } from "node:fs";
import { join, resolve } from "node:path";
import { build } from "esbuild";
import { install, here } from "./packed.mjs";
import { start } from "../../worker/test/harness.mjs";

const POLICIES = { hono: { limits: [{ name: "hour", algorithm: "fixed-window", align: "first-hit", limit: 3, window: "1h" }] } };

const APP = `
import { Hono } from "hono";
import { rateLimiter } from "tollgate/hono";
import { WorkerStore } from "tollgate";

const app = new Hono();
const keyGenerator = (c) => c.req.header("x-key") ?? "anon";
let viaWorker;
app.use("/worker/*", (c, next) => {
  viaWorker ??= rateLimiter({ store: new WorkerStore({ binding: c.env.TOLLGATE, policy: "hono", timeoutMs: 60000 }), keyGenerator });
  return viaWorker(c, next);
});
app.use("/memory/*", rateLimiter({ keyGenerator, limit: 2, windowMs: 60 * 60 * 1000, standardHeaders: "draft-7" }));
app.get("*", (c) => {
  const { limit, used, remaining, resetTime } = c.get("rateLimit");
  return c.json({ limit, used, remaining, resetTime: resetTime instanceof Date });
});
export default app;
`;

let pkg, s, client;
before(async () => {
  pkg = install();
  symlinkSync(resolve(here, "node_modules/hono"), join(pkg.project, "node_modules/hono"));
  const dist = join(pkg.project, "node_modules/tollgate/dist");
  writeFileSync(join(pkg.project, "app.js"), APP);
  // Bundled into dist/workerd/ so that the package's imports of ../*.wasm (left external,
  // loaded by workerd as compiled modules) resolve as in the package.
  mkdirSync(join(dist, "workerd"), { recursive: true });
  await build({
    entryPoints: [join(pkg.project, "app.js")],
    bundle: true,
    format: "esm",
    platform: "neutral",
    conditions: ["workerd", "worker", "browser"],
    mainFields: ["module", "main"],
    external: ["*.wasm"],
    outfile: join(dist, "workerd/hono-app.js"),
    logLevel: "warning",
  });
  s = await start({
    bindings: { POLICIES },
    extraWorkers: [
      {
        name: "hono-app",
        modules: true,
        modulesRoot: dist,
        scriptPath: join(dist, "workerd/hono-app.js"),
        modulesRules: [
          { type: "ESModule", include: ["**/*.js"] },
          { type: "CompiledWasm", include: ["**/*.wasm"] },
        ],
        compatibilityDate: "2026-04-01",
        serviceBindings: { TOLLGATE: "w0" },
      },
    ],
  });
  client = await s.mf.getWorker("hono-app");
});
after(async () => {
  await s?.stop();
  pkg?.remove();
});

const get = async (path, key) => {
  const r = await client.fetch(`http://app.test${path}`, { headers: { "x-key": key } });
  return { status: r.status, headers: r.headers, text: await r.text() };
};

test("in workerd, through WorkerStore over a service binding: the tollgate Worker's policy decides, draft-6 headers, c.get(\"rateLimit\")", async () => {
  const key = `w:${Date.now()}`;
  const seen = [];
  for (let i = 0; i < 4; i++) {
    const r = await get("/worker/x", key);
    seen.push([r.status, r.headers.get("ratelimit-limit"), r.headers.get("ratelimit-remaining")]);
    if (i === 0) assert.deepEqual(JSON.parse(r.text), { limit: 3, used: 1, remaining: 2, resetTime: true });
    if (i === 3) {
      assert.equal(r.text, "Too many requests, please try again later.");
      assert.match(r.headers.get("retry-after"), /^\d+$/);
    }
  }
  assert.deepEqual(seen, [[200, "3", "2"], [200, "3", "1"], [200, "3", "0"], [429, "3", "0"]]);
  assert.equal((await get("/worker/x", `${key}:other`)).status, 200, "another key has its own count");
});

test("in workerd, in the isolate's memory: hono-rate-limiter's defaults and draft-7", async () => {
  const key = `m:${Date.now()}`;
  const started = performance.now();
  const first = await get("/memory/x", key);
  assert.equal(first.status, 200);
  assert.equal(first.headers.get("ratelimit"), "limit=2, remaining=1, reset=3600");
  assert.equal((await get("/memory/x", key)).status, 200);
  const denied = await get("/memory/x", key);
  // The hour from the first hit, rounded up to whole seconds: 3600 unless the isolate's clock
  // moved on by a second or more between the first hit and the denial (a loaded machine).
  const moved = Math.ceil((performance.now() - started) / 1000);
  const retryAfter = Number(denied.headers.get("retry-after"));
  assert.equal(denied.status, 429);
  assert.ok(retryAfter <= 3600 && retryAfter >= 3600 - moved, `Retry-After ${retryAfter}, ${moved} s after the first hit`);
});
