// One holder process of the kill test (kill.test.mjs): `node holder.mjs <port> <client> <job JSON>`.
// Loops until told to stop: acquires a slot of the job's concurrency limit over a RedisStore
// (polling while denied), calls the "upstream" (an HTTP server in the test's process that
// counts what is in flight) for work of random length while the lease is live, renewing it
// during long work, then releases it. Reports each lease to the parent over IPC, so the
// parent can kill it mid-work; prints its counts as one JSON line when stopped.
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
  // Closed: a store that does not answer admits nothing (open would admit past the limit).
  store: new RedisStore(client, { prefix: job.prefix, timeoutMs: job.timeoutMs, failure: "closed" }),
});
const agent = new http.Agent({ keepAlive: false });
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));
const between = (a, b) => a + Math.random() * (b - a);
let stopping = false;
const counts = { held: 0, released: 0, denied: 0, contention: 0, unavailable: 0, expiredBeforeWork: 0, renewed: 0, lost: 0, errors: 0 };

/** The upstream call: resolves when the upstream answered (after `ms`), or the call was cut. */
function work(ms, signal) {
  return new Promise((resolve) => {
    const req = http.get({ host: "127.0.0.1", port: job.upstreamPort, path: `/work?ms=${Math.round(ms)}`, agent, signal }, (res) => {
      res.resume();
      res.on("end", resolve);
      res.on("error", resolve);
    });
    req.on("error", resolve);
  });
}

async function hold() {
  const d = await limiter.acquire(job.key);
  if (!d.allowed) {
    counts.denied++;
    // Contention (other writers kept winning) is a denial: busy is not broken.
    if (d.degraded) counts[d.degraded === "contention" ? "contention" : "unavailable"]++;
    // A release anywhere frees a slot before the nearest expiry: poll, not only retryAfter.
    await sleep(Math.min(d.retryAfter, between(5, 25)));
    return;
  }
  counts.held++;
  const long = Math.random() < job.longShare;
  const ms = long ? between(job.longMin, job.longMax) : between(job.workMin, job.workMax);
  process.send({ type: "hold", lease: d.lease, expiresAt: d.expiresAt, ms });
  let expiresAt = d.expiresAt;
  // Work starts only on a live lease, with room for the request to arrive.
  if (Date.now() >= expiresAt - job.margin) {
    counts.expiredBeforeWork++;
  } else {
    const cut = new AbortController();
    let renewing = null;
    const timer = setInterval(() => {
      renewing = limiter.renew(d.lease).then(
        (r) => {
          expiresAt = r.expiresAt;
          counts.renewed++;
        },
        () => {
          // The lease is gone (expired while this process was starved): stop the work.
          counts.lost++;
          cut.abort();
        },
      );
    }, job.renewEveryMs);
    await work(ms, cut.signal);
    clearInterval(timer);
    await renewing;
  }
  const r = await limiter.release(d.lease);
  if (r.released) counts.released++;
}

process.on("message", (m) => {
  if (m === "stop") stopping = true;
});
await new Promise((resolve) => {
  process.once("message", resolve);
  process.send("ready");
});
while (!stopping) {
  try {
    await hold();
  } catch {
    counts.errors++;
    await sleep(10);
  }
}
await close();
process.send({ type: "counts", counts });
process.disconnect();
