// The isolate's blocked-key cache answers exactly what the key's Durable Object would: a denial
// served from the cache (header `Tollgate-Cache: hit`) has the figures of the object's own
// decision for that hit, its cost and its time, whatever the cost of the hit that was cached.
// The object's answer is read with POST /v1/peek, which never uses the cache and, for a hit
// that is denied, decides what POST /v1/limit would (a denied hit changes nothing).
import { test, before, after } from "node:test";
import assert from "node:assert/strict";
import { start, post, del, freshKey } from "./harness.mjs";

const POLICIES = {
  // The example: GCRA 100/s, burst 20.
  gcra: { limits: [{ name: "per-second", algorithm: "gcra", limit: 100, window: "1s", burst: 20 }] },
  log: { limits: [{ name: "per-second", algorithm: "sliding-log", limit: 10, window: "1s" }] },
  bucket: { limits: [{ name: "per-5s", algorithm: "token-bucket", limit: 50, window: "5s", burst: 8 }] },
  window: { limits: [{ name: "per-second", algorithm: "sliding-window", limit: 30, window: "3s" }] },
  several: {
    limits: [
      { name: "second", algorithm: "gcra", limit: 8, window: "1s", burst: 4 },
      { name: "ten-seconds", algorithm: "sliding-log", limit: 40, window: "10s" },
    ],
  },
  hour: { limits: [{ name: "per-hour", algorithm: "token-bucket", limit: 3, window: "1h" }] },
};

/** The decision fields every edge shares (one mapping, should a name change). */
const FIELDS = { allowed: "allowed", remaining: "remaining", resetAt: "resetAt", retryAfter: "retryAfter", blockedBy: "blockedBy" };
const figures = (body) => Object.fromEntries(Object.entries(FIELDS).map(([ours, theirs]) => [ours, body?.[theirs]]));

let s;
before(async () => {
  s = await start({ isolates: 2, bindings: { POLICIES } });
});
after(async () => {
  await s?.stop();
});

const T0 = 1_700_000_000_000;
const on = (w) => ({ host: `w${w}.test` });
const limit = (policy, key, now, cost = 1, w = 0) => post(s.url, "/v1/limit", { key, policy, now, cost }, on(w));
const peek = (policy, key, now, cost = 1, w = 0) => post(s.url, "/v1/peek", { key, policy, now, cost }, on(w));

test("the issue's example: after a denial of cost 1, a cost-4 hit gets its own wait (GCRA 100/s burst 20)", async () => {
  const key = freshKey("gcra");
  assert.equal((await limit("gcra", key, T0, 20)).body.allowed, true);
  const light = await limit("gcra", key, T0 + 7, 1);
  assert.equal(light.body.allowed, false);
  assert.equal(light.body.retryAfter, 3, "the object: 203 ms of backlog, 200 allowed");
  const heavy = await limit("gcra", key, T0 + 7, 4);
  assert.equal(heavy.headers.get("tollgate-cache"), "hit", "answered by the cache");
  assert.equal(heavy.body.allowed, false);
  assert.equal(heavy.body.retryAfter, 33, "30 ms more than the cost-1 hit: 10 ms per unit");
  assert.deepEqual(figures(heavy.body), figures((await peek("gcra", key, T0 + 7, 4)).body));
});

test("every denial served from the cache has the object's figures, for every cost and time", async () => {
  for (const policy of ["gcra", "log", "bucket", "window", "several"]) {
    const key = freshKey(policy);
    const max = POLICIES[policy].limits[0].burst ?? POLICIES[policy].limits[0].limit;
    let now = T0;
    // Empty the limit, then a run of hits of mixed costs, mostly denied. Every other hit costs
    // 1 and takes what has refilled: the cache answers only over a state that admits nothing,
    // not even a hit of cost 1 (src/blocked.rs), so this keeps the key there between refills.
    while ((await limit(policy, key, now, 1)).body.allowed) now += 1;
    let cached = 0;
    for (let i = 0; i < 60; i++) {
      now += i % 5 === 0 ? 3 : 1;
      const cost = i % 2 === 0 ? 1 : 1 + ((i * 7) % max);
      const object = await peek(policy, key, now, cost);
      const got = await limit(policy, key, now, cost);
      assert.deepEqual(figures(got.body), figures(object.body), `${policy}: hit ${i} (cost ${cost}, +${now - T0} ms)`);
      for (const h of ["retry-after", "ratelimit", "ratelimit-policy", "x-ratelimit-remaining", "x-ratelimit-reset"]) {
        assert.equal(got.headers.get(h), object.headers.get(h), `${policy}: hit ${i}: header ${h}`);
      }
      if (got.headers.get("tollgate-cache") === "hit") {
        cached++;
        assert.equal(got.body.estimate, true, "a cached answer says it is an estimate");
      } else {
        assert.equal(got.body.estimate, false, "the object's answer is exact");
      }
    }
    assert.ok(cached > 20, `${policy}: only ${cached} answers came from the cache`);
  }
});

test("a hit the cached state admits goes to the object, and is counted there", async () => {
  const key = freshKey("bucket");
  let now = T0;
  while ((await limit("bucket", key, now, 1)).body.allowed) now += 1;
  // One token refills every 100 ms: a cost-1 hit 100 ms later is admitted by the object.
  const next = await limit("bucket", key, now + 100, 1);
  assert.equal(next.body.allowed, true);
  assert.equal(next.headers.get("tollgate-cache"), null);
  const after = await limit("bucket", key, now + 100, 1);
  assert.equal(after.body.allowed, false);
  assert.deepEqual(figures(after.body), figures((await peek("bucket", key, now + 100, 1)).body));
});

test("a reset through another isolate is seen once the cache's trust in the entry (1 s) is over", async () => {
  const key = freshKey("hour");
  for (let i = 0; i < 3; i++) assert.equal((await limit("hour", key, T0 + i, 1, 0)).body.allowed, true);
  assert.equal((await limit("hour", key, T0 + 10, 1, 0)).body.allowed, false);
  assert.equal((await limit("hour", key, T0 + 20, 1, 0)).headers.get("tollgate-cache"), "hit");
  assert.equal((await del(s.url, `/v1/keys/hour/${encodeURIComponent(key)}`, on(1))).status, 200);
  // Within the second since the object confirmed the state, isolate 0 still denies from memory.
  const stale = await limit("hour", key, T0 + 1010, 1, 0);
  assert.equal(stale.body.allowed, false);
  assert.equal(stale.body.estimate, true);
  // Then it asks the object again.
  const fresh = await limit("hour", key, T0 + 1011, 1, 0);
  assert.equal(fresh.headers.get("tollgate-cache"), null);
  assert.equal(fresh.body.allowed, true);
});
