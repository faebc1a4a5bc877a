// `POST /v1/acquire`, `POST /v1/release` and `POST /v1/renew` (worker/src/handlers/concurrency_api.rs,
// docs/concurrency.md): a slot of a policy's concurrency limit held by a lease; all or
// nothing with a rate limit and over several keys; expiry frees a slot (the test clock); bad
// input is a 4xx with its code and field, changing nothing; 16 clients through two isolates
// holding work of random length on one key never have more than N in flight.
import { test, before, after } from "node:test";
import assert from "node:assert/strict";
import { start, post, del, freshKey, sleep, POLICIES } from "./harness.mjs";

const NOW = 1_800_000_000_000;
const TTL = 10_000;
let s;

before(async () => {
  s = await start({
    isolates: 2,
    bindings: {
      POLICIES: {
        ...POLICIES,
        // A long timeout: a request waiting behind others' leases must not be taken for a
        // failed object (it would fail open and hold no slot).
        gpu: { limits: [{ name: "in-flight", algorithm: "concurrency", limit: 2, leaseTtl: "10s" }], timeoutMs: 10_000 },
        mixed: {
          limits: [
            { name: "in-flight", algorithm: "concurrency", limit: 2, leaseTtl: "10s" },
            { name: "per-hour", algorithm: "fixed-window", limit: 3, window: "1h" },
          ],
          timeoutMs: 10_000,
        },
        pool: { limits: [{ name: "in-flight", algorithm: "concurrency", limit: 3, leaseTtl: "30s" }], timeoutMs: 20_000 },
        synced: { limits: [{ name: "per-minute", algorithm: "fixed-window", quota: "5/m" }], syncRate: 100 },
      },
    },
  });
});
after(async () => {
  await s?.stop();
});

const at = (body, w) => post(s.url, body.route, { now: NOW, ...body.json }, { host: `w${w}.test` });
const acquire = (json, w = 0) => at({ route: "/v1/acquire", json }, w);
const release = (json, w = 0) => at({ route: "/v1/release", json }, w);
const renew = (json, w = 0) => at({ route: "/v1/renew", json }, w);

function assertError(r, status, code, field) {
  assert.equal(r.status, status, r.text);
  assert.equal(r.body.error.code, code, r.text);
  assert.equal(r.body.error.field, field, r.text);
}

test("acquire takes a slot with a lease; a full key denies (200, allowed false, lease null) with the nearest expiry; release frees it, once", async () => {
  const key = freshKey("cc");
  const a = await acquire({ policy: "gpu", key });
  assert.equal(a.status, 200, a.text);
  assert.equal(a.body.allowed, true);
  assert.match(a.body.lease, /^[A-Za-z0-9_-]+$/, "base64url, no padding");
  assert.equal(a.body.expiresAt, NOW + TTL);
  assert.equal(a.body.limit, 2);
  assert.equal(a.body.remaining, 1);
  const b = await acquire({ policy: "gpu", key }, 1);
  assert.equal(b.body.allowed, true);
  assert.equal(b.body.remaining, 0);
  assert.notEqual(b.body.lease, a.body.lease);

  const denied = await acquire({ policy: "gpu", key });
  assert.equal(denied.status, 200, "a denial is an answer");
  assert.equal(denied.body.allowed, false);
  assert.equal(denied.body.lease, null);
  assert.equal(denied.body.expiresAt, null);
  assert.equal(denied.body.retryAfter, TTL, "the nearest lease's expiry");
  assert.equal((await post(s.url, "/v1/acquire?status=429", { policy: "gpu", key, now: NOW })).status, 429);

  const freed = await release({ lease: a.body.lease }, 1);
  assert.equal(freed.status, 200, freed.text);
  assert.equal(freed.body.released, true);
  assert.equal(freed.body.remaining, 1, "one slot free after the release");
  const replay = await release({ lease: a.body.lease });
  assert.equal(replay.status, 200);
  assert.equal(replay.body.released, false, "a replay frees nothing");
  const c = await acquire({ policy: "gpu", key });
  assert.equal(c.body.allowed, true, "the released slot is taken again");
  assert.equal((await acquire({ policy: "gpu", key })).body.allowed, false, "the replay freed no second slot");

  // `/v1/limit` on a concurrency policy acquires (a counted hit would hold a slot no one could release).
  const other = freshKey("cl");
  const limited = await post(s.url, "/v1/limit", { policy: "gpu", key: other, now: NOW });
  assert.equal(limited.body.allowed, true, limited.text);
  assert.equal(typeof limited.body.lease, "string");
  assert.equal((await release({ lease: limited.body.lease })).body.released, true);
});

