// The Pacer's in-flight bound (`maxInFlight`, docs/concurrency.md): each paced call holds one
// of the core's concurrency slots until it settles. Simulated time: the calls' own work sleeps
// on the same manual clock as the pacer.
import { test } from "node:test";
import assert from "node:assert/strict";
import { Pacer } from "tollgate";
import { manualClock, settle, T0 } from "./clock.mjs";

/** A deterministic generator (mulberry32), so a failure replays. */
function random(seed) {
  return () => {
    seed = (seed + 0x6d2b79f5) | 0;
    let t = Math.imul(seed ^ (seed >>> 15), 1 | seed);
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

test("never more than maxInFlight calls in flight, calls of random length, admitted in order", async () => {
  const clock = manualClock();
  const N = 3;
  const pacer = new Pacer({ rate: "1000/s", grain: "10ms", maxInFlight: N, now: clock.now, sleep: clock.sleep });
  assert.equal(pacer.maxInFlight, N);
  const rnd = random(45);
  let inside = 0;
  let most = 0;
  const started = [];
  const call = pacer.pace(async (i, ms) => {
    inside++;
    most = Math.max(most, inside);
    started.push(i);
    assert.ok(pacer.inFlight >= inside, "the core counts every call inside");
    try {
      await clock.sleep(ms);
      if (i % 7 === 0) throw new Error(`call ${i} failed`); // a failure gives its slot back too
      return i;
    } finally {
      inside--;
    }
  });
  const calls = Array.from({ length: 40 }, (_, i) => call(i, 1 + Math.floor(rnd() * 200)).catch((e) => e.message));
  let done = false;
  const all = Promise.all(calls).then((r) => ((done = true), r));
  for (let t = 0; t < 10_000 && !done; t++) {
    await clock.advance(1);
    assert.ok(inside <= N, `at T0 + ${clock.now() - T0} ms: ${inside} in flight`);
  }
  const results = await all;
  assert.equal(results.length, 40);
  assert.equal(results[7], "call 7 failed");
  assert.equal(most, N, "the bound was reached (the test can fail)");
  assert.deepEqual(started, started.slice().sort((a, b) => a - b), "first in, first out");
  assert.equal(pacer.inFlight, 0, "every slot given back");
  assert.equal(pacer.queued, 0);
});

test("acquireSlot: a slot not released frees itself after leaseTtl; release is once", async () => {
  const clock = manualClock();
  const pacer = new Pacer({ rate: "100/s", maxInFlight: 1, leaseTtl: "1s", now: clock.now, sleep: clock.sleep });
  const a = await pacer.acquireSlot();
  assert.equal(a.start, T0);
  assert.equal(typeof a.lease, "string");
  let second = null;
  pacer.acquireSlot().then((s) => (second = s));
  await clock.advance(999);
  assert.equal(second, null, "no slot while the first holds it");
  await clock.advance(1);
  assert.ok(second, "the lost holder's slot is back after leaseTtl");
  a.release(); // its lease expired: nothing to give back, and the second keeps its slot
  assert.equal(pacer.inFlight, 1);
  second.release();
  second.release();
  assert.equal(pacer.inFlight, 0);
});

test("a release admits the next waiter at once; an aborted waiter takes no slot", async () => {
  const clock = manualClock();
  const pacer = new Pacer({ rate: "100/s", maxInFlight: 1, now: clock.now, sleep: clock.sleep });
  const a = await pacer.acquireSlot();
  const ctl = new AbortController();
  const b = pacer.acquireSlot(1, { signal: ctl.signal });
  let c = null;
  pacer.acquireSlot().then((s) => (c = s));
  await settle();
  assert.equal(pacer.queued, 2);
  ctl.abort(new Error("gone"));
  await assert.rejects(b, /gone/);
  await clock.advance(5);
  assert.equal(c, null);
  a.release();
  await clock.advance(10); // the rate's next start (100/s, grain 200 ms: well inside)
  assert.ok(c, "admitted on release, not at the lease's expiry");
  assert.ok(c.start - T0 < 30_000);
  assert.equal(pacer.inFlight, 1);
});

test("maxInFlight's options and the plain acquire", async () => {
  const p = new Pacer({ rate: "10/s", maxInFlight: 2 });
  await assert.rejects(p.acquire(), { name: "TypeError", message: /acquireSlot/ });
  await assert.rejects(new Pacer({ rate: "10/s" }).acquireSlot(), { name: "TypeError", message: /maxInFlight/ });
  assert.throws(() => new Pacer({ rate: "10/s", maxInFlight: 0 }), { name: "RangeError", code: "out_of_range", field: "maxInFlight" });
  assert.throws(() => new Pacer({ rate: "10/s", maxInFlight: "2" }), { code: "invalid_type", field: "maxInFlight" });
  assert.throws(() => new Pacer({ rate: "10/s", leaseTtl: "1s" }), { code: "missing_field", field: "maxInFlight" });
  assert.throws(() => new Pacer({ rate: "10/s", maxInFlight: 2, leaseTtl: "2h" }), { field: "leaseTtl" });
  assert.equal(new Pacer({ rate: "10/s" }).maxInFlight, null);
  assert.equal(new Pacer({ rate: "10/s" }).inFlight, 0);
});

test("pace(fn) renews its lease: a call longer than leaseTtl keeps its slot, renewal stops when it settles", async () => {
  const clock = manualClock();
  const pacer = new Pacer({ rate: "100/s", maxInFlight: 1, leaseTtl: "1s", now: clock.now, sleep: clock.sleep });
  let inside = 0;
  let most = 0;
  const call = pacer.pace(async (ms) => {
    inside++;
    most = Math.max(most, inside);
    try {
      await clock.sleep(ms);
    } finally {
      inside--;
    }
  });
  const long = call(5_000); // five times the lease's time to live
  let second = false;
  const next = call(10).then(() => (second = true));
  for (let t = 0; t < 4_990; t += 10) {
    await clock.advance(10);
    assert.equal(inside, 1, `at T0 + ${clock.now() - T0} ms: ${inside} in flight`);
    assert.equal(pacer.inFlight, 1, "the core still counts the long call");
  }
  assert.equal(second, false, "the waiter did not take the long call's slot");
  await clock.advance(20);
  await long;
  await clock.advance(20);
  await next;
  assert.equal(most, 1);
  assert.equal(pacer.inFlight, 0);
  await clock.advance(2_000);
  assert.equal(clock.sleeping, 0, "no renewal outlives its call");
});

test("an aborted call that never settles stops renewing: its slot is back within leaseTtl", async () => {
  const clock = manualClock();
  const pacer = new Pacer({ rate: "100/s", maxInFlight: 1, leaseTtl: "1s", now: clock.now, sleep: clock.sleep });
  const ctl = new AbortController();
  let started = false;
  pacer.pace(() => ((started = true), new Promise(() => {})), { signal: ctl.signal })(); // ignores its abort
  await clock.advance(1);
  assert.ok(started);
  for (let t = 0; t < 3_000; t += 10) await clock.advance(10);
  assert.equal(pacer.inFlight, 1, "renewed while not aborted");
  ctl.abort();
  await clock.advance(999);
  await clock.advance(1);
  assert.equal(pacer.inFlight, 0, "lapsed at most leaseTtl after the abort");
  assert.equal(clock.sleeping, 0);
});

test("acquireSlot's renew: by hand, refused once released", async () => {
  const clock = manualClock();
  const pacer = new Pacer({ rate: "100/s", maxInFlight: 1, leaseTtl: "1s", now: clock.now, sleep: clock.sleep });
  const s = await pacer.acquireSlot();
  await clock.advance(900);
  assert.equal(s.renew(), clock.now() + 1_000);
  await clock.advance(900);
  assert.equal(pacer.inFlight, 1, "held past the first expiry");
  s.release();
  assert.throws(() => s.renew(), { code: "unknown_lease" });
});
