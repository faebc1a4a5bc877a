// Key handles and limitBatch: exactly the decisions of limit() (over the equivalence fixture),
// and bad input throws and counts nothing.
import test, { before } from "node:test";
import assert from "node:assert/strict";
import { RateLimiter, KeyHandle } from "../../pkg/dist/node/index.js";
import { HITS, LIMITERS, nativeFixture } from "./fixture.mjs";

/** The fixture's hits per limiter, in order: each limiter's decisions depend on its own hits only. */
let perLimiter;
before(() => {
  const csv = nativeFixture();
  perLimiter = LIMITERS.map(() => []);
  for (const line of csv.split("\n")) {
    if (!line) continue;
    const [l, key, now, cost, allowed, remaining, resetAt, retryAfter] = line.split(",");
    perLimiter[+l].push({ key, now: +now, cost: +cost, want: `${allowed},${remaining},${resetAt},${retryAfter}` });
  }
});

test("limit(handle) makes the native crate's decisions", () => {
  let n = 0;
  LIMITERS.forEach((o, li) => {
    const l = new RateLimiter(o);
    const handles = new Map();
    for (const h of perLimiter[li]) {
      if (!handles.has(h.key)) handles.set(h.key, l.key(h.key));
      const d = l.limit(handles.get(h.key), { now: h.now, cost: h.cost });
      assert.equal(`${+d.allowed},${d.remaining},${d.resetAt},${d.retryAfter}`, h.want, `${o.algorithm} hit ${n}`);
      n++;
    }
  });
  assert.equal(n, HITS);
});

for (const kind of ["handles", "strings"]) {
  test(`limitBatch over ${kind} makes the native crate's decisions`, () => {
    let n = 0;
    LIMITERS.forEach((o, li) => {
      const l = new RateLimiter(o);
      const handles = new Map();
      const hits = perLimiter[li];
      let out;
      for (let start = 0; start < hits.length; start += 1000) {
        const chunk = hits.slice(start, start + 1000);
        const keys = chunk.map((h) => {
          if (kind === "strings") return h.key;
          if (!handles.has(h.key)) handles.set(h.key, l.key(h.key));
          return handles.get(h.key);
        });
        out = l.limitBatch(keys, { now: Float64Array.from(chunk, (h) => h.now), costs: chunk.map((h) => h.cost) }, out);
        let admitted = 0;
        chunk.forEach((h, i) => {
          const got = `${out.allowed[i]},${out.remaining[i]},${out.resetAt[i]},${out.retryAfter[i]}`;
          assert.equal(got, h.want, `${o.algorithm} hit ${start + i}`);
          admitted += out.allowed[i];
        });
        assert.equal(out.admitted, admitted);
        n += chunk.length;
      }
    });
    assert.equal(n, HITS);
  });
}

test("a handle works everywhere a key does, and only on its own limiter", () => {
  const l = new RateLimiter({ algorithm: "gcra", quota: "2/s" });
  const now = 1_700_000_000_000;
  const h = l.key("user:42");
  assert.ok(h instanceof KeyHandle);
  assert.equal(h.key, "user:42");
  assert.equal(l.limit(h, { now }).remaining, 1);
  assert.equal(l.limit("user:42", { now }).remaining, 0); // same key, same state
  assert.equal(l.peek(h, { now }).allowed, false);
  l.refund(h, { now });
  assert.equal(l.peek(h, { now }).allowed, true);
  l.reset(h);
  assert.equal(l.size, 0);
  const other = new RateLimiter({ algorithm: "gcra", quota: "2/s" });
  assert.throws(() => other.limit(h, { now }), { name: "TypeError", message: /another limiter/ });
  assert.throws(() => other.limitBatch([h], { now }), { name: "TypeError", message: /keys\[0\]/ });
  assert.throws(() => l.key(""), { name: "RangeError", message: /^key must not be empty/ });
  assert.throws(() => l.key(7), { name: "TypeError", message: /key must be a string/ });
  l.release(h);
  assert.throws(() => l.limit(h, { now }), { name: "RangeError", message: /key handle 0 is not a live key/ });
  l.key("user:7"); // a later key never takes a released handle's number
  assert.throws(() => l.limitBatch([h], { now }), { name: "RangeError", message: /key handle 0 is not a live key/ });
  assert.equal(l.size, 0);
});

