// The operator controls through the npm limiter and both middlewares: penalties
// (`blockDuration`), allow and deny lists, shadow mode, and waiting (`waitFor`,
// `blockUntilReady`). Simulated time (`now`) wherever the limiter takes it; where real time
// passes (waiting), nothing is asserted about how long anything took.
import test from "node:test";
import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import express from "express";
import { RateLimiter, RedisStore, rateLimit, rateLimitFetch, WaitTimeoutError } from "../../pkg/dist/lib/index.js";
import { RateLimiter as Lite } from "../../pkg/dist/lib/lite.js";
import { serving } from "./serving.mjs";

const T = 1_700_000_000_000;
const ALGORITHMS = [
  { algorithm: "fixed-window", limit: 3, window: 1000 },
  { algorithm: "fixed-window", align: "first-hit", limit: 3, window: 1000 },
  { algorithm: "sliding-log", limit: 3, window: 1000 },
  { algorithm: "sliding-window", limit: 3, window: 1000 },
  { algorithm: "sliding-buckets", limit: 3, window: 1000, precision: 250 },
  { algorithm: "token-bucket", limit: 3, window: 1000, burst: 4 },
  { algorithm: "gcra", limit: 3, window: 1000, burst: 2 },
];

/** A seeded trace of [key, ms step, cost] (xorshift: the same hits on every run). */
function trace(seed, n) {
  let x = seed;
  const next = () => ((x ^= x << 13), (x ^= x >>> 17), (x ^= x << 5), (x >>> 0) / 2 ** 32);
  return Array.from({ length: n }, () => [["a", "b", "c"][Math.floor(next() * 3)], Math.floor(next() * 200), 1 + Math.floor(next() * 2)]);
}

// ---------------------------------------------------------------------------------------
// Penalties

test("blockDuration: a denied key stays denied for the block, counted nowhere, and the decision says so", () => {
  const l = new RateLimiter({ algorithm: "fixed-window", limit: 2, window: 1000, blockDuration: "10s" });
  assert.equal(l.limit("k", { now: T }).allowed, true);
  assert.equal(l.limit("k", { now: T }).allowed, true);
  const denied = l.limit("k", { now: T });
  assert.equal(denied.allowed, false);
  assert.equal(denied.penalty, true);
  assert.equal(denied.retryAfter, 10_000);
  assert.equal(denied.resetAt, T + 10_000);
  const h = l.headers(denied, { now: T });
  assert.equal(h["Retry-After"], "10", "Retry-After covers the block");
  // Windows go by; the block does not, and knocking does not extend it.
  for (const s of [1, 4, 9]) {
    const d = l.limit("k", { now: T + s * 1000 });
    assert.deepEqual([d.allowed, d.penalty, d.retryAfter], [false, true, (10 - s) * 1000]);
    assert.equal(d.limits[0].allowed, true, "the limit alone would admit it");
  }
  assert.equal(l.peek("k", { now: T + 9_999 }).penalty, true);
  const back = l.limit("k", { now: T + 10_000 });
  assert.deepEqual([back.allowed, back.penalty, back.remaining], [true, undefined, 1], "nothing was counted during the block");
  assert.equal(l.limit("other", { now: T + 5000 }).allowed, true, "only the denied key is blocked");
});

test("blockDuration over several limits and keys, and through export/import", () => {
  const l = new RateLimiter({ limits: [{ name: "s", algorithm: "gcra", quota: "2/s" }, { name: "m", algorithm: "sliding-window", quota: "100/m" }], blockDuration: 60_000 });
  l.limit(["ip", "user"], { now: T });
  l.limit(["ip", "user"], { now: T });
  const d = l.limit(["ip", "user"], { now: T });
  assert.deepEqual([d.allowed, d.penalty, d.blockedBy, d.retryAfter], [false, true, "s", 60_000]);
  const copy = new RateLimiter({ limits: [{ name: "s", algorithm: "gcra", quota: "2/s" }, { name: "m", algorithm: "sliding-window", quota: "100/m" }], blockDuration: 60_000 });
  copy.import("ip", l.export("ip"));
  assert.equal(copy.limit("ip", { now: T + 30_000 }).penalty, true, "the block travels with the key's state");
  assert.equal(copy.limit("fresh", { now: T + 30_000 }).allowed, true);
});

