// `make bench-redis`, part 4: starved processes are not a Redis outage. PROCESSES (32) Node
// processes (half node-redis, half ioredis) on one key of a limit of LIMIT (2,000) per hour,
// each with 8 hits in flight, HITS (120) hits each, the store's defaults (`failure: "open"`,
// `timeoutMs` 500), on a machine with fewer cores than processes; REPEATS (3) runs, each on a
// fresh key. Reports per run what was admitted and how many decisions were taken for an
// outage (docs/reliability.md): a process that was only descheduled takes none (lib/stores/deadline.js),
// so while Redis itself answers within timeoutMs no run admits more than the limit. Not
// asserted: on a machine loaded enough, Redis itself answers later than timeoutMs, which is an
// outage by the store's definition. tests/redis/busy.test.mjs holds the rule itself.
import { RedisServer } from "../../tests/redis/redis-server.mjs";
import { floodFrom, summed } from "../../tests/redis/processes.mjs";

const PROCESSES = Number(process.env.BENCH_PROCESSES ?? 32);
const LIMIT = 2000;
const HITS = Number(process.env.BENCH_HITS ?? 120);
const REPEATS = Number(process.env.BENCH_REPEATS ?? 3);
const OPTIONS = { algorithm: "fixed-window", align: "first-hit", limit: LIMIT, window: "1h" };

const server = await RedisServer.start();
const runs = [];
try {
  for (let r = 0; r < REPEATS; r++) {
    const start = performance.now();
    const results = await floodFrom(PROCESSES, server.port, {
      configs: [{ name: "hot", options: OPTIONS }],
      hits: HITS,
      inFlight: 8,
      prefix: `busy-hot:${r}:`,
      store: {},
    }, { timeoutMs: 300_000 });
    const t = summed(results).hot;
    t.seconds = (performance.now() - start) / 1000;
    runs.push(t);
    console.error(`run ${r + 1}: ${JSON.stringify(t)}`);
  }
} finally {
  await server.stop();
}
console.log(`| run | processes x hits | admitted (limit ${LIMIT.toLocaleString("en-US")}) | unavailable | contention | errors | guarded writes | seconds (with start-up) |`);
console.log(`|---:|---|---:|---:|---:|---:|---:|---:|`);
for (const [i, t] of runs.entries()) {
  console.log(`| ${i + 1} | ${PROCESSES} x ${HITS} | ${t.admitted.toLocaleString("en-US")} | ${t.unavailable} | ${t.contention} | ${t.errors} | ${t.guarded} | ${t.seconds.toFixed(1)} |`);
}
