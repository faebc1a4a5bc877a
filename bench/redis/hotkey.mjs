// `make bench-redis`, part 3: one hot key written by many processes against the same
// processes on distinct keys, tollgate's RedisStore (store defaults) and rate-limiter-flexible's
// RateLimiterRedis in the same run. PROCESSES (32) Node processes, each with 8 hits in flight
// for SECONDS (4), all started together; every hit admitted (a limit of 10^9 per hour), so each
// decision is a write. Repeated REPEATS (3) times, medians reported. Prints a Markdown table.
import { fork } from "node:child_process";
import { fileURLToPath } from "node:url";
import { RedisServer } from "../../tests/redis/redis-server.mjs";

const PROCESSES = Number(process.env.BENCH_PROCESSES ?? 32);
const SECONDS = Number(process.env.BENCH_SECONDS ?? 4);
const REPEATS = Number(process.env.BENCH_REPEATS ?? 3);
const IN_FLIGHT = 8;
const child = fileURLToPath(new URL("./hotkey-child.mjs", import.meta.url));

async function round(port, contender, hot) {
  const procs = Array.from({ length: PROCESSES }, (_, i) =>
    fork(child, [String(port), contender, hot ? "hot" : `key:${i}`, String(SECONDS), String(IN_FLIGHT)], { stdio: ["ignore", "pipe", "inherit", "ipc"] }),
  );
  const outputs = procs.map(
    (p) =>
      new Promise((resolve, reject) => {
        let out = "";
        p.stdout.setEncoding("utf8").on("data", (c) => (out += c));
        p.on("exit", (code) => (code === 0 ? resolve(JSON.parse(out)) : reject(new Error(`hotkey-child exited ${code}`))));
      }),
  );
  await Promise.all(procs.map((p) => new Promise((resolve) => p.once("message", resolve))));
  for (const p of procs) p.send("go");
  const results = await Promise.all(outputs);
  const total = { decisions: 0, admitted: 0, contention: 0, unavailable: 0, errors: 0, guarded: 0 };
  for (const r of results) for (const k of Object.keys(total)) total[k] += r[k];
  return { perSec: total.decisions / SECONDS, ...total };
}

const median = (xs) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];
const server = await RedisServer.start();
const rows = [];
const CONTENDERS = (process.env.BENCH_CONTENDERS ?? "tollgate,flexible").split(",");
for (const contender of CONTENDERS) {
  const runs = { hot: [], distinct: [] };
  for (let r = 0; r < REPEATS; r++) {
    for (const hot of (process.env.BENCH_KEYS ?? "hot,distinct").split(",").map((k) => k === "hot")) {
      const res = await round(server.port, contender, hot);
      runs[hot ? "hot" : "distinct"].push(res);
      console.error(`${contender} ${hot ? "hot" : "distinct"} #${r + 1}: ${Math.round(res.perSec)}/s ${JSON.stringify(res)}`);
    }
  }
  const ratios = runs.hot.map((h, i) => h.perSec / runs.distinct[i].perSec);
  rows.push({ contender, runs, ratio: median(ratios) });
}
await server.stop();

const name = { tollgate: "tollgate RedisStore (ioredis, defaults)", flexible: "rate-limiter-flexible RateLimiterRedis (ioredis)" };
const fmt = (n) => Math.round(n).toLocaleString("en-US");
console.log(`| contender | keys | decisions/s (median; min-max) | degraded: contention / unavailable (all runs) | errors | guarded writes (all runs) | hot / distinct (median of per-run ratios) |`);
console.log(`|---|---|---:|---:|---:|---:|---:|`);
for (const r of rows) {
  for (const kind of ["distinct", "hot"]) {
    const xs = r.runs[kind].map((x) => x.perSec);
    const sum = (k) => r.runs[kind].reduce((t, x) => t + x[k], 0);
    console.log(`| ${name[r.contender]} | ${kind === "hot" ? "one hot key" : `${PROCESSES} distinct keys`} | ${fmt(median(xs))} (${fmt(Math.min(...xs))}-${fmt(Math.max(...xs))}) | ${sum("contention")} / ${sum("unavailable")} | ${sum("errors")} | ${r.contender === "tollgate" ? sum("guarded") : ""} | ${kind === "hot" ? `${(100 * r.ratio).toFixed(0)}%` : ""} |`);
  }
}
