// Over-admission of sync modes: one key with a limit of 100 per hour (fixed window, current
// window 30 minutes old), hit by several isolates at once for a fixed time; how many of the
// hits are admitted beyond 100. Isolates are separate Miniflare workers (separate V8
// isolates in one workerd) sharing the Durable Object namespace; each request goes to
// isolate (i mod n) via its Host header.
// usage: node bench/overadmission.mjs [seconds per run (default 2)] [concurrency (default 8)]
//                                      [paced hits/s over all clients (default 0: flat out)]
import { start, post, sleep, PRODUCTION_BUILD } from "../test/harness.mjs";

const seconds = Number(process.argv[2] ?? 2);
const concurrency = Number(process.argv[3] ?? 8);
const rate = Number(process.argv[4] ?? 0);
const LIMIT = 100;
const syncs = [0, 10, 100, 1000, -1];
const isolateCounts = [1, 2, 4];
const offsetMs = (((Date.now() - 1_800_000) % 3_600_000) + 3_600_000) % 3_600_000;
const policy = (sync) => ({
  limits: [{ name: "per-hour", algorithm: "fixed-window", limit: LIMIT, window: "1h", offset: `${offsetMs}ms` }],
  syncRate: sync,
});
const POLICIES = Object.fromEntries(syncs.map((s) => [`s${s < 0 ? "local" : s}`, policy(s)]));

const results = [];
for (const n of isolateCounts) {
  const s = await start({ isolates: n, bindings: { POLICIES, TEST_MODE: undefined }, script: PRODUCTION_BUILD });
  try {
    for (const sync of syncs) {
      const name = `s${sync < 0 ? "local" : sync}`;
      const key = `over:${n}:${sync}:${Date.now()}`;
      let allowed = 0;
      let sent = 0;
      const end = Date.now() + seconds * 1000;
      const worker = async (c) => {
        let i = c;
        const t0 = Date.now();
        let mine = 0;
        while (Date.now() < end) {
          if (rate > 0) {
            // Client c sends its k-th hit at t0 + (k * concurrency + c) / rate seconds.
            const due = t0 + ((mine * concurrency + c) * 1000) / rate;
            mine += 1;
            if (due > Date.now()) await sleep(due - Date.now());
            if (Date.now() >= end) break;
          }
          const r = await post(s.url, "/v1/limit", { key, policy: name }, n > 1 ? { host: `w${i % n}.test` } : {});
          i += 1;
          sent += 1;
          if (r.body?.allowed === true) allowed += 1;
        }
      };
      await Promise.all(Array.from({ length: concurrency }, (_, c) => worker(c)));
      const row = { isolates: n, sync, sent, rate: Math.round(sent / seconds), allowed, over: allowed - LIMIT };
      results.push(row);
      console.error(JSON.stringify(row));
    }
  } finally {
    await s.stop();
  }
}
console.log(`| isolates | sync | hits sent | hits/s | admitted | over-admitted |`);
console.log(`|---:|---:|---:|---:|---:|---:|`);
for (const r of results) {
  const sync = r.sync === 0 ? "0 (exact)" : r.sync < 0 ? "-1 (local)" : `${r.sync} ms`;
  console.log(`| ${r.isolates} | ${sync} | ${r.sent} | ${r.rate} | ${r.allowed} | ${r.over} (${((100 * r.over) / LIMIT).toFixed(0)}%) |`);
}
