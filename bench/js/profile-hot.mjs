// Where one hot key's `limit(key, { now })` spends its time (docs/benchmarks.md, "Where a hot
// key's limit(key) goes"): N checks of one key through the package's Node entry, under
// `node --cpu-prof`; then the profile's self time per function, largest first.
//   node bench/js/profile-hot.mjs [key|handle|lite] [pkg-dir]   (BENCH_N checks, default 5,000,000;
//   pkg-dir: a build of the package other than this checkout's pkg/, e.g. main's for a before/after)
import { execFileSync } from "node:child_process";
import { mkdtempSync, readdirSync, readFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { pathToFileURL } from "node:url";

const N = Number(process.env.BENCH_N ?? 5_000_000);
const T0 = 1_700_000_000_000;
const what = process.argv[2] ?? "key";
const pkg = resolve((process.argv[3] === "--run" ? process.argv[4] : process.argv[3]) ?? new URL("../../pkg", import.meta.url).pathname);

if (process.argv[3] === "--run") {
  const entry = pathToFileURL(join(pkg, "dist/lib", what === "lite" ? "lite.js" : "index.js")).href;
  const { RateLimiter } = await import(entry);
  const options = { algorithm: "gcra", limit: 1000, window: "1s", burst: 100 };
  const l = new RateLimiter(options);
  const key = what === "handle" ? l.key("user:42") : "user:42";
  let ok = 0;
  const t = process.hrtime.bigint();
  // Each decision is kept where a closure sees it (as a caller keeps it, and as
  // bench/js/hot-key.mjs does): a loop that reads one field and drops it lets the JIT remove
  // the object once the call is inlined into the loop.
  let kept;
  const last = () => kept;
  for (let i = 0; i < N; i++) if ((kept = l.limit(key, { now: T0 + i * 0.001 })).allowed) ok++;
  if (last() === undefined) throw new Error("no decision");
  console.log(JSON.stringify({ what, ns: Number(process.hrtime.bigint() - t) / N, ok }));
  process.exit(0);
}

const dir = mkdtempSync(join(tmpdir(), "tollgate-prof-"));
const out = execFileSync(process.execPath, ["--cpu-prof", "--cpu-prof-dir", dir, process.argv[1], what, "--run", pkg], { encoding: "utf8" });
console.log(out.trim());
const profile = JSON.parse(readFileSync(join(dir, readdirSync(dir)[0]), "utf8"));
const dt = new Map(); // node id -> sampled microseconds
profile.samples.forEach((id, i) => dt.set(id, (dt.get(id) ?? 0) + (profile.timeDeltas[i] ?? 0)));
const self = new Map();
let total = 0;
for (const node of profile.nodes) {
  const us = dt.get(node.id) ?? 0;
  total += us;
  const f = node.callFrame;
  const name = `${f.functionName || "(anonymous)"} ${f.url.split("/").pop()}:${f.lineNumber + 1}`;
  self.set(name, (self.get(name) ?? 0) + us);
}
/** Where a function belongs: inside wasm, wasm-bindgen's glue, the JS layer, the GC, the loop. */
function part(name) {
  if (name.startsWith("wasm-function")) return "inside wasm (key store, algorithm, output buffer, allocator)";
  if (/tollgate_wasm(_lite)?\.js/.test(name)) return "wasm-bindgen glue (string encoding, calls)";
  if (/(memory-limiter|decision|options|limits)\.js/.test(name)) return "JS layer (options, decision object)";
  if (name.startsWith("(garbage collector)")) return "garbage collector";
  return "the benchmark loop and the rest";
}
const parts = new Map();
for (const [name, us] of self) parts.set(part(name), (parts.get(part(name)) ?? 0) + us);
console.log("| part | self time |");
console.log("|---|---:|");
for (const [name, us] of [...parts].sort((a, b) => b[1] - a[1])) console.log(`| ${name} | ${((100 * us) / total).toFixed(1)}% |`);
console.log();
console.log("| function | self time |");
console.log("|---|---:|");
for (const [name, us] of [...self].sort((a, b) => b[1] - a[1]).slice(0, 15)) {
  console.log(`| ${name} | ${((100 * us) / total).toFixed(1)}% |`);
}
