// An ingestion example, replayed in simulated time: 10,000 records of 10
// units against a service that rejects beyond 20,000 units per second. The service is the
// package's own RateLimiter; the paced client is the package's Pacer.
import { test } from "node:test";
import assert from "node:assert/strict";
import { Pacer, RateLimiter } from "tollgate";
import { instantClock, T0 } from "./clock.mjs";

const RECORDS = 10_000;
const UNITS = 10;

/** The throttled service: 20,000 units per second, fixed (clock-aligned) or exact sliding log. */
function service(algorithm) {
  return new RateLimiter({ algorithm, limit: 20_000, window: "1s" });
}

test("blind retry sends about 30,000 records", () => {
  const svc = service("fixed-window");
  let pending = RECORDS;
  let sends = 0;
  // Each second, send everything not yet accepted.
  for (let round = 0; pending > 0; round++) {
    const now = T0 + round * 1000;
    let accepted = 0;
    for (let i = 0; i < pending; i++) {
      sends++;
      if (svc.limit("ingest", { cost: UNITS, now }).allowed) accepted++;
    }
    pending -= accepted;
  }
  assert.equal(sends, 30_000);
});

for (const algorithm of ["fixed-window", "sliding-log"]) {
  test(`the paced client sends each record once with no rejection (${algorithm} service)`, async () => {
    const svc = service(algorithm);
    const clock = instantClock();
    const pacer = new Pacer({ rate: "20000/s", grain: "200ms", maxQueue: RECORDS, ...clock });
    assert.equal(pacer.maxCost, 4_000, "20,000/s released 4,000 units every 200 ms");
    let sends = 0;
    let rejected = 0;
    let last = T0;
    const send = pacer.pace(
      async () => {
        sends++;
        last = Math.max(last, clock.now());
        if (!svc.limit("ingest", { cost: UNITS, now: clock.now() }).allowed) rejected++;
      },
      { cost: UNITS },
    );
    await Promise.all(Array.from({ length: RECORDS }, () => send()));
    assert.deepEqual({ sends, rejected }, { sends: 10_000, rejected: 0 });
    // 100,000 units at 20,000 per second: five seconds' worth, the last share starting 4.8 s
    // in (plus a millisecond per grain: each start is rounded up to the ms at the JS edge).
    const took = last - T0;
    assert.ok(took >= 4_800 && took < 5_000, `last record sent ${took} ms in`);
  });
}

test("the same job one record at a time takes the same time", async () => {
  const svc = service("sliding-log");
  const clock = instantClock();
  const pacer = new Pacer({ rate: "20000/s", grain: "200ms", ...clock });
  let rejected = 0;
  for (let i = 0; i < RECORDS; i++) {
    await pacer.acquire(UNITS);
    if (!svc.limit("ingest", { cost: UNITS, now: clock.now() }).allowed) rejected++;
  }
  assert.equal(rejected, 0);
  const took = clock.now() - T0;
  assert.ok(took >= 4_800 && took < 5_000, `finished ${took} ms in`);
});
