// `make bench-redis`, part 2: how much the sync modes over-admit. PROCESSES (4) Node
// processes share one key limited to LIMIT (1000) per hour (sliding window; an hour, so that
// crossing a window boundary during the run frees almost nothing), each sending
// hits at RATE (1000/s, paced in 10 ms steps) for SECONDS (2) from the same instant, over a
// local redis-server: syncRate 0 (every hit in Redis), 10, 50, 200 ms, and -1 (local only).
// Prints admitted hits against the limit. `node overadmission.mjs` runs it all; with
// arguments it is one of the processes.
import { fork } from "node:child_process";
import { fileURLToPath } from "node:url";

const PROCESSES = 4;
const LIMIT = 1000;
const RATE = Number(process.env.RATE ?? 1000);
const SECONDS = Number(process.env.BENCH_SECONDS ?? 2);
const config = { algorithm: "sliding-window", limit: LIMIT, window: "1h" };

if (process.argv.length > 2) {
  const [port, syncRate, prefix] = process.argv.slice(2).map((v, i) => (i < 2 ? Number(v) : v));
  const { RateLimiter, RedisStore } = await import("../../pkg/dist/lib/index.js");
  const { createClient } = await import("redis");
  const client = createClient({ socket: { host: "127.0.0.1", port } });
  await client.connect();
  const limiter = new RateLimiter({ ...config, store: new RedisStore(client, { prefix, syncRate, timeoutMs: 5000 }) });
  // Loading takes seconds on a busy machine: say ready, and start when told (same instant).
  const startAt = await new Promise((resolve) => {
    process.once("message", resolve);
    process.send("ready");
  });
  await new Promise((r) => setTimeout(r, startAt - Date.now()));
  let admitted = 0;
  let degraded = 0;
  const perStep = RATE / 100;
  const end = startAt + SECONDS * 1000;
  for (let step = 0; Date.now() < end; step++) {
    const hits = [];
    for (let i = 0; i < perStep; i++) hits.push(limiter.limit("shared"));
    for (const d of await Promise.all(hits)) {
      if (d.allowed) admitted++;
      if (d.degraded) degraded++;
    }
    // Always through the timers phase, even when behind schedule: decisions between syncs
    // need no I/O, and a loop of resolved promises alone would never let the sync timer run.
    const wait = startAt + (step + 1) * 10 - Date.now();
    await new Promise((r) => setTimeout(r, Math.max(0, wait)));
  }
  await limiter.close();
  await client.quit();
  process.send({ admitted, degraded });
  process.exit(0);
}

const { RedisServer } = await import("../../tests/redis/redis-server.mjs");
const server = await RedisServer.start();
const here = fileURLToPath(import.meta.url);
console.log(`${PROCESSES} processes x ${RATE} hits/s x ${SECONDS} s on one key, limit ${LIMIT}/h (sliding window), local redis-server`);
console.log("");
console.log("| syncRate | admitted | over the limit | degraded (failure mode decided) |");
console.log("|---:|---:|---:|---:|");
for (const syncRate of [0, 10, 50, 200, -1]) {
  const children = Array.from({ length: PROCESSES }, () =>
    fork(here, [String(server.port), String(syncRate), `over:${syncRate}:`], { stdio: "inherit" }),
  );
  await Promise.all(children.map((c) => new Promise((resolve) => c.once("message", resolve))));
  const startAt = Date.now() + 200;
  const runs = children.map(
    (child) =>
      new Promise((resolve, reject) => {
        child.on("message", (m) => resolve(m));
        child.on("exit", (code) => code !== 0 && reject(new Error(`exit ${code}`)));
        child.send(startAt);
      }),
  );
  const results = await Promise.all(runs);
  const admitted = results.reduce((a, r) => a + r.admitted, 0);
  const degraded = results.reduce((a, r) => a + r.degraded, 0);
  const over = admitted - LIMIT;
  console.log(`| ${syncRate === -1 ? "< 0 (local)" : syncRate === 0 ? "0 (every hit)" : `${syncRate} ms`} | ${admitted} | ${over} (${((100 * over) / LIMIT).toFixed(1)}%) | ${degraded} |`);
}
await server.stop();
