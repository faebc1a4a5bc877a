// The cross-runtime equivalence fixture, shared by the tests that replay it: the limiters (same
// order and settings as LIMITERS in examples/equivalence_fixture.rs) and the native crate's
// decisions of a seeded trace, computed at test time.
import { execFileSync } from "node:child_process";
import { dirname, resolve } from "node:path";
import { fileURLToPath } from "node:url";

export const root = resolve(dirname(fileURLToPath(import.meta.url)), "../..");
export const HITS = 120_000;

/** A policy of several limits (its keys live in the wasm store's slab, not its records). */
const SEVERAL = {
  limits: [
    { name: "second", algorithm: "gcra", quota: "8/1s", burst: 4 },
    { name: "ten-seconds", algorithm: "sliding-log", quota: "40/10s" },
  ],
};

export const LIMITERS = [
  { algorithm: "fixed-window", quota: "20/1s" },
  { algorithm: "fixed-window", quota: "15/2s", align: "first-hit" },
  { algorithm: "sliding-log", quota: "10/1s" },
  { algorithm: "sliding-window", quota: "30/3s" },
  { algorithm: "sliding-buckets", quota: "12/1s", precision: "250ms" },
  { algorithm: "token-bucket", quota: "50/5s", burst: 8 },
  { algorithm: "gcra", quota: "25/1s", burst: 6 },
  SEVERAL,
];

/** The multi-key trace's limiters (MULTI and SEVERAL in examples/equivalence_fixture.rs). */
export const MULTI_HITS = 30_000;
export const MULTI_LIMITERS = [{ algorithm: "gcra", quota: "5/1s", burst: 3 }, { algorithm: "sliding-log", quota: "6/1s" }, SEVERAL];

/**
 * The native decisions as CSV lines (see examples/equivalence_fixture.rs for the columns);
 * `multi`: the multi-key trace over MULTI_LIMITERS (keys joined by `+`). The example runs in
 * the dev profile, which `make test-core`'s `cargo test` has already built: a release build
 * would compile the core once more for a run that takes well under a second either way.
 */
export function nativeFixture(multi = false) {
  const args = multi ? [String(MULTI_HITS), "multi"] : [String(HITS)];
  return execFileSync("cargo", ["run", "--quiet", "--example", "equivalence_fixture", "--", ...args], {
    cwd: root,
    encoding: "utf8",
    maxBuffer: 64 << 20,
  });
}
