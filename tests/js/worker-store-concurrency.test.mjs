// The packed package's `WorkerStore` on a concurrency policy (docs/concurrency.md): the limiter's
// `acquire`, `release(lease)` and `renew(lease)` over the built Worker in workerd
// (`POST /v1/acquire`, `/v1/release`, `/v1/renew`), answering as the memory and Redis limiters
// do: a lease and its expiry, `released`, the new `expiresAt`, `unknown_lease` and
// `invalid_lease` thrown as memory throws them; `limit` acquires. The test clock is fixed.
import test from "node:test";
import assert from "node:assert/strict";
import { RateLimiter, WorkerStore } from "../../pkg/dist/lib/index.js";
import { start } from "../../worker/test/harness.mjs";

const NOW = 1_800_000_000_000;
const TTL = 10_000;
const GPU = { limits: [{ name: "in-flight", algorithm: "concurrency", limit: 2, leaseTtl: "10s" }], timeoutMs: 10_000 };

test("WorkerStore: acquire, release and renew over the Worker, as in memory", async () => {
  const s = await start({ bindings: { POLICIES: { gpu: GPU } } });
  try {
    const limiter = new RateLimiter({ store: new WorkerStore({ url: s.url, policy: "gpu", timeoutMs: 10_000 }) });
    const memory = new RateLimiter({ limits: GPU.limits });
    const key = "team:7";
    const a = await limiter.acquire(key, { now: NOW });
    const m = memory.acquire(key, { now: NOW });
    assert.equal(a.allowed, true);
    assert.equal(typeof a.lease, "string");
    assert.equal(a.expiresAt, NOW + TTL);
    assert.deepEqual([a.remaining, a.limit, a.retryAfter, a.expiresAt], [m.remaining, m.limit, m.retryAfter, m.expiresAt]);

    const b = await limiter.limit(key, { now: NOW });
    assert.equal(typeof b.lease, "string", "limit acquires on a concurrency policy");
    const denied = await limiter.acquire(key, { now: NOW });
    assert.deepEqual([denied.allowed, denied.lease, denied.expiresAt, denied.retryAfter], [false, null, null, TTL]);

    const renewed = await limiter.renew(b.lease, { now: NOW + 5_000 });
    assert.equal(renewed.expiresAt, NOW + 5_000 + TTL);
    const released = await limiter.release(a.lease, { now: NOW + 5_000 });
    assert.equal(released.released, true);
    assert.equal(released.remaining, 1);
    assert.equal((await limiter.release(a.lease, { now: NOW + 5_000 })).released, false, "a replay frees nothing");

    await assert.rejects(limiter.renew(a.lease, { now: NOW + 5_000 }), (e) => e.code === "unknown_lease" && e.field === "lease" && !(e instanceof TypeError));
    await assert.rejects(limiter.release("not a lease!", { now: NOW }), (e) => e instanceof TypeError && e.code === "invalid_lease" && e.field === "lease");
    await assert.rejects(limiter.release(7), (e) => e instanceof TypeError && e.field === "lease");
    await assert.rejects(limiter.reserve(key, { cost: 1, now: NOW }), TypeError, "a reservation would hold a slot no one could release");

    // b expires at NOW + 15 s: after it, both slots are free.
    const later = await limiter.acquire(key, { now: NOW + 15_000 });
    assert.equal(later.remaining, 1, "the expired lease freed its slot");
    await limiter.close();
  } finally {
    await s.stop();
  }
});
