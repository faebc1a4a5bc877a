// Reserve and settle through the real Worker in workerd (Miniflare, TEST_MODE so that every
// operation carries the trace's `now`), with the npm `WorkerStore` from the packed tarball:
// - the equivalence fixture's reserve/settle trace (tests/js/reserve-fixture.mjs, decided by
//   the native crate) gives the native outcome at every operation: reservations, settlements
//   (refunded, charged, forgiven), settlements refused (settled already, the key reset since).
import { test, before, after } from "node:test";
import assert from "node:assert/strict";
import { RateLimiter, WorkerStore } from "tollgate";
import { start } from "../../worker/test/harness.mjs";
import { LIMITERS, policyOf } from "./fixture.mjs";
import { reserveTrace, replayReserve, firstDifference, census } from "../js/reserve-fixture.mjs";

/** How many of the trace's operations go through the Worker (each a few Durable Object calls). */
const OPS = 900;
/** Every Worker answer is awaited this long: on a loaded machine a slow one is no outage. */
const PATIENT = 60_000;

let s, ops;
before(async () => {
  ops = reserveTrace().slice(0, OPS);
  const patient = (policy) => ({ ...policy, timeoutMs: 20_000 });
  const POLICIES = Object.fromEntries(LIMITERS.map((o, l) => [`l${l}`, patient(policyOf(o))]));
  s = await start({ bindings: { POLICIES } });
});
after(async () => {
  await s?.stop();
});

const storeOf = (l) => new WorkerStore({ url: s.url, policy: `l${l}`, timeoutMs: PATIENT, failure: "throw" });

test("the reserve trace through WorkerStore makes the native crate's decisions", async () => {
  const c = census(ops);
  assert.ok(c.reserved > 200 && c.denied > 100, JSON.stringify(c));
  assert.ok(c.settled > 200 && c.refused.unknown_reservation > 30 && c.resets > 10, JSON.stringify(c));
  const limiters = LIMITERS.map((_, l) => new RateLimiter({ store: storeOf(l) }));
  const outcomes = await replayReserve(ops, (l) => limiters[l]);
  assert.equal(firstDifference(ops, outcomes), null);
  console.log(`# the Worker replayed ${ops.length} reserve/settle operations: ${JSON.stringify(c)}`);
});
