// One key under one sliding-log or sliding-buckets limit keeps its state in the wasm
// limiter's slab and, without a penalty, is decided there in place (wasm/src/limiter.rs,
// `decide_single`: the core's one-pair check or peek of that state, read by decision.js's
// one-entry reader). The same limit beside a second one that never binds takes the general
// path (the core's policy over both, read by the general reader). Both must show the same
// decision, entry for entry, for `limit` and `peek`, through denials, several keys in the slab,
// resets and refunds, with and without a penalty (whose keys take the general path, and must
// stay alike too), in the full and the lite module.
import test from "node:test";
import assert from "node:assert/strict";
import { RateLimiter } from "../../pkg/dist/lib/index.js";
import { RateLimiter as Lite } from "../../pkg/dist/lib/lite.js";

const T0 = 1_700_000_000_000;
const SLAB_LIMITS = [
  { algorithm: "sliding-log", quota: "10/1s" },
  { algorithm: "sliding-buckets", quota: "12/1s", precision: "250ms" },
];
const NEVER = { name: "never", algorithm: "gcra", limit: 1e9, window: "1s" };

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

const cases = [];
for (const limit of SLAB_LIMITS) {
  cases.push(["tollgate", RateLimiter, limit, {}]);
  cases.push(["tollgate", RateLimiter, limit, { blockDuration: "2s" }]);
  cases.push(["tollgate/lite", Lite, limit, {}]);
}

for (const [entry, Limiter, limit, penalty] of cases) {
  const with_ = penalty.blockDuration ? `a ${penalty.blockDuration} penalty` : "no penalty";
  test(`${entry}, ${limit.algorithm}, ${with_}: limit and peek decide as the same limit beside one that never binds`, () => {
    const one = new Limiter({ ...limit, name: "own", ...penalty });
    const two = new RateLimiter({ limits: [{ ...limit, name: "own" }, NEVER], ...penalty });
    const rand = prng(11);
    let now = T0;
    let denied = 0;
    let blocked = 0;
    for (let i = 0; i < 3000; i++) {
      now += Math.floor(rand() * 60);
      const key = rand() < 0.8 ? "user:1" : `user:${2 + Math.floor(rand() * 5)}`;
      const options = { now, cost: 1 + Math.floor(rand() * 3) }; // both limits fit 3
      const r = rand();
      const what = `step ${i}, ${key}`;
      if (r < 0.02) {
        one.reset(key);
        two.reset(key);
        continue;
      }
      if (r < 0.05) {
        one.refund(key, options);
        two.refund(key, options);
        continue;
      }
      const call = r < 0.35 ? "peek" : "limit";
      const a = one[call](key, options);
      const b = two[call](key, options);
      assert.equal(b.limits.length, 2, what);
      assert.deepEqual(a, { ...b, limits: [b.limits[0]] }, `${what}: ${call}`);
      if (!a.allowed) denied++;
      if (a.penalty) blocked++;
    }
    assert.ok(denied > 100, `the walk reaches denials (${denied})`);
    if (penalty.blockDuration) assert.ok(blocked > 100, `the walk reaches blocks (${blocked})`);
    assert.deepEqual(one.keys().sort(), two.keys().sort());
  });
}
