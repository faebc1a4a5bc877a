// A TypeScript user's pacer code type-checks against the packed package, and a wrong use does not.
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

test("the pacer's types: a user's file type-checks, a wrong option does not", (t) => {
  const project = mkdtempSync(join(tmpdir(), "pacer-types-"));
  t.after(() => rmSync(project, { recursive: true, force: true }));
  symlinkSync(resolve(here, "node_modules"), join(project, "node_modules"));
  const run = (file) => execFileSync(tsc, [...flags, file], { cwd: project, encoding: "utf8" });
  writeFileSync(join(project, "ok.mts"), `
    import { Pacer, PacerQueueFullError, PacerCostError, type PacerOptions } from "tollgate";
    const options: PacerOptions = { rate: { limit: 100, window: "1s" }, grain: 200, maxQueue: 10 };
    const pacer = new Pacer(options);
    await pacer.acquire(5, { signal: AbortSignal.timeout(1000) });
    const post = pacer.pace(async (n: number) => new Response(String(n)), { cost: (n) => n });
    const r: Response = await post(3);
    const until: number | null = pacer.observe(r.headers) ?? pacer.observe({ "retry-after": "1" });
    pacer.setRate("50/s");
    function why(e: unknown): string {
      if (e instanceof PacerQueueFullError) { const c: "pacer_queue_full" = e.code; return c; }
      if (e instanceof PacerCostError) { const m: number = e.maxCost; return String(m); }
      return "other";
    }
    void until; void why;`);
  run("ok.mts");
  writeFileSync(join(project, "bad.mts"), `
    import { Pacer } from "tollgate";
    new Pacer({ rate: "100/s", grian: "200ms" });`);
  assert.throws(() => run("bad.mts"), (e) => /grian/.test(e.stdout));
});
