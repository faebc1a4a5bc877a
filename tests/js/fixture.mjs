// The cross-runtime equivalence fixture, shared by the tests that replay it: the limiters (same
// order and settings as LIMITERS in examples/equivalence_fixture.rs) and the native crate's
// decisions of a seeded trace, computed at test time.
import { execFileSync } from "node:child_process";
import { dirname, resolve } from "node:path";
import { fileURLToPath } from "node:url";

export const root = resolve(dirname(fileURLToPath(import.meta.url)), "../..");
export const HITS = 120_000;

export const LIMITERS = [
  { algorithm: "fixed-window", quota: "20/1s" },
  { algorithm: "fixed-window", quota: "15/2s", align: "first-hit" },
  { algorithm: "sliding-log", quota: "10/1s" },
  { algorithm: "sliding-window", quota: "30/3s" },
  { algorithm: "sliding-buckets", quota: "12/1s", precision: "250ms" },
  { algorithm: "token-bucket", quota: "50/5s", burst: 8 },
  { algorithm: "gcra", quota: "25/1s", burst: 6 },
];

/** The native decisions as CSV lines (see examples/equivalence_fixture.rs for the columns). */
export function nativeFixture() {
  return execFileSync("cargo", ["run", "--quiet", "--release", "--example", "equivalence_fixture", "--", String(HITS)], {
    cwd: root,
    encoding: "utf8",
    maxBuffer: 64 << 20,
  });
}
