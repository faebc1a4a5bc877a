// Faults under load: Redis killed and restarted in the middle of a flood, and Redis frozen
// (SIGSTOP) for longer than timeoutMs. Nothing crashes, every hit is answered, no state is
// left corrupt, decisions are exact again once Redis is back, and admissions stay within the
// documented bound (docs/reliability.md): the limit per Redis lifetime (a restart without
// persistence forgets every key) plus, during the outage, what the failure mode admits.
import { test, before, after } from "node:test";
import assert from "node:assert/strict";
import { RateLimiter, RedisStore } from "tollgate";
import { RedisServer } from "./redis-server.mjs";
import { CLIENTS, connect, reconnected } from "./clients.mjs";

const LIMIT = 50;
const SHARE = 0.2; // the insurance: 10 per process while Redis is away
const config = { algorithm: "sliding-log", limit: LIMIT, window: "1h" };
// A denial Redis confirmed stands without a round trip for `blockedCache` (1 s by default),
// which could outlast the whole outage and hide it: kept well below the outages below.
const BLOCKED_CACHE_MS = 50;
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

/**
 * Waits until `condition()` holds, polling; fails only if it never does (bounded in polls, not
 * a timed assertion: a slow machine takes longer, it does not fail).
 */
async function until(condition, what) {
  for (let i = 0; i < 2000; i++) {
    if (condition()) return;
    await sleep(20);
  }
  assert.fail(`never ${what}`);
}

let server;
before(async () => {
  server = await RedisServer.start();
});
after(() => server.stop());

/**
 * Sends hits on one key, `inFlight` at a time, until `stop()`; counts each decision by whether
 * it was degraded (and why) and admitted. Resolves once every hit in flight is answered.
 */
function flood(limiter, inFlight) {
  const counts = { exactAdmitted: 0, exactDenied: 0, unavailableAdmitted: 0, unavailableDenied: 0, contention: 0, errors: 0, total: 0 };
  let running = true;
  const worker = async () => {
    while (running) {
      try {
        const d = await limiter.limit("k");
        counts.total++;
        if (d.degraded === "contention") counts.contention++;
        else if (d.degraded === "unavailable") counts[d.allowed ? "unavailableAdmitted" : "unavailableDenied"]++;
        else counts[d.allowed ? "exactAdmitted" : "exactDenied"]++;
      } catch {
        counts.errors++;
      }
      await sleep(2); // a steady flood, not a busy loop while Redis is away
    }
  };
  const all = Promise.all(Array.from({ length: inFlight }, worker));
  return { counts, stop: () => ((running = false), all.then(() => counts)) };
}

for (const kind of CLIENTS) {
  test(`Redis killed and restarted mid-flood: insurance meanwhile, exact again after (${kind})`, { timeout: 60_000 }, async (t) => {
    const { client, close } = await connect(kind, server.port);
    t.after(close);
    const errors = [];
    const store = new RedisStore(client, { prefix: `kill:${kind}:`, failure: "insurance", insurance: SHARE, timeoutMs: 200, blockedCache: BLOCKED_CACHE_MS, onError: (e) => errors.push(e) });
    const limiter = new RateLimiter({ ...config, store });
    const f = flood(limiter, 16);
    // The key over its limit before the crash, the crash seen by the flood, then decisions of
    // the restarted Redis's own lifetime: each step waits for what the flood counted.
    await until(() => f.counts.exactDenied > 0, "reached the limit");
    const beforeCrash = f.counts.exactAdmitted;
    await server.kill();
    await until(() => f.counts.unavailableAdmitted + f.counts.unavailableDenied > 0, "noticed the crash");
    await server.start();
    await reconnected(kind, client);
    await until(() => f.counts.exactAdmitted > beforeCrash, "admitted in the new lifetime");
    const c = await f.stop();
    assert.equal(c.errors, 0, JSON.stringify(c));
    assert.ok(c.unavailableAdmitted + c.unavailableDenied > 0, `the outage was noticed: ${JSON.stringify(c)}`);
    assert.ok(errors.length > 0, "onError was told");
    // Two Redis lifetimes (the restart forgot the key), each exact; the outage: this process's share.
    assert.ok(c.exactAdmitted <= 2 * LIMIT, JSON.stringify(c));
    assert.ok(c.unavailableAdmitted <= Math.floor(LIMIT * SHARE), JSON.stringify(c));
    // Decisions resumed: exact, and over state that decodes (a RedisStateError would throw).
    const d = await limiter.limit("k");
    assert.equal(d.degraded, undefined);
    const p = await limiter.peek("k");
    assert.equal(p.degraded, undefined);
    assert.ok(p.remaining >= 0 && p.remaining <= LIMIT);
    console.log(`# kill/restart (${kind}): ${JSON.stringify(c)}`);
  });

  test(`Redis frozen (SIGSTOP) longer than timeoutMs mid-flood: denied meanwhile (closed), exact after (${kind})`, { timeout: 60_000 }, async (t) => {
    const { client, close } = await connect(kind, server.port);
    t.after(close);
    const store = new RedisStore(client, { prefix: `stop:${kind}:`, failure: "closed", timeoutMs: 200, blockedCache: BLOCKED_CACHE_MS });
    const limiter = new RateLimiter({ ...config, store });
    const f = flood(limiter, 16);
    await until(() => f.counts.exactDenied > 0, "reached the limit");
    server.pause();
    // Frozen until a hit was answered by the timeout: the freeze outlived timeoutMs.
    await until(() => f.counts.unavailableDenied > 0, "noticed the freeze");
    server.resume();
    await reconnected(kind, client);
    const c = await f.stop();
    assert.equal(c.errors, 0, JSON.stringify(c));
    assert.ok(c.unavailableDenied > 0, `the freeze was noticed: ${JSON.stringify(c)}`);
    assert.equal(c.unavailableAdmitted, 0, "closed admits nothing it cannot count");
    // One Redis lifetime: exact admissions at most the limit, whatever landed late.
    assert.ok(c.exactAdmitted <= LIMIT, JSON.stringify(c));
    const p = await limiter.peek("k");
    assert.equal(p.degraded, undefined);
    // What Redis holds counts every admission (and maybe denied hits whose write landed late).
    assert.ok(LIMIT - p.remaining >= c.exactAdmitted, `Redis counts ${LIMIT - p.remaining}, ${c.exactAdmitted} admitted`);
    console.log(`# SIGSTOP (${kind}): ${JSON.stringify(c)}`);
  });
}
