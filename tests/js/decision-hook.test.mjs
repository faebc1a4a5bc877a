// `onDecision`, the decision hook of every npm limiter and middleware: one report per decided
// hit ({ policy, limit, outcome, cost, decision }) in memory, over a store (a WorkerStore
// failing open), with shadow mode and the lists, through rateLimit (a tollgate limiter, an
// express-rate-limit Store, limit 0, passOnStoreError), rateLimitFetch and tollgate/hono; and
// the Prometheus example (examples/prometheus/metrics.mjs) with prom-client, counting as
// Envoy's rate limit service does.
import { test } from "node:test";
import assert from "node:assert/strict";
import { copyFileSync, mkdtempSync, readFileSync, rmSync } from "node:fs";
import { join, resolve } from "node:path";
import { pathToFileURL } from "node:url";
import { Registry } from "prom-client";
import { Hono } from "hono";
import { RateLimiter, WorkerStore, rateLimit, rateLimitFetch } from "../../pkg/dist/lib/index.js";
import { rateLimiter } from "../../pkg/dist/lib/hono.js";
import { here } from "./packed.mjs";

const now = 1_700_000_000_000;
const recorder = () => {
  const seen = [];
  const hook = (r) => seen.push(r);
  return { seen, hook, outcomes: () => seen.map((r) => r.outcome) };
};

test("a RateLimiter reports each hit: allowed, near-limit (80% used), denied; the binding limit, the cost; peek reports nothing", () => {
  const r = recorder();
  const l = new RateLimiter({ algorithm: "fixed-window", limit: 10, window: "1m", name: "minute", onDecision: r.hook });
  for (let i = 0; i < 7; i++) l.limit("k", { now });
  l.limit("k", { now }); // 8 of 10: near
  l.limit("k", { now, cost: 2 }); // 10 of 10
  l.limit("k", { now });
  l.peek("k", { now });
  assert.deepEqual(r.outcomes(), [...Array(7).fill("allowed"), "near-limit", "near-limit", "denied"]);
  assert.deepEqual(r.seen.map((x) => x.cost), [1, 1, 1, 1, 1, 1, 1, 1, 2, 1]);
  assert.ok(r.seen.every((x) => x.limit === "minute" && x.policy === null));
  assert.equal(r.seen[9].decision.allowed, false);
  const two = recorder();
  const multi = new RateLimiter({
    limits: [{ name: "burst", algorithm: "token-bucket", limit: 1, window: "1s", burst: 2 }, { name: "hour", algorithm: "sliding-log", quota: "100/1h" }],
    onDecision: two.hook,
  });
  for (let i = 0; i < 3; i++) multi.limit("k", { now });
  assert.deepEqual(two.seen.map((x) => [x.outcome, x.limit]), [["allowed", "burst"], ["near-limit", "burst"], ["denied", "burst"]]);
});

test("limitBatch reports every entry as limit() would (strings, handles, the lists), with limitBatch's results; bad input reports and counts nothing", () => {
  const r = recorder();
  const options = { algorithm: "fixed-window", limit: 10, window: "1m", name: "minute" };
  const l = new RateLimiter({ ...options, denyList: ["bad"], onDecision: r.hook });
  const plain = new RateLimiter(options);
  const batches = [
    [["k", "k", "bad", "j"], { now, costs: [7, 2, 1, 1] }],
    ["k", { now: [now, now + 1] }],
  ];
  for (const [keys, o] of batches) {
    const got = l.limitBatch(keys, o);
    const want = plain.limitBatch(Array.isArray(keys) ? keys.filter((k) => k !== "bad") : keys, { ...o, costs: o.costs?.filter((_, i) => keys[i] !== "bad") });
    const kept = (a) => (Array.isArray(keys) ? [...a].filter((_, i) => keys[i] !== "bad") : [...a]);
    for (const f of ["allowed", "remaining", "resetAt", "retryAfter"]) assert.deepEqual(kept(got[f]), [...want[f]], f);
    assert.equal(got.admitted, want.admitted);
  }
  assert.deepEqual(r.seen.map((x) => [x.outcome, x.limit, x.cost]), [
    ["allowed", "minute", 7],
    ["near-limit", "minute", 2],
    ["denied", null, 1],
    ["allowed", "minute", 1],
    ["near-limit", "minute", 1],
    ["denied", "minute", 1],
  ]);
  const h = l.key("h");
  const out = { allowed: new Uint8Array(2) };
  assert.equal(l.limitBatch([h, h], { now, costs: [8, 3] }, out).admitted, 1);
  assert.deepEqual([...out.allowed], [1, 0]);
  assert.deepEqual(r.outcomes().slice(6), ["near-limit", "denied"]);
  // A cost that no limit can hold, in the last entry: nothing counted, nothing reported.
  assert.throws(() => l.limitBatch(["fresh", "fresh"], { now, costs: [1, 11] }), { code: "invalid_cost" });
  assert.equal(r.seen.length, 8);
  assert.equal(l.peek("fresh", { now }).remaining, 9);
});

