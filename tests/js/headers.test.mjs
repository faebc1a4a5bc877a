// The rate-limit headers the package writes (the core's writer, through wasm), read as a client
// reads them: every header parses with an independent RFC 9651 parser (`structured-headers`)
// in every mode, over every algorithm x fresh / partial / exhausted x sub-second / second /
// hour windows x one or several limits x cost 1 and 2; and, for draft-10, what the numbers
// promise holds in simulated time: waiting `t` admits a hit of cost 1, `r` units fit now,
// `Retry-After` is at least 1 and at least every `t`, and pacing at `q/w` is admitted.
import test from "node:test";
import assert from "node:assert/strict";
import { parseDictionary, parseItem, parseList } from "structured-headers";
import { RateLimiter } from "../../pkg/dist/lib/index.js";
import { RateLimiter as LiteRateLimiter } from "../../pkg/dist/lib/lite.js";

const T0 = 1_700_000_000_000;
const WINDOWS = [
  ["sub-second", { limit: 5, window: "250ms" }, "50ms", 250],
  ["second", { limit: 4, window: "1s" }, "250ms", 1000],
  ["hour", { limit: 6, window: "1h" }, "10m", 3_600_000],
];
const ALGORITHMS = [
  ["fixed-window", {}],
  ["fixed-window (first hit)", { algorithm: "fixed-window", align: "first-hit" }],
  ["sliding-log", {}],
  ["sliding-window", {}],
  ["sliding-buckets", {}],
  ["token-bucket", { burst: 8 }],
  ["gcra", { burst: 3 }],
];
export const MODES = ["draft-6", "draft-7", "draft-8", "draft-10", true, false];

/** Limit options for `algorithm` over one window row. */
function limitOf([name, extra], [, size, precision]) {
  const algorithm = extra.algorithm ?? name;
  const o = { name: `l-${name.replace(/[^a-z]/g, "")}`, algorithm, ...size, ...extra };
  if (algorithm === "sliding-buckets") o.precision = precision;
  return o;
}

/** Every configuration of the matrix: [label, limiter options]. */
function configurations() {
  const out = [];
  for (const a of ALGORITHMS) {
    for (const w of WINDOWS) {
      const one = limitOf(a, w);
      out.push([`${a[0]} ${w[0]}`, one, w[3]]);
      out.push([`${a[0]} ${w[0]} + 100/h`, { limits: [one, { name: "hourly", algorithm: "sliding-window", quota: "100/h" }] }, w[3]]);
    }
  }
  return out;
}

const integer = (v, what) => {
  const [n] = parseItem(v);
  assert.ok(Number.isInteger(n) && n >= 0, `${what}: ${v}`);
  return n;
};

/** Parses every header `h` has for `mode` with the independent parser and checks its shape. */
function checkSyntax(h, mode, legacy, denied, names) {
  const standard = mode === true ? "draft-6" : mode;
  const expected = new Set();
  if (standard) {
    const policy = parseList(h["RateLimit-Policy"]);
    assert.equal(policy.length, names.length, "one policy member per limit");
    expected.add("RateLimit-Policy");
    for (const [item, params] of policy) {
      if (standard === "draft-8" || standard === "draft-10") {
        assert.equal(typeof item, "string");
        assert.ok(names.includes(item));
        assert.ok(params.get("q") >= 1 && Number.isInteger(params.get("q")));
      } else {
        assert.ok(Number.isInteger(item) && item >= 1, "draft-6/7 policy: the quota as the item");
      }
      assert.ok(Number.isInteger(params.get("w")) && params.get("w") >= 1, "w: whole seconds");
    }
    if (standard === "draft-8" || standard === "draft-10") {
      const state = parseList(h.RateLimit);
      expected.add("RateLimit");
      assert.deepEqual(state.map(([n]) => n), policy.map(([n]) => n), "the same members in the same order");
      for (const [, params] of state) {
        assert.ok(Number.isInteger(params.get("r")) && params.get("r") >= 0);
        assert.ok(Number.isInteger(params.get("t")) && params.get("t") >= 0);
      }
    } else if (standard === "draft-7") {
      const d = parseDictionary(h.RateLimit);
      expected.add("RateLimit");
      assert.deepEqual([...d.keys()], ["limit", "remaining", "reset"]);
      for (const [v] of d.values()) assert.ok(Number.isInteger(v) && v >= 0);
    } else {
      for (const n of ["RateLimit-Limit", "RateLimit-Remaining", "RateLimit-Reset"]) {
        integer(h[n], n);
        expected.add(n);
      }
    }
  }
  if (legacy) {
    for (const n of ["X-RateLimit-Limit", "X-RateLimit-Remaining", "X-RateLimit-Reset"]) {
      integer(h[n], n);
      expected.add(n);
    }
  }
  if (denied) {
    assert.ok(integer(h["Retry-After"], "Retry-After") >= 1, "Retry-After is never 0");
    expected.add("Retry-After");
  }
  assert.deepEqual(Object.keys(h).sort(), [...expected].sort(), `mode ${mode}, legacy ${legacy}`);
}

