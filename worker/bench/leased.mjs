// One hot key from two isolates (Miniflare workers sharing the Durable Object namespace, the
// production build), leased mode against exact mode in the same run: hits decided per second
// with the limit out of reach, then admissions per window with the limit binding (the
// over-admission count: admissions beyond the limit in any window, must be 0).
// usage: node bench/leased.mjs [seconds per run (default 8)] [clients per isolate (default 32)]
import http from "node:http";
import os from "node:os";
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

// No keep-alive: the runtime closes idle connections, and a reused one fails its next request.
const agent = new http.Agent({ keepAlive: false, maxSockets: Infinity });

function post(u, host, body) {
  return new Promise((resolve, reject) => {
    const req = http.request(
      { host: u.hostname, port: u.port, path: "/v1/limit", method: "POST", agent, headers: { host, "content-type": "application/json" } },
      (res) => {
        const chunks = [];
        res.on("data", (c) => chunks.push(c));
        res.on("end", () => resolve({ status: res.statusCode, body: JSON.parse(Buffer.concat(chunks).toString("utf8")) }));
      },
    );
    req.on("error", reject);
    req.end(body);
  });
}

/** Hits one key flat out from `clients` clients per isolate for `seconds`. */
async function run(s, policy) {
  const u = new URL(s.url);
  const body = JSON.stringify({ policy, key: "hot" });
  const deadline = Date.now() + seconds * 1000;
  let decided = 0;
  let errors = 0;
  // Window (its end, resetAt, to the nearest second: an isolate answers the end as its own
  // clock places it, a few ms early) -> admissions.
  const admitted = new Map();
  const client = async (host) => {
    while (Date.now() < deadline) {
      const r = await post(u, host, body).catch(() => ({ status: 0, body: {} }));
      if (r.status !== 200 || r.body.degraded) {
        errors += 1;
        continue;
      }
      decided += 1;
      const w = Math.round(r.body.resetAt / 1000);
      if (r.body.allowed) admitted.set(w, (admitted.get(w) ?? 0) + 1);
    }
  };
  const t0 = performance.now();
  await Promise.all(Array.from({ length: 2 * clients }, (_, i) => client(`w${i % 2}.test`)));
  const elapsed = (performance.now() - t0) / 1000;
  const over = [...admitted.values()].reduce((sum, n) => sum + Math.max(0, n - Number(policy.endsWith("binding") ? BINDING_LIMIT : 1_000_000)), 0);
  const allowed = [...admitted.values()].reduce((a, b) => a + b, 0);
  return { policy, rate: Math.round(decided / elapsed), decided, allowed, windows: admitted.size, over, errors };
}

const s = await start({ isolates: 2, bindings: { POLICIES, TEST_MODE: undefined }, script: PRODUCTION_BUILD });
const rows = [];
try {
  for (const policy of ["exact", "leased", "exact-binding", "leased-binding"]) {
    const row = await run(s, policy);
    rows.push(row);
    console.error(JSON.stringify(row));
  }
} finally {
  agent.destroy();
  await s.stop();
}
const load = os.loadavg().map((l) => l.toFixed(1)).join(" ");
console.log(`load average after the run: ${load} (${os.cpus().length} cores)`);
console.log(`| policy | limit per 1 s window | hits decided/s | admitted | windows | over-admission | failed |`);
console.log(`|---|---:|---:|---:|---:|---:|---:|`);
for (const r of rows) {
  const limit = r.policy.endsWith("binding") ? BINDING_LIMIT : 1_000_000;
  console.log(`| ${r.policy} | ${limit} | ${r.rate} | ${r.allowed} | ${r.windows} | ${r.over} | ${r.errors} |`);
}
const [exact, leased] = rows;
console.log(`leased / exact, hits decided per second: ${(leased.rate / exact.rate).toFixed(1)}x`);