test("expiry frees a slot; renew extends a live lease and refuses an expired one (409 unknown_lease)", async () => {
  const key = freshKey("cx");
  const a = (await acquire({ policy: "gpu", key })).body;
  const b = (await acquire({ policy: "gpu", key })).body;
  assert.equal((await acquire({ policy: "gpu", key, now: NOW + TTL - 1 })).body.allowed, false);

  const renewed = await renew({ lease: b.lease, now: NOW + 5_000 }, 1);
  assert.equal(renewed.status, 200, renewed.text);
  assert.equal(renewed.body.expiresAt, NOW + 5_000 + TTL);
  assert.equal(renewed.body.remaining, 0, "the key's figures: both slots held, counting nothing");

  // At NOW + TTL lease a has expired, b (renewed) has not: one slot is free.
  const c = await acquire({ policy: "gpu", key, now: NOW + TTL });
  assert.equal(c.body.allowed, true, c.text);
  assert.equal(c.body.remaining, 0);
  assertError(await renew({ lease: a.lease, now: NOW + TTL }), 409, "unknown_lease", "lease");
  const late = await release({ lease: a.lease, now: NOW + TTL });
  assert.equal(late.body.released, false, "an expired lease frees nothing more");
  assert.equal((await acquire({ policy: "gpu", key, now: NOW + TTL })).body.allowed, false, "still full");

  // A reset key holds no lease.
  assert.equal((await del(s.url, `/v1/keys/gpu/${encodeURIComponent(key)}`)).status, 200);
  assertError(await renew({ lease: b.lease, now: NOW + TTL }), 409, "unknown_lease", "lease");
});

test("with a rate limit and over several keys, all or nothing: a denied acquisition takes no slot and counts nothing", async () => {
  const [k1, k2] = [freshKey("cm"), freshKey("cm")];
  const both = await acquire({ policy: "mixed", keys: [k1, k2] });
  assert.equal(both.status, 200, both.text);
  assert.equal(both.body.allowed, true);
  const only2 = await acquire({ policy: "mixed", key: k2 }, 1);
  assert.equal(only2.body.allowed, true);
  // k2 has no slot left: the pair is denied, and k1 took nothing.
  const pair = await acquire({ policy: "mixed", keys: [k1, k2] });
  assert.equal(pair.body.allowed, false, pair.text);
  assert.equal(pair.body.lease, null);
  const one = await acquire({ policy: "mixed", key: k1 });
  assert.equal(one.body.allowed, true);
  assert.equal(one.body.remaining, 0, "k1 holds the pair's slot and this one, no more");
  // Releasing the pair's lease frees its slot on both keys.
  const freed = await release({ lease: both.body.lease }, 1);
  assert.equal(freed.body.released, true, freed.text);
  // k2's hourly rate: 2 counted (the pair, only2), so 1 left; the slot denial counted nothing.
  const again = await acquire({ policy: "mixed", key: k2 });
  assert.equal(again.body.allowed, true, again.text);
  const rated = await acquire({ policy: "mixed", key: k2, now: NOW + 1 }, 1);
  assert.equal(rated.body.allowed, false, "the hourly limit: 3 counted");
  assert.equal(rated.body.blockedBy, "per-hour");
  assert.equal(rated.body.lease, null);
});

