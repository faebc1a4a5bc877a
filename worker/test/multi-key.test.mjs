// Several keys decided all or nothing through the Worker (`"keys": [...]`), each key in its
// own Durable Object (multi_key.rs, object/lock.rs): many concurrent clients on overlapping
// keys, through two isolates, with one-key hits on the same keys interleaved. Every figure is
// read back from the objects afterwards: no key counts a hit the others did not, none is
// above its limit, and a denial always had a key at its limit. The test clock is fixed
// (TEST_MODE), so no window turns and no token refills while the test runs.
import { test, before, after } from "node:test";
import assert from "node:assert/strict";
import { start, post, freshKey, POLICIES } from "./harness.mjs";

const LIMIT = 20;
const NOW = 1_800_000_000_000;
let s;

before(async () => {
  s = await start({
    isolates: 2,
    bindings: {
      POLICIES: {
        ...POLICIES,
        // A long timeout: on a loaded machine a hit waiting behind others' leases must not be
        // taken for a failed object (it would fail open and the counts could not be exact).
        pair: { limits: [{ name: "per-hour", algorithm: "fixed-window", limit: LIMIT, window: "1h" }], timeoutMs: 10_000 },
        // Waits at most 1.5 s in the object, less than a lease (2 s): a hit behind a dead
        // isolate's lease is answered busy and asked again until the lease is broken.
        quick: { limits: [{ name: "per-hour", algorithm: "fixed-window", limit: LIMIT, window: "1h" }], timeoutMs: 3_000 },
        pairs: {
          limits: [
            { name: "burst", algorithm: "gcra", limit: 5, window: "1s", burst: 5 },
            { name: "per-hour", algorithm: "sliding-window", limit: 30, window: "1h" },
          ],
          timeoutMs: 10_000,
        },
      },
    },
  });
});
after(async () => {
  await s?.stop();
});

const hit = (w, body) => post(s.url, "/v1/limit", { now: NOW, ...body }, { host: `w${w}.test` });
const peek = (policy, key) => post(s.url, "/v1/peek", { policy, key, now: NOW }, { host: "w0.test" });

test("4 users x 2 orgs from 12 concurrent clients through 2 isolates: all or nothing, orgs at their limit exactly", async () => {
  const p = freshKey("mk");
  const users = [1, 2, 3, 4].map((i) => `${p}:u${i}`);
  const orgs = [`${p}:o1`, `${p}:o2`];
  // Each user: 20 two-key hits alternating the orgs (40 per org, for 20 and 12 left), and 4
  // one-key hits of its own. The users' one-key demand is too small to exhaust them all, so
  // each org must end at its limit exactly (an org below it would have admitted more).
  const work = users.map((u, ui) => {
    const hits = [];
    for (let j = 0; j < 20; j++) hits.push([u, orgs[(ui + j) % 2]]);
    for (let j = 0; j < 4; j++) hits.splice(j * 5 + 2, 0, [u]);
    return hits;
  });
  // o2 has used 8 before the clients start: orgs of different limits left (20 and 12).
  const before = new Map([[orgs[1], 8]]);
  for (let i = 0; i < 8; i++) assert.equal((await hit(0, { policy: "pair", key: orgs[1] })).body.allowed, true);
  const admitted = new Map([...users, ...orgs].map((k) => [k, 0]));
  const denied = [];
  let other = 0;
  // Three clients per user share its list, so the same keys are always in flight together.
  const client = async (ui, c) => {
    const hits = work[ui];
    for (let n = c; n < hits.length; n += 3) {
      const keys = hits[n];
      const body = keys.length === 1 ? { policy: "pair", key: keys[0] } : { policy: "pair", keys };
      const r = await hit((ui + n) % 2, body);
      if (r.status !== 200 || typeof r.body?.allowed !== "boolean" || r.body.degraded !== undefined) {
        other += 1;
        continue;
      }
      if (r.body.allowed) for (const k of keys) admitted.set(k, admitted.get(k) + 1);
      else denied.push(keys);
      if (keys.length > 1) {
        assert.equal(r.body.limits.length, 2);
        assert.deepEqual(r.body.limits.map((l) => l.key), keys);
      }
    }
  };
  await Promise.all(users.flatMap((_, ui) => [0, 1, 2].map((c) => client(ui, c))));
  assert.equal(other, 0, "every request decided exactly");
  const used = new Map();
  for (const k of [...users, ...orgs]) {
    // A peek answers what one more hit would leave: one less than what is left now, and a
    // denial when nothing is.
    const r = await peek("pair", k);
    used.set(k, r.body.allowed ? LIMIT - r.body.remaining - 1 : LIMIT);
  }
  for (const [k, n] of admitted) {
    const total = n + (before.get(k) ?? 0);
    assert.equal(used.get(k), total, `${k}: the object counted exactly the hits admitted with it`);
    assert.ok(total <= LIMIT, `${k} counted ${total} > ${LIMIT}`);
  }
  assert.deepEqual(orgs.map((o) => admitted.get(o)), [LIMIT, LIMIT - 8], "each org admitted what it had left, exactly");
  for (const keys of denied) {
    assert.ok(keys.some((k) => used.get(k) === LIMIT), `${keys} was denied while every key had room`);
  }
  assert.ok(denied.length > 0, "demand exceeded the limits");
});

