// `POST /v1/reserve` and `POST /v1/settle` (worker/src/handlers/reserve_api.rs, docs/reserve.md): a hit
// admitted on an estimate, then settled with its actual cost; one key and several all or
// nothing; the errors of a settlement that cannot be made, each changing nothing; many
// clients reserving on one key through two isolates never admitting beyond the limit. The
// test clock is fixed (TEST_MODE), so no window turns while a test runs.
import { test, before, after } from "node:test";
import assert from "node:assert/strict";
import { start, post, request, del, freshKey, POLICIES } from "./harness.mjs";

const NOW = 1_800_000_000_000;
const LIMIT = 100;
let s;

before(async () => {
  s = await start({
    isolates: 2,
    bindings: {
      POLICIES: {
        ...POLICIES,
        // A long timeout: on a loaded machine a request waiting behind others' leases must not
        // be taken for a failed object (it would fail open and the counts could not be exact).
        tokens: { limits: [{ name: "per-hour", algorithm: "fixed-window", limit: LIMIT, window: "1h" }], timeoutMs: 10_000 },
        pairs: {
          limits: [
            { name: "burst", algorithm: "gcra", limit: 200, window: "1s", burst: 200 },
            { name: "per-hour", algorithm: "sliding-log", limit: LIMIT, window: "1h" },
          ],
          timeoutMs: 10_000,
        },
        synced: { limits: [{ name: "per-minute", algorithm: "fixed-window", quota: "5/m" }], syncRate: 100 },
        leased: { limits: [{ name: "per-minute", algorithm: "fixed-window", quota: "5/m" }], leaseTtl: "1s" },
      },
    },
  });
});
after(async () => {
  await s?.stop();
});

const reserve = (body, w = 0) => post(s.url, "/v1/reserve", { now: NOW, ...body }, { host: `w${w}.test` });
const settle = (body, w = 0) => post(s.url, "/v1/settle", { now: NOW, ...body }, { host: `w${w}.test` });
const limit = (body) => post(s.url, "/v1/limit", { now: NOW, ...body });
const peek = (policy, key) => post(s.url, "/v1/peek", { policy, key, now: NOW });

function assertError(r, status, code, field) {
  assert.equal(r.status, status, r.text);
  assert.equal(r.body.error.code, code, r.text);
  assert.equal(r.body.error.field, field, r.text);
}

test("reserve decides as /v1/limit with the estimate as the cost and answers a reservation; settling gives back the rest", async () => {
  const [a, b] = [freshKey("rs"), freshKey("rs")];
  const reserved = await reserve({ policy: "tokens", key: a, cost: 30 });
  const limited = await limit({ policy: "tokens", key: b, cost: 30 });
  assert.equal(reserved.status, 200);
  assert.equal(typeof reserved.body.reservation, "string");
  const { reservation, ...figures } = reserved.body;
  assert.deepEqual(figures, limited.body, "the same decision as a hit of the estimate");
  assert.equal(reserved.headers.get("ratelimit"), limited.headers.get("ratelimit"));
  assert.match(reservation, /^[A-Za-z0-9_-]+$/, "base64url, no padding");

  const settled = await settle({ reservation, actual: 12 });
  assert.equal(settled.status, 200, settled.text);
  assert.equal(settled.body.refunded, 18);
  assert.equal(settled.body.charged, 0);
  assert.equal(settled.body.forgiven, 0);
  assert.equal(settled.body.remaining, LIMIT - 12);
  assert.equal(settled.body.allowed, true);
  assert.equal((await peek("tokens", a)).body.remaining, LIMIT - 12 - 1, "the key holds the actual cost");
});

test("an actual cost above the estimate is charged into debt, up to one limit past it; the rest forgiven", async () => {
  const key = freshKey("rs");
  const r = await reserve({ policy: "tokens", key, cost: 20 });
  assert.equal((await limit({ policy: "tokens", key, cost: 60 })).body.allowed, true);
  const settled = await settle({ reservation: r.body.reservation, actual: 40 });
  assert.equal(settled.status, 200, settled.text);
  assert.deepEqual([settled.body.refunded, settled.body.charged, settled.body.forgiven], [0, 20, 0]);
  assert.equal(settled.body.remaining, 0);
  const indebted = freshKey("rs");
  const over = await reserve({ policy: "tokens", key: indebted, cost: 90 });
  const again = await settle({ reservation: over.body.reservation, actual: 250 });
  assert.deepEqual([again.body.charged, again.body.forgiven], [110, 50], "into debt up to one limit past it (200 counted)");
  assert.equal(again.body.remaining, 0);
  assert.equal(again.body.allowed, false);
  const next = await reserve({ policy: "tokens", key: indebted, cost: 1 });
  assert.equal(next.body.allowed, false, "a key in debt is denied");
  assert.equal(next.body.retryAfter, again.body.retryAfter);
});

