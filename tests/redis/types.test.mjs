// A TypeScript user's Redis code type-checks against the packed package: with a store the
// limiter is Promise-typed, without one it stays synchronous; a wrong use does not compile.
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

test("the Redis store's types: async with a store, sync without, wrong uses refused", { timeout: 60_000 }, (t) => {
  const project = mkdtempSync(join(tmpdir(), "redis-types-"));
  t.after(() => rmSync(project, { recursive: true, force: true }));
  symlinkSync(resolve(here, "node_modules"), join(project, "node_modules"));
  const run = (file) => execFileSync(tsc, [...flags, file], { cwd: project, encoding: "utf8" });
  writeFileSync(join(project, "ok.mts"), `
    import { RateLimiter, RedisStore, RedisStateError, RedisUnavailableError, type Decision, type RedisStoreOptions } from "tollgate";
    declare const client: unknown;
    const options: RedisStoreOptions = { prefix: "rl:", failure: "closed", clock: "redis", timeoutMs: 200, syncRate: 0, namespace: "api" };
    const limiter = new RateLimiter({ algorithm: "sliding-window", limit: 100, window: "1m", store: new RedisStore(client, options) });
    const d: Decision = await limiter.limit("user:42");
    const degraded: "unavailable" | "contention" | undefined = d.degraded;
    await limiter.refund("user:42", { cost: 1 });
    await limiter.close();
    const memory = new RateLimiter({ algorithm: "gcra", quota: "10/s" });
    const m: Decision = memory.limit("k");
    const reserved = await limiter.reserve("user:42", { cost: 800 });
    const token: string | null = reserved.reservation;
    if (token !== null) {
      const settled = await limiter.settle(token, 120, { now: Date.now() });
      const figures: number = settled.refunded + settled.charged + settled.forgiven + settled.remaining;
    }
    const mr = memory.reserve(["k", "j"], { cost: 2 });
    if (mr.reservation !== null) memory.settle(mr.reservation, 1).refunded.toFixed();
    const bytes: Uint8Array | null = memory.export("k");
    function why(e: unknown): string {
      if (e instanceof RedisStateError) { const c: "redis_state_invalid" = e.code; return c + e.field + (e.namespace ?? ""); }
      if (e instanceof RedisUnavailableError) { const c: "redis_unavailable" = e.code; return c; }
      return "other";
    }
    void degraded; void m; void bytes; void why;`);
  run("ok.mts");
  writeFileSync(join(project, "bad.mts"), `
    import { RateLimiter, RedisStore, type Decision } from "tollgate";
    declare const client: unknown;
    const limiter = new RateLimiter({ algorithm: "gcra", quota: "10/s", store: new RedisStore(client, { failure: "maybe" }) });
    const d: Decision = limiter.limit("k");
    void d;`);
  assert.throws(() => run("bad.mts"), (e) => /maybe/.test(e.stdout) && /Promise<Decision>/.test(e.stdout));
});
