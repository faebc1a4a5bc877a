// One hot key in Node (docs/benchmarks.md, "Where a hot key's limit(key) goes"): the per-call
// APIs of one or more builds of the package, each in fresh processes, runs alternating between
// the builds, with the plain-JS GCRA over a Map (bench/js/keys.mjs) and the cost floor of a
// call (one call into the same wasm module that does nothing, plus a decision-shaped object)
// measured in every process, so each figure has its floor from the same moment.
//   node bench/js/hot-key.mjs [pkg-dir ...]      (default: this checkout's pkg/)
//   BENCH_N checks per measure (default 2,000,000), BENCH_RUNS alternating runs (default 3).
// Prints, per call and build, the median ns per check and its ratio to the plain GCRA of the
// same process (the median of the runs' ratios).
import { execFileSync } from "node:child_process";
import { resolve } from "node:path";
import { pathToFileURL } from "node:url";
import { PlainGcra } from "./keys.mjs";

const N = Number(process.env.BENCH_N ?? 2_000_000);
const RUNS = Number(process.env.BENCH_RUNS ?? 3);
const T0 = 1_700_000_000_000;
const CALLS = ["key", "handle", "lite"];
const OPTIONS = { algorithm: "gcra", limit: 1000, window: "1s", burst: 100 };

/** ns per iteration of `body(i)` for i in from..from + N (its admitted count kept live). */
function measure(body, from) {
  let ok = 0;
  const t = process.hrtime.bigint();
  for (let i = from; i < from + N; i++) if (body(i)) ok++;
  const ns = Number(process.hrtime.bigint() - t) / N;
  return [ns, ok];
}

/** One process: the call `what` of the package in `dir`, its floor and the plain GCRA. */
async function child(dir, what) {
  const at = (f) => pathToFileURL(resolve(dir, "dist/node", f)).href;
  const { RateLimiter } = await import(at(what === "lite" ? "lite.js" : "index.js"));
  const l = new RateLimiter(OPTIONS);
  const key = what === "handle" ? l.key("user:42") : "user:42";
  const opts = (i) => ({ now: T0 + i * 0.001 });
  const plain = new PlainGcra(1000, 1000, 100);
  const floor = new RateLimiter(OPTIONS);
  // The floor: a call into the same module that decides nothing (the `size` getter), and an
  // object of a decision's shape with a one-entry `limits` array.
  const floorCall = (i) => {
    const n = floor.size + i;
    const d = {
      allowed: true, limit: 100, remaining: n, resetAt: n, retryAfter: 0, blockedBy: null,
      limits: [{ name: "", allowed: true, limit: 100, remaining: n, resetAt: n, retryAfter: 0, nextUnitAfter: 0 }],
    };
    return d.allowed;
  };
  const measures = {
    tollgate: (i) => l.limit(key, opts(i)).allowed,
    plain: (i) => plain.limit("user:42", T0 + i * 0.001),
    floor: floorCall,
  };
  // A first pass warms every loop up; the second, later in synthetic time, is the figure.
  const out = {};
  for (let pass = 0; pass < 2; pass++) {
    for (const [name, body] of Object.entries(measures)) out[name] = measure(body, pass * N);
  }
  console.log(JSON.stringify({ tollgate: out.tollgate[0], plain: out.plain[0], floor: out.floor[0], ok: out.tollgate[1], plainOk: out.plain[1] }));
}

if (process.argv[2] === "--child") {
  await child(process.argv[3], process.argv[4]);
  process.exit(0);
}

const dirs = process.argv.length > 2 ? process.argv.slice(2) : [new URL("../../pkg", import.meta.url).pathname];
const results = new Map(); // `${dir}\t${what}` -> [{tollgate, plain, floor}]
for (let run = 0; run < RUNS; run++) {
  for (const what of CALLS) {
    for (const dir of dirs) {
      const r = JSON.parse(execFileSync(process.execPath, [process.argv[1], "--child", dir, what], { encoding: "utf8" }));
      if (r.ok !== r.plainOk) throw new Error(`${dir} ${what}: admitted ${r.ok}, the plain GCRA ${r.plainOk}`);
      const k = `${dir}\t${what}`;
      results.set(k, [...(results.get(k) ?? []), r]);
    }
  }
}
const median = (xs) => {
  const s = [...xs].sort((a, b) => a - b);
  return s.length % 2 ? s[(s.length - 1) / 2] : (s[s.length / 2 - 1] + s[s.length / 2]) / 2;
};
console.log(`node ${process.version}, ${N} checks per measure, ${RUNS} alternating runs; medians`);
console.log("| call | package | ns per check (runs) | median | plain GCRA | floor (call + object) | vs plain |");
console.log("|---|---|---|---:|---:|---:|---:|");
const label = { key: "`limit(key, { now })`", handle: "`limit(handle, { now })`", lite: "`limit(key, { now })`, `tollgate/lite`" };
for (const what of CALLS) {
  for (const dir of dirs) {
    const rs = results.get(`${dir}\t${what}`);
    const f = (x) => x.toFixed(1);
    console.log(
      `| ${label[what]} | ${dir} | ${rs.map((r) => f(r.tollgate)).join(" ")} | ${f(median(rs.map((r) => r.tollgate)))} | ` +
        `${f(median(rs.map((r) => r.plain)))} | ${f(median(rs.map((r) => r.floor)))} | ${median(rs.map((r) => r.tollgate / r.plain)).toFixed(2)}x |`,
    );
  }
}
