// A TypeScript user's LeasedPacer code type-checks against the packed package, and a wrong use does not.
import { test } from "node:test";
import assert from "node:assert/strict";
import { execFileSync } from "node:child_process";
import { mkdtempSync, rmSync, writeFileSync, symlinkSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";

const here = dirname(fileURLToPath(import.meta.url));
const tsc = resolve(here, "../js/node_modules/.bin/tsc"); // installed by scripts/build-pkg.sh
const flags = ["--noEmit", "--strict", "--module", "nodenext", "--moduleResolution", "nodenext", "--target", "es2022", "--lib", "es2022,dom"];

test("LeasedPacer's types: a user's file type-checks, a wrong option does not", (t) => {
  const project = mkdtempSync(join(tmpdir(), "lease-types-"));
  t.after(() => rmSync(project, { recursive: true, force: true }));
  symlinkSync(resolve(here, "node_modules"), join(project, "node_modules"));
  const run = (file) => execFileSync(tsc, [...flags, file], { cwd: project, encoding: "utf8" });
  writeFileSync(join(project, "ok.mts"), `
    import { LeasedPacer, LeaseError, PacerCostError, type LeasedPacerOptions, type LeasedPacerStatus } from "tollgate";
    const options: LeasedPacerOptions = { url: "https://limits.example.com", pool: "ingest", holder: "w1", partitions: 4, ttlMs: 15000, token: "t", renewMargin: 500 };
    const lp = new LeasedPacer(options);
    const st: LeasedPacerStatus = await lp.start();
    const start: number = await lp.acquire(5, { signal: AbortSignal.timeout(1000) });
    const post = lp.pace(async (n: number) => new Response(String(n)), { cost: (n) => n });
    const r: Response = await post(3);
    lp.observe(r.headers);
    const { released }: { released: number } = await lp.close();
    function why(e: unknown): string {
      if (e instanceof LeaseError) { const c: string = e.code; const s: number = e.status; return c + s + e.transient; }
      if (e instanceof PacerCostError) return String(e.maxCost);
      return "other";
    }
    void st; void start; void released; void why; void lp.rate; void lp.status.usableUntil;`);
  run("ok.mts");
  writeFileSync(join(project, "bad.mts"), `
    import { LeasedPacer } from "tollgate";
    new LeasedPacer({ url: "https://x", pool: "p", holder: "h", partitions: 4, ttl: 15000 });`);
  assert.throws(() => run("bad.mts"), (e) => /ttl/.test(e.stdout));
});
