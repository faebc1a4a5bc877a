// `make bench-redis`, part 2: how much the sync modes over-admit. PROCESSES (4) Node
// processes share one key limited to LIMIT (1000) per minute (sliding window), each sending
// hits at RATE (1000/s, paced in 10 ms steps) for SECONDS (2) from the same instant, over a
// local redis-server: syncRate 0 (every hit in Redis), 10, 50, 200 ms, and -1 (local only).
// Prints admitted hits against the limit. `node overadmission.mjs` runs it all; with
// arguments it is one of the processes.
import { fork } from "node:child_process";
import { fileURLToPath } from "node:url";

const PROCESSES = 4;
const LIMIT = 1000;
const RATE = Number(process.env.RATE ?? 1000);
const SECONDS = Number(process.env.SECONDS ?? 2);
const config = { algorithm: "sliding-window", limit: LIMIT, window: "1m" };

if (process.argv.length > 2) {
  const [port, syncRate, startAt, prefix] = process.argv.slice(2).map((v, i) => (i < 3 ? Number(v) : v));
  const { RateLimiter, RedisStore } = await import("../../pkg/dist/node/index.js");
  const { createClient } = await import("redis");
  const client = createClient({ socket: { host: "127.0.0.1", port } });
  await client.connect();
  const limiter = new RateLimiter({ ...config, store: new RedisStore(client, { prefix, syncRate, timeoutMs: 5000 }) });
  await new Promise((r) => setTimeout(r, startAt - Date.now()));
  let admitted = 0;
  const perStep = RATE / 100;
  const end = startAt + SECONDS * 1000;
  for (let step = 0; Date.now() < end; step++) {
    const hits = [];
    for (let i = 0; i < perStep; i++) hits.push(limiter.limit("shared"));
    for (const d of await Promise.all(hits)) if (d.allowed) admitted++;
    const wait = startAt + (step + 1) * 10 - Date.now();
    if (wait > 0) await new Promise((r) => setTimeout(r, wait));
  }
  await limiter.close();
  await client.quit();
  process.send({ admitted });
  process.exit(0);
}

const { RedisServer } = await import("../../tests/redis/redis-server.mjs");
const server = await RedisServer.start();
const here = fileURLToPath(import.meta.url);
console.log(`${PROCESSES} processes x ${RATE} hits/s x ${SECONDS} s on one key, limit ${LIMIT}/min (sliding window), local redis-server`);
console.log("");
console.log("| syncRate | admitted | over the limit |");
console.log("|---:|---:|---:|");
for (const syncRate of [0, 10, 50, 200, -1]) {
  const startAt = Date.now() + 1500;
  const runs = Array.from({ length: PROCESSES }, () =>
    new Promise((resolve, reject) => {
      const child = fork(here, [String(server.port), String(syncRate), String(startAt), `over:${syncRate}:`], { stdio: "inherit" });
      child.on("message", (m) => resolve(m.admitted));
      child.on("exit", (code) => code !== 0 && reject(new Error(`exit ${code}`)));
    }),
  );
  const admitted = (await Promise.all(runs)).reduce((a, b) => a + b, 0);
  const over = admitted - LIMIT;
  console.log(`| ${syncRate === -1 ? "< 0 (local)" : syncRate === 0 ? "0 (every hit)" : `${syncRate} ms`} | ${admitted} | ${over} (${((100 * over) / LIMIT).toFixed(1)}%) |`);
}
await server.stop();