test("blockDuration: bad values are refused with the core's code and field; 0 is none; lite refuses it", () => {
  for (const [v, code] of [["soon", "invalid_value"], [-1, "out_of_range"], [1.5, "out_of_range"], [true, "invalid_type"]]) {
    assert.throws(() => new RateLimiter({ algorithm: "gcra", quota: "1/s", blockDuration: v }), { code, field: "blockDuration" });
  }
  const none = new RateLimiter({ algorithm: "gcra", quota: "1/s", blockDuration: 0 });
  none.limit("k", { now: T });
  assert.equal(none.limit("k", { now: T }).penalty, undefined);
  assert.throws(() => new Lite({ algorithm: "gcra", quota: "1/s", blockDuration: "1m" }), /blockDuration/);
});

test("blockDuration with a synced RedisStore: refused as the core parses it, so a zero in any unit is none", () => {
  // Only constructed: no command is ever sent.
  const store = new RedisStore({ sendCommand: () => new Promise(() => {}) }, { syncRate: 100 });
  const synced = (blockDuration) => new RateLimiter({ algorithm: "fixed-window", quota: "5/s", blockDuration, store });
  for (const none of [0, "0ms", "0s", "0m", " 0 h"]) assert.doesNotThrow(() => synced(none), `${JSON.stringify(none)} is no penalty`);
  for (const some of [1, "1us", "10s"]) assert.throws(() => synced(some), { code: "conflicting_fields", field: "blockDuration" });
});

// ---------------------------------------------------------------------------------------
// Allow and deny lists

const cases = JSON.parse(readFileSync(new URL("../access-lists/cases.json", import.meta.url), "utf8"));

test("lists: the shared cases through RateLimiter (keys) answer as the core does", () => {
  const l = new RateLimiter({ algorithm: "gcra", quota: "1/m", allowList: cases.allowList, denyList: cases.denyList });
  for (const c of cases.cases.filter((c) => c.ip === undefined)) {
    const d = l.limit(c.key, { now: T });
    assert.equal(d.reason ?? null, c.reason, JSON.stringify(c));
    if (c.reason === "allowList") {
      assert.equal(d.allowed, true);
      assert.equal(l.limit(c.key, { now: T }).allowed, true, "an allowed key is never counted");
    }
    if (c.reason === "denyList") assert.equal(d.allowed, false);
  }
  assert.equal(l.size, cases.cases.filter((c) => c.ip === undefined && c.reason === null).length, "listed keys hold no state");
  for (const bad of cases.invalid) {
    assert.throws(() => new RateLimiter({ algorithm: "gcra", quota: "1/s", denyList: ["ok", bad] }), { code: "invalid_value", field: "denyList[1]" });
  }
  assert.throws(() => new RateLimiter({ algorithm: "gcra", quota: "1/s", allowList: "10.0.0.0/8" }), { code: "invalid_type", field: "allowList" });
  assert.throws(() => new RateLimiter({ algorithm: "gcra", quota: "1/s", allowList: [7] }), { code: "invalid_type", field: "allowList[0]" });
  assert.throws(() => l.limit("partner", { cost: "1" }), { code: "invalid_cost" }, "bad call options are refused for listed keys too");
});

test("lists: rateLimit matches the client address it keys by, and the key (the shared cases, over HTTP)", async () => {
  const app = express();
  app.set("trust proxy", 1);
  app.use(rateLimit({
    algorithm: "gcra", quota: "1/m", allowList: cases.allowList, denyList: cases.denyList,
    key: (req) => req.get("x-key") ?? req.ip, validate: false,
  }));
  app.get("/", (req, res) => res.json({ reason: req.rateLimit.reason ?? null }));
  await serving(app, async (url) => {
    for (const c of cases.cases) {
      const ip = c.ip ?? "100.64.0.1";
      const r = await fetch(url, { headers: { "x-forwarded-for": ip, "x-key": c.key } });
      const reason = r.status === 403 ? "denyList" : (await r.json()).reason;
      assert.equal(reason, c.reason, JSON.stringify(c));
      if (c.reason !== null) assert.equal(r.headers.get("ratelimit"), null, "a listed hit gets no rate-limit header");
    }
    // The default key (the client address) on the lists.
    const byIp = express();
    byIp.set("trust proxy", 1);
    byIp.use(rateLimit({ algorithm: "gcra", quota: "1/m", denyList: ["2001:db8:a:dead::/64"], allowList: ["192.0.2.0/24"] }));
    byIp.get("/", (req, res) => res.send("ok"));
    await serving(byIp, async (u2) => {
      const deny = await fetch(u2, { headers: { "x-forwarded-for": "2001:db8:a:dead::77" } });
      assert.equal(deny.status, 403);
      for (let i = 0; i < 3; i++) assert.equal((await fetch(u2, { headers: { "x-forwarded-for": "192.0.2.9" } })).status, 200);
      const other = { headers: { "x-forwarded-for": "198.51.100.1" } };
      assert.equal((await fetch(u2, other)).status, 200);
      assert.equal((await fetch(u2, other)).status, 429, "an unlisted client is limited");
    });
  });
});

