// Bounded load test on loopback: decisions per second and p50/p99 latency of POST /v1/limit
// with autocannon, against the Worker in workerd (Miniflare, persistence in a temp folder).
// usage: node bench/load.mjs [seconds per scenario (default 8)] [connections (default 16)]
import autocannon from "autocannon";
import fs from "node:fs";
import { start, PRODUCTION_BUILD } from "../test/harness.mjs";

const seconds = Number(process.argv[2] ?? 8);
const connections = Number(process.argv[3] ?? 16);
const offsetMs = (((Date.now() - 1_800_000) % 3_600_000) + 3_600_000) % 3_600_000;
const POLICIES = {
  // Large limits so that the hot-key scenarios measure the decision path, not denials.
  exact: { limits: [{ name: "per-second", algorithm: "gcra", limit: 1_000_000, window: "1s" }] },
  denied: { limits: [{ name: "per-hour", algorithm: "fixed-window", limit: 1, window: "1h" }] },
  synced: {
    limits: [{ name: "per-hour", algorithm: "fixed-window", limit: 100_000_000, window: "1h", offset: `${offsetMs}ms` }],
    syncRate: 100,
  },
};

const only = process.env.SCENARIO;
const scenarios = [
  ["sync = 0, one hot key (every hit to its Durable Object)", "exact", () => "hot"],
  ["sync = 0, 10,000 keys (one Durable Object each)", "exact", () => `k${Math.floor(Math.random() * 10_000)}`],
  ["sync = 0, one hot key over its limit (block cache answers the denial)", "denied", () => "blocked"],
  ["sync = 100 ms, one hot key (decided in the isolate)", "synced", () => "hot"],
  ["sync = 100 ms, 10,000 keys", "synced", () => `k${Math.floor(Math.random() * 10_000)}`],
  // Several keys (a list: the body's `keys`): the lease protocol over two objects.
  ["sync = 0, two hot keys all or nothing (user and org)", "exact", () => ["user", "org"]],
  ["sync = 0, two keys of 100 users x 10 orgs all or nothing", "exact", () => {
    const u = Math.floor(Math.random() * 100);
    return [`u${u}`, `o${u % 10}`];
  }],
];

// Each scenario gets a fresh runtime and state folder, so none inherits another's objects.
const rows = [];
for (const [name, policy, key] of scenarios.filter((_, i) => only === undefined || String(i) === only)) {
  const s = await start({ bindings: { POLICIES, TEST_MODE: undefined }, script: PRODUCTION_BUILD });
  try {
    const result = await autocannon({
      url: s.url,
      connections,
      duration: seconds,
      requests: [
        {
          method: "POST",
          path: "/v1/limit",
          headers: { "content-type": "application/json" },
          setupRequest: (req) => {
            const k = key();
            return { ...req, body: JSON.stringify({ ...(Array.isArray(k) ? { keys: k } : { key: k }), policy }) };
          },
        },
      ],
    });
    const codes = Object.entries(result.statusCodeStats ?? {})
      .map(([c, v]) => `${c}: ${v.count}`)
      .join(", ");
    const row = {
      scenario: name,
      rps: Math.round(result.requests.average),
      p50: result.latency.p50,
      p99: result.latency.p99,
      total: result.requests.total,
      errors: result.errors + result.timeouts,
      codes,
    };
    rows.push(row);
    console.error(JSON.stringify(row));
  } finally {
    await s.stop();
  }
}
console.log(`| scenario | decisions/s | p50 ms | p99 ms | requests | status codes |`);
console.log(`|---|---:|---:|---:|---:|---|`);
for (const r of rows) console.log(`| ${r.scenario} | ${r.rps} | ${r.p50} | ${r.p99} | ${r.total} | ${r.codes}${r.errors ? `, errors: ${r.errors}` : ""} |`);
if (process.env.BENCH_OUT) fs.writeFileSync(process.env.BENCH_OUT, JSON.stringify(rows, null, 2));
