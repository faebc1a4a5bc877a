// Concurrency limits on the in-memory limiter (docs/concurrency.md): the package as built in pkg/.
import test from "node:test";
import assert from "node:assert/strict";
import { RateLimiter } from "../../pkg/dist/lib/index.js";

const now = 1_700_000_000_000;

test("acquire takes a slot under a lease; release frees it, once; a denial waits for the nearest expiry", () => {
  const l = new RateLimiter({ algorithm: "concurrency", limit: 2, leaseTtl: "30s" });
  const a = l.acquire("k", { now });
  assert.equal(typeof a.lease, "string");
  assert.match(a.lease, /^[A-Za-z0-9_-]+$/);
  assert.deepEqual([a.allowed, a.limit, a.remaining, a.expiresAt], [true, 2, 1, now + 30_000]);
  const b = l.acquire("k", { now: now + 1000, cost: 500 }); // one slot whatever the cost
  assert.deepEqual([b.allowed, b.remaining], [true, 0]);
  const c = l.acquire("k", { now: now + 2000 });
  assert.deepEqual([c.allowed, c.lease, c.expiresAt, c.retryAfter, c.blockedBy], [false, null, null, 28_000, "default"]);
  const r = l.release(a.lease, { now: now + 3000 });
  assert.deepEqual([r.released, r.allowed, r.remaining], [true, true, 1]);
  const before = l.export("k");
  assert.equal(l.release(a.lease, { now: now + 3000 }).released, false, "a replay is a no-op");
  assert.deepEqual(l.export("k"), before);
  assert.equal(l.acquire("k", { now: now + 3001 }).allowed, true);
});

test("limit acquires on a concurrency policy; renew extends a live lease and refuses an expired one", () => {
  const l = new RateLimiter({ algorithm: "concurrency", limit: 1, leaseTtl: 1000 });
  const a = l.limit("k", { now });
  assert.equal(typeof a.lease, "string");
  const n = l.renew(a.lease, { now: now + 900 });
  assert.equal(n.expiresAt, now + 1900);
  assert.equal(l.limit("k", { now: now + 1899 }).allowed, false);
  assert.equal(l.peek("k", { now: now + 1900 }).allowed, true, "an expired lease frees its slot by itself");
  assert.throws(() => l.renew(a.lease, { now: now + 1900 }), { code: "unknown_lease", field: "lease" });
  assert.throws(() => l.release("not a lease"), { code: "invalid_lease", field: "lease" });
  assert.throws(() => l.release(42), { name: "TypeError" });
  assert.throws(() => l.limitBatch(["k"], { now }), /acquire/);
  assert.throws(() => l.reserve("k", { now }), /acquire/);
});

test("all or nothing with a rate limit: a denial by either takes nothing from the other", () => {
  const l = new RateLimiter({
    limits: [
      { algorithm: "concurrency", limit: 1, leaseTtl: "10s", name: "in-flight" },
      { algorithm: "gcra", quota: "2/m", name: "rate" },
    ],
  });
  const a = l.acquire("k", { now });
  assert.equal(a.allowed, true);
  const full = l.acquire("k", { now: now + 1 });
  assert.deepEqual([full.allowed, full.blockedBy], [false, "in-flight"]);
  l.release(a.lease, { now: now + 2 });
  const b = l.acquire("k", { now: now + 3 });
  assert.equal(b.allowed, true, "the slot's denial took nothing from the rate");
  l.release(b.lease, { now: now + 4 });
  const rated = l.acquire("k", { now: now + 5 });
  assert.deepEqual([rated.allowed, rated.blockedBy, rated.lease], [false, "rate", null]);
  assert.equal(l.peek("k", { now: now + 6 }).limits.find((x) => x.name === "in-flight").remaining, 1, "the rate's denial took no slot: it is free (the peek, denied by the rate, counts nothing)");
});

test("export and import carry the leases; a limiter without concurrency acquires no lease", () => {
  const l = new RateLimiter({ algorithm: "concurrency", limit: 1 });
  const a = l.acquire("k", { now });
  assert.equal(a.expiresAt, now + 30_000, "leaseTtl defaults to 30 s");
  const twin = new RateLimiter({ algorithm: "concurrency", limit: 1 });
  twin.import("k", l.export("k"));
  assert.equal(twin.acquire("k", { now }).allowed, false);
  assert.equal(twin.release(a.lease, { now }).released, true);
  assert.equal(twin.acquire("k", { now }).allowed, true);
  const plain = new RateLimiter({ algorithm: "gcra", quota: "1/s" });
  const d = plain.acquire("k", { now });
  assert.deepEqual([d.allowed, d.lease, d.expiresAt], [true, null, null]);
});

test("a concurrency limit's mistakes have a code and a field", () => {
  assert.throws(() => new RateLimiter({ algorithm: "concurrency", limit: 2, window: "1s" }), { code: "unsupported_option", field: "window" });
  assert.throws(() => new RateLimiter({ algorithm: "concurrency" }), { code: "missing_field", field: "limit" });
  assert.throws(() => new RateLimiter({ algorithm: "concurrency", limit: 2, leaseTtl: "2h" }), { code: "out_of_range", field: "leaseTtl" });
  assert.throws(() => new RateLimiter({ limits: [{ algorithm: "concurrency", limit: 2, leaseTtl: "0s" }] }), { field: "limits[0].leaseTtl" });
  assert.throws(() => new RateLimiter({ limits: [{ algorithm: "gcra", quota: "1/s", leaseTtl: "1s" }] }), { code: "unknown_field", field: "limits[0].leaseTtl" });
});
