// The in-memory limiter's bounded FIFO queue (docs/concurrency.md, "Waiting in line"):
// acquire(key, { maxQueue, maxWait, signal }) waits in order for a slot the core admits. Real
// timers, short: leases and waits of milliseconds.
import test from "node:test";
import assert from "node:assert/strict";
import { setTimeout as sleep } from "node:timers/promises";
import { RateLimiter } from "../../pkg/dist/lib/index.js";

test("waiters are admitted in order as slots are released; a full line is the core's denial at once", async () => {
  const l = new RateLimiter({ algorithm: "concurrency", limit: 2, leaseTtl: "30s" });
  const held = [l.acquire("k"), l.acquire("k")].map((d) => d.lease);
  const order = [];
  const waits = [0, 1, 2].map((i) => l.acquire("k", { maxQueue: 3, maxWait: 5000 }).then((d) => (order.push(i), d)));
  const full = await l.acquire("k", { maxQueue: 3, maxWait: 5000 });
  assert.deepEqual([full.allowed, full.lease ?? null], [false, null], "a fourth waiter is refused at once");
  assert.ok(full.retryAfter > 0);
  await sleep(5);
  assert.deepEqual(order, [], "no slot, no admission");
  l.release(held[0]);
  await sleep(1);
  assert.deepEqual(order, [0]);
  l.release(held[1]);
  await sleep(1);
  assert.deepEqual(order, [0, 1]);
  const [a] = await Promise.all(waits.slice(0, 1));
  assert.equal(typeof a.lease, "string");
  l.release(a.lease);
  const last = await waits[2];
  assert.deepEqual(order, [0, 1, 2]);
  assert.equal(last.allowed, true);
  // A newcomer while no one waits and a slot is free is admitted at once, without waiting.
  l.release((await waits[1]).lease);
  assert.equal((await l.acquire("k", { maxWait: 10 })).allowed, true);
});

test("maxWait passes: the core's denial; a lease that expires admits the head without a release", async () => {
  const l = new RateLimiter({ algorithm: "concurrency", limit: 1, leaseTtl: 150 });
  l.acquire("k");
  const t0 = Date.now();
  const timedOut = await l.acquire("k", { maxWait: 30 });
  assert.equal(timedOut.allowed, false);
  assert.ok(Date.now() - t0 >= 29, "waited maxWait");
  const d = await l.acquire("k", { maxWait: "2s" });
  assert.equal(d.allowed, true, "admitted when the unreleased lease expired");
  assert.ok(Date.now() - t0 >= 149);
});

test("an aborted waiter leaves the line; the one behind it moves up", async () => {
  const l = new RateLimiter({ algorithm: "concurrency", limit: 1 });
  const first = l.acquire("k");
  const ctl = new AbortController();
  const gone = l.acquire("k", { maxWait: 5000, signal: ctl.signal });
  const next = l.acquire("k", { maxWait: 5000 });
  ctl.abort(new Error("client left"));
  await assert.rejects(gone, /client left/);
  l.release(first.lease);
  assert.equal((await next).allowed, true);
  await assert.rejects(l.acquire("k", { maxWait: 10, now: Date.now() }), { code: "conflicting_fields", field: "now" });
  await assert.rejects(l.acquire("k", { maxQueue: -1 }), { code: "out_of_range", field: "maxQueue" });
});

test("work of random length through 3 slots: never more than 3 inside, admitted in arrival order", async () => {
  const l = new RateLimiter({ algorithm: "concurrency", limit: 3, leaseTtl: "10s" });
  let inside = 0;
  let most = 0;
  const admitted = [];
  let seed = 45;
  const rnd = () => ((seed = (seed * 1103515245 + 12345) % 2 ** 31) / 2 ** 31);
  const work = Array.from({ length: 30 }, async (_, i) => {
    const d = await l.acquire("k", { maxQueue: 100, maxWait: 10_000 });
    assert.equal(d.allowed, true);
    admitted.push(i);
    inside += 1;
    most = Math.max(most, inside);
    await sleep(1 + Math.floor(rnd() * 15));
    inside -= 1;
    l.release(d.lease);
  });
  await Promise.all(work);
  assert.equal(most, 3);
  assert.deepEqual(admitted, admitted.slice().sort((a, b) => a - b));
  assert.equal(l.peek("k").remaining, 2, "every slot back");
});
