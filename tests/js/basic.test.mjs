// The built package imported straight from pkg/ (the tarball tests install it as a user would).
import test from "node:test";
import assert from "node:assert/strict";
import { RateLimiter, Policy, Pacer, LeasedPacer, RedisStore } from "../../pkg/dist/lib/index.js";

test("a token bucket admits its burst, then says how long to wait", () => {
  const l = new RateLimiter({ algorithm: "token-bucket", limit: 100, window: "1s", burst: 5 });
  for (let i = 0; i < 5; i++) assert.equal(l.limit("user:42", { now: 1000 }).allowed, true);
  const d = l.limit("user:42", { now: 1000 });
  assert.deepEqual([d.allowed, d.remaining, d.retryAfter, d.blockedBy], [false, 0, 10, "default"]);
});

test("several keys and limits: all or nothing, naming the limit that blocked", () => {
  const l = new RateLimiter({ limits: [{ algorithm: "gcra", quota: "2/s", name: "second" }, { algorithm: "fixed-window", quota: "3/m", name: "minute" }] });
  const now = 1_700_000_040_000;
  for (let i = 0; i < 3; i++) assert.equal(l.limit(["ip:1", "user:2"], { now: now + i * 1000 }).allowed, true);
  const d = l.limit(["ip:1", "user:2"], { now: now + 3000 });
  assert.equal(d.blockedBy, "minute");
  assert.equal(d.limits.length, 4);
  assert.equal(l.limit("ip:9", { now }).allowed, true);
});

test("one limit over several keys: a denial for one key counts for none", () => {
  const l = new RateLimiter({ algorithm: "fixed-window", quota: "1/s" });
  const now = 1_700_000_000_000;
  assert.equal(l.limit("a", { now }).allowed, true);
  assert.equal(l.limit(["a", "b"], { now }).allowed, false);
  assert.equal(l.size, 1); // "b" was not counted
  assert.equal(l.limit(["b", "c"], { now }).allowed, true);
  assert.deepEqual(l.keys().sort(), ["a", "b", "c"]);
});

test("peek, refund, reset, export/import, size and prune", () => {
  const opts = { algorithm: "sliding-window", quota: "5/s" };
  const l = new RateLimiter(opts);
  const now = 1_700_000_000_000;
  l.limit("k", { now, cost: 3 });
  assert.equal(l.peek("k", { now }).remaining, 1);
  l.refund("k", { now, cost: 2 });
  assert.equal(l.peek("k", { now }).remaining, 3);
  const bytes = l.export("k");
  const other = new RateLimiter(opts);
  other.import("k", bytes);
  assert.equal(other.peek("k", { now }).remaining, 3);
  // The Worker's PUT /v1/keys/{policy}/{key}/state answers the same code and field.
  assert.throws(() => other.import("k", bytes.subarray(0, 3)), { name: "TypeError", code: "invalid_state", field: "state" });
  assert.equal(other.peek("k", { now }).remaining, 3);
  l.reset("k");
  assert.equal(l.export("k"), null);
  l.limit("k", { now });
  assert.equal(l.size, 1);
  assert.equal(l.prune(now + 10_000), 1);
  assert.equal(l.size, 0);
});

test("bad input throws TypeError/RangeError naming field and value, and changes nothing", () => {
  assert.throws(() => new RateLimiter({ algorithm: "leaky", limit: 1, window: "1s" }), { name: "TypeError", message: /algorithm .*"leaky"/ });
  assert.throws(() => new RateLimiter({ algorithm: "gcra", limit: 0, window: "1s" }), { name: "RangeError", message: /limit .*0/ });
  assert.throws(() => new RateLimiter({ algorithm: "gcra", quota: "5/parsec" }), { name: "TypeError", message: /5\/parsec/ });
  assert.throws(() => new RateLimiter({ algorithm: "fixed-window", quota: "5/s", burst: 9 }), { name: "TypeError", message: /burst/ });
  const l = new RateLimiter({ algorithm: "gcra", quota: "5/s" });
  const now = 1_700_000_000_000;
  l.limit("k", { now });
  assert.throws(() => l.limit("k", { now, cost: 6 }), { name: "RangeError", message: /cost 6/ });
  assert.throws(() => l.limit("k", { now: -5 }), { name: "RangeError", message: /now .*-5/ });
  assert.throws(() => l.limit("", { now }), { name: "RangeError", message: /^key must not be empty/ });
  assert.throws(() => l.limit(["a", "a"], { now }), { name: "RangeError", message: /keys\[1\] repeats/ });
  assert.throws(() => l.limit(42, { now }), { name: "TypeError", message: /key .*42/ });
  assert.equal(l.peek("k", { now }).remaining, 3); // one hit counted, the peek's own hit after it
  assert.equal(l.size, 1);
});

