// The guarded update (src/guard.rs, lib/stores/redis/redis-guard.js) on a real redis-server: the script's Lua,
// which knows no algorithm and computes in doubles, against the core. For random states of the
// algorithms that have guards (GCRA, fixed window, sliding window)
// (epoch times, times near 2^63 ns, times whose low 28 bits are about to carry) and batches, the
// bytes at the key are moved by a random delta inside or outside the core's guard, as another
// writer would have moved them; then the limiter, whose cache still holds the old bytes, decides
// the batch. Inside the range Redis must write exactly the bytes the core decides over the
// moved ones (and the limiter's decisions must be the core's over them) with a TTL no shorter
// than theirs; outside it, nothing is written under the guard (a plain conflict).
import { test, before, after } from "node:test";
import assert from "node:assert/strict";
import { Policy, RateLimiter, RedisStore } from "tollgate";
import { RedisServer } from "./redis-server.mjs";
import { CLIENTS, connect } from "./clients.mjs";

let server;
before(async () => {
  server = await RedisServer.start();
});
after(() => server.stop());

const raw = (client) => ({ send: (args) => ("call" in client ? client.call(...args) : client.sendCommand(args)) });
const hex = (bytes) => Buffer.from(bytes).toString("hex");

/** A small PRNG (mulberry32), so that a failure can be run again: GUARD_SEED. */
function prng(seed) {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/** The LEB128 varints of `bytes` as BigInts. */
function varints(bytes) {
  const out = [];
  let v = 0n;
  let shift = 0n;
  for (const b of bytes) {
    v |= BigInt(b & 0x7f) << shift;
    shift += 7n;
    if (b < 0x80) {
      out.push(v);
      v = 0n;
      shift = 0n;
    }
  }
  return out;
}

/** `bytes` with the varints at the bit set `fields` moved by `by` (`null`: one leaves 0..2^64). */
function shifted(bytes, fields, by) {
  const out = [];
  const values = varints(bytes);
  for (let i = 0; i < values.length; i++) {
    let v = values[i];
    if ((fields >> i) & 1) v += BigInt(by);
    if (v < 0n || v >= 1n << 64n) return null;
    do {
      const low = Number(v & 0x7fn);
      v >>= 7n;
      out.push(v > 0n ? low | 0x80 : low);
    } while (v > 0n);
  }
  return new Uint8Array(out);
}

/** The core's decisions and bytes for `hits` over `state`, one after another (as a batch). */
function coreDecides(policy, state, hits) {
  let states = [state];
  const decisions = [];
  let expiresAt = 0;
  for (const h of hits) {
    const d = policy.check(states, h.now, h.cost);
    decisions.push(d);
    if (d.allowed) expiresAt = d.expiresAt[0];
    states = d.states;
  }
  return { decisions, bytes: states[0], expiresAt };
}

/** The batch's guard, as the limiter computes it (`[fields, lo, hi, knee]`, or null). */
function guardOf(policy, state, hits) {
  const w = policy._store;
  let states = [state];
  for (let i = 0; i < hits.length; i++) {
    const next = w.step(states, hits[i].now, hits[i].cost, false, i > 0);
    if (next === null) return null;
    states = next;
  }
  const g = w.lastGuard();
  return g == null ? null : { fields: g[0], lo: g[1], hi: g[2], knee: g[3] };
}

/** A start time (epoch ms): today's, near 2^63 ns, or one whose nanoseconds' low 28 bits carry soon. */
function startTime(rng) {
  const kind = Math.floor(rng() * 3);
  if (kind === 0) return 1_700_000_000_000 + Math.floor(rng() * 1e11);
  if (kind === 1) return 9_223_372_036_854 - Math.floor(rng() * 10_000_000);
  for (;;) {
    const ms = 1_700_000_000_000 + Math.floor(rng() * 1e11);
    const low = (BigInt(ms) * 1_000_000n) % (1n << 28n);
    if (low > (1n << 28n) - 4_000_000n) return ms;
  }
}

const CASES = Number(process.env.GUARD_CASES ?? 150);

for (const kind of CLIENTS) {
  test(`the script writes exactly the core's bytes inside a guard's range, nothing outside (${kind})`, async (t) => {
    const { client, close } = await connect(kind, server.port);
    t.after(close);
    const r = raw(client);
    const seed = Number(process.env.GUARD_SEED ?? 25) + (kind === "ioredis" ? 1 : 0);
    const rng = prng(seed);
    const tally = { inside: 0, outside: 0, carried: 0, near63: 0, noGuard: 0 };
    for (let i = 0; i < CASES; i++) {
      const limit = 2 + Math.floor(rng() * 20);
      const algorithm = ["gcra", "gcra", "fixed-window", "sliding-window"][Math.floor(rng() * 4)];
      // Windows of an hour: every state written lives minutes at least (a GCRA meter moves
      // an hour / limit per hit; the windows start near the batch), so nothing a case reads
      // back can expire however slowly the machine runs it.
      const config = { algorithm, limit, window: "1h" };
      const HOUR = 3_600_000;
      const policy = new Policy(config);
      const store = new RedisStore(client, { prefix: `guard:${kind}:` });
      const limiter = new RateLimiter({ ...config, store });
      const key = `k${i}`;
      const start = startTime(rng);
      // A counter's batch counts in its window (or, one time in four, one or two windows later).
      const t0 = algorithm === "gcra" ? start : Math.floor(start / HOUR) * HOUR + Math.floor(rng() * 1000);
      for (let w = Math.floor(rng() * 3); w >= 0; w--) await limiter.limit(key, { now: t0 + w });
      const b = await limiter.export(key);
      // A meter busy at the batch's time (within the warm hits' span), or idle (past it); a
      // clock that went back a little.
      const span = (4 * HOUR) / limit;
      const t1 =
        algorithm === "gcra"
          ? t0 + Math.floor((rng() * 1.5 - 0.1) * span)
          : t0 + (rng() < 0.25 ? HOUR * (1 + Math.floor(rng() * 2)) : Math.floor(rng() * 3000) - 500);
      const hits = Array.from({ length: 1 + Math.floor(rng() * 4) }, (_, j) => ({ now: t1 + j * Math.floor(rng() * 50), cost: 1 + Math.floor(rng() * 2) }));
      const g = guardOf(policy, b, hits);
      if (g === null) {
        tally.noGuard++;
        continue;
      }
      const after = coreDecides(policy, b, hits).bytes;
      // A delta inside the range (its ends, the knee, a random one near the knee or 0) or outside.
      const near = (x) => Math.round(x + (rng() - 0.5) * 20_000_000);
      const picks = [g.lo, g.hi, g.knee, 0, near(g.knee), near(0), g.hi + 1, g.lo - 1, g.hi + 1 + Math.floor(rng() * 1e9)];
      let delta = picks[Math.floor(rng() * picks.length)];
      const inside = delta >= g.lo && delta <= g.hi;
      if (!inside && delta < g.lo && delta >= -(2 ** 50)) delta = g.lo - 1;
      const c = shifted(b, g.fields, delta);
      if (c === null) {
        tally.noGuard++;
        continue;
      }
      // The high part (above the low 28 bits) moved: the script carried or borrowed.
      const before28 = varints(b).map((v) => v >> 28n);
      if (varints(c).some((v, j) => (g.fields >> j) & 1 && v >> 28n !== before28[j])) tally.carried++;
      if (t0 > 9_000_000_000_000) tally.near63++;
      await r.send(["SET", limiter._key(key), hex(c), "PX", "3600000"]);
      const guardedBefore = store._guarded.writes;
      const started = Date.now();
      const decisions = await Promise.all(hits.map((h) => limiter.limit(key, { now: h.now, cost: h.cost })));
      const held = await r.send(["GET", limiter._key(key)]);
      const pttl = Number(await r.send(["PTTL", limiter._key(key)]));
      const elapsed = Date.now() - started;
      const core = coreDecides(policy, c, hits);
      const what = `case ${i} (seed ${seed}): ${JSON.stringify({ config, t0, hits, g, delta, b: hex(b), c: hex(c) })}`;
      // Whatever the path, Redis holds the core's bytes over the moved state and the decisions are the core's.
      assert.equal(held, hex(core.bytes ?? new Uint8Array()) || null, what);
      assert.deepEqual(
        decisions.map((d) => [d.allowed, d.remaining, d.resetAt, d.retryAfter]),
        core.decisions.map((d) => [d.allowed, d.remaining, d.resetAt, d.retryAfter]),
        what,
      );
      assert.equal(store._guarded.mismatches, 0, what);
      if (inside) {
        tally.inside++;
        tally[algorithm] = (tally[algorithm] ?? 0) + 1;
        // Below the knee: an idle meter's batch over a meter moved less far (shift 0).
        if (algorithm === "gcra" && delta < g.knee) tally.belowKnee = (tally.belowKnee ?? 0) + 1;
        // Moved by 0, the bytes are the expected ones: a plain swap.
        assert.equal(store._guarded.writes, guardedBefore + (delta === 0 ? 0 : 1), `written under the guard: ${what}`);
        const s = Math.max(delta, g.knee) - Math.max(0, g.knee);
        assert.equal(held, hex(shifted(after, g.fields, s)), `the shifted bytes: ${what}`);
        // Never shorter than the bytes' own expiry (from the last hit's time).
        const needed = Math.ceil(core.expiresAt - hits.at(-1).now);
        assert.ok(pttl >= needed - elapsed - 2, `TTL ${pttl} ms, the state needs ${needed} ms: ${what}`);
      } else {
        tally.outside++;
        assert.equal(store._guarded.writes, guardedBefore, `outside the range, no guarded write: ${what}`);
      }
    }
    console.log(`# ${kind}: ${JSON.stringify(tally)}`);
    assert.ok(tally.inside >= CASES / 4 && tally.outside >= CASES / 10, JSON.stringify(tally));
    assert.ok(tally.near63 >= 1 && tally.carried >= 1, JSON.stringify(tally));
    assert.ok(tally.gcra >= 1 && tally["fixed-window"] >= 1 && tally["sliding-window"] >= 1, JSON.stringify(tally));
    assert.ok(tally.belowKnee >= 1, JSON.stringify(tally));
  });
}

// Through the shared batch script and, with `batchKeys: false` (as on a cluster), the
// compare-and-swap script of its own.
for (const batchKeys of [true, false]) {
  test(`two writers on one key: the one with stale bytes lands under its guard, decisions as in memory (batchKeys: ${batchKeys})`, async (t) => {
    const { client, close } = await connect("ioredis", server.port);
    t.after(close);
    const config = { algorithm: "gcra", limit: 10, window: "1h" };
    const memory = new RateLimiter(config);
    const prefix = `two:${batchKeys}:`;
    const stores = [new RedisStore(client, { prefix, batchKeys }), new RedisStore(client, { prefix, batchKeys })];
    const [a, b] = stores.map((store) => new RateLimiter({ ...config, store }));
    const T = 1_800_000_000_000;
    // a, then b (which reads what a wrote), then a again over its own stale bytes: guarded.
    const order = [
      [a, T],
      [b, T + 1],
      [a, T + 2],
      [a, T + 2],
      [b, T + 3],
      [a, T + 3],
    ];
    for (const [limiter, now] of order) {
      const d = await limiter.limit("k", { now });
      const m = memory.limit("k", { now });
      assert.deepEqual([d.allowed, d.remaining, d.resetAt], [m.allowed, m.remaining, m.resetAt]);
    }
    assert.deepEqual(await a.export("k"), memory.export("k"));
    assert.equal(stores[0]._guarded.writes, 2, "a's second and last hits landed over b's writes");
    assert.equal(stores[1]._guarded.writes, 1, "b's last hit landed over a's");
    assert.equal(stores[0]._guarded.mismatches + stores[1]._guarded.mismatches, 0);
  });
}