test("shadow mode reports shadow-denied; the lists report allowed and denied with no limit; a throwing hook changes nothing", () => {
  const r = recorder();
  const l = new RateLimiter({ algorithm: "gcra", quota: "1/1h", shadow: true, allowList: ["vip"], denyList: ["bad"], onDecision: r.hook });
  l.limit("k", { now });
  const d = l.limit("k", { now });
  assert.equal(d.allowed, true);
  l.limit("vip", { now });
  l.limit("bad", { now });
  assert.deepEqual(r.seen.map((x) => [x.outcome, x.limit]), [["near-limit", "default"], ["shadow-denied", "default"], ["allowed", null], ["denied", null]]);
  const loud = new RateLimiter({ algorithm: "gcra", quota: "1/1h", onDecision: () => { throw new Error("metrics down"); } });
  assert.equal(loud.limit("k", { now }).allowed, true);
  assert.equal(loud.limit("k", { now }).allowed, false);
  assert.throws(() => new RateLimiter({ algorithm: "gcra", quota: "1/1h", onDecision: "yes" }), { code: "invalid_type", field: "onDecision" });
});

test("over a store: a WorkerStore that cannot be reached and fails open reports failed-open under its Worker policy", async () => {
  const r = recorder();
  const store = new WorkerStore({ url: "http://127.0.0.1:1", policy: "api", failure: "open", timeoutMs: 2000 });
  const l = new RateLimiter({ store, onDecision: r.hook });
  const d = await l.limit("k", { now });
  assert.deepEqual([d.allowed, d.degraded], [true, "unavailable"]);
  assert.deepEqual(r.seen.map((x) => [x.outcome, x.policy]), [["failed-open", "api"]]);
  const closed = recorder();
  const c = new RateLimiter({ store: new WorkerStore({ url: "http://127.0.0.1:1", policy: "api", failure: "closed", timeoutMs: 2000 }), onDecision: closed.hook });
  assert.equal((await c.limit("k", { now })).allowed, false);
  assert.deepEqual(closed.outcomes(), ["denied"]);
});

/** A request for node:http-style middleware, answered by `middleware`; resolves with the status. */
function run(middleware) {
  return new Promise((done, fail) => {
    const req = { ip: "203.0.113.7", headers: {}, socket: { remoteAddress: "203.0.113.7" } };
    const res = {
      statusCode: 200,
      headers: {},
      setHeader(n, v) { this.headers[n] = v; },
      getHeader(n) { return this.headers[n]; },
      end() { done(this.statusCode); },
      once() {},
    };
    middleware(req, res, (e) => (e ? fail(e) : done(200)));
  });
}