test("a two-key decision is the npm decision for several keys: blockedBy, limits with keys, nothing charged on a denial", async () => {
  const a = freshKey("a");
  const b = freshKey("b");
  for (let i = 0; i < 5; i++) assert.equal((await hit(0, { policy: "pairs", key: b })).body.allowed, true);
  const denied = await hit(1, { policy: "pairs", keys: [a, b] });
  assert.equal(denied.status, 200);
  assert.equal(denied.body.allowed, false);
  assert.equal(denied.body.blockedBy, "burst");
  assert.equal(denied.body.estimate, false);
  assert.ok(denied.body.retryAfter > 0);
  assert.deepEqual(
    denied.body.limits.map((l) => [l.key, l.name, l.allowed]),
    [[a, "burst", true], [a, "per-hour", true], [b, "burst", false], [b, "per-hour", true]],
  );
  // a was not charged: it peeks like a key never seen.
  const fresh = (await peek("pairs", freshKey("fresh"))).body.remaining;
  const pa = await peek("pairs", a);
  assert.equal(pa.body.remaining, fresh);
  assert.equal(pa.body.limits, undefined, "one key answers as before, without the pairs");
  // Peek and refund take keys too.
  const pk = await post(s.url, "/v1/peek", { policy: "pairs", keys: [a, b], now: NOW });
  assert.equal(pk.body.allowed, false);
  const rf = await post(s.url, "/v1/refund", { policy: "pairs", keys: [a, b], now: NOW, cost: 1 });
  assert.equal(rf.status, 200);
  assert.equal(rf.body.refunded, 1);
  assert.equal(rf.body.allowed, true, "b has one unit back");
  const ok = await hit(0, { policy: "pairs", keys: [b, a] });
  assert.equal(ok.body.allowed, true);
  assert.equal((await peek("pairs", a)).body.remaining, fresh - 1);
  assert.equal((await peek("pairs", b)).body.remaining, 0);
});

test("keys: the same mistakes get the same codes and fields as npm's key lists", async () => {
  const bad = [
    [{ policy: "pair", key: "a", keys: ["a", "b"] }, "conflicting_fields", "keys"],
    [{ policy: "pair", keys: ["a", "a"] }, "invalid_value", "keys[1]"],
    [{ policy: "pair", keys: [] }, "invalid_value", "keys"],
    [{ policy: "pair", keys: ["a", ""] }, "missing_key", "keys[1]"],
    [{ policy: "pair", keys: ["a", 7] }, "invalid_type", "keys[1]"],
    [{ policy: "pair", keys: ["a", "k".repeat(257)] }, "key_too_long", "keys[1]"],
    [{ policy: "pair", keys: Array.from({ length: 17 }, (_, i) => `k${i}`) }, "invalid_value", "keys"],
  ];
  for (const [body, code, field] of bad) {
    const r = await post(s.url, "/v1/limit", body, { host: "w0.test" });
    assert.equal(r.status, 400, JSON.stringify(body));
    assert.deepEqual([r.body.error.code, r.body.error.field], [code, field], JSON.stringify(body));
  }
  // Sixteen keys are fine, and one key in `keys` answers as `key` does.
  const many = Array.from({ length: 16 }, () => freshKey("m"));
  assert.equal((await hit(0, { policy: "pair", keys: many })).body.limits.length, 16);
  const one = await hit(0, { policy: "pair", keys: [freshKey("one")] });
  assert.equal(one.body.allowed, true);
  assert.equal(one.body.limits, undefined);
});

test("an isolate that dies holding a key's lease blocks it for one lease at most, and its late commit is refused", async () => {
  const k = freshKey("dead");
  for (let i = 0; i < 3; i++) assert.equal((await hit(0, { policy: "quick", key: k })).body.allowed, true);
  const lease = `/v1/test/lease/quick/${encodeURIComponent(k)}`;
  // A lease taken by an "isolate" that never commits nor releases.
  const lock = await post(s.url, lease, { lockOp: "lock" }, { host: "w0.test" });
  assert.equal(lock.status, 200, lock.text);
  // Hits on the key wait (busy, asked again: contention, not a failure) until the lease has
  // expired and is broken, then are decided exactly: one key, and with another key.
  const [one, two] = await Promise.all([
    hit(1, { policy: "quick", key: k }),
    hit(0, { policy: "quick", keys: [freshKey("other"), k] }),
  ]);
  for (const r of [one, two]) {
    assert.equal(r.status, 200, r.text);
    assert.equal(r.body.allowed, true, r.text);
    assert.equal(r.body.degraded, undefined, r.text);
  }
  // The dead isolate's commit (a fresh state) arrives after its lease was broken: refused.
  const late = await post(s.url, lease, { lockOp: "commit", token: lock.body.token }, { host: "w0.test" });
  assert.equal(late.status, 409, late.text);
  assert.equal(late.body.error.code, "lease_lost");
  const p = await peek("quick", k);
  assert.equal(LIMIT - p.body.remaining - 1, 5, "the three hits and the two after the lease, nothing lost");
});