test("a denied reservation reserves nothing and answers reservation null", async () => {
  const key = freshKey("rs");
  assert.equal((await limit({ policy: "tokens", key, cost: 95 })).body.allowed, true);
  const r = await reserve({ policy: "tokens", key, cost: 10 });
  assert.equal(r.status, 200);
  assert.equal(r.body.allowed, false);
  assert.equal(r.body.reservation, null);
  assert.equal(r.body.blockedBy, "per-hour");
  assert.equal((await peek("tokens", key)).body.remaining, 4, "nothing was charged");
  assert.equal((await post(s.url, "/v1/reserve?status=429", { policy: "tokens", key, cost: 10, now: NOW })).status, 429);
});

test("settling twice, or after the key was reset, is 409 unknown_reservation and changes nothing", async () => {
  const key = freshKey("rs");
  const { reservation } = (await reserve({ policy: "tokens", key, cost: 30 })).body;
  assert.equal((await settle({ reservation, actual: 10 })).status, 200);
  const before = (await peek("tokens", key)).body;
  assertError(await settle({ reservation, actual: 0 }), 409, "unknown_reservation", "reservation");
  assert.deepEqual((await peek("tokens", key)).body, before, "the second settlement changed nothing");

  const other = freshKey("rs");
  const second = (await reserve({ policy: "tokens", key: other, cost: 30 })).body.reservation;
  assert.equal((await del(s.url, `/v1/keys/tokens/${encodeURIComponent(other)}`)).status, 200);
  assertError(await settle({ reservation: second, actual: 0 }), 409, "unknown_reservation", "reservation");
  assert.equal((await peek("tokens", other)).body.remaining, LIMIT - 1, "the reset key stays fresh");
  // A new reservation on the reset key is not the old one.
  const third = (await reserve({ policy: "tokens", key: other, cost: 30 })).body.reservation;
  assert.notEqual(third, second);
  assertError(await settle({ reservation: second, actual: 0 }), 409, "unknown_reservation", "reservation");
  assert.equal((await settle({ reservation: third, actual: 30 })).status, 200);
});

test("a malformed settlement is a 400 with its code and field, and changes nothing", async () => {
  const key = freshKey("rs");
  const { reservation } = (await reserve({ policy: "tokens", key, cost: 30 })).body;
  const cases = [
    [{ actual: 1 }, "missing_field", "reservation"],
    [{ reservation: 7, actual: 1 }, "invalid_type", "reservation"],
    [{ reservation: "not a token!", actual: 1 }, "invalid_reservation", "reservation"],
    [{ reservation: reservation.slice(0, -2), actual: 1 }, "invalid_reservation", "reservation"],
    [{ reservation }, "missing_field", "actual"],
    [{ reservation, actual: -1 }, "invalid_cost", "actual"],
    [{ reservation, actual: 1.5 }, "invalid_cost", "actual"],
    [{ reservation, actual: "3" }, "invalid_cost", "actual"],
    [{ reservation, actual: 1, extra: true }, "unknown_field", "extra"],
    [{ reservation, actual: 1, now: -5 }, "invalid_now", "now"],
  ];
  for (const [body, code, field] of cases) {
    const r = await post(s.url, "/v1/settle", { now: NOW, ...body });
    assertError(r, 400, code, field);
  }
  assertError(await post(s.url, "/v1/settle", "nope"), 400, "invalid_json", undefined);
  assert.equal((await peek("tokens", key)).body.remaining, LIMIT - 30 - 1, "nothing was settled");
  assert.equal((await settle({ reservation, actual: 30 })).body.refunded, 0, "the reservation is still open");
});

test("reserve refuses what /v1/limit refuses, and synced policies", async () => {
  assertError(await reserve({ policy: "tokens", key: "k", cost: 0 }), 400, "invalid_cost", "cost");
  assertError(await reserve({ policy: "tokens", key: "k", cost: LIMIT + 1 }), 400, "invalid_cost", "cost");
  assertError(await reserve({ policy: "tokens" }), 400, "missing_key", "key");
  const synced = await reserve({ policy: "synced", key: "k", cost: 1 });
  assert.equal(synced.status, 400);
  assert.equal(synced.body.error.code, "unsupported_in_sync_mode");
  for (const route of ["/v1/reserve", "/v1/settle"]) {
    const r = await request(s.url, route);
    assert.equal(r.status, 405);
    assert.equal(r.headers.get("allow"), "POST");
  }
});

