// One hot key from two isolates (Miniflare workers sharing the Durable Object namespace, the
// production build), leased mode against exact mode in the same run: hits decided per second
// with the limit out of reach, then admissions per window with the limit binding (the
// over-admission count: admissions beyond the limit in any window, must be 0).
// The load is autocannon's (keep-alive connections, one autocannon per isolate, each response's
// body read to count admissions per window), as bench/load.mjs's: a client that opens a
// connection per request spends more of the 2-core machine than the Worker does, and measures
// itself. Each isolate is reached on its own port (the harness's `direct`), as a deployed
// Worker is, not through the local runtime's routing worker, whose hop costs both modes about
// what a decision in the isolate costs. Beside hits per second, the runtime's CPU time per
// decided hit (Linux: /proc), which other processes on a shared machine disturb far less.
// usage: node bench/leased.mjs [seconds per run (default 8)] [connections per isolate (default 32)]
import fs from "node:fs";
import os from "node:os";
import autocannon from "autocannon";
import { start, PRODUCTION_BUILD } from "../test/harness.mjs";

const seconds = Number(process.argv[2] ?? 8);
const clients = Number(process.argv[3] ?? 32);
const BINDING_LIMIT = 500;
const fixed = (limit) => ({ limits: [{ name: "per-second", algorithm: "fixed-window", limit, window: "1s" }] });
const POLICIES = {
  exact: fixed(1_000_000),
  leased: { ...fixed(1_000_000), leaseTtl: "1s" },
  "exact-binding": fixed(BINDING_LIMIT),
  "leased-binding": { ...fixed(BINDING_LIMIT), leaseTtl: "1s" },
};

/** CPU time (ms) the local runtime (workerd, this process's children) has spent; 0 without /proc. */
function runtimeCpuMs() {
  let ticks = 0;
  for (const pid of fs.existsSync("/proc") ? fs.readdirSync("/proc") : []) {
    if (!/^\d+$/.test(pid)) continue;
    try {
      const stat = fs.readFileSync(`/proc/${pid}/stat`, "utf8");
      const [, ppid, , , , , , , , , , utime, stime] = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
      if (stat.includes("(workerd") && Number(ppid) === process.pid) ticks += Number(utime) + Number(stime);
    } catch {
      // The process ended meanwhile.
    }
  }
  return ticks * 10; // USER_HZ is 100 on Linux
}

/** Hits one key flat out over `clients` keep-alive connections per isolate for `seconds`. */
async function run(s, policy, key = "hot", duration = seconds) {
  const body = JSON.stringify({ policy, key });
  let decided = 0;
  let errors = 0;
  const admitted = new Map();
  const onResponse = (status, text) => {
    let answer;
    try {
      answer = JSON.parse(text);
    } catch {
      answer = {};
    }
    if (status !== 200 || answer.degraded || typeof answer.allowed !== "boolean") {
      errors += 1;
      return;
    }
    decided += 1;
    const w = Math.round(answer.resetAt / 1000);
    if (answer.allowed) admitted.set(w, (admitted.get(w) ?? 0) + 1);
  };
  const isolate = (url) =>
    autocannon({
      url,
      connections: clients,
      duration,
      requests: [{ method: "POST", path: "/v1/limit", headers: { "content-type": "application/json" }, body, onResponse }],
    });
  const cpuBefore = runtimeCpuMs();
  const results = await Promise.all(s.directUrls.map(isolate));
  // The isolates finish what the last requests began (exchanges in `waitUntil`).
  await new Promise((r) => setTimeout(r, 200));
  const cpuMsPerHit = decided > 0 ? (runtimeCpuMs() - cpuBefore) / decided : 0;
  const elapsed = Math.max(...results.map((r) => r.duration));
  errors += results.reduce((n, r) => n + r.errors + r.timeouts, 0);
  const over = [...admitted.values()].reduce((sum, n) => sum + Math.max(0, n - Number(policy.endsWith("binding") ? BINDING_LIMIT : 1_000_000)), 0);
  const allowed = [...admitted.values()].reduce((a, b) => a + b, 0);
  return { policy, rate: Math.round(decided / elapsed), cpuMsPerHit, decided, allowed, windows: admitted.size, over, errors };
}

const s = await start({ isolates: 2, bindings: { POLICIES, TEST_MODE: undefined }, script: PRODUCTION_BUILD, direct: true });
const rows = [];
try {
  // Both isolates' code warm (compiled, optimised) before anything is measured.
  for (const policy of Object.keys(POLICIES)) await run(s, policy, "warm-up", 1);
  for (const policy of ["exact", "leased", "exact-binding", "leased-binding"]) {
    const row = await run(s, policy);
    rows.push(row);
    console.error(JSON.stringify(row));
  }
} finally {
  await s.stop();
}
const load = os.loadavg().map((l) => l.toFixed(1)).join(" ");
console.log(`load average after the run: ${load} (${os.cpus().length} cores)`);
console.log(`| policy | limit per 1 s window | hits decided/s | runtime CPU ms per hit | admitted | windows | over-admission | failed |`);
console.log(`|---|---:|---:|---:|---:|---:|---:|---:|`);
for (const r of rows) {
  const limit = r.policy.endsWith("binding") ? BINDING_LIMIT : 1_000_000;
  console.log(`| ${r.policy} | ${limit} | ${r.rate} | ${r.cpuMsPerHit.toFixed(3)} | ${r.allowed} | ${r.windows} | ${r.over} | ${r.errors} |`);
}
const [exact, leased] = rows;
console.log(`leased / exact, hits decided per second: ${(leased.rate / exact.rate).toFixed(1)}x`);
if (exact.cpuMsPerHit > 0 && leased.cpuMsPerHit > 0) {
  console.log(`exact / leased, runtime CPU per hit: ${(exact.cpuMsPerHit / leased.cpuMsPerHit).toFixed(1)}x`);
}
