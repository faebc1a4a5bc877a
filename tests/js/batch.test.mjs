// Key handles and limitBatch: exactly the decisions of limit() (over the equivalence fixture),
// and bad input throws and counts nothing.
import test, { before } from "node:test";
import assert from "node:assert/strict";
import { RateLimiter, KeyHandle } from "../../pkg/dist/lib/index.js";
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
  assert.throws(() => other.limitBatch(h, { now }), { name: "TypeError", message: /key handle of this limiter/ });
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
    [[a, b], { now, costs: [1] }, { name: "RangeError", message: /costs must hold one value per entry \(2\), got 1/ }],
    [a, { now: [now, now], costs: [1, 1, 1] }, { name: "RangeError", message: /costs must hold one value per entry \(2\), got 3/ }],
    [a, { now: [now, now, now + 1], cost: 11 }, { name: "RangeError", message: /cost 11/ }],
    ["a", { now: [now, NaN] }, { name: "RangeError", message: /now .*NaN/ }],
    ["", { now: [now, now] }, { name: "RangeError", message: /keys\[0\] must not be empty/ }],
    [[a, b], { now, cost: 1, costs: [1, 1] }, { name: "TypeError", message: /not both/ }],
    [[a, "b"], { now }, { name: "TypeError", message: /keys\[1\]/ }],
    [["a", ""], { now }, { name: "RangeError", message: /keys\[1\] must not be empty/ }],
    [["a", "x".repeat(300)], { now }, { name: "RangeError", message: /keys\[1\] is 300 bytes/ }],
    [42, { now }, { name: "TypeError", message: /keys must be a key handle, a string, or an array of them, got number/ }],
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

test("handles stay exact while other keys come and go: removals, sweeps, evictions, re-inserts", () => {
  // A handle caches its key's record and keeps it across removals of other keys (key_store.rs:
  // a removed record is marked dead, offsets move only on compaction). Here keys are removed
  // every way there is (reset, prune, the idle sweep, maxKeys eviction, import of a fresh
  // state) and come back at new offsets, between checks by handle, one at a time and in
  // batches; every decision must be the one a twin limiter makes by key strings alone.
  let seed = 12345;
  const rand = (n) => {
    seed = (seed * 1103515245 + 12345) % 2 ** 31;
    return seed % n;
  };
  const now0 = 1_700_000_000_000;
  for (const options of [
    { algorithm: "gcra", quota: "3/s", burst: 2 },
    { algorithm: "token-bucket", quota: "4/s" },
    { algorithm: "fixed-window", quota: "2/s" },
    { algorithm: "sliding-window", quota: "3/s" },
  ]) {
    for (const maxKeys of [undefined, 40]) {
      const a = new RateLimiter({ ...options, maxKeys }); // by handle
      const b = new RateLimiter({ ...options, maxKeys }); // by key string
      const names = Array.from({ length: 64 }, (_, i) => `key-${i}`);
      const handles = names.map((k) => a.key(k));
      const out = { allowed: new Uint8Array(16), remaining: new Float64Array(16), resetAt: new Float64Array(16), retryAfter: new Float64Array(16) };
      let now = now0;
      let cachedChecks = 0;
      for (let step = 0; step < 6000; step++) {
        now += rand(40);
        const at = `${options.algorithm} maxKeys=${maxKeys} step ${step}`;
        const op = rand(100);
        const i = rand(names.length);
        if (op < 55) {
          assert.equal(summary(a.limit(handles[i], { now })), summary(b.limit(names[i], { now })), at);
          cachedChecks++;
        } else if (op < 75) {
          const ids = Array.from({ length: 1 + rand(16) }, () => rand(names.length));
          const r = a.limitBatch(ids.map((j) => handles[j]), { now }, out);
          ids.forEach((j, e) => {
            const d = b.limit(names[j], { now });
            assert.equal(`${out.allowed[e]},${out.remaining[e]},${out.resetAt[e]},${out.retryAfter[e]}`, summary(d), `${at} entry ${e}`);
          });
          assert.equal(r.admitted, out.allowed.subarray(0, ids.length).reduce((x, y) => x + y, 0), at);
        } else if (op < 82) {
          a.reset(names[i]); // by string: the handle's cached record is removed under it
          b.reset(names[i]);
        } else if (op < 86) {
          now += rand(3000); // idle long enough for many keys to go fresh
          assert.equal(a.prune(now), b.prune(now), at);
        } else if (op < 90) {
          const j = rand(names.length);
          a.import(names[j], b.export(names[j])); // possibly null: a removal
          b.import(names[j], b.export(names[j]));
        } else {
          // Keys without handles: inserts that sweep idle keys and, at the cap, evict.
          const k = `other-${rand(500)}`;
          assert.equal(summary(a.limit(k, { now })), summary(b.limit(k, { now })), at);
        }
        if (step % 500 === 0) assert.deepEqual(a.keys().sort(), b.keys().sort(), at);
      }
      assert.equal(a.size, b.size);
      assert.equal(a.evictions, b.evictions);
      assert.ok(cachedChecks > 3000);
    }
  }
});