test("bad input is a 4xx with its code and field, and changes nothing", async () => {
  const key = freshKey("cb");
  const { lease } = (await acquire({ policy: "gpu", key })).body;
  const cases = [
    ["/v1/acquire", { policy: "gpu" }, 400, "missing_key", "key"],
    ["/v1/acquire", { policy: "gpu", key, cost: 0 }, 400, "invalid_cost", "cost"],
    ["/v1/acquire", { policy: "nope", key }, 400, "unknown_policy", undefined],
    ["/v1/acquire", { policy: "gpu", key, extra: 1 }, 400, "unknown_field", "extra"],
    ["/v1/acquire", { policy: "synced", key }, 400, "unsupported_in_sync_mode", undefined],
    ["/v1/release", {}, 400, "missing_field", "lease"],
    ["/v1/release", { lease: 7 }, 400, "invalid_type", "lease"],
    ["/v1/release", { lease: "not a token!" }, 400, "invalid_lease", "lease"],
    ["/v1/release", { lease: lease.slice(0, -3) }, 400, "invalid_lease", "lease"],
    ["/v1/renew", { lease, extra: true }, 400, "unknown_field", "extra"],
    ["/v1/renew", { lease, now: -5 }, 400, "invalid_now", "now"],
  ];
  for (const [route, body, status, code, field] of cases) {
    assertError(await post(s.url, route, { now: NOW, ...body }), status, code, field);
  }
  assertError(await post(s.url, "/v1/renew", "nope"), 400, "invalid_json", undefined);
  const get = await fetch(`${s.url}/v1/acquire`);
  assert.equal(get.status, 405);
  const next = await acquire({ policy: "gpu", key });
  assert.equal(next.body.remaining, 0, "one slot held before, one now: nothing else changed");
  assert.equal((await release({ lease })).body.released, true, "the lease is still live");
});

test("16 clients on two isolates holding work of random length on one key: never more than N in flight, slots reused", async () => {
  const key = freshKey("c16");
  const N = 3;
  const HOLDS = 4;
  let inFlight = 0;
  let most = 0;
  let violations = 0;
  let denials = 0;
  // The "upstream": counts the work in flight between an admitted acquire's answer and the
  // release's request; the Worker must never let it pass N.
  const work = async (ms) => {
    inFlight++;
    most = Math.max(most, inFlight);
    if (inFlight > N) violations++;
    await sleep(ms);
    inFlight--;
  };
  const started = Date.now();
  const clients = Array.from({ length: 16 }, (_, c) =>
    (async () => {
      let held = 0;
      while (held < HOLDS) {
        assert.ok(Date.now() - started < 25_000, "the run is bounded");
        const a = await acquire({ policy: "pool", key }, c % 2);
        assert.equal(a.status, 200, a.text);
        assert.equal(a.body.estimate ?? false, false, "the objects decided");
        assert.equal(typeof a.body.lease === "string", a.body.allowed, a.text);
        if (!a.body.allowed) {
          denials++;
          await sleep(5 + Math.random() * 20);
          continue;
        }
        await work(5 + Math.random() * 45);
        const r = await release({ lease: a.body.lease }, (c + 1) % 2);
        assert.equal(r.status, 200, r.text);
        assert.equal(r.body.released, true, r.text);
        held++;
      }
    })(),
  );
  await Promise.all(clients);
  assert.equal(violations, 0, `at most ${N} in flight (saw ${most})`);
  assert.ok(most >= 2, `slots were held at once (saw ${most})`);
  assert.ok(denials > 0, "the clients contended for the slots");
  // 64 holds through 3 slots: every slot was reused, and none leaked.
  const after = await Promise.all(Array.from({ length: N + 1 }, () => acquire({ policy: "pool", key })));
  assert.deepEqual(after.map((r) => r.body.allowed).sort(), [false, true, true, true], "all N slots free at the end, no more");
});