test("lists: rateLimitFetch answers a deny-listed key 403 and lets an allow-listed one through uncounted", async () => {
  const wrap = rateLimitFetch({ algorithm: "gcra", quota: "1/m", key: (r) => r.headers.get("x-key"), allowList: ["vip"], denyList: ["bad"] });
  const handler = wrap(() => new Response("ok"));
  const req = (key) => new Request("http://x/", { headers: { "x-key": key } });
  for (let i = 0; i < 3; i++) {
    const r = await handler(req("vip"));
    assert.equal(r.status, 200);
    assert.equal(r.headers.get("ratelimit"), null);
  }
  const bad = await handler(req("bad"));
  assert.equal(bad.status, 403);
  assert.equal((await bad.json()).error.code, "deny_listed");
  assert.equal((await handler(req("u"))).status, 200);
  assert.equal((await handler(req("u"))).status, 429);
});

// ---------------------------------------------------------------------------------------
// Shadow mode

test("shadow: never blocks, and its would-be denials are exactly enforcement's on the same trace, for every algorithm", () => {
  for (const spec of ALGORITHMS) {
    for (const extra of [{}, { blockDuration: 700 }]) {
      const enforcing = new RateLimiter({ ...spec, ...extra });
      const shadow = new RateLimiter({ ...spec, ...extra, shadow: true });
      let now = T;
      let denied = 0;
      let wouldDeny = 0;
      for (const [key, step, cost] of trace(7, 400)) {
        now += step;
        const e = enforcing.limit(key, { now, cost });
        const s = shadow.limit(key, { now, cost });
        assert.equal(s.allowed, true, "shadow mode never blocks");
        assert.equal(s.shadow, true);
        assert.equal(s.wouldAllow, e.allowed);
        // Everything else is enforcement's decision.
        const { shadow: _s, wouldAllow: _w, allowed: _a, ...rest } = s;
        const { allowed: _e, ...enforced } = e;
        assert.deepEqual(rest, enforced);
        if (!e.allowed) denied++;
        if (!s.wouldAllow) wouldDeny++;
      }
      assert.ok(denied > 20, `${spec.algorithm}: the trace denies some hits (${denied})`);
      assert.equal(wouldDeny, denied, `${spec.algorithm} ${JSON.stringify(extra)}`);
      // What was counted is what enforcement counted: the keys' states are the same bytes.
      for (const key of ["a", "b", "c"]) assert.deepEqual(shadow.export(key), enforcing.export(key));
    }
  }
});

test("shadow: rateLimit admits every request, sends enforcement's headers without Retry-After, and logs each would-be denial", async () => {
  const warnings = [];
  const logger = { warn: (fields, message) => warnings.push([fields, message]), error: () => {} };
  const shadow = rateLimit({ algorithm: "fixed-window", limit: 2, window: "1h", shadow: true, logger, validate: false });
  const enforcing = rateLimit({ algorithm: "fixed-window", limit: 2, window: "1h", validate: false });
  const statuses = { shadow: [], enforcing: [] };
  for (const [name, mw] of [["shadow", shadow], ["enforcing", enforcing]]) {
    const app = express();
    app.use(mw);
    app.get("/", (req, res) => res.json(req.rateLimit));
    await serving(app, async (url) => {
      for (let i = 0; i < 5; i++) {
        const r = await fetch(url);
        statuses[name].push(r.status);
        if (name === "shadow") {
          const d = await r.json();
          assert.equal(d.shadow, true);
          assert.equal(r.headers.get("tollgate-shadow"), i < 2 ? "allow" : "deny");
          assert.equal(r.headers.get("retry-after"), null);
          assert.ok(r.headers.get("ratelimit").includes(`r=${Math.max(0, 1 - i)}`), r.headers.get("ratelimit"));
        }
      }
    });
  }
  assert.deepEqual(statuses.shadow, [200, 200, 200, 200, 200]);
  const enforcedDenials = statuses.enforcing.filter((s) => s === 429).length;
  assert.equal(enforcedDenials, 3);
  assert.equal(warnings.length, enforcedDenials, "one log line per would-be denial");
  assert.equal(JSON.stringify(warnings).includes("127.0.0.1"), false, "the log never holds the key");
});

