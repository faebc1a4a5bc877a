// Calendar windows through the npm package: the one spec (quota "10000/month", "500/week",
// "100/day", a signed offset) parsed by the core in wasm, with resetAt, retryAfter and the
// headers at the real calendar boundary, in the full and the lite module, and the same
// refusal for an algorithm that has no calendar months.
import test from "node:test";
import assert from "node:assert/strict";
import { RateLimiter } from "../../pkg/dist/lib/index.js";
import { RateLimiter as LiteRateLimiter } from "../../pkg/dist/lib/lite.js";

const at = (iso) => Date.parse(iso);
const H = 3_600_000;

for (const [label, Limiter] of [["full", RateLimiter], ["lite", LiteRateLimiter]]) {
  test(`${label}: a month resets on the 1st, 28 to 31 days later, at either side of UTC`, () => {
    const cases = [
      ["2024-02-10T12:00:00Z", undefined, "2024-03-01T00:00:00Z"], // a leap February
      ["2023-02-10T12:00:00Z", undefined, "2023-03-01T00:00:00Z"],
      ["2024-12-31T23:59:59.999Z", undefined, "2025-01-01T00:00:00Z"],
      ["2024-02-10T12:00:00Z", "-2h", "2024-02-29T22:00:00Z"], // months of UTC+2
      ["2024-02-29T23:00:00Z", "-2h", "2024-03-31T22:00:00Z"],
      ["2024-02-10T12:00:00Z", 5 * H, "2024-03-01T05:00:00Z"], // UTC-5, in milliseconds
    ];
    for (const [now, offset, reset] of cases) {
      const l = new Limiter({ algorithm: "fixed-window", quota: "2/month", ...(offset === undefined ? {} : { offset }) });
      const d = l.limit("k", { now: at(now) });
      assert.equal(d.resetAt, at(reset), `${now} offset ${offset}`);
      l.limit("k", { now: at(now) });
      const denied = l.limit("k", { now: at(now) });
      assert.equal(denied.allowed, false);
      assert.equal(denied.retryAfter, at(reset) - at(now));
    }
  });

  test(`${label}: a week is the ISO week, a day turns at the offset`, () => {
    const week = new Limiter({ algorithm: "fixed-window", quota: "500/week" });
    // 2024-01-07 was a Sunday: the week ends at Monday midnight UTC.
    assert.equal(week.limit("k", { now: at("2024-01-07T20:00:00Z") }).resetAt, at("2024-01-08T00:00:00Z"));
    const day = new Limiter({ algorithm: "fixed-window", quota: "100/day", offset: "-2h" });
    assert.equal(day.limit("k", { now: at("2024-01-07T21:00:00Z") }).resetAt, at("2024-01-07T22:00:00Z"));
    assert.equal(day.limit("k", { now: at("2024-01-07T22:00:00Z") }).resetAt, at("2024-01-08T22:00:00Z"));
  });
}

test("the headers reset at the month's end", () => {
  const l = new RateLimiter({ algorithm: "fixed-window", quota: "1/month", name: "monthly" });
  const now = at("2024-02-28T00:00:00Z");
  l.limit("k", { now });
  const denied = l.limit("k", { now });
  const h = l.headers(denied, { now });
  // 2 days to 2024-03-01, in seconds, and the month's longest length as its policy window.
  assert.equal(h["RateLimit"], '"monthly";r=0;t=172800');
  assert.equal(h["Retry-After"], "172800");
  assert.match(h["RateLimit-Policy"], /w=2678400/);
});

test("a month is refused by every algorithm but the fixed window on the clock, naming the field", () => {
  for (const [options, field] of [
    [{ algorithm: "gcra", quota: "100/month" }, "quota"],
    [{ algorithm: "sliding-window", limit: 100, window: "month" }, "window"],
    [{ algorithm: "fixed-window", align: "first-hit", quota: "100/month" }, "quota"],
  ]) {
    assert.throws(() => new RateLimiter(options), (e) => e.code === "unsupported_option" && e.field === field, JSON.stringify(options));
  }
  assert.throws(
    () => new RateLimiter({ algorithm: "fixed-window", quota: "100/month", offset: "28d" }),
    (e) => e.code === "out_of_range" && e.field === "offset",
  );
});