test("the key store's slab (several limits, sliding log): maxKeys eviction, sweeping, keys, export/import, reset", () => {
  const now = 1_700_000_000_000;
  const policy = {
    limits: [
      { name: "s", algorithm: "gcra", quota: "1/s" },
      { name: "m", algorithm: "sliding-log", quota: "5/1m" },
    ],
  };
  const l = new RateLimiter({ ...policy, maxKeys: 8 });
  const handles = Array.from({ length: 9 }, (_, i) => l.key(`k${i}`));
  for (let i = 0; i < 9; i++) assert.equal(l.limit(handles[i], { now: now + i }).allowed, true);
  assert.equal(l.size, 8);
  assert.equal(l.evictions, 1); // k0, fresh soonest, was evicted
  assert.deepEqual(l.keys().sort(), ["k1", "k2", "k3", "k4", "k5", "k6", "k7", "k8"]);
  assert.equal(l.limit(handles[0], { now: now + 9 }).allowed, true); // evicted: fresh again
  assert.equal(l.evictions, 2); // k1 made room for it
  const denied = l.limit(handles[8], { now: now + 9 });
  assert.equal(denied.allowed, false);
  assert.equal(denied.blockedBy, "s");
  const bytes = l.export("k8");
  const other = new RateLimiter(policy);
  other.import("k8", bytes);
  assert.deepEqual(other.export("k8"), bytes);
  assert.equal(other.limit("k8", { now: now + 9 }).allowed, false);
  assert.equal(other.limit("k8", { now: now + 1008 }).limits[1].remaining, 3); // the log kept its hit
  other.import("k8", null);
  assert.equal(other.size, 0);
  l.reset(handles[3]);
  assert.equal(l.size, 7);
  assert.equal(l.limit(handles[8], { now: now + 10 }).allowed, false); // records moved; handles still right
  assert.equal(l.prune(now + 60_000), 0); // the minute's log keeps every key
  assert.equal(l.prune(now + 61_000), 7);
  // Many keys: the automatic sweep of idle keys keeps the store near the live ones.
  const many = new RateLimiter({ algorithm: "sliding-log", quota: "5/s" });
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

/** xorshift32: the same bursty trace on every run. */
function prng(seed) {
  let s = seed;
  return (n) => {
    s ^= s << 13;
    s ^= s >>> 17;
    s ^= s << 5;
    return (s >>> 0) % n;
  };
}

/**
 * A trace in bursts: runs of 1-40 hits of one of 4 keys (the batch loop keeps a run's state
 * in registers), times mostly rising by 0-30 ms, sometimes repeated or stepping back.
 */
function burstyTrace(seed, hits) {
  const r = prng(seed);
  const trace = [];
  let now = 1_700_000_000_000;
  while (trace.length < hits) {
    const key = `k${r(4)}`;
    for (let run = 1 + r(40); run > 0 && trace.length < hits; run--) {
      const step = r(10);
      now += step === 0 ? -r(50) : step < 3 ? 0 : r(30) + r(1000) / 1000;
      trace.push({ key, now, cost: 1 + (r(5) === 0) });
    }
  }
  return trace;
}

const summary = (d) => `${+d.allowed},${d.remaining},${d.resetAt},${d.retryAfter}`;

test("limitBatch over bursts of one key, one key for all entries, and allowed-only results make limit()'s decisions", () => {
  LIMITERS.forEach((o, li) => {
    const trace = burstyTrace(0x9e3779b9 + li, 6000);
    const reference = new RateLimiter(o);
    const want = trace.map((h) => summary(reference.limit(h.key, { now: h.now, cost: h.cost })));
    const full = new RateLimiter(o);
    const light = new RateLimiter(o);
    const byKey = new RateLimiter(o);
    const byString = new RateLimiter(o);
    const handles = (l) => new Map(["k0", "k1", "k2", "k3"].map((k) => [k, l.key(k)]));
    const [hf, hl, hk] = [handles(full), handles(light), handles(byKey)];
    const r = prng(li + 1);
    const lightOut = { allowed: new Uint8Array(500) };
    for (let start = 0; start < trace.length; ) {
      const chunk = trace.slice(start, start + 1 + r(300));
      const now = Float64Array.from(chunk, (h) => h.now);
      const costs = chunk.map((h) => h.cost);
      const f = full.limitBatch(chunk.map((h) => hf.get(h.key)), { now, costs });
      const g = light.limitBatch(chunk.map((h) => hl.get(h.key)), { now, costs }, lightOut);
      assert.equal(g, lightOut);
      assert.equal(Object.keys(g).sort().join(), "admitted,allowed");
      let admitted = 0;
      chunk.forEach((h, i) => {
        const at = `${o.algorithm} hit ${start + i}`;
        assert.equal(`${f.allowed[i]},${f.remaining[i]},${f.resetAt[i]},${f.retryAfter[i]}`, want[start + i], at);
        assert.equal(g.allowed[i], f.allowed[i], at);
        admitted += f.allowed[i];
      });
      assert.equal(f.admitted, admitted);
      assert.equal(g.admitted, admitted);
      // The same hits as one batch per run of a key: one key (handle or string) for all entries.
      for (let i = 0; i < chunk.length; ) {
        let end = i + 1;
        while (end < chunk.length && chunk[end].key === chunk[i].key) end++;
        const run = { now: now.subarray(i, end), costs: costs.slice(i, end) };
        const k = byKey.limitBatch(hk.get(chunk[i].key), run);
        const s = byString.limitBatch(chunk[i].key, run, { allowed: new Uint8Array(end - i), remaining: new Float64Array(end - i) });
        for (let j = i; j < end; j++) {
          const at = `${o.algorithm} hit ${start + j} (one key)`;
          const want1 = want[start + j];
          assert.equal(`${k.allowed[j - i]},${k.remaining[j - i]},${k.resetAt[j - i]},${k.retryAfter[j - i]}`, want1, at);
          assert.equal(`${s.allowed[j - i]},${s.remaining[j - i]}`, want1.split(",").slice(0, 2).join(), at);
        }
        i = end;
      }
      start += chunk.length;
    }
    for (const l of [full, light, byKey, byString]) {
      for (const k of ["k0", "k1", "k2", "k3"]) assert.deepEqual(l.export(k), reference.export(k), `${o.algorithm} ${k}`);
    }
  });
});

test("limitBatch with one key: the entry count comes from now or costs, one number each means one entry", () => {
  const l = new RateLimiter({ algorithm: "gcra", quota: "3/s" });
  const now = 1_700_000_000_000;
  const h = l.key("k");
  assert.deepEqual(Array.from(l.limitBatch(h, { now: [now, now, now, now] }).allowed), [1, 1, 1, 0]);
  assert.deepEqual(Array.from(l.limitBatch("j", { now, costs: [1, 2, 1] }).allowed), [1, 1, 0]);
  assert.equal(l.limitBatch("i", { now }).allowed.length, 1);
  assert.equal(l.limitBatch(h, { now: [] }).admitted, 0);
});