test("a leased policy (leaseTtl) refuses reserve and settle: its quota is in the object's ledger of slices", async () => {
  const refused = await reserve({ policy: "leased", key: "k", cost: 1 });
  assertError(refused, 400, "unsupported_in_leased_mode", undefined);
  assert.equal(refused.body.reservation, undefined);
  // A token naming the leased policy (version 1, id 1, estimate 1, policy, one key "k").
  const token = Buffer.from([1, 1, 1, 6, ...Buffer.from("leased"), 1, 1, ...Buffer.from("k")]).toString("base64url");
  assertError(await settle({ reservation: token, actual: 0 }), 400, "unsupported_in_leased_mode", undefined);
});

test("several keys are reserved and settled all or nothing", async () => {
  const [u, o] = [freshKey("ru"), freshKey("ro")];
  assert.equal((await limit({ policy: "pairs", key: o, cost: 40 })).body.allowed, true);
  // The org has 60 left: a reservation of 70 on both is denied and charges neither.
  const denied = await reserve({ policy: "pairs", keys: [u, o], cost: 70 });
  assert.equal(denied.body.allowed, false);
  assert.equal(denied.body.reservation, null);
  assert.equal((await peek("pairs", u)).body.remaining, LIMIT - 1, "the user was not charged");
  const r = await reserve({ policy: "pairs", keys: [u, o], cost: 30 });
  assert.equal(r.body.allowed, true, r.text);
  assert.deepEqual(r.body.limits.map((l) => l.key).sort(), [u, u, o, o].sort());
  const settled = await settle({ reservation: r.body.reservation, actual: 10 });
  assert.equal(settled.status, 200, settled.text);
  assert.equal(settled.body.refunded, 20);
  assert.ok(Array.isArray(settled.body.limits));
  assert.equal((await peek("pairs", u)).body.remaining, LIMIT - 10 - 1);
  assert.equal((await peek("pairs", o)).body.remaining, LIMIT - 50 - 1);
  // Reset one key: the reservation is no longer open on every key, and the other keeps it.
  const again = (await reserve({ policy: "pairs", keys: [u, o], cost: 5 })).body.reservation;
  await del(s.url, `/v1/keys/pairs/${encodeURIComponent(u)}`);
  assertError(await settle({ reservation: again, actual: 0 }), 409, "unknown_reservation", "reservation");
  assert.equal((await peek("pairs", o)).body.remaining, LIMIT - 55 - 1, "the other key was not settled");
});

test("24 clients reserving on one key through two isolates never admit beyond the limit", async () => {
  const key = freshKey("rc");
  const costs = [3, 5, 7];
  // 24 clients x 4 reservations of 3 to 7 units: about 480 units asked of a limit of 100.
  const clients = Array.from({ length: 24 }, (_, c) =>
    (async () => {
      const admitted = [];
      for (let j = 0; j < 4; j++) {
        const cost = costs[(c + j) % 3];
        const r = await reserve({ policy: "tokens", key, cost }, c % 2);
        assert.equal(r.status, 200, r.text);
        assert.equal(r.body.estimate, false, "the objects decided");
        assert.equal(typeof r.body.reservation === "string", r.body.allowed);
        if (r.body.allowed) admitted.push({ cost, reservation: r.body.reservation });
      }
      return admitted;
    })(),
  );
  const admitted = (await Promise.all(clients)).flat();
  const units = admitted.reduce((n, a) => n + a.cost, 0);
  assert.ok(units <= LIMIT, `admitted ${units} units of ${LIMIT}`);
  assert.ok(units > LIMIT - 7, `admitted ${units}: a reservation that fit was denied`);
  // A peek asks for one unit: with n left it answers remaining n - 1, and with none left a denial
  // with remaining 0, so a key filled to the limit is told apart from one with a unit left.
  const after = (await peek("tokens", key)).body;
  const left = after.allowed ? after.remaining + 1 : after.remaining;
  assert.equal(left, LIMIT - units, "the key holds exactly what was admitted");
  // Settling every reservation at 1 unit, concurrently, gives back all but one per reservation.
  const settled = await Promise.all(admitted.map((a, i) => settle({ reservation: a.reservation, actual: 1 }, i % 2)));
  for (const r of settled) assert.equal(r.status, 200, r.text);
  assert.equal((await peek("tokens", key)).body.remaining + 1, LIMIT - admitted.length);
});
