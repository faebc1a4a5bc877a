// One process of the hot-key and fault tests: `node flood.mjs <port> <client> <job JSON>`.
// The job: `{ configs: [{ name, options, store }], hits, inFlight, prefix, key, store }`; for
// each config in turn it sends `hits` hits on one key, `inFlight` at a time, with a RedisStore of
// the job's `store` options, then the config's (default: the store's defaults), and prints per
// config how many were admitted, how many decisions said `degraded` (and why) and how many
// writes were guarded, as one JSON line. Started by the tests with an IPC channel: it says "ready" once connected and starts on
// "go", so that every process floods at once.
import { RateLimiter, RedisStore } from "tollgate";
import { connect } from "./clients.mjs";

const [port, kind, jobText] = process.argv.slice(2);
const job = JSON.parse(jobText);
const { client, close } = await connect(kind, Number(port));
if (process.send) {
  await new Promise((resolve) => {
    process.once("message", resolve);
    process.send("ready");
  });
}
const results = {};
for (const { name, options, store: storeOptions } of job.configs) {
  const store = new RedisStore(client, { prefix: `${job.prefix}${name}:`, ...job.store, ...storeOptions });
  const limiter = new RateLimiter({ ...options, store });
  const r = { admitted: 0, denied: 0, contention: 0, unavailable: 0, errors: 0 };
  let left = job.hits;
  async function worker() {
    while (left-- > 0) {
      try {
        const d = await limiter.limit(job.key ?? "shared");
        if (d.allowed) r.admitted++;
        else r.denied++;
        if (d.degraded) r[d.degraded]++;
      } catch {
        r.errors++;
      }
    }
  }
  await Promise.all(Array.from({ length: job.inFlight }, worker));
  // Writes Redis made under the core's guard (a lost race landed without a round trip), and
  // those whose bytes the core, deciding again, did not produce (must be 0).
  r.guarded = store._guarded.writes;
  r.guardMismatches = store._guarded.mismatches;
  results[name] = r;
}
await close();
process.stdout.write(JSON.stringify(results));
process.disconnect?.();