test("the middleware pass onDecision to their limiters: rateLimit (memory, an express-rate-limit Store, limit 0, passOnStoreError), rateLimitFetch, tollgate/hono", async () => {
  const quiet = { validate: false };
  const a = recorder();
  const mw = rateLimit({ ...quiet, limit: 2, onDecision: a.hook });
  for (let i = 0; i < 3; i++) await run(mw);
  assert.deepEqual(a.outcomes(), ["allowed", "near-limit", "denied"]);

  const counts = new Map();
  const erlStore = {
    increment: async (k) => ({ totalHits: counts.set(k, (counts.get(k) ?? 0) + 1).get(k), resetTime: new Date(Date.now() + 60_000) }),
    decrement: async () => {},
    resetKey: async () => {},
  };
  const b = recorder();
  const viaStore = rateLimit({ ...quiet, limit: 1, store: erlStore, onDecision: b.hook });
  for (let i = 0; i < 2; i++) await run(viaStore);
  assert.deepEqual(b.outcomes(), ["near-limit", "denied"]);

  const z = recorder();
  await run(rateLimit({ ...quiet, limit: 0, onDecision: z.hook }));
  assert.deepEqual(z.outcomes(), ["denied"]);

  const f = recorder();
  const broken = { increment: async () => { throw new Error("store down"); }, decrement: async () => {}, resetKey: async () => {} };
  const logger = { error() {}, warn() {} };
  assert.equal(await run(rateLimit({ ...quiet, logger, store: broken, passOnStoreError: true, onDecision: f.hook })), 200);
  assert.deepEqual(f.seen, [{ policy: null, limit: null, outcome: "failed-open", cost: 1, decision: null }]);

  const c = recorder();
  const wrap = rateLimitFetch({ algorithm: "gcra", quota: "1/1h", key: () => "k", onDecision: c.hook });
  const handler = wrap(() => new Response("ok"));
  assert.deepEqual([(await handler(new Request("http://x/"))).status, (await handler(new Request("http://x/"))).status], [200, 429]);
  assert.deepEqual(c.outcomes(), ["near-limit", "denied"]);

  const h = recorder();
  const app = new Hono();
  app.use(rateLimiter({ keyGenerator: () => "k", limit: 10, onDecision: h.hook, cost: () => 3 }));
  app.get("/", (ctx) => ctx.text("ok"));
  const statuses = [];
  for (let i = 0; i < 4; i++) statuses.push((await app.request("/")).status);
  assert.deepEqual(statuses, [200, 200, 200, 429]);
  assert.deepEqual(h.seen.map((x) => [x.outcome, x.cost]), [["allowed", 3], ["allowed", 3], ["near-limit", 3], ["denied", 3]]);
});

test("the Prometheus example counts total_hits, over_limit, near_limit, shadow_mode and failed_open by policy and limit", async () => {
  // Copied next to tests/js/node_modules, where prom-client resolves (the example is for users to copy).
  const dir = mkdtempSync(join(here, ".example-"));
  try {
    copyFileSync(resolve(here, "../../examples/prometheus/metrics.mjs"), join(dir, "metrics.mjs"));
    const { prometheusDecisions } = await import(pathToFileURL(join(dir, "metrics.mjs")).href);
    const registry = new Registry();
    const onDecision = prometheusDecisions({ registry, policy: "login" });
    const enforced = new RateLimiter({ algorithm: "fixed-window", limit: 5, window: "1m", name: "minute", onDecision });
    for (let i = 0; i < 7; i++) enforced.limit("k", { now });
    const shadow = new RateLimiter({ algorithm: "fixed-window", limit: 1, window: "1m", name: "shadowed", shadow: true, onDecision });
    for (let i = 0; i < 3; i++) shadow.limit("k", { now });
    const open = new RateLimiter({ store: new WorkerStore({ url: "http://127.0.0.1:1", policy: "api", failure: "open", timeoutMs: 2000 }), onDecision });
    await open.limit("k", { now, cost: 2 });

    const values = {};
    for (const m of await registry.getMetricsAsJSON()) {
      for (const v of m.values) values[`${m.name}{${v.labels.policy},${v.labels.limit}}`] = v.value;
    }
    assert.deepEqual(values, {
      "ratelimit_total_hits{login,minute}": 7,
      "ratelimit_total_hits{login,shadowed}": 3,
      "ratelimit_total_hits{api,}": 2,
      "ratelimit_over_limit{login,minute}": 2,
      "ratelimit_over_limit{login,shadowed}": 2,
      "ratelimit_near_limit{login,minute}": 2,
      "ratelimit_near_limit{login,shadowed}": 1,
      "ratelimit_shadow_mode{login,shadowed}": 2,
      "ratelimit_failed_open{api,}": 2,
    });
    const text = await registry.metrics();
    assert.match(text, /^ratelimit_over_limit\{policy="login",limit="minute"\} 2$/m);
    const readme = readFileSync(resolve(here, "../../pkg-template/README.md"), "utf8");
    assert.ok(readme.includes("examples/prometheus/metrics.mjs"), "the npm README points at the example");
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});
