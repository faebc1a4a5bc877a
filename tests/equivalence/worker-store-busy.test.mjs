// A busy process is not a Worker outage: `WorkerStore` (the npm package from its packed
// tarball) against the real Worker in workerd (Miniflare, TEST_MODE on so that hits carry their
// `now`), while this process holds its event loop (a synchronous loop, as a large JSON.parse or
// a GC pause does) for twice `timeoutMs` during each call, the Worker answering meanwhile:
// every decision is memory's, none degraded, for `failure` "open", "closed" and "insurance".
// A Worker that does not answer is still an outage (worker-store.test.mjs).
import { test, before, after } from "node:test";
import assert from "node:assert/strict";
import { RateLimiter, WorkerStore } from "tollgate";
import { start } from "../../worker/test/harness.mjs";

/**
 * The store's timeout: the Worker on loopback answers in milliseconds, and the rule gives it
 * this long once the process runs again (lib/stores/deadline.js).
 */
const T = 500;
const FIELDS = ["allowed", "limit", "remaining", "resetAt", "retryAfter", "blockedBy"];
const T0 = 1_700_000_000_000;
const OWN = { name: "per-minute", algorithm: "fixed-window", quota: "5/m" };

let s;
before(async () => {
  s = await start({ bindings: { POLICIES: { five: { limits: [OWN], timeoutMs: 20_000 } } } });
});
after(async () => {
  await s?.stop();
});

/** Holds the event loop for `ms`: nothing else in this process runs meanwhile. */
function hold(ms) {
  const end = performance.now() + ms;
  while (performance.now() < end);
}

test("the loop held 2 x timeoutMs during each call: every decision exact, none degraded (open, closed, insurance)", { timeout: 120_000 }, async () => {
  const errors = [];
  // "in flight": one turn passes first, so the request is on its way and the Worker's answer
  // arrives while the loop is held; "at once": held before the request is even made.
  for (const when of ["in flight", "at once"]) {
    const memory = new RateLimiter(OWN);
    const limiters = ["open", "closed", "insurance"].map((failure) => {
      const options = { url: s.url, policy: "five", failure, timeoutMs: T, blockedCache: false, onError: (e) => errors.push(e) };
      if (failure === "insurance") options.insurance = 0.4;
      return new RateLimiter({ ...OWN, store: new WorkerStore(options) });
    });
    // The policy known (one request each), as in a process that has been running.
    const key = `busy:${when}:${process.pid}`;
    for (const [i, l] of limiters.entries()) assert.equal((await l.peek(`${key}:${i}`, { now: T0 })).degraded, undefined);
    for (let hit = 0; hit < 6; hit++) {
      const now = T0 + hit;
      // One call per failure mode, each on its own key, held together.
      const calls = limiters.map((l, i) => l.limit(`${key}:${i}`, { now }));
      if (when === "in flight") await new Promise(setImmediate);
      hold(2 * T);
      const got = await Promise.all(calls);
      const want = memory.limit("k", { now });
      for (const [i, d] of got.entries()) {
        assert.equal(d.degraded, undefined, `${when}, hit ${hit}, limiter ${i}: ${JSON.stringify(d)}`);
        for (const f of FIELDS) assert.equal(d[f], want[f], `${when}, hit ${hit}, limiter ${i}: ${f}`);
      }
    }
  }
  assert.deepEqual(errors, [], "the failure mode absorbed errors from a Worker that answered");
});
