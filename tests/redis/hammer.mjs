// One of the processes of the concurrency test: `node hammer.mjs <port> <client> <config
// JSON> <hits> <concurrency> <prefix> <now>` sends `hits` hits on one key, `concurrency` at a
// time, all at the time `now` (epoch ms), and prints how many were admitted as JSON.
import { RateLimiter, RedisStore } from "tollgate";
import { connect } from "./clients.mjs";

const [port, kind, config, hits, concurrency, prefix, now] = process.argv.slice(2);
const { client, close } = await connect(kind, Number(port));
const limiter = new RateLimiter({ ...JSON.parse(config), store: new RedisStore(client, { prefix, failure: "throw", timeoutMs: 10_000, maxAttempts: 1000 }) });
let admitted = 0;
let degraded = 0;
let left = Number(hits);
async function worker() {
  while (left-- > 0) {
    const d = await limiter.limit("shared", { now: Number(now) });
    if (d.allowed) admitted++;
    if (d.degraded) degraded++;
  }
}
await Promise.all(Array.from({ length: Number(concurrency) }, worker));
await close();
process.stdout.write(JSON.stringify({ admitted, degraded }));
