// Contention is not an outage: 16 processes (real child processes, both clients) flood ONE key
// of a small limit with the store's default options (failure "open", maxAttempts 64) but for
// timeoutMs, for every algorithm. Every decision whose races were all lost must be a denial
// (`degraded: "contention"`), never the failure mode's admission, so the processes together
// admit at most the limit plus what the algorithm refills while they run. timeoutMs is 30 s, not
// the default 500 ms: the test is about contention, with Redis up, and every hit must end as a
// decision over Redis's bytes however slowly a loaded machine serves it (bench/redis/busy-hotkey.mjs
// runs the store's defaults). GCRA's floods also go through the guarded update
// (src/guard.rs): writes that lost a race land under the core's guard, and the bound holds.
import { test, before, after } from "node:test";
import assert from "node:assert/strict";
import { RedisServer } from "./redis-server.mjs";
import { floodFrom, summed } from "./processes.mjs";

const PROCESSES = 16;
const LIMIT = 100;
const WINDOW_MS = 3_600_000;

const CONFIGS = [
  { name: "fixed-window", options: { algorithm: "fixed-window", limit: LIMIT, window: "1h" }, clock: true },
  { name: "fixed-window-first-hit", options: { algorithm: "fixed-window", align: "first-hit", limit: LIMIT, window: "1h" } },
  { name: "sliding-log", options: { algorithm: "sliding-log", limit: LIMIT, window: "1h" } },
  { name: "sliding-window", options: { algorithm: "sliding-window", limit: LIMIT, window: "1h" }, clock: true },
  { name: "sliding-buckets", options: { algorithm: "sliding-buckets", limit: LIMIT, window: "1h", precision: "6m" }, clock: true },
  { name: "token-bucket", options: { algorithm: "token-bucket", limit: LIMIT, window: "1h" } },
  { name: "gcra", options: { algorithm: "gcra", limit: LIMIT, window: "1h" } },
];
// The same floods where every lost race ends the hit (maxAttempts 1): hundreds of decisions by
// contention, each of which must be a denial.
for (const name of ["fixed-window-first-hit", "sliding-log", "gcra"]) {
  const c = CONFIGS.find((c) => c.name === name);
  CONFIGS.push({ ...c, name: `${name}, maxAttempts 1`, store: { maxAttempts: 1 } });
}

// GCRA again with room for every hit: every batch of every process can then be written under
// its guard, so the guarded path is exercised by the whole flood, not only its first 100 hits.
CONFIGS.push({ name: "gcra, every hit admitted", options: { algorithm: "gcra", limit: 100_000, window: "1h" }, limit: 100_000 });

let server;
before(async () => {
  server = await RedisServer.start();
});
after(() => server.stop());

test(`${PROCESSES} processes on one key admit at most the limit, for every algorithm, contention denied`, { timeout: 180_000 }, async () => {
  const start = Date.now();
  const results = await floodFrom(PROCESSES, server.port, {
    configs: CONFIGS.map(({ name, options, store }) => ({ name, options, store })),
    hits: 40, // 640 hits per algorithm against a limit of 100
    inFlight: 8,
    prefix: "hot:",
    store: { timeoutMs: 30_000 },
  });
  const end = Date.now();
  const total = summed(results);
  // What a limit of LIMIT per hour can refill while the run lasts, and a clock window's
  // boundary crossed mid-run (a new window: up to LIMIT more).
  const refill = (limit) => Math.ceil((limit * (end - start)) / WINDOW_MS) + 1;
  const crossed = Math.floor(start / WINDOW_MS) !== Math.floor(end / WINDOW_MS);
  for (const { name, clock, limit = LIMIT } of CONFIGS) {
    const t = total[name];
    const bound = limit + refill(limit) + (clock && crossed ? limit : 0);
    assert.equal(t.errors, 0, `${name}: ${JSON.stringify(t)}`);
    assert.equal(t.unavailable, 0, `${name}: Redis was up all along: ${JSON.stringify(t)}`);
    assert.equal(t.admitted + t.denied, PROCESSES * 40, `${name}: every hit answered`);
    assert.ok(t.admitted <= bound, `${name}: admitted ${t.admitted}, at most ${bound}: ${JSON.stringify(t)}`);
    assert.ok(t.admitted >= 1, `${name}: nothing admitted: ${JSON.stringify(t)}`);
    assert.equal(t.guardMismatches, 0, `${name}: Redis wrote bytes the core does not decide: ${JSON.stringify(t)}`);
    console.log(`# ${name}: ${JSON.stringify(t)} (bound ${bound})`);
  }
  // GCRA's writes carry the core's guard (src/guard.rs): the processes that lost a race to
  // another's write landed theirs without a round trip, and the bound above still held.
  const gcra = CONFIGS.filter((c) => c.name.startsWith("gcra")).reduce((n, c) => n + total[c.name].guarded, 0);
  assert.ok(gcra >= 1, `no GCRA write was guarded: ${JSON.stringify(CONFIGS.map((c) => [c.name, total[c.name].guarded]))}`);
});

