// The shipped wasm modules stay small (their sizes in docs/benchmarks.md, "wasm size").
// Two guards over pkg/ as `make pkg` built it, for each of its two modules:
// - a budget per module, gzipped, with a little headroom for compiler versions: growing past it
//   should be a decision, said in the commit that moves the budget, not an accident;
// - no module has a function table. Each had one while anything reached `core::fmt` (a
//   `to_string()` of a `Display` type, a `format!`, std's panic handler): the table kept the
//   formatting code alive, 2.6 KB gzipped in the limiter's module.
//   Messages are built by wasm-common/src/msg.rs instead, and a release module links no std
//   (wasm-common/src/module.rs).
import test from "node:test";
import assert from "node:assert/strict";
import { readFileSync, readdirSync } from "node:fs";
import { dirname, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { gzipSync } from "node:zlib";

const dist = resolve(dirname(fileURLToPath(import.meta.url)), "../../pkg/dist");
// Each budget is the module's size when it was set plus about 600 bytes of headroom; a change
// of a budget, up or down, says why in its commit, and docs/benchmarks.md ("wasm size") shows
// the sizes and budgets in force. The budgets hold the hot path's one-step record decision,
// the several-keys path through the core's Store trait and a policy decision's one limit held
// without allocating (one decide path, src/decide.rs), reserve and settle (docs/reserve.md): the ledger in every state, the
// limiter's ledgers beside its compact records, the Redis store's reserve and settle steps, and
// calendar windows (a civil-date boundary per fixed window), settling into debt
// (src/reserve/debt.rs), the Redis store's compare-and-swap run (SwapRun) and the decision over
// an express-rate-limit Store's count; one internal decide (wasm/src/limiter.rs) took about
// 750 bytes out of the limiter's module. The allow and deny lists and shadow mode are parsed and
// matched by the core in the limiter's module (wasm/src/controls.rs: the spec's lists,
// `tollgate::access` and core::net's address parser), about 5.4 KB, instead of a JavaScript
// copy of the core's rules; the lite module has shadow mode only and refuses the lists, which
// keeps it 4.5 KB smaller; the client address's key (`ipKeyOf`, the core's
// `tollgate::ip_key`), 1.2 KB of the limiter's module. The penalty's escalations
// (`continueExceeding`, `exponentialBackoff`: their options, a state's strikes, a policy's
// escalation in its bytes) are about 1.2 KB of the limiter's module and 0.85 KB of the lite
// module (whose spec parser reads them). The limiter's module holds the classes a RateLimiter
// never uses (wasm-extras/: the pacer, the lease holder, the Redis store's) since they were
// linked into it: 126.8 KB gzipped for what were 86.7 and 70.4 KB as two modules, which shared
// the core; with the concurrency limit's leases (below) it is 135.9 KB, and 136.7 KB with the Redis store's batch step
// (`batchBegin`/`batchStep`: one key's hits decided over bytes the core keeps). The limiter's budget is its module's size plus about 600; the lite module's is a
// limit: 53,248 (52 KiB). To stay under it the lite module refuses `limits` and the penalty's
// options before the core's parser (`parse_one_limit`, without the code for either) and has no
// state import (the decoder and its checks, about 2.7 KB). The concurrency limit
// (docs/concurrency.md: the algorithm, its leases in a state's bytes, acquire, release and renew,
// the lease token and its spec, in memory and in the Redis store's steps) is in the limiter's
// module and none of the lite
// module (the core's feature `concurrency` is off there). Waiting in line (the tickets in a
// concurrency state's bytes, the core's waiting acquisition and its store step) is about 4.9 KB
// more: 141.7 KB.
const BUDGET = { tollgate_wasm: 142_350, tollgate_wasm_lite: 53_248 };

/** The ids of a wasm module's sections, in order (the binary format's id byte + LEB128 size). */
function sectionIds(bytes) {
  const ids = [];
  let at = 8; // magic and version
  while (at < bytes.length) {
    const id = bytes[at++];
    let size = 0;
    for (let shift = 0; ; shift += 7) {
      const b = bytes[at++];
      size += (b & 0x7f) * 2 ** shift;
      if (b < 0x80) break;
    }
    ids.push(id);
    at += size;
  }
  return ids;
}

for (const [module, budget] of Object.entries(BUDGET)) {
  test(`${module}: at most ${budget} bytes gzipped`, () => {
    const bytes = readFileSync(`${dist}/${module}_bg.wasm`);
    const gzipped = gzipSync(bytes, { level: 9 }).length;
    assert.ok(gzipped <= budget, `${module} is ${gzipped} bytes gzipped (${bytes.length} raw), over its budget of ${budget}`);
  });
}

test("no module has a function table (nothing reaches core::fmt)", () => {
  for (const module of Object.keys(BUDGET)) {
    const ids = sectionIds(readFileSync(`${dist}/${module}_bg.wasm`));
    assert.ok(ids.includes(10), "a code section was found, so the sections were read");
    const ELEMENT = 9;
    assert.ok(!ids.includes(ELEMENT), `${module}: an element section (a function table) is back`);
  }
});

test("each wasm module is shipped once: every target, CommonJS included, loads the files in dist/", () => {
  const wasm = (dir) => readdirSync(dir, { recursive: true }).filter((f) => f.endsWith(".wasm")).sort();
  assert.deepEqual(wasm(dist), Object.keys(BUDGET).map((m) => `${m}_bg.wasm`).sort());
});

test("the docs' tables of the wasm sizes are the build's (scripts/wasm-sizes.mjs)", async () => {
  const { DOCS, blockIn, sizesBlock } = await import("../../scripts/wasm-sizes.mjs");
  const root = resolve(dirname(fileURLToPath(import.meta.url)), "../..");
  for (const doc of [...DOCS, "pkg/README.md"]) {
    assert.equal(blockIn(readFileSync(resolve(root, doc), "utf8")), sizesBlock(dist), doc);
  }
});
