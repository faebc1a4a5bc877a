// `tollgate/lite` (the lite wasm module) against `tollgate` (the full one), imported straight
// from pkg/. The equivalence trace holds both to the native crate for `limit`; here peek,
// refund, reset and export join it, and the one-key in-place paths both modules share
// (records, or the slab's one-state `Policy::check`/`peek`, and `refund_one`) are held to the full
// module's general all-or-nothing path, which a second limit that never binds forces.
import test from "node:test";
import assert from "node:assert/strict";
import { RateLimiter } from "../../pkg/dist/lib/index.js";
import { RateLimiter as Lite } from "../../pkg/dist/lib/lite.js";
import { LIMITERS } from "./fixture.mjs";

const ONE_LIMIT = LIMITERS.filter((o) => o.limits === undefined);
const T0 = 1_700_000_000_000;

/** A seeded PRNG (mulberry32), so that a failure replays. */
function prng(seed) {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = Math.imul(a ^ (a >>> 15), 1 | a);
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
    return ((t ^ (t >>> 14)) >>> 0) / 2 ** 32;
  };
}

/** A decision's figures, without the limit names (the general path's policy has two). */
const figures = (d) => [d.allowed, d.limit, d.remaining, d.resetAt, d.retryAfter];

/**
 * Runs the same seeded trace of limit/peek/refund/reset (time mostly forward, sometimes back)
 * on every limiter of `limiters`, calling `same(results)` after each step.
 */
function trace(seed, limiters, same, steps = 4000) {
  const rnd = prng(seed);
  let now = T0;
  for (let i = 0; i < steps; i++) {
    now += rnd() < 0.05 ? -Math.floor(rnd() * 500) : Math.floor(rnd() * 120);
    const key = `k${Math.floor(rnd() * 12)}`;
    const r = rnd();
    const cost = 1 + Math.floor(rnd() * 2);
    let results;
    if (r < 0.6) results = limiters.map((l) => figures(l.limit(key, { now, cost })));
    else if (r < 0.8) results = limiters.map((l) => figures(l.peek(key, { now, cost })));
    else if (r < 0.97) results = limiters.map((l) => l.refund(key, { now, cost }));
    else results = limiters.map((l) => l.reset(key));
    same(results, i);
  }
}

for (const options of ONE_LIMIT) {
  const name = `${options.algorithm}${options.align ? ` (${options.align})` : ""}`;

  test(`${name}: tollgate/lite decides, peeks, refunds and exports as tollgate does`, () => {
    const lite = new Lite(options);
    const full = new RateLimiter(options);
    trace(7, [lite, full], ([a, b], i) => assert.deepEqual(a, b, `step ${i}`));
    assert.deepEqual(lite.keys().sort(), full.keys().sort());
    for (const k of full.keys()) assert.deepEqual(lite.export(k), full.export(k), k);
    assert.equal(lite.prune(T0 + 86_400_000), full.prune(T0 + 86_400_000));
    assert.equal(lite.size, 0);
  });

  test(`${name}: the one-key in-place paths decide as the general all-or-nothing path`, () => {
    const one = new RateLimiter(options);
    // A second limit that never binds: the policy's figures are the first limit's, and every
    // call takes the general path (states moved out of the store as policy states and back).
    const general = new RateLimiter({ limits: [{ ...options, name: "first" }, { algorithm: "gcra", quota: "1000000/1s", name: "never" }] });
    trace(11, [one, general], ([a, b], i) => assert.deepEqual(a, b, `step ${i}`));
  });
}

test("tollgate/lite: its exported state imports into tollgate and decides on there", () => {
  const options = { algorithm: "sliding-log", quota: "3/1s" };
  const lite = new Lite(options);
  const full = new RateLimiter(options);
  lite.limit("a", { now: T0 });
  lite.limit("a", { now: T0 + 10 });
  full.import("a", lite.export("a"));
  lite.limit("a", { now: T0 + 20 });
  full.limit("a", { now: T0 + 20 });
  assert.deepEqual(full.export("a"), lite.export("a"));
  assert.deepEqual(figures(full.limit("a", { now: T0 + 30 })), [false, 3, 0, T0 + 1021, 971]);
});