/** The hits of one trace: fresh, partial, exhausted, and once more when denied. */
function* phases(limiter, cost) {
  let now = T0;
  let d = limiter.limit("k", { now, cost });
  yield ["fresh", d, now];
  now += 7;
  d = limiter.limit("k", { now, cost });
  yield ["partial", d, now];
  for (let i = 0; i < 40 && d.allowed; i++) d = limiter.limit("k", { now, cost });
  yield ["exhausted", d, now];
}

test("every header parses as RFC 9651 in every mode, over the whole matrix", () => {
  let checked = 0;
  for (const [label, options] of configurations()) {
    for (const cost of [1, 2]) {
      const limiter = new RateLimiter(options);
      const names = limiter.policy.names;
      for (const [phase, d, now] of phases(limiter, cost)) {
        for (const mode of MODES) {
          for (const legacy of [true, false]) {
            for (const extra of [{}, { partitionKey: "ip:203.0.113.7", jitter: () => 0.7 }]) {
              const h = limiter.headers(d, { now, standardHeaders: mode, legacyHeaders: legacy, ...extra });
              try {
                checkSyntax(h, mode, legacy, !d.allowed, names);
              } catch (e) {
                e.message = `${label}, cost ${cost}, ${phase}, ${JSON.stringify(h)}: ${e.message}`;
                throw e;
              }
              if (extra.partitionKey && (mode === "draft-8" || mode === "draft-10")) {
                const pk = parseList(h["RateLimit-Policy"])[0][1].get("pk");
                assert.ok(pk instanceof ArrayBuffer && pk.byteLength === 8, "pk: a Byte Sequence of the hash");
                assert.ok(!h["RateLimit-Policy"].includes("203.0.113.7"), "never the raw key");
              }
              checked++;
            }
          }
        }
      }
      assert.equal(phases.length, 2);
    }
  }
  assert.equal(checked, 7 * 3 * 2 * 2 * 3 * MODES.length * 2 * 2);
});

/** The draft-10 members of `h` as { name: { q, w, r, t } }, in order. */
function members(h) {
  const policy = parseList(h["RateLimit-Policy"]);
  const state = parseList(h.RateLimit);
  return policy.map(([name, p], i) => ({ name, q: p.get("q"), w: p.get("w"), r: state[i][1].get("r"), t: state[i][1].get("t") }));
}

test("draft-10 as a client reads it: waiting t admits one unit, r units fit now, Retry-After >= t and >= 1", () => {
  let denials = 0;
  for (const [label, options] of configurations()) {
    for (const cost of [1, 2]) {
      const limiter = new RateLimiter(options);
      let now = T0;
      // A bursty trace: runs of hits, then pauses of various lengths.
      for (let i = 0; i < 60; i++) {
        now += [0, 0, 3, 40, 120, 900, 20_000][i % 7];
        const d = limiter.limit("k", { now, cost });
        const h = limiter.headers(d, { now });
        const m = members(h);
        const where = `${label}, cost ${cost}, hit ${i}: ${JSON.stringify(h)}`;
        assert.equal(m[0].name, d.blockedBy ?? m[0].name, `the denying limit is named first: ${where}`);
        const r = Math.min(...m.map((x) => x.r));
        if (r > 0) assert.ok(limiter.peek("k", { now, cost: Math.min(r, 2) }).allowed, `r promises what fits now: ${where}`);
        const t = Math.max(...m.map((x) => x.t));
        assert.equal(t === 0, r > 0 || m.every((x) => x.t === 0), where);
        assert.ok(limiter.peek("k", { now: now + t * 1000, cost: 1 }).allowed, `one unit after t: ${where}`);
        if (!d.allowed) {
          denials++;
          const retry = Number(h["Retry-After"]);
          assert.ok(retry >= 1 && retry >= t, `Retry-After ${retry} vs t ${t}: ${where}`);
          assert.ok(limiter.peek("k", { now: now + retry * 1000, cost }).allowed, `the hit after Retry-After: ${where}`);
        }
      }
    }
  }
  assert.ok(denials > 100);
});

