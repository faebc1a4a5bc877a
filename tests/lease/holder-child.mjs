// One holder in its own process, for the multi-process lease tests: it knows only the
// Worker's URL, its pool, its own name and the service, and sends as fast as its
// LeasedPacer lets it. It reports what it holds to the parent (IPC) every 100 ms, and on
// "close" closes its LeasedPacer (releasing its leases) and reports what it released.
// The parent may SIGKILL it instead: then its leases lapse after their TTL.
import { LeasedPacer } from "tollgate";
import { send } from "./service.mjs";

const cfg = JSON.parse(process.argv[2]);
const lp = new LeasedPacer({
  url: cfg.workerUrl,
  pool: cfg.pool,
  holder: cfg.holder,
  partitions: cfg.partitions,
  ttlMs: cfg.ttlMs,
  token: cfg.token,
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
while (!closing) {
  let start;
  try {
    start = await lp.acquire(cfg.cost);
  } catch (e) {
    if (closing) break;
    throw e;
  }
  const res = await send(cfg.serviceUrl, cfg.holder, start, cfg.cost);
  lp.observe(res.headers);
  await res.arrayBuffer();
}
