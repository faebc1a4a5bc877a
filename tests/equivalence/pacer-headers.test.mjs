// The pacer across the HTTP boundary: a Pacer that reads the Worker's real answers
// (`Retry-After`, the draft-10 `RateLimit`, legacy `X-RateLimit-*`) schedules exactly as one that
// reads the headers the npm package gives for the same hits (`limiter.headers(decision, now)`).
// The hits are the equivalence fixture's, through every one of its limiters, in simulated time.
import { test, before, after } from "node:test";
import assert from "node:assert/strict";
import { Pacer, RateLimiter } from "tollgate";
import { start } from "../../worker/test/harness.mjs";
import { LIMITERS, trace, policyOf } from "./fixture.mjs";

/** The fixture's first hits on its hot keys (where denials are), in trace order. */
const HITS = 2000;

let s, hits;
before(async () => {
  hits = trace()
    .filter((h) => h.key.startsWith("hot"))
    .slice(0, HITS);
  const POLICIES = Object.fromEntries(LIMITERS.map((o, l) => [`l${l}`, policyOf(o)]));
  s = await start({ bindings: { POLICIES } });
});
after(async () => {
  await s?.stop();
});

test("a Pacer on the Worker's headers decides as a Pacer on the npm package's headers, hit by hit", async () => {
  const limiters = LIMITERS.map((o) => new RateLimiter(o));
  let clock = 0;
  const now = () => clock;
  // One pair of pacers per limiter: each reads only its own edge's answers.
  const pacers = LIMITERS.map(() => ({
    worker: new Pacer({ rate: "100/s", grain: "100ms", now }),
    npm: new Pacer({ rate: "100/s", grain: "100ms", now }),
  }));
  let paused = 0;
  let sameHeaders = 0;
  for (const h of hits) {
    clock = h.now;
    const res = await s.mf.dispatchFetch("http://localhost/v1/limit", {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ key: h.key, policy: `l${h.l}`, now: h.now, cost: h.cost }),
    });
    const body = await res.json();
    const d = limiters[h.l].limit(h.key, { now: h.now, cost: h.cost });
    const npmHeaders = limiters[h.l].headers(d, h.now);
    const p = pacers[h.l];
    const untilWorker = p.worker.observe(res.headers);
    const untilNpm = p.npm.observe(npmHeaders);
    const where = `hit ${h.i} (limiter ${h.l}, ${h.key} at ${h.now}, cost ${h.cost}, allowed ${d.allowed})`;
    const seen = () => `Worker ${JSON.stringify(body)} ${JSON.stringify([...res.headers])}, package ${JSON.stringify(d)} ${JSON.stringify(npmHeaders)}`;
    assert.equal(untilWorker, untilNpm, `${where}: the pause each pacer read; ${seen()}`);
    for (const cost of [1, 5]) assert.equal(p.worker.peek(cost), p.npm.peek(cost), `${where}: next start of cost ${cost}`);
    if (untilWorker !== null) paused++;
    if (Object.entries(npmHeaders).every(([k, v]) => res.headers.get(k) === v)) sameHeaders++;
  }
  console.log(`${hits.length} hits: ${paused} answers paused the pacers; ${sameHeaders} header sets byte-identical`);
  assert.ok(paused > hits.length / 10, "the trace makes the pacers pause");
});