test("shadow: rateLimitFetch passes every request on, marked", async () => {
  const handler = rateLimitFetch({ algorithm: "gcra", quota: "1/m", key: () => "k", shadow: true })(() => new Response("ok"));
  const original = console.warn;
  console.warn = () => {};
  try {
    const marks = [];
    for (let i = 0; i < 3; i++) {
      const r = await handler(new Request("http://x/"));
      assert.equal(r.status, 200);
      marks.push(r.headers.get("tollgate-shadow"));
    }
    assert.deepEqual(marks, ["allow", "deny", "deny"]);
  } finally {
    console.warn = original;
  }
});

// ---------------------------------------------------------------------------------------
// Waiting

test("waitFor resolves with the admitting decision after sleeping retryAfter, counting only that hit", async () => {
  const l = new RateLimiter({ algorithm: "gcra", limit: 1, window: 30 });
  assert.equal(l.limit("k").allowed, true);
  const d = await l.waitFor("k", { maxWait: 60_000 });
  assert.equal(d.allowed, true);
  assert.equal(l.peek("k").remaining, 0);
});

test("waitFor rejects with wait_timeout and the last denial when the wait ends after maxWait; blockUntilReady resolves with it", async () => {
  const l = new RateLimiter({ algorithm: "fixed-window", limit: 1, window: "1h" });
  l.limit("k");
  await assert.rejects(l.waitFor("k", { maxWait: 1000 }), (e) => {
    assert.ok(e instanceof WaitTimeoutError);
    assert.equal(e.code, "wait_timeout");
    assert.equal(e.decision.allowed, false);
    assert.ok(e.decision.retryAfter > 1000);
    return true;
  });
  const d = await l.blockUntilReady("k", 1000);
  assert.equal(d.allowed, false, "upstash's contract: the denial, not an error");
  const listed = new RateLimiter({ algorithm: "gcra", quota: "1/s", denyList: ["bad"] });
  await assert.rejects(listed.waitFor("bad", { maxWait: 60_000 }), { code: "wait_timeout" }, "a deny-listed key is not waited for");
});

test("waitFor stops on abort with the signal's reason, and refuses bad options", async () => {
  const l = new RateLimiter({ algorithm: "fixed-window", limit: 1, window: "1h" });
  l.limit("k");
  const c = new AbortController();
  const waiting = l.waitFor("k", { maxWait: 10 * 3_600_000, signal: c.signal });
  c.abort(new Error("stop"));
  await assert.rejects(waiting, /stop/);
  await assert.rejects(l.waitFor("k", { maxWait: 1000, signal: AbortSignal.abort() }), { name: "AbortError" });
  await assert.rejects(l.waitFor("k", {}), { code: "missing_field", field: "maxWait" });
  await assert.rejects(l.waitFor("k", { maxWait: -1 }), { code: "out_of_range", field: "maxWait" });
  await assert.rejects(l.waitFor("k", { maxWait: 1, timeout: 1 }), { code: "unknown_field", field: "timeout" });
});

// ---------------------------------------------------------------------------------------
// Dynamic limits

test("rateLimit: an async limit function picks the tier per request, and a key that changes tier keeps its usage", async () => {
  const tiers = { free: 2, pro: 4 };
  const app = express();
  app.use(rateLimit({
    algorithm: "sliding-window", window: "1h", validate: false,
    limit: async (req) => tiers[req.get("x-tier")] ?? 1,
    key: (req) => req.get("x-user"),
  }));
  app.get("/", (req, res) => res.json({ limit: req.rateLimit.limit }));
  await serving(app, async (url) => {
    const as = (tier) => fetch(url, { headers: { "x-user": "u1", "x-tier": tier } });
    assert.deepEqual([(await as("free")).status, (await as("free")).status, (await as("free")).status], [200, 200, 429]);
    const pro = await as("pro");
    assert.equal(pro.status, 200, "the pro tier's limit applies to the usage so far (2 of 4)");
    assert.equal((await pro.json()).limit, 4);
    assert.equal((await as("pro")).status, 200);
    assert.equal((await as("pro")).status, 429, "2 free + 2 pro hits: the pro limit of 4 is reached, not restarted");
  });
});
