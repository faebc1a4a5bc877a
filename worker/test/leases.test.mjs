// Capacity leases against the Worker in workerd (Miniflare): several uncoordinated
// clients grab, renew and release partitions of one pool through two isolates; at every
// observed point the granted rates add up to at most the pool's capacity, no partition is
// ever held by two holders at once, expired leases come back, a crashed holder's partitions
// go to another holder after the TTL, and the pool survives a restart.
//
// Random choices come from a seeded generator: the seed is in every failure message, and
// LEASE_SEED=<n> replays a run.
import { test, before, after } from "node:test";
import assert from "node:assert/strict";
import fs from "node:fs";
import { start, post, get, del, tempDir, sleep } from "./harness.mjs";

const POOL = { partitions: 20, rate: "25/s", maxTtl: "1m" }; // 500/s as 20 x 25/s
const NAMES = ["basics", "errors", "chaos", "live", "reclaim", "crash", "alarm", "pacer"];
const POOLS = Object.fromEntries(NAMES.map((n) => [n, POOL]));
const CAPACITY = 500;
const PART_RATE = 25;
const T0 = 1_800_000_000_000; // test clock (ms), TEST_MODE is on

const SEED = Number(process.env.LEASE_SEED ?? Date.now() % 1_000_000);
function rng(seed) {
  // mulberry32
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

let s;
before(async () => {
  s = await start({ isolates: 2, bindings: { POOLS } });
});
after(async () => {
  await s?.stop();
});

// Each call goes through isolate `w` (0 or 1); both reach the pool's one Durable Object.
const via = (w) => ({ host: `w${w}.test` });
const grant = (pool, body, w = 0) => post(s.url, `/v1/pools/${pool}/leases`, body, via(w));
const renew = (pool, holder, body, w = 0) => post(s.url, `/v1/pools/${pool}/leases/${encodeURIComponent(holder)}/renew`, body, via(w));
const release = (pool, holder, now, w = 0) =>
  del(s.url, `/v1/pools/${pool}/leases/${encodeURIComponent(holder)}${now === undefined ? "" : `?now=${now}`}`, via(w));
const status = (pool, now, w = 0) => get(s.url, `/v1/pools/${pool}${now === undefined ? "" : `?now=${now}`}`, { headers: via(w) });
const inspect = (pool) => get(s.url, `/v1/test/pools/${pool}`, { headers: via(0) });

function assertErr(r, status, code) {
  assert.equal(r.status, status, r.text);
  assert.equal(r.headers.get("content-type"), "application/json");
  assert.equal(r.body.error.code, code, r.text);
  assert.ok(r.body.error.message.length > 0);
}

/** A grant or renewal answer is consistent in itself. */
function checkGrant(r, { want, ttlMs } = {}) {
  assert.equal(r.status, 200, r.text);
  const b = r.body;
  assert.equal(b.rate, b.partitions.length * PART_RATE, r.text);
  assert.equal(b.capacity, CAPACITY);
  assert.equal(b.window, 1000);
  assert.ok(b.rate <= CAPACITY, r.text);
  assert.equal(new Set(b.partitions).size, b.partitions.length, r.text);
  assert.ok(b.partitions.every((p) => Number.isInteger(p) && p >= 0 && p < 20), r.text);
  if (want !== undefined) assert.ok(b.partitions.length <= want, r.text);
  if (ttlMs !== undefined && b.partitions.length > 0) assert.equal(b.expiresAt, b.now + ttlMs, r.text);
  assert.equal(b.ttlMs, b.expiresAt - b.now);
  return b;
}

/** A status snapshot: rates add up to at most the capacity, partitions are exclusive. */
function checkStatus(r, why = "") {
  assert.equal(r.status, 200, r.text);
  const b = r.body;
  const seen = new Set();
  let sum = 0;
  for (const l of b.leases) {
    assert.equal(l.rate, l.partitions.length * PART_RATE, why + r.text);
    assert.ok(l.expiresAt > b.now, why + r.text);
    for (const p of l.partitions) {
      assert.ok(!seen.has(p), `${why}partition ${p} leased twice: ${r.text}`);
      seen.add(p);
    }
    sum += l.rate;
  }
  assert.equal(b.leased, sum, why + r.text);
  assert.ok(sum <= CAPACITY, `${why}leased ${sum} > capacity ${CAPACITY}: ${r.text}`);
  assert.equal(b.free + seen.size, b.partitions, why + r.text);
  return b;
}

/**
 * What every holder held, as seen from its own answers: a segment per answer, from the
 * answer's `now` (the pool's clock when it acted) to its `expiresAt`, cut short at the
 * `now` of the holder's next answer. Each holder's requests are sequential, so its segments
 * follow each other. `check()` then asserts that no partition is in two holders' segments
 * at once and that at every segment's start the rates of the segments covering it add up to
 * at most the capacity.
 */
class Ledger {
  constructor() {
    this.segments = [];
    this.open = new Map();
    this.answers = 0;
    this.maxSum = 0;
  }
  /** An answer to `holder` at pool time `now` holding `partitions` until `expiresAt`. */
  record(holder, { now, partitions = [], expiresAt = now }) {
    this.answers += 1;
    const prev = this.open.get(holder);
    if (prev) prev.end = Math.min(prev.end, now);
    const seg = { holder, partitions: new Set(partitions), rate: partitions.length * PART_RATE, start: now, end: expiresAt };
    if (seg.partitions.size > 0 && seg.end > seg.start) this.segments.push(seg);
    this.open.set(holder, seg);
  }
  check(why) {
    const segs = this.segments.filter((g) => g.end > g.start);
    for (let i = 0; i < segs.length; i++) {
      for (let j = i + 1; j < segs.length; j++) {
        const a = segs[i];
        const b = segs[j];
        if (a.holder === b.holder || Math.max(a.start, b.start) >= Math.min(a.end, b.end)) continue;
        for (const p of a.partitions) {
          assert.ok(!b.partitions.has(p), `${why}: partition ${p} held by ${a.holder} [${a.start},${a.end}) and ${b.holder} [${b.start},${b.end})`);
        }
      }
    }
    for (const at of segs) {
      const sum = segs.filter((g) => g.start <= at.start && at.start < g.end).reduce((n, g) => n + g.rate, 0);
      this.maxSum = Math.max(this.maxSum, sum);
      assert.ok(sum <= CAPACITY, `${why}: granted rates add up to ${sum} > ${CAPACITY} at ${at.start}`);
    }
    return segs.length;
  }
}

test("grant gives up to N, keeps and renews what the holder has, returns extras; renew; release; status", async () => {
  const P = "basics";
  const a = checkGrant(await grant(P, { holder: "a", partitions: 12, ttlMs: 15000, now: T0 }), { want: 12, ttlMs: 15000 });
  assert.deepEqual(a.partitions, [0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11]);
  assert.deepEqual([a.pool, a.holder, a.rate, a.ratePerSecond, a.expiresAt, a.free, a.now], [P, "a", 300, 300, T0 + 15000, 8, T0]);
  assert.deepEqual(Object.keys(a).sort(), ["capacity", "expiresAt", "free", "holder", "now", "partitions", "pool", "rate", "ratePerSecond", "ttlMs", "window"]);
  // b asks for 12 and gets the 8 left: fewer than asked is not an error, it is all there is.
  const b = checkGrant(await grant(P, { holder: "b", partitions: 12, ttlMs: 15000, now: T0 }, 1));
  assert.deepEqual([b.partitions.length, b.rate, b.free], [8, 200, 0]);
  // c gets nothing (200, rate 0) while the pool is full.
  const c = checkGrant(await grant(P, { holder: "c", partitions: 1, ttlMs: 15000, now: T0 + 1 }));
  assert.deepEqual([c.partitions, c.rate, c.expiresAt], [[], 0, T0 + 1]);
  // a asks again for 12, but b (12) and c (1) want partitions too: a keeps its fair share
  // (max-min over the wants 12, 12, 1 of 20: 10, 9 and 1, the odd one to a, who asked
  // first), renewed, and gives 2 back.
  const a2 = checkGrant(await grant(P, { holder: "a", partitions: 12, ttlMs: 15000, now: T0 + 5000 }));
  assert.deepEqual([a2.partitions, a2.expiresAt, a2.free], [a.partitions.slice(0, 10), T0 + 20000, 2]);
  // a asks for 4: keeps 4 of its own, returns 8 extras, which c can then take.
  const a3 = checkGrant(await grant(P, { holder: "a", partitions: 4, ttlMs: 15000, now: T0 + 6000 }));
  assert.equal(a3.partitions.length, 4);
  assert.ok(a3.partitions.every((p) => a.partitions.includes(p)));
  assert.equal(a3.free, 8);
  // c wants all 20 now: its share (of the wants 4, 12, 20) is 8, which is what is free.
  const c2 = checkGrant(await grant(P, { holder: "c", partitions: 20, ttlMs: 15000, now: T0 + 6000 }, 1));
  assert.equal(c2.partitions.length, 8);
  // Renew extends what is held.
  const b2 = checkGrant(await renew(P, "b", { ttlMs: 30000, now: T0 + 7000 }), { ttlMs: 30000 });
  assert.deepEqual([b2.partitions, b2.expiresAt], [b.partitions, T0 + 37000]);
  // Status: every lease by holder.
  const st = checkStatus(await status(P, T0 + 7000));
  assert.deepEqual(
    st.leases.map((l) => [l.holder, l.partitions.length, l.expiresAt, l.rate]).sort(),
    [["a", 4, T0 + 21000, 100], ["b", 8, T0 + 37000, 200], ["c", 8, T0 + 21000, 200]],
  );
  assert.deepEqual([st.pool, st.partitions, st.free, st.capacity, st.partitionRate, st.window, st.leased, st.now], [P, 20, 0, 500, 25, 1000, 500, T0 + 7000]);
  // And every live demand (counted for half its TTL) with its fair share, in asking order:
  // wants of 4, 12 and 20 share 20 partitions as 4, 8 and 8.
  assert.deepEqual(st.demands, [
    { holder: "a", want: 4, share: 4, until: T0 + 6000 + 7500 },
    { holder: "b", want: 12, share: 8, until: T0 + 7000 + 15000 },
    { holder: "c", want: 20, share: 8, until: T0 + 6000 + 7500 },
  ]);
  // Release gives everything back; releasing or renewing again is lease_not_held.
  const rel = await release(P, "c", T0 + 8000, 1);
  assert.equal(rel.status, 200, rel.text);
  assert.deepEqual(rel.body, { pool: P, holder: "c", released: 8, free: 8, now: T0 + 8000 });
  assertErr(await release(P, "c", T0 + 8000), 404, "lease_not_held");
  assertErr(await renew(P, "c", { ttlMs: 1000, now: T0 + 8000 }), 404, "lease_not_held");
  assertErr(await renew(P, "nobody", { ttlMs: 1000, now: T0 + 8000 }), 404, "lease_not_held");
  // Holder names are any UTF-8 up to 128 bytes; in paths they are percent-encoded.
  const odd = "tenant/é w:1/" + "x".repeat(128 - Buffer.byteLength("tenant/é w:1/"));
  checkGrant(await grant(P, { holder: odd, partitions: 2, ttlMs: 1000, now: T0 + 8000 }));
  checkGrant(await renew(P, odd, { ttlMs: 2000, now: T0 + 8000 }));
  assert.equal((await release(P, odd, T0 + 8000)).body.released, 2);
  // The configured pools are listed, normalised.
  const list = await get(s.url, "/v1/pools");
  assert.deepEqual(list.body.pools[P], {
    partitions: 20, partitionRate: 25, window: 1000, capacity: 500, ratePerSecond: 500, maxTtlMs: 60000, maxHolderBytes: 128, timeoutMs: 1000,
  });
});

test("every bad lease request is a JSON error with its code and changes nothing", async () => {
  const P = "errors";
  checkGrant(await grant(P, { holder: "keep", partitions: 3, ttlMs: 15000, now: T0 }));
  const cases = [
    ["nope", 400, "invalid_json"],
    ["[1]", 400, "invalid_body"],
    [{ holder: "h", partitions: 1, ttlMs: 10, extra: 1 }, 400, "unknown_field"],
    [{ partitions: 1, ttlMs: 10 }, 400, "invalid_holder"],
    [{ holder: "", partitions: 1, ttlMs: 10 }, 400, "invalid_holder"],
    [{ holder: 5, partitions: 1, ttlMs: 10 }, 400, "invalid_holder"],
    [{ holder: "h".repeat(129), partitions: 1, ttlMs: 10 }, 400, "invalid_holder"],
    [{ holder: "h", ttlMs: 10 }, 400, "invalid_partitions"],
    [{ holder: "h", partitions: 0, ttlMs: 10 }, 400, "invalid_partitions"],
    [{ holder: "h", partitions: 21, ttlMs: 10 }, 400, "invalid_partitions"],
    [{ holder: "h", partitions: 2.5, ttlMs: 10 }, 400, "invalid_partitions"],
    [{ holder: "h", partitions: 1 }, 400, "invalid_ttl"],
    [{ holder: "h", partitions: 1, ttlMs: 0 }, 400, "invalid_ttl"],
    [{ holder: "h", partitions: 1, ttlMs: 60001 }, 400, "invalid_ttl"],
    [{ holder: "h", partitions: 1, ttlMs: -5 }, 400, "invalid_ttl"],
    [{ holder: "h", partitions: 1, ttlMs: 10, now: "soon" }, 400, "invalid_now"],
    [JSON.stringify({ holder: "h", partitions: 1, ttlMs: 10, pad: "x".repeat(9000) }), 413, "body_too_large"],
  ];
  for (const [body, code, name] of cases) assertErr(await grant(P, body), code, name);
  assertErr(await renew(P, "keep", { ttlMs: 0 }), 400, "invalid_ttl");
  assertErr(await renew(P, "keep", {}), 400, "invalid_ttl");
  assertErr(await renew(P, "keep", { ttlMs: 10, holder: "x" }), 400, "unknown_field");
  assertErr(await renew(P, "h".repeat(129), { ttlMs: 10 }), 400, "invalid_holder");
  assertErr(await status(P, "yesterday"), 400, "invalid_now");
  assertErr(await grant("nope", { holder: "h", partitions: 1, ttlMs: 10 }), 404, "unknown_pool");
  assertErr(await status("nope"), 404, "unknown_pool");
  assertErr(await release("nope", "h"), 404, "unknown_pool");
  assertErr(await get(s.url, `/v1/pools/${P}/leases`), 405, "method_not_allowed");
  assert.equal((await get(s.url, `/v1/pools/${P}/leases`)).headers.get("allow"), "POST");
  assertErr(await post(s.url, `/v1/pools/${P}`, {}), 405, "method_not_allowed");
  assertErr(await get(s.url, `/v1/pools/${P}/leases/keep`), 405, "method_not_allowed");
  assertErr(await del(s.url, `/v1/pools/${P}/leases/keep/renew`), 405, "method_not_allowed");
  assertErr(await get(s.url, `/v1/pools/${P}/other`), 404, "not_found");
  assertErr(await del(s.url, `/v1/pools/${P}/leases/%zz`), 400, "invalid_path");
  assertErr(await post(s.url, "/v1/pools", {}), 405, "method_not_allowed");
  // Nothing changed: keep still holds its 3, the rest is free.
  const st = checkStatus(await status(P, T0 + 1));
  assert.deepEqual(st.leases.map((l) => [l.holder, l.partitions.length]), [["keep", 3]]);
  assert.equal(st.free, 17);
});

test("8 uncoordinated clients on the test clock: granted rates never exceed the capacity", async () => {
  const P = "chaos";
  const rand = rng(SEED);
  const pick = (n) => Math.floor(rand() * n);
  const why = `seed ${SEED}`;
  const ledger = new Ledger();
  const clients = Array.from({ length: 8 }, (_, i) => ({ holder: `c${i}`, crashed: false, held: [], expiresAt: 0 }));
  let t = T0;
  let statuses = 0;
  let maxLeased = 0;
  let lastT = t;
  // Rounds share one test clock value (so an answer's `now` is the time it was applied at);
  // within a round every client's request and a status poll are in flight together, sent
  // after random delays through either isolate, so the pool sees them in any order.
  for (let round = 0; round < 40; round++) {
    t += [0, 100, 1000, 4000, 9000][pick(5)];
    lastT = t;
    const jobs = clients.map(async (c) => {
      await sleep(pick(4));
      if (c.crashed) return; // a crashed holder never calls again
      const w = pick(2);
      const dice = rand();
      if (dice < 0.01) {
        c.crashed = true; // stops renewing: its partitions must come back after its TTL
      } else if (dice < 0.45) {
        const want = 1 + pick(10);
        const ttlMs = 1000 + pick(15000);
        const b = checkGrant(await grant(P, { holder: c.holder, partitions: want, ttlMs, now: t }, w), { want, ttlMs });
        // It never trades partitions: it keeps all it still holds and maybe takes more, or
        // (asking for fewer, or above its fair share) keeps only some of its own.
        if (c.expiresAt > t) {
          const kept = b.partitions.length >= c.held.length ? c.held.every((p) => b.partitions.includes(p)) : b.partitions.every((p) => c.held.includes(p));
          assert.ok(kept, `${why}: ${c.holder} traded ${c.held} for ${JSON.stringify(b)}`);
        }
        ledger.record(c.holder, b);
        [c.held, c.expiresAt] = [b.partitions, b.expiresAt];
      } else if (dice < 0.75) {
        const ttlMs = 1000 + pick(15000);
        const r = await renew(P, c.holder, { ttlMs, now: t }, w);
        if (c.expiresAt > t && c.held.length > 0) {
          const b = checkGrant(r, { ttlMs });
          // A renewal keeps what is held, or (above the fair share) some of it, never more.
          assert.ok(b.partitions.every((p) => c.held.includes(p)), `${why}: renew gave ${c.holder} new partitions`);
          ledger.record(c.holder, b);
          [c.held, c.expiresAt] = [b.partitions, b.expiresAt];
        } else {
          assertErr(r, 404, "lease_not_held");
          [c.held, c.expiresAt] = [[], 0];
        }
      } else if (dice < 0.87) {
        const r = await release(P, c.holder, t, w);
        if (c.expiresAt > t && c.held.length > 0) {
          assert.equal(r.status, 200, r.text);
          assert.equal(r.body.released, c.held.length);
          ledger.record(c.holder, { now: r.body.now });
        } else {
          assertErr(r, 404, "lease_not_held");
        }
        [c.held, c.expiresAt] = [[], 0];
      }
    });
    const poll = (async () => {
      await sleep(pick(4));
      const st = checkStatus(await status(P, t, pick(2)), `${why}: `);
      statuses += 1;
      maxLeased = Math.max(maxLeased, st.leased);
    })();
    await Promise.all([...jobs, poll]);
  }
  const segments = ledger.check(why);
  assert.ok(segments > 40, `${why}: only ${segments} lease segments observed`);
  assert.ok(maxLeased > CAPACITY / 2, `${why}: the pool was never busy (max leased ${maxLeased})`);
  // Past every TTL, every partition is back, crashed holders' included.
  const end = checkStatus(await status(P, lastT + 60_000));
  assert.deepEqual([end.free, end.leases], [20, []]);
  console.log(
    `# chaos (seed ${SEED}): ${ledger.answers} lease answers, ${statuses} status snapshots, ${segments} segments; ` +
      `max leased ${maxLeased}/${CAPACITY} in status, ${ledger.maxSum}/${CAPACITY} from grants; ` +
      `${clients.filter((c) => c.crashed).length} holders crashed`,
  );
});

test("6 free-running clients on the Durable Object's own clock: the same invariants", async () => {
  // No test clock here: the pool's clock decides, leases last 150-600 ms, and clients grab,
  // renew, release and crash at their own pace for about two seconds.
  const P = "live";
  const rand = rng(SEED + 1);
  const pick = (n) => Math.floor(rand() * n);
  const why = `seed ${SEED + 1}`;
  const ledger = new Ledger();
  const stopAt = Date.now() + 2000;
  let statuses = 0;
  const client = async (i) => {
    const holder = `live${i}`;
    let held = 0;
    while (Date.now() < stopAt) {
      await sleep(pick(120));
      const w = pick(2);
      const dice = rand();
      if (dice < 0.015) return; // crash: stop calling, holding what it holds
      if (dice < 0.5 || held === 0) {
        const want = 1 + pick(8);
        const ttlMs = 150 + pick(450);
        const b = checkGrant(await grant(P, { holder, partitions: want, ttlMs }, w), { want, ttlMs });
        ledger.record(holder, b);
        held = b.partitions.length;
      } else if (dice < 0.85) {
        const r = await renew(P, holder, { ttlMs: 150 + pick(450) }, w);
        if (r.status === 200) ledger.record(holder, checkGrant(r));
        else {
          assertErr(r, 404, "lease_not_held"); // it lapsed before the renewal arrived
          held = 0;
        }
      } else {
        const r = await release(P, holder, undefined, w);
        if (r.status === 200) ledger.record(holder, { now: r.body.now });
        else assertErr(r, 404, "lease_not_held");
        held = 0;
      }
    }
  };
  const poller = async () => {
    while (Date.now() < stopAt) {
      checkStatus(await status(P, undefined, pick(2)), `${why}: `);
      statuses += 1;
      await sleep(25);
    }
  };
  await Promise.all([...Array.from({ length: 6 }, (_, i) => client(i)), poller()]);
  const segments = ledger.check(why);
  assert.ok(segments > 20, `${why}: only ${segments} segments`);
  console.log(`# live (seed ${SEED + 1}): ${ledger.answers} lease answers, ${statuses} status snapshots, ${segments} segments, max ${ledger.maxSum}/${CAPACITY} from grants`);
});

test("expired leases are reclaimed: past the TTL the partitions are free again", async () => {
  const P = "reclaim";
  checkGrant(await grant(P, { holder: "a", partitions: 15, ttlMs: 10000, now: T0 }));
  checkGrant(await grant(P, { holder: "b", partitions: 5, ttlMs: 20000, now: T0 }));
  assert.equal(checkStatus(await status(P, T0 + 9999)).free, 0);
  // At exactly the expiry a lease is gone (it lasts until, not through, expiresAt).
  const st = checkStatus(await status(P, T0 + 10000));
  assert.deepEqual([st.free, st.leases.map((l) => l.holder)], [15, ["b"]]);
  assertErr(await renew(P, "a", { ttlMs: 10000, now: T0 + 10000 }), 404, "lease_not_held");
  const c = checkGrant(await grant(P, { holder: "c", partitions: 20, ttlMs: 10000, now: T0 + 10001 }));
  assert.equal(c.partitions.length, 15);
  assert.equal(checkStatus(await status(P, T0 + 30000)).free, 20);
});

test("a crashed holder's partitions come back after its TTL and another holder gets them", async () => {
  const P = "crash";
  const ttlMs = 15000;
  // a and b share the pool; a crashes right after its grant at T0 + 1 s (never renews).
  checkGrant(await grant(P, { holder: "a", partitions: 12, ttlMs, now: T0 + 1000 }));
  let b = checkGrant(await grant(P, { holder: "b", partitions: 20, ttlMs, now: T0 + 1000 }, 1));
  assert.equal(b.rate, 200);
  // b keeps renewing every 5 s and asking for everything: it gets a's 12 only once a's
  // lease has lapsed.
  for (let t = T0 + 6000; t <= T0 + 21000; t += 5000) {
    b = checkGrant(await grant(P, { holder: "b", partitions: 20, ttlMs, now: t }, t % 2));
    assert.equal(b.rate, t < T0 + 16000 ? 200 : 500, `at T0+${t - T0}`);
  }
  const st = checkStatus(await status(P, T0 + 21000));
  assert.deepEqual(st.leases.map((l) => [l.holder, l.rate]), [["b", 500]]);
  assertErr(await renew(P, "a", { ttlMs, now: T0 + 21000 }), 404, "lease_not_held");
});

test("on the real clock the alarm reclaims a crashed holder's lease and deletes the storage", async () => {
  const P = "alarm";
  const g = checkGrant(await grant(P, { holder: "crashes", partitions: 20, ttlMs: 1000 }));
  assert.equal(g.rate, CAPACITY);
  let stored = await inspect(P);
  assert.equal(stored.body.rows, 1, stored.text);
  assert.ok(Math.abs(stored.body.alarm - g.expiresAt) <= 5, stored.text);
  assert.equal(checkGrant(await grant(P, { holder: "waits", partitions: 20, ttlMs: 1000 })).rate, 0);
  await sleep(Math.max(0, g.expiresAt - Date.now()) + 50);
  // Past its TTL another holder gets everything (requests expire lapsed leases themselves,
  // whether or not the alarm ran yet)...
  const w = checkGrant(await grant(P, { holder: "waits", partitions: 20, ttlMs: 200 }));
  assert.equal(w.rate, CAPACITY);
  // ...and once that lapses too, the alarm finds the pool empty and deletes its storage.
  // Polled: the alarm fires when the runtime runs it (on a loaded machine, seconds late).
  for (let i = 0; i < 200; i++) {
    await sleep(100);
    stored = await inspect(P);
    if (stored.body.rows === 0 && stored.body.alarm === null) break;
  }
  assert.deepEqual(stored.body, { rows: 0, alarm: null });
  const st = checkStatus(await status(P));
  assert.deepEqual([st.free, st.leases], [20, []]);
});

test("on a test clock the alarm never takes away a lease that the test's clock still sees", async () => {
  // The alarm cannot know a test's time: it expires at the last test instant and stops.
  const P = "alarm";
  checkGrant(await grant(P, { holder: "t", partitions: 5, ttlMs: 200, now: T0 }));
  assert.equal((await inspect(P)).body.rows, 1);
  let stored;
  // Polled: the alarm fires when the runtime runs it (on a loaded machine, seconds late).
  for (let i = 0; i < 200; i++) {
    await sleep(100); // the alarm (real deadline: now + 200 ms) fires meanwhile
    stored = await inspect(P);
    if (stored.body.alarm === null) break;
  }
  assert.deepEqual(stored.body, { rows: 1, alarm: null });
  const st = checkStatus(await status(P, T0 + 199));
  assert.deepEqual(st.leases.map((l) => [l.holder, l.partitions.length]), [["t", 5]]);
  assert.equal(checkGrant(await renew(P, "t", { ttlMs: 1000, now: T0 + 199 })).rate, 125);
  assert.equal((await release(P, "t", T0 + 300)).body.released, 5);
});

test("a holder's pacing follows its granted rate as leases come and go (simulated sends)", async () => {
  // The client side of the notes' example. The JS pacer package (pkg/) is not on this branch,
  // so the holder here only does the arithmetic a pacer is configured with: at its granted
  // rate it may start rate x grain / window units per 200 ms grain. It asks the pool every
  // 5 s (test clock) and re-paces from each answer; b arrives, a shares, b crashes.
  const P = "pacer";
  const ttlMs = 15000;
  const GRAIN = 200;
  const CRASH = 20000; // b crashes right after its grant at 20 s: it stops asking and sending
  let wantA = 20;
  let rateA = 0;
  let rateB = 0; // what b was granted (its lease outlives it by up to the TTL)
  const sent = new Map(); // second -> units started by a and b, and their highest rates
  const timeline = [];
  for (let ms = 0; ms < 40000; ms += GRAIN) {
    const now = T0 + ms;
    if (ms >= CRASH + ttlMs) rateB = 0; // b's last lease has lapsed
    if (ms % 5000 === 0) {
      if (ms === 10000) wantA = 12; // a decides to share: asks for 12, returns 8
      if (ms === 20000) wantA = 20; // and wants everything again
      rateA = checkGrant(await grant(P, { holder: "a", partitions: wantA, ttlMs, now })).rate;
      if (ms >= 5000 && ms <= CRASH) rateB = checkGrant(await grant(P, { holder: "b", partitions: 8, ttlMs, now }, 1)).rate;
      timeline.push([ms / 1000, rateA, ms >= CRASH ? `${rateB} (crashed)` : rateB]);
    }
    const sec = Math.floor(ms / 1000);
    const row = sent.get(sec) ?? { a: 0, b: 0, maxA: 0, maxB: 0 };
    row.a += Math.floor((rateA * GRAIN) / 1000);
    if (ms < CRASH) row.b += Math.floor((rateB * GRAIN) / 1000);
    row.maxA = Math.max(row.maxA, rateA);
    row.maxB = Math.max(row.maxB, rateB);
    sent.set(sec, row);
  }
  // a's rate: 500 alone, still 500 when b arrives (a holds everything, b gets 0), 300 after
  // sharing, 300 while b's lease runs after b crashed, 500 once b's partitions came back.
  assert.deepEqual(timeline, [
    [0, 500, 0],
    [5, 500, 0],
    [10, 300, 200],
    [15, 300, 200],
    [20, 300, "200 (crashed)"],
    [25, 300, "200 (crashed)"],
    [30, 300, "200 (crashed)"],
    [35, 500, "0 (crashed)"],
  ]);
  for (const [sec, row] of sent) {
    assert.ok(row.a <= row.maxA && row.b <= row.maxB, `second ${sec}: ${JSON.stringify(row)}`);
    assert.ok(row.a + row.b <= CAPACITY, `second ${sec}: a ${row.a} + b ${row.b} > ${CAPACITY}`);
  }
  assert.deepEqual([2, 7, 12, 22, 37].map((sec) => [sent.get(sec).a, sent.get(sec).b]), [
    [500, 0],
    [500, 0],
    [300, 200],
    [300, 0],
    [500, 0],
  ]);
});

test("a pool's leases survive a restart of the local runtime (Miniflare, same folder)", async () => {
  const dir = tempDir();
  const pools = { kept: POOL };
  let r = await start({ persist: dir, bindings: { POOLS: pools } });
  try {
    checkGrant(await post(r.url, "/v1/pools/kept/leases", { holder: "a", partitions: 12, ttlMs: 15000, now: T0 }));
    checkGrant(await post(r.url, "/v1/pools/kept/leases", { holder: "b", partitions: 8, ttlMs: 30000, now: T0 }));
  } finally {
    await r.stop();
  }
  r = await start({ persist: dir, bindings: { POOLS: pools } });
  try {
    const st = checkStatus(await get(r.url, `/v1/pools/kept?now=${T0 + 1000}`));
    assert.deepEqual(st.leases.map((l) => [l.holder, l.partitions.length, l.expiresAt]), [["a", 12, T0 + 15000], ["b", 8, T0 + 30000]]);
    // Still exclusive after the restart: c gets nothing until a's lease lapses.
    assert.equal(checkGrant(await post(r.url, "/v1/pools/kept/leases", { holder: "c", partitions: 20, ttlMs: 15000, now: T0 + 1000 })).rate, 0);
    // The demands survived too: a (12), b (8) and now c (20) share 20 partitions as 7, 7
    // and 6 (the odd ones to a and b, who asked first), so a's renewal keeps 7 of its 12.
    assert.equal(checkGrant(await post(r.url, "/v1/pools/kept/leases/a/renew", { ttlMs: 15000, now: T0 + 2000 })).rate, 175);
    const c = checkGrant(await post(r.url, "/v1/pools/kept/leases", { holder: "c", partitions: 20, ttlMs: 15000, now: T0 + 17000 }));
    assert.equal(c.rate, 300); // a's 7 came back at T0 + 17 s; b still holds 8; c takes the 12 free
  } finally {
    await r.stop();
    fs.rmSync(dir, { recursive: true, force: true });
  }
});

test("switches: the bearer token guards /v1/pools, now needs TEST_MODE, a bad pool is config_error", async () => {
  let r = await start({ bindings: { POOLS: { p: POOL }, TEST_MODE: undefined, API_TOKEN: "t0ken" } });
  try {
    const auth = { authorization: "Bearer t0ken" };
    assertErr(await post(r.url, "/v1/pools/p/leases", { holder: "a", partitions: 1, ttlMs: 1000 }), 401, "unauthorized");
    assertErr(await get(r.url, "/v1/pools/p"), 401, "unauthorized");
    assertErr(await post(r.url, "/v1/pools/p/leases", { holder: "a", partitions: 1, ttlMs: 1000, now: T0 }, auth), 400, "test_mode_disabled");
    assertErr(await get(r.url, `/v1/pools/p?now=${T0}`, { headers: auth }), 400, "test_mode_disabled");
    assertErr(await get(r.url, "/v1/test/pools/p", { headers: auth }), 404, "not_found");
    const g = checkGrant(await post(r.url, "/v1/pools/p/leases", { holder: "a", partitions: 2, ttlMs: 60000 }, auth));
    assert.ok(Math.abs(g.now - Date.now()) < 5000, "the pool's own clock decides");
    assert.deepEqual(checkStatus(await get(r.url, "/v1/pools/p", { headers: auth })).leases.map((l) => l.holder), ["a"]);
  } finally {
    await r.stop();
  }
  r = await start({ bindings: { POOLS: { p: { partitions: 2000, rate: "25/s" } } } });
  try {
    for (const res of [await get(r.url, "/healthz"), await get(r.url, "/v1/pools/p"), await post(r.url, "/v1/limit", { key: "k", policy: "login" })]) {
      assertErr(res, 500, "config_error");
      assert.match(res.body.error.message, /pool "p": partitions must be a whole number from 1 to 1024/);
    }
  } finally {
    await r.stop();
  }
});
