// One hot key under one sliding-log or sliding-buckets limit: `limit(key)` and `peek(key)` per
// call. These keys keep their states in the wasm limiter's slab and are decided by the core's
// `Policy::check`/`peek` of the key's one state (wasm/src/limiter.rs, `decide_single`), unlike
// the GCRA keys of bench.mjs, which are decided in their records.
//   node bench/js/slab.mjs [pkg-dir]    (default: the repository's pkg/)
// Prints the median ns per call of 7 runs of BENCH_N calls (default 400,000) per row.
import { resolve } from "node:path";
import { pathToFileURL } from "node:url";

const dir = resolve(process.argv[2] ?? new URL("../../pkg", import.meta.url).pathname);
const { RateLimiter } = await import(pathToFileURL(`${dir}/dist/lib/index.js`).href);
const N = Number(process.env.BENCH_N ?? 400_000);
const RUNS = 7;
const T0 = 1_700_000_000_000;
const OPTIONS = {
  "sliding-log": { algorithm: "sliding-log", limit: 50, window: "1s" },
  "sliding-buckets": { algorithm: "sliding-buckets", limit: 1000, window: "1s", precision: "100ms" },
};

console.log("| limit | call | median ns/call |");
console.log("|---|---|---:|");
for (const [name, options] of Object.entries(OPTIONS)) {
  for (const call of ["limit", "peek"]) {
    const times = [];
    for (let run = 0; run < RUNS; run++) {
      const limiter = new RateLimiter(options);
      let allowed = 0;
      const started = process.hrtime.bigint();
      for (let i = 0; i < N; i++) if (limiter[call]("user:42", { now: T0 + i * 0.01 }).allowed) allowed++;
      times.push(Number(process.hrtime.bigint() - started) / N);
      if (allowed === 0 && call === "limit") throw new Error(`${name}: nothing was admitted`);
    }
    times.sort((a, b) => a - b);
    console.log(`| ${name} | ${call} | ${times[RUNS >> 1].toFixed(1)} |`);
  }
}