test("bad input to limitBatch throws and counts nothing", () => {
  const l = new RateLimiter({ algorithm: "token-bucket", quota: "10/s" });
  const now = 1_700_000_000_000;
  const a = l.key("a");
  const b = l.key("b");
  const before = () => [l.size, l.peek(a, { now }).remaining, l.peek(b, { now }).remaining];
  l.limit(a, { now });
  const was = before();
  const bad = [
    [[a, b, a], { now: Float64Array.of(now, now, -1) }, { name: "RangeError", message: /now .*-1/ }],
    [[a, b, a], { now: Float64Array.of(now, NaN, now) }, { name: "RangeError", message: /now .*NaN/ }],
    [[a, b], { now, costs: [1, 11] }, { name: "RangeError", message: /cost 11/ }],
    [[a, b], { now, costs: [1, 0.5] }, { name: "RangeError", message: /cost .*0\.5/ }],
    [[a, b], { now, costs: [1] }, { name: "RangeError", message: /costs must hold one value per key \(2\), got 1/ }],
    [[a, b], { now, cost: 1, costs: [1, 1] }, { name: "TypeError", message: /not both/ }],
    [[a, "b"], { now }, { name: "TypeError", message: /keys\[1\]/ }],
    [["a", ""], { now }, { name: "RangeError", message: /keys\[1\] must not be empty/ }],
    [["a", "x".repeat(300)], { now }, { name: "RangeError", message: /keys\[1\] is 300 bytes/ }],
    ["a", { now }, { name: "TypeError", message: /keys must be an array/ }],
    [[a], { now: "soon" }, { name: "TypeError", message: /now must be a number/ }],
  ];
  for (const [keys, options, error] of bad) {
    assert.throws(() => l.limitBatch(keys, options), error);
    assert.deepEqual(before(), was);
  }
  assert.throws(() => l.limitBatch([a], { now }, { allowed: new Uint8Array(0) }), { name: "TypeError", message: /out must hold/ });
  assert.deepEqual(before(), was);
});

test("limitBatch: one now for all, default cost, results reused through out", () => {
  const l = new RateLimiter({ algorithm: "fixed-window", quota: "3/s" });
  const now = 1_700_000_000_000;
  const h = l.key("k");
  const out = { allowed: new Uint8Array(8), remaining: new Float64Array(8), resetAt: new Float64Array(8), retryAfter: new Float64Array(8) };
  const r = l.limitBatch([h, h, h, h], { now }, out);
  assert.equal(r, out);
  assert.equal(r.admitted, 3);
  assert.deepEqual(Array.from(r.allowed.subarray(0, 4)), [1, 1, 1, 0]);
  assert.deepEqual(Array.from(r.remaining.subarray(0, 4)), [2, 1, 0, 0]);
  assert.equal(r.retryAfter[3], 1000);
  assert.equal(l.limitBatch([], { now }).admitted, 0);
});

test("the compact key store: maxKeys eviction, sweeping, keys, export/import, reset", () => {
  const now = 1_700_000_000_000;
  const l = new RateLimiter({ algorithm: "gcra", quota: "1/s", maxKeys: 8 });
  const handles = Array.from({ length: 9 }, (_, i) => l.key(`k${i}`));
  for (let i = 0; i < 9; i++) l.limit(handles[i], { now: now + i });
  assert.equal(l.size, 8);
  assert.equal(l.evictions, 1); // k0, fresh soonest, was evicted
  assert.deepEqual(l.keys().sort(), ["k1", "k2", "k3", "k4", "k5", "k6", "k7", "k8"]);
  assert.equal(l.limit(handles[0], { now: now + 9 }).allowed, true); // a handle survives its key's eviction
  assert.equal(l.limit(handles[8], { now: now + 9 }).allowed, false); // and others still find theirs
  const bytes = l.export("k8");
  const other = new RateLimiter({ algorithm: "gcra", quota: "1/s" });
  other.import("k8", bytes);
  assert.deepEqual(other.export("k8"), bytes);
  assert.equal(other.limit("k8", { now: now + 9 }).allowed, false);
  other.import("k8", null);
  assert.equal(other.size, 0);
  l.reset(handles[3]);
  assert.equal(l.limit(handles[8], { now: now + 10 }).allowed, false); // entries moved; handles still right
  assert.equal(l.size, 7); // k0 came back (evicting k1, at the cap again), k3 was reset
  assert.equal(l.evictions, 2);
  assert.equal(l.prune(now + 10_000), 7);
  // Many keys: the automatic sweep of idle keys keeps the map near the live ones.
  const many = new RateLimiter({ algorithm: "token-bucket", quota: "5/s" });
  for (let i = 0; i < 5000; i++) many.limit(`u${i}`, { now: now + i * 10 });
  assert.ok(many.size < 2048, `size ${many.size}`);
  assert.equal(many.peek("u4999", { now: now + 49_990 }).remaining, 3); // one hit counted, then the peek's own
});

test("limitBatch over strings: non-ASCII keys are the same keys as in limit()", () => {
  const now = 1_700_000_000_000;
  const keys = ["ключ:1", "user:😀", "ascii", "ключ:1", "日本語".repeat(20)];
  const a = new RateLimiter({ algorithm: "fixed-window", quota: "2/s" });
  const b = new RateLimiter({ algorithm: "fixed-window", quota: "2/s" });
  for (let round = 0; round < 2; round++) {
    const r = a.limitBatch(keys, { now });
    keys.forEach((k, i) => assert.equal(r.remaining[i], b.limit(k, { now }).remaining, `${k} round ${round}`));
  }
  assert.deepEqual(a.keys().sort(), b.keys().sort());
  assert.throws(() => a.limitBatch(["ok", "x".repeat(100) + "ж".repeat(100)], { now }), { name: "RangeError", message: /keys\[1\] is 300 bytes/ });
});
