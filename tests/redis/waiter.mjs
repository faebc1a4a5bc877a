// One waiter process of the line test (queue.test.mjs): `node waiter.mjs <port> <client> <job
// JSON>`. Acquires a slot of the job's concurrency limit over a RedisStore waiting in line
// (`maxQueue`, `maxWait`), tells the parent over IPC what it got, and when admitted calls the
// "upstream" (an HTTP server in the parent counting what is in flight) for `workMs`, then
// releases its lease and exits.
import http from "node:http";
import { RateLimiter, RedisStore } from "tollgate";
import { connect } from "./clients.mjs";

const [port, kind, jobText] = process.argv.slice(2);
const job = JSON.parse(jobText);
const { client, close } = await connect(kind, Number(port));
const limiter = new RateLimiter({
  algorithm: "concurrency",
  limit: job.limit,
  leaseTtl: job.leaseTtlMs,
  store: new RedisStore(client, { prefix: job.prefix, failure: "closed" }),
});
const send = (m) => new Promise((resolve) => process.send(m, resolve));

function work(ms) {
  return new Promise((resolve) => {
    const req = http.get({ host: "127.0.0.1", port: job.upstreamPort, path: `/work?ms=${ms}&who=${job.who}`, agent: false }, (res) => {
      res.resume();
      res.on("end", resolve);
    });
    req.on("error", resolve);
  });
}

const started = Date.now();
// The longest this process's event loop stalled while it waited (a stall past the claim
// window loses its place in line: the test reports it).
let last = performance.now();
let maxStall = 0;
const ticking = setInterval(() => {
  const t = performance.now();
  maxStall = Math.max(maxStall, t - last);
  last = t;
}, 20);
await send({ type: "start", who: job.who });
const options = { maxWait: job.maxWaitMs };
if (job.maxQueue !== undefined) options.maxQueue = job.maxQueue;
const d = await limiter.acquire(job.key, options);
clearInterval(ticking);
await send({ type: d.allowed ? "admitted" : "refused", who: job.who, waited: Date.now() - started, degraded: d.degraded ?? null, maxStall: Math.round(maxStall) });
if (d.allowed) {
  await work(job.workMs);
  await limiter.release(d.lease);
}
close();
process.disconnect();
