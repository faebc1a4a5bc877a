// The wasm limiter's decision paths per call: one key decided in its record (`limit(key)`,
// GCRA), and the two that go through the core's `Store::update` of the compact key store
// (wasm/src/policy_states.rs, `PolicyStore`): several keys at once, and one key under several
// limits. Given several package directories (e.g. main's pkg/ and a branch's), the rounds
// alternate between them in one process, so a change is measured against its base under the
// same load.
//   node bench/js/several.mjs [pkg-dir...]    (default: the repository's pkg/)
// Prints the median ns per call of 7 rounds of BENCH_N calls (default 300,000) per row and
// package, and each package's ratio to the first.
import { resolve } from "node:path";
import { pathToFileURL } from "node:url";

const dirs = process.argv.length > 2 ? process.argv.slice(2) : [new URL("../../pkg", import.meta.url).pathname];
const packages = await Promise.all(
  dirs.map((d) => import(pathToFileURL(`${resolve(d)}/dist/lib/index.js`).href).then((m) => m.RateLimiter)),
);
const N = Number(process.env.BENCH_N ?? 300_000);
const ROUNDS = 7;
const T0 = 1_700_000_000_000;
const KEYS = Array.from({ length: 1000 }, (_, i) => `user:${i}`);
const gcra = { algorithm: "gcra", limit: 1000, window: "1s" };
const ROWS = {
  "limit(key), one limit (the key's record)": [gcra, (i) => KEYS[i % 1000]],
  "limit([k1, k2]), one limit (Store::update)": [gcra, (i) => [KEYS[i % 1000], KEYS[(i + 7) % 1000]]],
  "limit(key), two limits (Store::update)": [
    { limits: [{ name: "second", ...gcra }, { name: "minute", algorithm: "fixed-window", limit: 100_000, window: "1m" }] },
    (i) => KEYS[i % 1000],
  ],
};

console.log(`| row | ${dirs.map((d) => `${d} ns/call`).join(" | ")} | ${dirs.slice(1).map((d) => `${d} / ${dirs[0]}`).join(" | ")} |`);
console.log(`|---|${dirs.map(() => "---:").join("|")}|${dirs.slice(1).map(() => "---:").join("|")}|`);
for (const [row, [options, keyOf]] of Object.entries(ROWS)) {
  const times = dirs.map(() => []);
  for (let round = 0; round < ROUNDS; round++) {
    // Each round starts with another package, so none always runs first.
    for (let j = 0; j < dirs.length; j++) {
      const p = (round + j) % dirs.length;
      const limiter = new packages[p](options);
      let allowed = 0;
      const started = process.hrtime.bigint();
      for (let i = 0; i < N; i++) if (limiter.limit(keyOf(i), { now: T0 + i * 0.001 }).allowed) allowed++;
      times[p].push(Number(process.hrtime.bigint() - started) / N);
      if (allowed === 0) throw new Error(`${row}: nothing was admitted`);
    }
  }
  const medians = times.map((t) => t.sort((a, b) => a - b)[ROUNDS >> 1]);
  console.log(`| ${row} | ${medians.map((m) => m.toFixed(0)).join(" | ")} | ${medians.slice(1).map((m) => (m / medians[0]).toFixed(3)).join(" | ")} |`);
}
