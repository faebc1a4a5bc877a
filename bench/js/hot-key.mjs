// One hot key in Node (docs/benchmarks.md, "Where a hot key's limit(key) goes"): the per-call
// APIs of one or more builds of the package, each in fresh processes, runs alternating between
// the builds, with the plain-JS GCRA over a Map (bench/js/keys.mjs) and the floor of a call
// measured in every process, so each figure has its references from the same moment. The
// floor is what any `limit()` of this shape costs at least: one call into the same wasm module
// that does nothing (the `size` getter) and a fresh object of a decision's shape (its one-entry
// `limits` array included) that the caller keeps, measured apart and together.
//   node bench/js/hot-key.mjs [pkg-dir ...]      (default: this checkout's pkg/)
//   BENCH_N checks per measure (default 2,000,000), BENCH_RUNS alternating runs (default 3).
// Prints, per call and build, the median ns per check and its ratio to the plain GCRA of the
// same process (the median of the runs' ratios).
import { execFileSync } from "node:child_process";
import { resolve } from "node:path";
import { pathToFileURL } from "node:url";
import { PlainGcra, PlainGcraDecision } from "./keys.mjs";

const N = Number(process.env.BENCH_N ?? 2_000_000);
const RUNS = Number(process.env.BENCH_RUNS ?? 3);
const T0 = 1_700_000_000_000;
const CALLS = ["key", "handle", "lite"];
const OPTIONS = { algorithm: "gcra", limit: 1000, window: "1s", burst: 100 };
/** Where the floor's objects go, so that none is optimised away. */
let kept;

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
  const at = (f) => pathToFileURL(resolve(dir, "dist/lib", f)).href;
  const { RateLimiter } = await import(at(what === "lite" ? "lite.js" : "index.js"));
  const l = new RateLimiter(OPTIONS);
  const key = what === "handle" ? l.key("user:42") : "user:42";
  const opts = (i) => ({ now: T0 + i * 0.001 });
  const plain = new PlainGcra(1000, 1000, 100);
  const plainDecision = new PlainGcraDecision(1000, 1000, 100);
  const floor = new RateLimiter(OPTIONS);
  // The numbers a decision is read from (a wasm limiter's output buffer is a Float64Array too).
  const v = new Float64Array(16).fill(1);
  const object = (i) => {
    const resetAt = T0 + i;
    const allowed = v[0] === 1;
    return {
      allowed, limit: v[1], remaining: v[2], resetAt, retryAfter: v[4], blockedBy: null,
      limits: [{ name: "", allowed, limit: v[1], remaining: v[2], resetAt, retryAfter: v[4], nextUnitAfter: v[15] }],
    };
  };
  const measures = {
    // The decision is kept, as a caller keeps it (and as the plain decision and the floor
    // are): a loop that reads one field of it and drops it lets the JIT remove the object.
    tollgate: (i) => (kept = l.limit(key, opts(i))).allowed,
    plain: (i) => plain.limit("user:42", T0 + i * 0.001),
    plainDecision: (i) => (kept = plainDecision.limit("user:42", T0 + i * 0.001)).allowed,
    call: (i) => floor.size === i,
    object: (i) => (kept = object(i)).allowed,
    floor: (i) => floor.size + (kept = object(i)).limit === i,
  };
  // A first pass warms every loop up; the second, later in synthetic time, is the figure.
  const out = {};
  for (let pass = 0; pass < 2; pass++) {
    for (const [name, body] of Object.entries(measures)) out[name] = measure(body, pass * N);
  }
  const ns = Object.fromEntries(Object.entries(out).map(([name, [t]]) => [name, t]));
  console.log(JSON.stringify({ ...ns, ok: out.tollgate[1], plainOk: out.plain[1], plainDecisionOk: out.plainDecision[1] }));
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
      if (r.ok !== r.plainOk || r.ok !== r.plainDecisionOk) {
        throw new Error(`${dir} ${what}: admitted ${r.ok}, the plain GCRA ${r.plainOk}, answering a decision ${r.plainDecisionOk}`);
      }
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
console.log("| call | package | ns per check (runs) | median | plain GCRA | plain GCRA answering a decision | floor: call / object / both | vs plain | vs plain answering a decision | vs floor |");
console.log("|---|---|---|---:|---:|---:|---:|---:|---:|---:|");
const label = { key: "`limit(key, { now })`", handle: "`limit(handle, { now })`", lite: "`limit(key, { now })`, `tollgate/lite`" };
for (const what of CALLS) {
  for (const dir of dirs) {
    const rs = results.get(`${dir}\t${what}`);
    const f = (x) => x.toFixed(1);
    const m = (name) => median(rs.map((r) => r[name]));
    console.log(
      `| ${label[what]} | ${dir} | ${rs.map((r) => f(r.tollgate)).join(" ")} | ${f(m("tollgate"))} | ${f(m("plain"))} | ${f(m("plainDecision"))} | ` +
        `${f(m("call"))} / ${f(m("object"))} / ${f(m("floor"))} | ${median(rs.map((r) => r.tollgate / r.plain)).toFixed(2)}x | ` +
        `${median(rs.map((r) => r.tollgate / r.plainDecision)).toFixed(2)}x | ${median(rs.map((r) => r.tollgate / r.floor)).toFixed(2)}x |`,
    );
  }
}
