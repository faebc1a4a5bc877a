// `make bench-redis`, part 3: one hot key written by many processes against the same
// processes on distinct keys, tollgate's RedisStore (store defaults) and rate-limiter-flexible's
// RateLimiterRedis in the same run. PROCESSES (32) Node processes, each with 8 hits in flight
// for SECONDS (4), all started together; every hit admitted (a limit of 10^9 per hour), so each
// decision is a write. Repeated REPEATS (3) times, medians reported. Prints a Markdown table.
// Per round (stderr): Node's CPU per decision (all processes), Redis's CPU and commands per
// decision (INFO cpu, commandstats), and each process's waits (voluntary context switches: the
// event loop blocked for I/O) per decision. BENCH_CONTENDERS picks and orders the contenders:
// tollgate (pkg/), flexible, base (the package built in BENCH_BASE_PKG, for old-against-new in
// one run); BENCH_KEYS hot,distinct; BENCH_WARMUP hits per process before the start; BENCH_PROFILE
// a folder for the first process's --cpu-prof.
import { fork } from "node:child_process";
import { fileURLToPath } from "node:url";
import { RedisServer } from "../../tests/redis/redis-server.mjs";

const PROCESSES = Number(process.env.BENCH_PROCESSES ?? 32);
const SECONDS = Number(process.env.BENCH_SECONDS ?? 4);
const REPEATS = Number(process.env.BENCH_REPEATS ?? 3);
const IN_FLIGHT = 8;
const child = fileURLToPath(new URL("./hotkey-child.mjs", import.meta.url));

/** Redis's own CPU (µs, user + system) and its command counts (name -> [calls, usec]). */
async function redisStats(admin) {
  const cpu = await admin.info("cpu");
  const num = (k) => Number(new RegExp(`${k}:([0-9.]+)`).exec(cpu)[1]);
  const stats = new Map();
  for (const l of (await admin.info("commandstats")).split("\n")) {
    const m = /^cmdstat_([^:]+):calls=(\d+),usec=(\d+)/.exec(l);
    if (m && !/^(info|client|hello|ping|select|script)/.test(m[1])) stats.set(m[1], [Number(m[2]), Number(m[3])]);
  }
  return { cpu: 1e6 * (num("used_cpu_sys") + num("used_cpu_user")), stats };
}

async function round(port, contender, hot) {
  const procs = Array.from({ length: PROCESSES }, (_, i) =>
    fork(child, [String(port), contender, hot ? "hot" : `key:${i}`, String(SECONDS), String(IN_FLIGHT)], {
      stdio: ["ignore", "pipe", "inherit", "ipc"],
      // BENCH_PROFILE=<dir>: the first process runs under --cpu-prof (profile-child.mjs reads it).
      execArgv: i === 0 && process.env.BENCH_PROFILE ? ["--cpu-prof", `--cpu-prof-dir=${process.env.BENCH_PROFILE}/${contender}-${hot ? "hot" : "distinct"}`] : [],
    }),
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
  const before = await redisStats(admin);
  for (const p of procs) p.send("go");
  const results = await Promise.all(outputs);
  const after = await redisStats(admin);
  const total = { decisions: 0, admitted: 0, contention: 0, unavailable: 0, errors: 0, guarded: 0, cpuRun: 0, cpuBoot: 0, waits: 0, preempted: 0, window: 0 };
  for (const r of results) for (const k of Object.keys(total)) if (k !== "window") total[k] += r[k];
  if (results[0].probe) console.error(`probe: ${JSON.stringify(results.map((r) => r.probe))}`);
  if (process.env.BENCH_PROFILE) console.error(`profiled process's run: ${JSON.stringify(results[0])}`);
  // Every process's run inside [latest start, earliest end] (µs, CLOCK_MONOTONIC: `perf record -k mono`).
  total.window = [Math.max(...results.map((r) => r.window[0])), Math.min(...results.map((r) => r.window[1]))];
  // Per decision: Redis commands and Redis's µs in them (commandstats), Redis's CPU, Node's CPU.
  let calls = 0;
  let usec = 0;
  for (const [name, [c, u]] of after.stats) {
    const [c0, u0] = before.stats.get(name) ?? [0, 0];
    calls += c - c0;
    usec += u - u0;
  }
  const per = (x) => Number((x / total.decisions).toFixed(2));
  const cost = { commands: per(calls), redisCmdUs: per(usec), redisCpuUs: per(after.cpu - before.cpu), nodeCpuUs: per(total.cpuRun), waitsPerDecision: per(total.waits), preemptedPerDecision: per(total.preempted), bootCpuMsPerProc: Math.round(total.cpuBoot / 1000 / PROCESSES) };
  return { perSec: total.decisions / SECONDS, ...total, ...cost };
}

const median = (xs) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];
const server = await RedisServer.start();
const { Redis } = await import("ioredis");
const admin = new Redis({ host: "127.0.0.1", port: server.port });
const CONTENDERS = (process.env.BENCH_CONTENDERS ?? "tollgate,flexible").split(",");
const KINDS = (process.env.BENCH_KEYS ?? "distinct,hot").split(",");
// Interleaved (each repeat runs every contender on every kind), so that a change of the
// machine's load lands on all of them; each ratio is of one repeat's figures.
const runs = new Map(CONTENDERS.map((c) => [c, { hot: [], distinct: [] }]));
for (let r = 0; r < REPEATS; r++) {
  for (const contender of CONTENDERS) {
    for (const kind of KINDS) {
      const res = await round(server.port, contender, kind === "hot");
      runs.get(contender)[kind].push(res);
      const { window, ...shown } = res;
      // The window in seconds of CLOCK_MONOTONIC, as `perf report --time` takes it (`perf record -k mono`).
      const secs = window.map((us) => (us / 1e6).toFixed(6)).join(",");
      console.error(`${contender} ${kind} #${r + 1}: ${Math.round(res.perSec)}/s window ${secs} ${JSON.stringify(shown)}`);
    }
  }
}
admin.disconnect();
await server.stop();

const name = { base: `tollgate RedisStore, ${process.env.BENCH_BASE_PKG} (ioredis, defaults)`, tollgate: "tollgate RedisStore (ioredis, defaults)", flexible: "rate-limiter-flexible RateLimiterRedis (ioredis)" };
const fmt = (n) => Math.round(n).toLocaleString("en-US");
const peer = runs.get("flexible");
console.log(`| contender | keys | decisions/s (median; min-max) | vs flexible (median of per-run ratios) | Node CPU µs / decision | degraded: contention / unavailable (all runs) | errors | guarded writes (all runs) |`);
console.log(`|---|---|---:|---:|---:|---:|---:|---:|`);
for (const [contender, byKind] of runs) {
  for (const kind of KINDS) {
    const rs = byKind[kind];
    const xs = rs.map((x) => x.perSec);
    const sum = (k) => rs.reduce((t, x) => t + x[k], 0);
    const ratio = peer && contender !== "flexible" ? `${median(xs.map((x, i) => x / peer[kind][i].perSec)).toFixed(2)}x` : "";
    console.log(`| ${name[contender]} | ${kind === "hot" ? "one hot key" : `${PROCESSES} distinct keys`} | ${fmt(median(xs))} (${fmt(Math.min(...xs))}-${fmt(Math.max(...xs))}) | ${ratio} | ${fmt(median(rs.map((x) => x.nodeCpuUs)))} | ${sum("contention")} / ${sum("unavailable")} | ${sum("errors")} | ${contender !== "flexible" ? sum("guarded") : ""} |`);
  }
}
