// One holder in its own process, for the multi-process lease tests: it knows only the
// Worker's URL, its pool, its own name and the service, and sends as fast as its
// LeasedPacer lets it. It reports what it holds to the parent (IPC) every 100 ms, and on
// "close" closes its LeasedPacer (releasing its leases) and reports what it released.
// The parent may SIGKILL it instead: then its leases lapse after their TTL.
import { LeasedPacer } from "tollgate";
import { send } from "./service.mjs";

const cfg = JSON.parse(process.argv[2]);

/**
 * fetch, with the release (DELETE, idempotent) sent once more when the kept-alive connection
 * it went out on had been closed by the local runtime ("other side closed"): a process the OS
 * starves on a loaded machine can write to a pooled connection whose close it has not read yet.
 * The test is about the leases, not about that race.
 */
async function fetchToPool(url, init) {
  try {
    return await fetch(url, init);
  } catch (e) {
    if (init?.method !== "DELETE" || e?.cause?.code !== "UND_ERR_SOCKET") throw e;
    return fetch(url, init);
  }
}

const lp = new LeasedPacer({
  url: cfg.workerUrl,
  pool: cfg.pool,
  holder: cfg.holder,
  partitions: cfg.partitions,
  ttlMs: cfg.ttlMs,
  token: cfg.token,
  fetch: fetchToPool,
});
let closing = false;

const report = () => {
  const s = lp.status;
  process.send?.({ type: "status", holder: cfg.holder, at: Date.now(), partitions: s.partitions, rate: s.rate, heldRate: s.heldRate });
};
const timer = setInterval(report, 100);

process.on("message", async (m) => {
  if (m === "close") {
    closing = true;
    clearInterval(timer);
    const { released } = await lp.close();
    process.send({ type: "closed", holder: cfg.holder, released, at: Date.now() });
    process.disconnect();
  }
});

await lp.start();
process.send({ type: "ready", holder: cfg.holder, pid: process.pid });
// Each send goes out as soon as its start comes, without waiting for the one before it to be
// answered: the holder sends at its lease's rate, not at the rate a loaded machine completes
// round trips to the service (whose answers the pacer still observes as they arrive).
const inFlight = new Set();
while (!closing) {
  let start;
  try {
    start = await lp.acquire(cfg.cost);
  } catch (e) {
    if (closing) break;
    throw e;
  }
  const sent = send(cfg.serviceUrl, cfg.holder, start, cfg.cost).then(async (res) => {
    lp.observe(res.headers);
    await res.arrayBuffer();
  });
  inFlight.add(sent);
  sent.finally(() => inFlight.delete(sent));
}
await Promise.all(inFlight);
