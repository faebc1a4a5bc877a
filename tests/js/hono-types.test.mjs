// The types of `tollgate/hono` as a TypeScript user of Hono gets them (the packed tarball,
// hono's own types): hono-rate-limiter's README usage type-checks with only the import line
// changed, for `import` and `require`; what does not mean the same is refused.
import { test } from "node:test";
import assert from "node:assert/strict";
import { symlinkSync, writeFileSync } from "node:fs";
import { join, resolve } from "node:path";
import { install, here, run } from "./packed.mjs";

function tsc(project, files) {
  const flags = ["--noEmit", "--strict", "--module", "nodenext", "--moduleResolution", "nodenext", "--target", "es2022", "--skipLibCheck"];
  try {
    return run(resolve(here, "node_modules/.bin/tsc"), [...flags, ...files], project);
  } catch (e) {
    if (typeof e.stdout !== "string" || e.stdout === "") throw e;
    return e.stdout;
  }
}

test("tollgate/hono's types: Hono middleware, c.get(\"rateLimit\"), webSocketLimiter, onDecision; mistakes refused", (t) => {
  const pkg = install();
  t.after(() => pkg.remove());
  symlinkSync(resolve(here, "node_modules/hono"), join(pkg.project, "node_modules/hono"));
  writeFileSync(join(pkg.project, "ok.mts"), `
    import { Hono, type MiddlewareHandler } from "hono";
    import { upgradeWebSocket } from "hono/cloudflare-workers";
    import { rateLimiter, webSocketLimiter, type HonoRateLimitInfo } from "tollgate/hono";
    import { RedisStore, type DecisionReport } from "tollgate";
    declare const client: unknown;
    const app = new Hono<{ Variables: { rateLimit: HonoRateLimitInfo } }>();
    app.use(
      rateLimiter({
        windowMs: 15 * 60 * 1000,
        limit: 100,
        standardHeaders: "draft-6",
        keyGenerator: (c) => c.req.header("cf-connecting-ip") ?? "",
      }),
    );
    const typed: MiddlewareHandler = rateLimiter({
      algorithm: "gcra", quota: "10/s", store: new RedisStore(client), keyGenerator: (c) => [c.req.path, "global"],
      limit: async (c) => (c.req.query("premium") ? 100 : 10),
      handler: (c, next, options) => c.text(String(options.statusCode), 429),
      onDecision: (r: DecisionReport) => void r.outcome,
    });
    app.use("/api/*", typed);
    app.get("/", (c) => c.json({ left: c.get("rateLimit").remaining, at: c.get("rateLimit").resetTime }));
    const limiter = webSocketLimiter({ windowMs: 60_000, limit: 100, keyGenerator: (c) => "<unique_key>" });
    app.get("/ws", upgradeWebSocket(limiter((c) => ({ onMessage(event, ws) { ws.send("Hello from server!"); } }))));`);
  writeFileSync(join(pkg.project, "user.cts"), `
    import hono = require("tollgate/hono");
    const mw = hono.rateLimiter({ keyGenerator: () => "k" });
    void mw.limiter;`);
  assert.equal(tsc(pkg.project, ["ok.mts", "user.cts"]), "");
  writeFileSync(join(pkg.project, "bad.mts"), `
    import { rateLimiter } from "tollgate/hono";
    rateLimiter({ limit: 5 });
    rateLimiter({ keyGenerator: () => "k", standardHeaders: "draft-5" });
    rateLimiter({ keyGenerator: () => "k", windowMs: "15m" });`);
  const errors = tsc(pkg.project, ["bad.mts"]);
  assert.equal((errors.match(/error TS/g) ?? []).length, 3, errors);
  assert.match(errors, /keyGenerator/);
});
