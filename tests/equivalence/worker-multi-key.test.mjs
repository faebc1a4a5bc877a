// The multi-key trace of the equivalence fixture (tests/js/fixture.mjs: hits naming one to
// three keys, all or nothing, over a GCRA, a sliding log and a policy of two limits; decided by
// the native crate, which the npm package matches hit for hit in tests/js/equivalence.test.mjs)
// replayed through the running Worker over HTTP with `keys` (workerd through Miniflare,
// TEST_MODE on, `now` per request): every hit gets the native `allowed`, `remaining`,
// `resetAt` and `retryAfter`. Keys live in separate Durable Objects, so this is the lock
// protocol (worker/src/decide/multi_key.rs) deciding as the core does in memory.
//
// Hits sharing a key are replayed in the trace's order; hits whose keys never meet (another
// limiter, or keys linked by no hit) are independent and run side by side.
import { test, before, after } from "node:test";
import assert from "node:assert/strict";
import { start } from "../../worker/test/harness.mjs";
import { MULTI_LIMITERS, nativeFixture } from "../js/fixture.mjs";

/** A fixture limiter's options as a Worker policy (the core's spec parses both alike). */
const policyOf = (options) => ({ limits: options.limits ?? [{ ...options, name: "default" }] });

/** The first this many hits of the trace (the whole trace is 30,000: many minutes over HTTP; its first 500 hold 351 denials and 330 hits of several keys). */
const HITS = Number(process.env.TOLLGATE_WORKER_MULTI_HITS ?? 500);

let hits, s;
before(async () => {
  hits = nativeFixture(true)
    .split("\n")
    .filter(Boolean)
    .slice(0, HITS)
    .map((line, i) => {
      const [l, key, now, cost, ...native] = line.split(",");
      return { i, l: +l, keys: key.split("+"), now: +now, cost: +cost, native: native.join(",") };
    });
  const POLICIES = Object.fromEntries(MULTI_LIMITERS.map((o, l) => [`m${l}`, policyOf(o)]));
  s = await start({ bindings: { POLICIES } });
});
after(async () => {
  await s?.stop();
});

/** Groups of hits that share keys (transitively), each in the trace's order. */
function independentGroups(hits) {
  const parent = new Map();
  const find = (x) => {
    while (parent.get(x) !== x) {
      parent.set(x, parent.get(parent.get(x)));
      x = parent.get(x);
    }
    return x;
  };
  const id = (h, k) => `${h.l}|${k}`;
  for (const h of hits) {
    for (const k of h.keys) if (!parent.has(id(h, k))) parent.set(id(h, k), id(h, k));
    for (const k of h.keys.slice(1)) parent.set(find(id(h, k)), find(id(h, h.keys[0])));
  }
  const groups = new Map();
  for (const h of hits) {
    const root = find(id(h, h.keys[0]));
    if (!groups.has(root)) groups.set(root, []);
    groups.get(root).push(h);
  }
  return [...groups.values()];
}

test("the multi-key trace through the Worker: every hit decided as the core decides it in memory", async () => {
  assert.ok(hits.some((h) => h.keys.length > 1) && hits.some((h) => h.native.startsWith("0,")), "several keys, and denials");
  const groups = independentGroups(hits);
  const mismatches = [];
  await Promise.all(
    groups.map(async (group) => {
      for (const h of group) {
        const who = h.keys.length > 1 ? { keys: h.keys } : { key: h.keys[0] };
        const res = await s.mf.dispatchFetch("http://localhost/v1/limit", {
          method: "POST",
          headers: { "content-type": "application/json" },
          body: JSON.stringify({ ...who, policy: `m${h.l}`, now: h.now, cost: h.cost }),
        });
        const d = await res.json();
        const got = `${+d.allowed},${d.remaining},${d.resetAt},${d.retryAfter}`;
        if (got !== h.native || d.degraded !== undefined) mismatches.push({ hit: h.i, keys: h.keys, got, want: h.native });
      }
    }),
  );
  assert.deepEqual(mismatches.slice(0, 5), [], `${mismatches.length} of ${hits.length} hits differ`);
});
