// Calendar windows through the Worker: a policy of "10000/month"-style quotas in POLICIES,
// parsed by the core, deciding `POST /v1/limit` with `resetAt`, `retryAfter` and the headers at
// the real boundary (28 to 31 days, either side of UTC), described by `GET /v1/policies`; and
// a month on an algorithm without calendar months is a config_error naming the field.
import { test, before, after } from "node:test";
import assert from "node:assert/strict";
import { parseList } from "structured-headers";
import { start, post, get, freshKey, POLICIES } from "./harness.mjs";

const CALENDAR = {
  ...POLICIES,
  monthly: { limits: [{ name: "monthly", algorithm: "fixed-window", quota: "2/month", offset: "-2h" }] },
  weekly: { limits: [{ name: "weekly", algorithm: "fixed-window", limit: 1, window: "1w" }] },
};

let s;
before(async () => {
  s = await start({ bindings: { POLICIES: CALENDAR } });
});
after(async () => {
  await s?.stop();
});

const at = (iso) => Date.parse(iso);

test("a month at UTC+2 resets at 22:00 UTC on the month's last day, whatever its length", async () => {
  for (const [now, reset] of [
    ["2024-02-10T12:00:00Z", "2024-02-29T22:00:00Z"],
    ["2023-02-10T12:00:00Z", "2023-02-28T22:00:00Z"],
    ["2024-03-31T21:59:59.999Z", "2024-03-31T22:00:00Z"],
    ["2024-03-31T22:00:00Z", "2024-04-30T22:00:00Z"],
  ]) {
    const key = freshKey("m");
    for (let i = 0; i < 2; i++) {
      const r = await post(s.url, "/v1/limit", { key, policy: "monthly", now: at(now) });
      assert.equal(r.status, 200, r.text);
      assert.equal(r.body.allowed, true);
      assert.equal(r.body.resetAt, at(reset), now);
    }
    const denied = await post(s.url, "/v1/limit", { key, policy: "monthly", now: at(now) });
    assert.equal(denied.body.allowed, false);
    assert.equal(denied.body.retryAfter, at(reset) - at(now));
    assert.equal(Number(denied.headers.get("retry-after")), Math.ceil((at(reset) - at(now)) / 1000));
    const rl = parseList(denied.headers.get("ratelimit"));
    assert.equal(rl[0][1].get("t"), Math.ceil((at(reset) - at(now)) / 1000));
  }
});

test("a week is the ISO week, from Monday", async () => {
  const r = await post(s.url, "/v1/limit", { key: freshKey("w"), policy: "weekly", now: at("2024-01-10T12:00:00Z") });
  assert.equal(r.body.resetAt, at("2024-01-15T00:00:00Z"));
});

test("GET /v1/policies describes a month as written", async () => {
  const p = await get(s.url, "/v1/policies");
  const m = p.body.policies.monthly.limits[0];
  assert.deepEqual([m.algorithm, m.limit, m.window, m.offsetMs, m.windowMs], ["fixed-window", 2, "1month", -7_200_000, undefined]);
});

test("a month on an algorithm without calendar months is a config_error naming the field", async () => {
  const bad = { x: { limits: [{ name: "a", algorithm: "gcra", quota: "100/month" }] } };
  const w = await start({ bindings: { POLICIES: bad } });
  try {
    const r = await post(w.url, "/v1/limit", { key: "k", policy: "x" });
    assert.equal(r.status, 500);
    assert.equal(r.body.error.code, "config_error");
    assert.match(r.body.error.message, /quota "100\/month": calendar months are a window of algorithm "fixed-window" only/);
  } finally {
    await w.stop();
  }
});