test("a client pacing at q/w from a fresh key is admitted every time (sliding window: q - 1, docs/headers.md)", () => {
  for (const [label, options, windowMs] of configurations().filter(([, o]) => o.limits === undefined)) {
    const limiter = new RateLimiter(options);
    const [{ q, w }] = members(limiter.headers(limiter.peek("k", { now: T0 }), { now: T0 }));
    // One unit every w/q seconds, in whole ms rounded up (a client's timer); the sliding
    // window counter at q - 1 per window, the sliding log with 1 ms of slack per window (its
    // window is closed): the bounds docs/headers.md names.
    let at = (i) => Math.ceil((i * w * 1000) / q);
    const limit = (q * windowMs) / (w * 1000);
    if (options.algorithm === "sliding-window") at = (i) => Math.ceil((i * windowMs) / (limit - 1));
    if (options.algorithm === "sliding-log") at = (i) => Math.ceil((i * (windowMs + 1) * w * 1000) / (q * windowMs));
    for (let i = 0; i < 3 * q; i++) {
      const now = T0 + at(i);
      assert.ok(limiter.limit("k", { now }).allowed, `${label}: hit ${i} of a client pacing near ${q}/${w}s`);
    }
  }
});

test("q/w state the sustained rate: bursts are not the rate, sub-second windows scale exactly", () => {
  const policy = (o) => parseList(new RateLimiter(o).headers(new RateLimiter(o).peek("k", { now: T0 }), { now: T0 })["RateLimit-Policy"]);
  const qw = (o) => policy(o).map(([, p]) => [p.get("q"), p.get("w")])[0];
  assert.deepEqual(qw({ algorithm: "gcra", limit: 1000, window: "1s", burst: 100 }), [1000, 1]);
  assert.deepEqual(qw({ algorithm: "gcra", limit: 5, window: "250ms" }), [20, 1]);
  assert.deepEqual(qw({ algorithm: "fixed-window", limit: 3, window: "500ms" }), [6, 1]);
  assert.deepEqual(qw({ algorithm: "sliding-log", limit: 7, window: "1500ms" }), [14, 3]);
  assert.deepEqual(qw({ algorithm: "token-bucket", limit: 100, window: "1s", burst: 500 }), [100, 1]);
  const l = new RateLimiter({ algorithm: "gcra", limit: 1000, window: "1s", burst: 100 });
  assert.equal(l.headers(l.limit("k", { now: T0 }), { now: T0 })["RateLimit-Policy"], '"default";q=1000;w=1', "the rate, not the burst");
});

test("one meaning of limit and remaining: the limit beside remaining is the decision's limit (a burst above the rate included)", () => {
  for (const o of [
    { algorithm: "token-bucket", limit: 100, window: "1s", burst: 500 },
    { algorithm: "gcra", limit: 1000, window: "1s", burst: 100 },
    { algorithm: "fixed-window", limit: 3, window: "500ms" },
  ]) {
    const l = new RateLimiter(o);
    const d = l.limit("k", { now: T0 });
    for (const standardHeaders of ["draft-6", "draft-7"]) {
      const h = l.headers(d, { now: T0, standardHeaders, legacyHeaders: true });
      assert.equal(h["X-RateLimit-Limit"], String(d.limit), JSON.stringify(o));
      assert.ok(Number(h["X-RateLimit-Remaining"]) <= Number(h["X-RateLimit-Limit"]), JSON.stringify(h));
      if (standardHeaders === "draft-6") assert.equal(h["RateLimit-Limit"], String(d.limit));
      else assert.match(h.RateLimit, new RegExp(`^limit=${d.limit}, remaining=${d.remaining},`));
    }
  }
  const bucket = new RateLimiter({ algorithm: "token-bucket", limit: 100, window: "1s", burst: 500 });
  const h = bucket.headers(bucket.limit("k", { now: T0 }), { now: T0 });
  assert.deepEqual([h["X-RateLimit-Limit"], h["X-RateLimit-Remaining"]], ["500", "499"]);
});

test("the sliding window counter's t is the wait for one unit, not for the key to be fresh", () => {
  const l = new RateLimiter({ algorithm: "sliding-window", quota: "100/m" });
  let d;
  for (let i = 0; i < 101; i++) d = l.limit("k", { now: T0 - (T0 % 60_000) + 1_000 });
  assert.equal(d.allowed, false);
  const now = T0 - (T0 % 60_000) + 1_000;
  const [m] = members(l.headers(d, { now }));
  assert.ok(m.t <= 60, `t = ${m.t}, a unit returns within the next window`);
  assert.ok(l.peek("k", { now: now + m.t * 1000 }).allowed);
});

