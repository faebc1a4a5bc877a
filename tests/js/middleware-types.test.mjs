// The types of `rateLimit` as an Express user gets them (the packed tarball, Express's own
// @types): in an option's `handler`, `res` is Express's `Response` (`res.status()`) without
// writing `rateLimit<Request, Response>`, as express-rate-limit types it; the middleware is an
// Express `RequestHandler`, and still takes node:http's request and response. Without
// @types/express the functions get the structural types, and nothing asks for Express.
import { test } from "node:test";
import assert from "node:assert/strict";
import { mkdirSync, symlinkSync, writeFileSync } from "node:fs";
import { join, resolve } from "node:path";
import { install, here, run } from "./packed.mjs";

/** tsc over `files` in `project`, strict and without skipLibCheck (the package's .d.ts files are checked too): its diagnostics. */
function tsc(project, files) {
  const flags = ["--noEmit", "--strict", "--module", "nodenext", "--moduleResolution", "nodenext", "--target", "es2022"];
  try {
    return run(resolve(here, "node_modules/.bin/tsc"), [...flags, ...files], project);
  } catch (e) {
    if (typeof e.stdout !== "string" || e.stdout === "") throw e;
    return e.stdout;
  }
}

const NODE_HTTP = `
  import { createServer } from "node:http";
  import { rateLimit } from "tollgate";
  const mw = rateLimit({ limit: 5, windowMs: 60_000 });
  createServer((req, res) => void mw(req, res, () => res.end("ok")));`;

test("rateLimit's types with @types/express: res is Express's Response in a handler, no type arguments; the middleware is a RequestHandler", (t) => {
  const pkg = install();
  t.after(() => pkg.remove());
  symlinkSync(resolve(here, "node_modules/@types"), join(pkg.project, "node_modules/@types"));
  writeFileSync(join(pkg.project, "express.mts"), `
    import express, { type RequestHandler } from "express";
    import rateLimit from "tollgate";
    const app = express();
    app.use(rateLimit({
      windowMs: 60_000,
      limit: async (req) => (req.query.premium ? 100 : 10),
      handler: (req, res, next, options) => { res.status(options.statusCode).json({ path: req.path }); },
      skip: (req) => req.path === "/health",
      requestWasSuccessful: (req, res) => res.statusCode < 400 && res.headersSent,
    }));
    const handler: RequestHandler = rateLimit({ algorithm: "gcra", quota: "10/s", keyGenerator: (req) => req.ip ?? "" });
    app.get("/", handler, (req, res) => res.send("ok"));`);
  writeFileSync(join(pkg.project, "http.mts"), NODE_HTTP);
  assert.equal(tsc(pkg.project, ["express.mts", "http.mts"]), "");
  writeFileSync(join(pkg.project, "bad.mts"), `
    import rateLimit from "tollgate";
    rateLimit({ handler: (req, res) => { res.stauts(429); } });`);
  assert.match(tsc(pkg.project, ["bad.mts"]), /Property 'stauts' does not exist on type 'Response/);
});

test("rateLimit's types without @types/express: the structural request and response, and no missing module", (t) => {
  const pkg = install();
  t.after(() => pkg.remove());
  mkdirSync(join(pkg.project, "node_modules/@types"), { recursive: true });
  symlinkSync(resolve(here, "node_modules/@types/node"), join(pkg.project, "node_modules/@types/node"));
  writeFileSync(join(pkg.project, "http.mts"), `${NODE_HTTP}
    rateLimit({ handler: (req, res) => { res.statusCode = 429; res.end("slow down"); } });`);
  assert.equal(tsc(pkg.project, ["http.mts"]), "");
  writeFileSync(join(pkg.project, "bad.mts"), `
    import rateLimit from "tollgate";
    rateLimit({ handler: (req, res) => { res.status(429); } });`);
  assert.match(tsc(pkg.project, ["bad.mts"]), /Property 'status' does not exist on type 'MiddlewareResponse'/);
});