test("a misspelt or misplaced option is refused, not ignored (a burst of 50 that silently was none)", () => {
  assert.throws(() => new RateLimiter({ algorithm: "token-bucket", limit: 10, window: "1s", brust: 50 }), {
    name: "TypeError",
    message: "brust is not an option (the options are algorithm, limit, window, quota, burst, refillAmount, align, precision, offset, name, limits, blockDuration, continueExceeding, exponentialBackoff, maxBlockDuration, maxKeys, onDecision, store, shadow, allowList, denyList)",
  });
  assert.throws(() => new RateLimiter({ limits: [{ algorithm: "gcra", quota: "1/s" }, { algorithm: "gcra", quota: "9/m", windw: 1 }] }), {
    name: "TypeError",
    message: /^limits\[1\]\.windw is not an option/,
  });
  assert.throws(() => new RateLimiter({ limits: [{ algorithm: "gcra", quota: "1/s" }], burst: 5 }), { name: "TypeError", message: "burst goes in each of limits, not beside them" });
  assert.throws(() => new Policy({ algorithm: "gcra", quota: "1/s", maxkeys: 5 }), { name: "TypeError", message: /^maxkeys is not an option/ });
  assert.ok(new RateLimiter({ algorithm: "fixed-window", align: "first-hit", limit: 1, window: 1000, name: "n", maxKeys: 10 }));
  // The same for the package's other options objects (checked before anything else is used).
  assert.throws(() => new Pacer({ rate: "10/s", maxQueu: 5 }), { name: "TypeError", message: /^maxQueu is not an option \(the options are rate, grain, maxQueue, now, sleep, maxInFlight, leaseTtl\)/ });
  const lease = { url: "http://127.0.0.1:1", pool: "p", holder: "h", partitions: 1, ttlMs: 1000 };
  assert.throws(() => new LeasedPacer({ ...lease, ttl: 1000 }), { name: "TypeError", message: /^ttl is not an option/ });
  assert.throws(() => new RedisStore({}, { prefx: "rl:" }), { name: "TypeError", message: /^prefx is not an option \(the options are prefix, / });
});

test("bad numbers: durations in the units users write, ranges named, never a misleading parse error", () => {
  const cases = [
    // The core's durations come back as quota strings write them, not as nanoseconds.
    [{ algorithm: "sliding-buckets", limit: 10, window: "1s", precision: "300ms" }, "RangeError",
      /^precision 300ms must divide the window 1s exactly$/],
    [{ algorithm: "gcra", limit: 2_000_000, window: "1ms" }, "RangeError",
      /^rate too high: 2000000 hits in 1ms is more than one per nanosecond$/],
    // Numbers too large to be exact are refused as numbers, not turned into "1e+300ms".
    [{ algorithm: "gcra", limit: 10, window: 1e300 }, "RangeError",
      /^window must be a whole number of milliseconds from 1 to 9007199254740991, got 1e\+300$/],
    [{ algorithm: "gcra", limit: 1e300, window: "1s" }, "RangeError",
      /^limit must be a whole number from 1 to 9007199254740991, got 1e\+300$/],
    [{ algorithm: "token-bucket", limit: 10, window: "1s", burst: 2 ** 60 }, "RangeError", /^burst must be a whole number from 1/],
    [{ limits: [{ algorithm: "gcra", limit: 1, window: "1s" }, { algorithm: "gcra", limit: 1, window: 0.5 }] }, "RangeError",
      /^limits\[1\]\.window must be a whole number of milliseconds from 1/],
    // The largest exact window is the core's to judge (its maximum, in ms).
    [{ algorithm: "gcra", limit: 10, window: Number.MAX_SAFE_INTEGER }, "RangeError", /^window of 9007199254740991 ms is longer than the maximum/],
  ];
  for (const [options, name, message] of cases) {
    assert.throws(() => new RateLimiter(options), { name, message }, JSON.stringify(options));
  }
  const l = new RateLimiter({ algorithm: "gcra", quota: "5/s" });
  const now = 1_700_000_000_000;
  assert.throws(() => l.limit("k", { now, cost: 1e20 }), {
    name: "RangeError",
    message: "cost must be a whole number from 1 to 9007199254740991, got 100000000000000000000",
  });
  assert.equal(l.size, 0);
});

test("headers: draft-10 and legacy sets", () => {
  const l = new RateLimiter({ algorithm: "fixed-window", quota: "2/m", name: "api" });
  const now = 1_700_000_000_000;
  l.limit("k", { now });
  l.limit("k", { now });
  const h = l.headers(l.limit("k", { now }), now);
  assert.deepEqual(h, {
    "RateLimit-Policy": '"api";q=2;w=60',
    RateLimit: '"api";r=0;t=40',
    "X-RateLimit-Limit": "2",
    "X-RateLimit-Remaining": "0",
    "X-RateLimit-Reset": "1700000040",
    "Retry-After": "40",
  });
});

test("Policy: pure check over encoded states", () => {
  const p = new Policy({ algorithm: "gcra", quota: "1/s" });
  const r = p.check([null], 1_700_000_000_000);
  assert.equal(r.allowed, true);
  assert.ok(r.states[0] instanceof Uint8Array);
  p.validateState(r.states[0]);
  const again = p.check(r.states, 1_700_000_000_000);
  assert.equal(again.allowed, false);
  assert.equal(p.longestWindowMs, 1000);
  assert.equal(p.mergeable, false);
});