test("each mode writes the fields its draft and express-rate-limit name", () => {
  const l = new RateLimiter({ limits: [
    { name: "per-second", algorithm: "fixed-window", quota: "2/s" },
    { name: "per-hour", algorithm: "fixed-window", quota: "100/h" },
  ] });
  const now = 1_700_000_000_250;
  l.limit("k", { now });
  l.limit("k", { now });
  const d = l.limit("k", { now });
  const h = (standardHeaders, legacyHeaders = false) => l.headers(d, { now, standardHeaders, legacyHeaders });
  assert.deepEqual(h("draft-10"), {
    "RateLimit-Policy": '"per-second";q=2;w=1, "per-hour";q=100;w=3600',
    RateLimit: '"per-second";r=0;t=1, "per-hour";r=98;t=0',
    "Retry-After": "1",
  });
  assert.equal(h("draft-8").RateLimit, '"per-second";r=0;t=1, "per-hour";r=98;t=2800');
  assert.deepEqual(h("draft-7"), { "RateLimit-Policy": "2;w=1, 100;w=3600", RateLimit: "limit=2, remaining=0, reset=1", "Retry-After": "1" });
  assert.deepEqual(h(true), h("draft-6"), "true is express-rate-limit's draft-6");
  assert.deepEqual(h("draft-6"), {
    "RateLimit-Policy": "2;w=1, 100;w=3600",
    "RateLimit-Limit": "2",
    "RateLimit-Remaining": "0",
    "RateLimit-Reset": "1",
    "Retry-After": "1",
  });
  assert.deepEqual(h(false, true), { "X-RateLimit-Limit": "2", "X-RateLimit-Remaining": "0", "X-RateLimit-Reset": "1700000001", "Retry-After": "1" });
  assert.deepEqual(h(false), { "Retry-After": "1" }, "Retry-After on every denial");
  // The default: draft-10 and legacy.
  assert.deepEqual(Object.keys(l.headers(d, now)), ["RateLimit-Policy", "RateLimit", "X-RateLimit-Limit", "X-RateLimit-Remaining", "X-RateLimit-Reset", "Retry-After"]);
});

test("jitter: off by default, bounded by half the wait, never early, deterministic with its draw", () => {
  const l = new RateLimiter({ algorithm: "fixed-window", quota: "1/1m" });
  const now = 1_700_000_000_000; // 20 s into a minute: a denial waits 40 s
  l.limit("k", { now });
  const d = l.limit("k", { now });
  const at = (u) => l.headers(d, { now, jitter: () => u });
  assert.equal(l.headers(d, { now })["Retry-After"], "40");
  for (const u of [0, 0.25, 0.5, 0.999]) {
    const h = at(u);
    const retry = Number(h["Retry-After"]);
    const t = members(h)[0].t;
    assert.ok(retry >= 40 && retry <= 60 && t <= retry && t >= 40, `u ${u}: ${JSON.stringify(h)}`);
    assert.deepEqual(at(u), h, "the same draw, the same headers");
  }
  assert.equal(at(0)["Retry-After"], "40");
  assert.equal(at(0.999)["Retry-After"], "60");
  const allowed = new RateLimiter({ algorithm: "fixed-window", quota: "5/1m" });
  const ok = allowed.limit("k", { now });
  assert.deepEqual(allowed.headers(ok, { now, jitter: () => 0.9 }), allowed.headers(ok, { now }), "allowed answers are never jittered");
  assert.throws(() => l.headers(d, { now, jitter: () => 1 }), { name: "RangeError", message: /jitter\(\) must return a number in \[0, 1\)/ });
  assert.throws(() => l.headers(d, { now, jitter: "yes" }), { name: "TypeError", message: /jitter must be/ });
  assert.throws(() => l.headers(d, { now, standardHeaders: "draft-9" }), { name: "RangeError", message: /standardHeaders must be/ });
  assert.throws(() => l.headers(d, { now, legacyHeaders: "no" }), { name: "TypeError", message: /legacyHeaders must be/ });
});

test("several keys: each limit shows the key with the least left, not only the key the decision is about", () => {
  const l = new RateLimiter({ limits: [
    { name: "a", algorithm: "fixed-window", quota: "10/1h" },
    { name: "b", algorithm: "fixed-window", quota: "5/1s" },
  ] });
  const hour = T0 - (T0 % 3_600_000);
  for (let i = 0; i < 8; i++) assert.ok(l.limit("ip", { now: hour + i * 1_000 }).allowed);
  for (let i = 0; i < 3; i++) assert.ok(l.limit("user", { now: hour + 10_000 }).allowed);
  const d = l.limit(["ip", "user"], { now: hour + 10_000 });
  const m = members(l.headers(d, { now: hour + 10_000 }));
  // ip: a 9 of 10, b 1 of 5; user: a 4 of 10, b 4 of 5.
  assert.deepEqual(m.map((x) => [x.name, x.r]), [["a", 1], ["b", 1]]);
});

test("tollgate/lite writes the same headers with its own module", () => {
  const o = { algorithm: "sliding-log", limit: 3, window: "2s" };
  const full = new RateLimiter(o);
  const lite = new LiteRateLimiter(o);
  for (let i = 0; i < 6; i++) {
    const now = T0 + i * 300;
    const opts = { now, standardHeaders: MODES[i % MODES.length], partitionKey: "k" };
    assert.deepEqual(lite.headers(lite.limit("k", { now }), opts), full.headers(full.limit("k", { now }), opts));
  }
});