test("tollgate/lite: bad input and what it lacks throw, naming why, and change nothing", () => {
  const options = { algorithm: "gcra", quota: "2/1s" };
  const lite = new Lite(options);
  const control = new Lite(options);
  lite.limit("a", { now: T0 });
  control.limit("a", { now: T0 });
  const bad = [
    [() => lite.limit("a", { now: T0, cost: Number.NaN }), RangeError, /cost/],
    [() => lite.limit("a", { now: T0, cost: -1 }), RangeError, /cost/],
    [() => lite.limit("a", { now: T0, cost: 1e20 }), RangeError, /cost/],
    [() => lite.limit("a", { now: T0, cost: 3 }), RangeError, /cost/],
    [() => lite.limit("", { now: T0 }), RangeError, /empty/],
    [() => lite.limit("x".repeat(10_000), { now: T0 }), RangeError, /key/],
    [() => lite.limit("a", { now: Number.NaN }), RangeError, /now/],
    [() => lite.limit(["a", "b"], { now: T0 }), TypeError, /tollgate\/lite limits one key per call/],
    [() => lite.peek(["a", "b"], { now: T0 }), TypeError, /one key per call/],
    [() => lite.key("a"), TypeError, /key handles are not in tollgate\/lite/],
    [() => lite.limitBatch("a", { now: T0 }), TypeError, /limitBatch/],
    [() => lite.import("a", lite.export("a")), TypeError, /state imports \(import\) are not in tollgate\/lite; use RateLimiter from "tollgate"/],
    [() => lite.refund("a", { now: T0, cost: 0 }), RangeError, /cost/],
  ];
  for (const [call, type, message] of bad) assert.throws(call, (e) => e instanceof type && message.test(e.message), call.toString());
  assert.deepEqual(figures(lite.limit("a", { now: T0 })), figures(control.limit("a", { now: T0 })));
  assert.deepEqual(lite.keys(), ["a"]);
  for (const options of [{ limits: [{ algorithm: "gcra", quota: "1/s" }, { algorithm: "gcra", quota: "5/m" }] }, { algorithm: "leaky", quota: "1/s" }, { algorithm: "gcra", quota: "0/s" }]) {
    assert.throws(() => new Lite(options), (e) => e instanceof TypeError || e instanceof RangeError, JSON.stringify(options));
  }
  assert.throws(() => new Lite({ limits: [{ algorithm: "gcra", quota: "1/s" }, { algorithm: "gcra", quota: "5/m" }] }), /tollgate\/lite decides by one limit/);
  // The penalty's options, whatever their value: the lite module has no parser for them.
  for (const penalty of [{ blockDuration: "1m" }, { blockDuration: 0 }, { continueExceeding: true }, { exponentialBackoff: false }, { exponentialBackoff: true, maxBlockDuration: "1h" }, { limits: [options] }]) {
    assert.throws(() => new Lite({ ...options, ...penalty }), (e) => e instanceof TypeError && /tollgate\/lite decides by one limit, without blockDuration/.test(e.message), JSON.stringify(penalty));
    assert.doesNotThrow(() => new RateLimiter({ ...(penalty.limits ? {} : options), ...penalty }), JSON.stringify(penalty));
  }
  // The allow and deny lists are the limiter's module's: a TypeError naming the full entry.
  for (const lists of [{ allowList: ["10.0.0.0/8"] }, { denyList: ["bad"] }, { allowList: [] }]) {
    assert.throws(() => new Lite({ ...options, ...lists }), (e) => e instanceof TypeError && /tollgate\/lite has no allowList or denyList/.test(e.message) && /"tollgate"/.test(e.message));
  }
});

test("tollgate/lite: shadow mode, parsed by the core as in the full module", () => {
  const shadow = new Lite({ algorithm: "gcra", quota: "1/1s", shadow: true });
  shadow.limit("a", { now: T0 });
  const d = shadow.limit("a", { now: T0 });
  assert.deepEqual([d.allowed, d.shadow, d.wouldAllow], [true, true, false]);
  assert.throws(() => new Lite({ algorithm: "gcra", quota: "1/1s", shadow: "yes" }), { code: "invalid_type", field: "shadow" });
  assert.throws(() => new RateLimiter({ algorithm: "gcra", quota: "1/1s", shadow: "yes" }), { code: "invalid_type", field: "shadow" });
});
