// `limit(key)` with the same key again is decided on the record the wasm limiter remembers
// (`limitAgain`, no string crossing): the decisions must be exactly those of the key passed
// in, whatever happens to the key between two calls. A second limiter of the same options is
// fed every call as a one-key array (`limit([key])`, which never remembers anything) and must
// answer the same, through resets, pruning, imports (the full module's), maxKeys evictions,
// sweeps that rewrite the key store, errors, peeks, refunds and other keys, in the full and
// the lite module.
import test from "node:test";
import assert from "node:assert/strict";
import { RateLimiter } from "../../pkg/dist/lib/index.js";
import { RateLimiter as Lite } from "../../pkg/dist/lib/lite.js";
import { LIMITERS } from "./fixture.mjs";

const T0 = 1_700_000_000_000;

/** A seeded PRNG (mulberry32), so that a failure replays. */
function prng(seed) {
  return () => {
    seed |= 0;
    seed = (seed + 0x6d2b79f5) | 0;
    let t = Math.imul(seed ^ (seed >>> 15), 1 | seed);
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/** The same call on both limiters: equal decisions, or the same error. */
function same(hot, plain, key, options, what) {
  let a, b, ea, eb;
  try { a = hot.limit(key, options); } catch (e) { ea = e; }
  try { b = plain.limit([key], options); } catch (e) { eb = e; }
  assert.deepEqual(ea && { name: ea.name, code: ea.code, message: ea.message }, eb && { name: eb.name, code: eb.code, message: eb.message }, what);
  assert.deepEqual(a, b, what);
}

const ONE_LIMIT = LIMITERS.filter((o) => o.limits === undefined);

for (const [entry, Limiter, limiters] of [["tollgate", RateLimiter, LIMITERS], ["tollgate/lite", Lite, ONE_LIMIT]]) {
  for (const options of limiters) {
    test(`${entry}, ${options.algorithm ?? "a policy of several limits"}: the same key again decides as the key passed in`, () => {
      const opts = { ...options, maxKeys: 40 };
      const hot = new Limiter(opts);
      const plain = new RateLimiter(opts);
      const rand = prng(42);
      let now = T0;
      let key = "user:0";
      for (let i = 0; i < 6000; i++) {
        now += Math.floor(rand() * 40);
        const r = rand();
        const what = `step ${i}, ${key}`;
        if (r < 0.55) {
          same(hot, plain, key, { now, cost: 1 + Math.floor(rand() * 2) }, what);
        } else if (r < 0.62) {
          key = `user:${Math.floor(rand() * 120)}`; // other keys: sweeps, evictions, rewrites
          same(hot, plain, key, { now }, what);
        } else if (r < 0.66) {
          same(hot, plain, `other:${Math.floor(rand() * 120)}`, { now }, what); // the hot key stays
        } else if (r < 0.69) {
          hot.reset(key);
          plain.reset(key);
        } else if (r < 0.71) {
          assert.equal(hot.prune(now), plain.prune(now), what);
        } else if (r < 0.74) {
          // tollgate/lite has no import: it imports into nothing but tollgate.
          if (Limiter === Lite) continue;
          const state = plain.export(`user:${Math.floor(rand() * 120)}`);
          hot.import(key, state);
          plain.import(key, state);
        } else if (r < 0.77) {
          hot.refund(key, { now });
          plain.refund(key, { now });
        } else if (r < 0.80) {
          assert.deepEqual(hot.peek(key, { now }), plain.peek(key, { now }), what);
        } else if (r < 0.82) {
          same(hot, plain, key, { now, cost: 1e9 }, `${what}: a cost that never fits`);
        } else if (r < 0.83) {
          same(hot, plain, key, { now: -1 }, `${what}: a bad now`);
        } else if (r < 0.84) {
          same(hot, plain, "", { now }, `${what}: an empty key`);
        } else {
          same(hot, plain, key, { now }, what);
        }
      }
      assert.deepEqual(hot.keys().sort(), plain.keys().sort());
      assert.equal(hot.evictions, plain.evictions);
    });
  }
}

// A one-key decision under one limit is read by a shortcut (decision.js, readOne) that takes
// the limit's entry to be the decision itself. The same limit beside a second one that never
// binds decides alike, and that decision is read by the general reader (two entries): both
// must show the same decision, entry for entry, through every algorithm, cost and denial.
for (const options of ONE_LIMIT) {
  test(`${options.algorithm}: a one-limit decision reads as the same limit's entry beside a limit that never binds`, () => {
    const one = new RateLimiter({ ...options, name: "own" });
    const never = { name: "never", algorithm: "gcra", limit: 1e9, window: "1s" };
    const two = new RateLimiter({ limits: [{ ...options, name: "own" }, never] });
    const handle = one.key("user:1");
    const rand = prng(7);
    let now = T0;
    for (let i = 0; i < 3000; i++) {
      now += Math.floor(rand() * 30);
      const options = { now, cost: 1 + Math.floor(rand() * 3) }; // every limit here fits 3
      const a = i % 2 ? one.limit(handle, options) : one.limit("user:1", options);
      const b = two.limit("user:1", options);
      assert.equal(b.limits.length, 2);
      assert.deepEqual(a, { ...b, limits: [b.limits[0]] }, `step ${i}`);
    }
  });
}

test("two limiters of one module each remember their own key", () => {
  const options = { algorithm: "gcra", limit: 3, window: "1s" };
  const a = new RateLimiter(options);
  const b = new RateLimiter(options);
  a.limit("x", { now: T0 });
  b.limit("y", { now: T0 });
  assert.equal(a.limit("x", { now: T0 }).remaining, 1);
  assert.equal(b.limit("y", { now: T0 }).remaining, 1);
  assert.equal(a.limit("x", { now: T0 }).remaining, 0);
  assert.equal(a.size, 1);
  assert.equal(b.size, 1);
});
