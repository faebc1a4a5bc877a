// Leased mode (`leaseTtl`) for the algorithms beyond clock-aligned fixed windows, in two
// isolates sharing the Durable Object namespace: the key's object charges each grant into
// the key's own state, and each grant lapses `leaseTtl` after it (tollgate::quota_lease). One
// hot key under many concurrent clients admits no more than the documented bound: GCRA and
// the token bucket at most `leaseTtl` worth of refill beyond their own bound in any interval,
// a sliding window at most its limit plus what was granted in the `leaseTtl` before each
// aligned window. A peek answers what a hit would get and takes no grant. No timed
// assertion: every check counts admissions on the test clock.
import { test, before, after } from "node:test";
import assert from "node:assert/strict";
import { start, post, get, freshKey } from "./harness.mjs";

const LIMIT = 40;
const WINDOW_MS = 1_000;
const BURST = 10;
const TTL_MS = 300;
/** The emission interval of 40/s (GCRA) and the refill interval of one token (token bucket). */
const UNIT_MS = WINDOW_MS / LIMIT;
/** The test clock's start: a whole second, so sliding windows are [T + k s, T + (k + 1) s). */
const T = Math.floor(Date.now() / WINDOW_MS) * WINDOW_MS + 3_600_000;

const leased = (limit) => ({ limits: [{ name: "hot", ...limit }], leaseTtl: `${TTL_MS}ms`, timeoutMs: 20_000 });
const POLICIES = {
  gcra: leased({ algorithm: "gcra", quota: `${LIMIT}/s`, burst: BURST }),
  "token-bucket": leased({ algorithm: "token-bucket", quota: `${LIMIT}/s`, burst: BURST }),
  "sliding-window": leased({ algorithm: "sliding-window", quota: `${LIMIT}/s` }),
};

let s;
before(async () => {
  s = await start({ isolates: 2, bindings: { POLICIES } });
});
after(async () => {
  await s?.stop();
});

/**
 * One hot key, 2 isolates x 30 concurrent clients: the test clock moves in steps of
 * `stepMs`; every client of a step sends 2 hits at that step's time, and the next step
 * begins once they are answered. Returns the admissions per step: [time, count].
 */
async function hotKey(policy, stepMs, steps) {
  const key = freshKey(`hot-${policy}`);
  const admitted = [];
  for (let step = 0; step < steps; step++) {
    const now = T + step * stepMs;
    let n = 0;
    const client = async (i) => {
      for (let k = 0; k < 2; k++) {
        const r = await post(s.url, "/v1/limit", { policy, key, now }, { host: `w${i % 2}.test` });
        assert.equal(r.status, 200, r.text);
        assert.equal(r.body.degraded, undefined, r.text);
        assert.equal(r.body.estimate, true, r.text);
        if (r.body.allowed) n += 1;
      }
    };
    await Promise.all(Array.from({ length: 60 }, (_, i) => client(i)));
    admitted.push([now, n]);
  }
  return admitted;
}

/** Every interval [t, u] between two steps: `bound(u - t)` at most. */
function assertIntervals(admitted, bound, what) {
  for (let i = 0; i < admitted.length; i++) {
    let sum = 0;
    for (let j = i; j < admitted.length; j++) {
      sum += admitted[j][1];
      const most = bound(admitted[j][0] - admitted[i][0]);
      assert.ok(sum <= most, `${what}: ${sum} admitted within ${admitted[j][0] - admitted[i][0]} ms, bound ${most}`);
    }
  }
}

const total = (admitted) => admitted.reduce((sum, [, n]) => sum + n, 0);

test("the policies with leaseTtl and any algorithm are leased", async () => {
  const r = await get(s.url, "/v1/policies", { headers: { host: "w0.test" } });
  assert.equal(r.status, 200, r.text);
  for (const name of Object.keys(POLICIES)) {
    const p = r.body.policies[name];
    assert.equal(p?.leaseTtl, TTL_MS, `${name}: ${r.text}`);
  }
});

test("gcra, one hot key, 2 isolates x 60 clients: at most burst + (interval + leaseTtl) / T", async () => {
  const admitted = await hotKey("gcra", 100, 16);
  assertIntervals(admitted, (ms) => BURST + Math.floor((ms + TTL_MS) / UNIT_MS), "gcra");
  // The rate keeps being granted after the burst: the key is not starved.
  assert.ok(total(admitted) > 2 * BURST, `only ${total(admitted)} admitted`);
});

test("token-bucket, one hot key, 2 isolates x 60 clients: at most capacity + refills over interval + leaseTtl", async () => {
  const admitted = await hotKey("token-bucket", 100, 16);
  assertIntervals(admitted, (ms) => BURST + Math.ceil((ms + TTL_MS) / UNIT_MS), "token bucket");
  assert.ok(total(admitted) > 2 * BURST, `only ${total(admitted)} admitted`);
});

test("sliding-window, one hot key, 2 isolates x 60 clients: at most limit x (1 + ceil(leaseTtl / window)) per window", async () => {
  const admitted = await hotKey("sliding-window", 125, 24);
  const perWindow = new Map();
  for (const [now, n] of admitted) {
    const w = Math.floor((now - T) / WINDOW_MS);
    perWindow.set(w, (perWindow.get(w) ?? 0) + n);
  }
  const bound = LIMIT * (1 + Math.ceil(TTL_MS / WINDOW_MS));
  for (const [w, n] of perWindow) {
    assert.ok(n <= bound, `window ${w}: ${n} admitted, bound ${bound}`);
    assert.ok(n > 0, `window ${w}: nothing admitted`);
  }
});

test("gcra: a peek answers what a hit would get and takes no grant", async () => {
  const key = freshKey("gcra-peek");
  const hit = (route, host, extra = {}) => post(s.url, route, { policy: "gcra", key, now: T, ...extra }, { host });
  for (let i = 0; i < 3; i++) {
    const p = await hit("/v1/peek", "w1.test", { cost: BURST });
    assert.equal(p.status, 200, p.text);
    assert.equal(p.body.allowed, true, p.text);
    assert.equal(p.body.remaining, BURST, p.text);
  }
  // The peeks took nothing: the other isolate gets the whole burst in one hit.
  assert.equal((await hit("/v1/limit", "w0.test", { cost: BURST })).body.allowed, true);
  for (const host of ["w0.test", "w1.test"]) {
    const p = await hit("/v1/peek", host);
    assert.equal(p.body.allowed, false, `${host}: ${p.text}`);
    assert.equal(p.body.remaining, 0, `${host}: ${p.text}`);
  }
  assert.equal((await hit("/v1/limit", "w1.test")).body.allowed, false);
});
