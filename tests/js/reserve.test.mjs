// Reserve and settle on the in-memory limiter (docs/reserve.md): the package as built in pkg/.
import test from "node:test";
import assert from "node:assert/strict";
import { RateLimiter } from "../../pkg/dist/lib/index.js";

const now = 1_700_000_000_000;

test("reserve decides as limit with the estimate as the cost, and settle gives back the surplus", () => {
  const l = new RateLimiter({ algorithm: "fixed-window", quota: "100/m" });
  const twin = new RateLimiter({ algorithm: "fixed-window", quota: "100/m" });
  const r = l.reserve("k", { cost: 80, now });
  const { reservation, ...decision } = r;
  assert.deepEqual(decision, twin.limit("k", { cost: 80, now }));
  assert.equal(typeof reservation, "string");
  assert.match(reservation, /^[A-Za-z0-9_-]+$/);
  const s = l.settle(reservation, 30, { now: now + 5 });
  assert.deepEqual([s.allowed, s.remaining, s.refunded, s.charged, s.forgiven], [true, 70, 50, 0, 0]);
  assert.equal(l.limit("k", { cost: 70, now: now + 6 }).allowed, true);
  // Settled once: a second settlement is refused and changes nothing.
  const before = l.export("k");
  assert.throws(() => l.settle(reservation, 0, { now: now + 7 }), { code: "unknown_reservation", field: "reservation" });
  assert.deepEqual(l.export("k"), before);
});

test("a denied reservation reserves nothing; an excess is charged into debt, up to one limit past it", () => {
  const l = new RateLimiter({ algorithm: "gcra", quota: "10/s" });
  const r = l.reserve("k", { cost: 6, now });
  assert.equal(l.reserve("k", { cost: 6, now }).reservation, null);
  const s = l.settle(r.reservation, 20, { now });
  // 6 reserved, 14 more charged: 20 units on a 10/s meter, 10 of them debt (the cap).
  assert.deepEqual([s.allowed, s.remaining, s.refunded, s.charged, s.forgiven, s.blockedBy], [false, 0, 0, 14, 0, "default"]);
  assert.equal(s.retryAfter, 1100, "the debt and one unit drain at 100 ms each");
  assert.equal(l.limit("k", { now: now + 1099 }).allowed, false);
  assert.equal(l.limit("k", { now: now + 1100 }).allowed, true);
});

test("several keys and limits reserve all or nothing; a reset key's reservation is unknown", () => {
  const l = new RateLimiter({ limits: [{ algorithm: "sliding-log", quota: "10/s", name: "second" }, { algorithm: "fixed-window", quota: "20/m", name: "minute" }] });
  const r = l.reserve(["ip:1", "user:2"], { cost: 8, now });
  assert.equal(r.limits.length, 4);
  const s = l.settle(r.reservation, 2, { now });
  assert.deepEqual([s.refunded, s.limits.map((x) => x.key)], [6, ["ip:1", "ip:1", "user:2", "user:2"]]);
  const again = l.reserve(["ip:1", "user:2"], { cost: 3, now });
  l.reset("user:2");
  assert.throws(() => l.settle(again.reservation, 1, { now }), { code: "unknown_reservation" });
  // The other key still holds it, charged at its estimate (a peek's remaining is after its one unit).
  assert.equal(l.peek("ip:1", { now }).remaining, 10 - 2 - 3 - 1);
});

test("a reservation travels in the key's exported state, and settles in another process's limiter", () => {
  const a = new RateLimiter({ algorithm: "token-bucket", quota: "10/s" });
  const r = a.reserve("k", { cost: 7, now });
  const b = new RateLimiter({ algorithm: "token-bucket", quota: "10/s" });
  b.import("k", a.export("k"));
  assert.equal(b.settle(r.reservation, 1, { now }).remaining, 9);
  assert.throws(() => a.settle("not a token!", 1), { code: "invalid_reservation", field: "reservation" });
  assert.throws(() => a.settle(r.reservation, -1, { now }), { code: "invalid_cost", field: "actual" });
  assert.throws(() => a.settle(r.reservation, "1"), { code: "invalid_type", field: "actual" });
  assert.throws(() => a.settle(42, 1), { code: "invalid_type", field: "reservation" });
  assert.throws(() => a.reserve("k", { cost: 11, now }), { code: "invalid_cost" });
  assert.equal(a.settle(r.reservation, 1, { now }).refunded, 6);
});

test("reserve passes the controls as limit does: lists, shadow, onDecision; settle reports nothing", () => {
  const reports = [];
  const onDecision = (r) => reports.push(r);
  const l = new RateLimiter({ algorithm: "fixed-window", quota: "10/m", allowList: ["partner"], denyList: ["abuser"], onDecision });
  const allowed = l.reserve("partner", { cost: 50, now });
  assert.deepEqual([allowed.allowed, allowed.reason, allowed.reservation], [true, "allowList", null], "an allow-listed key is admitted, reserving nothing");
  const denied = l.reserve("abuser", { cost: 1, now });
  assert.deepEqual([denied.allowed, denied.reason, denied.reservation], [false, "denyList", null]);
  assert.equal(l.size, 0, "listed keys hold no state");
  const r = l.reserve("k", { cost: 4, now });
  assert.equal(typeof r.reservation, "string");
  assert.deepEqual(
    reports.map((x) => [x.outcome, x.cost, x.decision.reason ?? null]),
    [
      ["allowed", 50, "allowList"],
      ["denied", 1, "denyList"],
      ["allowed", 4, null],
    ],
  );
  l.settle(r.reservation, 1, { now: now + 1 });
  assert.equal(reports.length, 3, "a settlement decides no hit: not reported");

  const enforcing = new RateLimiter({ algorithm: "fixed-window", quota: "10/m" });
  const shadow = new RateLimiter({ algorithm: "fixed-window", quota: "10/m", shadow: true });
  for (const cost of [6, 6, 4]) {
    const e = enforcing.reserve("s", { cost, now });
    const s = shadow.reserve("s", { cost, now });
    assert.deepEqual([s.allowed, s.shadow, s.wouldAllow, s.remaining], [true, true, e.allowed, e.remaining]);
    assert.equal(s.reservation === null, e.reservation === null, "shadow reserves what enforcement reserves");
  }
});
