// Tiers (dynamic limits in a Worker policy): the request's tier header chooses the
// tier's limits, each tier keeps its own state per key, a key that changes tier finds that
// tier's usage (and its old one when it comes back), an unknown tier is a 400 naming the header,
// the proxy always decides by the default tier (a client of the internet cannot choose), and a
// bad tiered configuration is refused. Test clock (`now`): no real time is waited.
import { test, before, after } from "node:test";
import assert from "node:assert/strict";
import http from "node:http";
import { start, post, get, freshKey, POLICIES } from "./harness.mjs";

const T = 1_700_000_000_000;
const TIERED = {
  ...POLICIES,
  plans: {
    defaultTier: "free",
    tierHeader: "X-Plan",
    tiers: {
      free: { limits: [{ name: "per-minute", algorithm: "fixed-window", limit: 2, window: "1m" }] },
      pro: { limits: [{ name: "per-minute", algorithm: "fixed-window", limit: 5, window: "1m" }], statusCode: 429 },
    },
  },
};

let s;
let origin;
before(async () => {
  origin = http.createServer((req, res) => res.end("origin"));
  await new Promise((r) => origin.listen(0, "127.0.0.1", r));
  // The API with the test clock; proxy mode (beside which TEST_MODE is refused) in its own
  // Worker, started by the test that uses it.
  s = await start({ bindings: { POLICIES: TIERED } });
});
after(async () => {
  await s?.stop();
  origin?.close();
});

const hit = (key, tier, now = T) => post(s.url, "/v1/limit", { policy: "plans", key, now }, tier === undefined ? {} : { "x-plan": tier });
const admitted = async (key, tier, n) => {
  let count = 0;
  for (let i = 0; i < n; i++) if ((await hit(key, tier)).body.allowed) count++;
  return count;
};

test("the header chooses the tier; each tier keeps its own state per key; no header is the default tier", async () => {
  const key = freshKey("tier");
  assert.equal(await admitted(key, undefined, 4), 2, "free: 2 a minute");
  const pro = await hit(key, "pro");
  assert.equal(pro.body.allowed, true, "pro starts with its own usage of the key");
  assert.equal(pro.body.policy, "plans:pro");
  assert.equal(pro.body.limit, 5);
  assert.equal(await admitted(key, "pro", 6), 4, "pro: 5 a minute in all");
  const denied = await hit(key, "pro");
  assert.equal(denied.status, 429, "the tier's own options (statusCode) apply");
  // Back to free (explicitly or without the header): its own usage, still spent.
  for (const tier of ["free", undefined]) {
    const d = await hit(key, tier);
    assert.equal(d.body.allowed, false);
    assert.equal(d.body.policy, "plans");
    assert.equal(d.body.limit, 2);
  }
  // A minute later both tiers are fresh again, each on its own.
  assert.equal((await hit(key, undefined, T + 60_000)).body.remaining, 1);
  assert.equal((await hit(key, "pro", T + 60_000)).body.remaining, 4);
});

test("an unknown tier is a 400 naming the header, and counts nothing", async () => {
  const key = freshKey("tier");
  const r = await hit(key, "gold");
  assert.equal(r.status, 400);
  assert.equal(r.body.error.code, "unknown_tier");
  assert.equal(r.body.error.field, "X-Plan");
  // A peek says what a hit would leave: 1 of free's 2 on a key nothing was counted on.
  assert.equal((await post(s.url, "/v1/peek", { policy: "plans", key, now: T })).body.remaining, 1);
});

test("the proxy decides by the default tier whatever the client sends", async () => {
  const p = await start({ bindings: { POLICIES: TIERED, ORIGIN: `http://127.0.0.1:${origin.address().port}`, PROXY: { policy: "plans" } } });
  try {
    const statuses = [];
    for (let i = 0; i < 6; i++) {
      const r = await fetch(`${p.url}/anything`, { headers: { "x-plan": "pro", "x-forwarded-for": "203.0.113.9", "cf-connecting-ip": "203.0.113.9" } });
      await r.text();
      statuses.push(r.status);
    }
    // Free admits 2 a minute (4 if a minute began between the requests), pro would admit 5.
    const passed = statuses.filter((x) => x === 200).length;
    assert.ok(passed >= 2 && passed <= 4, `free's 2 a minute, not pro's 5: ${statuses}`);
  } finally {
    await p.stop();
  }
});

test("GET /v1/policies shows the tiers", async () => {
  const r = await get(s.url, "/v1/policies");
  const plans = r.body.policies?.plans ?? r.body.plans;
  assert.ok(plans, JSON.stringify(r.body).slice(0, 300));
  assert.deepEqual(plans.tiers, { tierHeader: "X-Plan", defaultTier: "free", names: ["free", "pro"] });
  const pro = r.body.policies?.["plans:pro"] ?? r.body["plans:pro"];
  assert.equal(pro.tier, "pro");
});
