// Browser apps bundled by Vite 8 (`vite build`, and served by `vite` in dev) and webpack 5
// (production build), each run in Debian's headless Chromium: their decisions on a slice of
// the equivalence fixture (tests/js/fixture.mjs) equal Node's from the same tarball, which equal
// the native crate's. No bundler setting: browser/ holds only index.html and main.js.
import test, { before } from "node:test";
import assert from "node:assert/strict";
import { copyFileSync, readFileSync } from "node:fs";
import { createServer } from "node:http";
import { extname, join, resolve } from "node:path";
import webpack from "webpack";
import { RateLimiter } from "tollgate";
import { LIMITERS, nativeFixture } from "../js/fixture.mjs";
import { launchChromium } from "../js/chromium.mjs";
import { appCopy, bin, freePort, run, serve } from "./harness.mjs";

const SLICE = 20_000; // hits of the fixture's trace: every limiter, denials and admissions
let csv, node;

/** The decisions of `limiters` (options) on the CSV's hits, as browser/main.js writes them. */
function replay(options, trace) {
  const limiters = options.map((o) => new RateLimiter(o));
  return trace
    .split("\n")
    .filter(Boolean)
    .map((line) => {
      const [l, key, now, cost] = line.split(",");
      const d = limiters[+l].limit(key.includes("+") ? key.split("+") : key, { now: +now, cost: +cost });
      return `${+d.allowed},${d.remaining},${d.resetAt},${d.retryAfter}`;
    })
    .join("\n");
}

before(() => {
  const lines = nativeFixture().split("\n").filter(Boolean).slice(0, SLICE);
  csv = lines.join("\n");
  node = replay(LIMITERS, csv);
  const native = lines.map((l) => l.split(",").slice(4, 8).join(",")).join("\n");
  assert.equal(node, native, "Node's decisions are the native crate's");
  assert.equal(new Set(lines.map((l) => l.split(",")[0] + l.split(",")[4])).size, LIMITERS.length * 2, "the slice has denials and admissions for every limiter");
});

/** Serves the files of `dir` on 127.0.0.1 until `close()`. */
async function staticServer(dir) {
  const types = { ".html": "text/html", ".js": "text/javascript", ".wasm": "application/wasm" };
  const server = createServer((req, res) => {
    const file = resolve(dir, "." + (req.url === "/" ? "/index.html" : req.url.split("?")[0]));
    try {
      if (!file.startsWith(dir)) throw new Error("outside");
      const body = readFileSync(file);
      res.writeHead(200, { "content-type": types[extname(file)] ?? "application/octet-stream" }).end(body);
    } catch {
      res.writeHead(404).end();
    }
  });
  await new Promise((ok) => server.listen(0, "127.0.0.1", ok));
  return { base: `http://127.0.0.1:${server.address().port}`, stop: () => new Promise((ok) => server.close(ok)) };
}

/** Opens `url` in Chromium, waits for the app, and checks its decisions against Node's. */
async function assertSameDecisions(url, what) {
  const browser = await launchChromium();
  try {
    const page = await browser.newPage();
    const errors = [];
    page.on("pageerror", (e) => errors.push(e.message));
    page.on("console", (m) => m.type() === "error" && errors.push(`console: ${m.text()}`));
    page.on("requestfailed", (r) => errors.push(`request failed: ${r.url()}`));
    await page.goto(url);
    await page.waitForFunction(() => globalThis.ready === true, null, { timeout: 60_000 }).catch(() => {
      throw new Error(`${what}: the app did not start; page errors: ${JSON.stringify(errors)}`);
    });
    const got = await page.evaluate(([options, trace]) => globalThis.replay(options, trace), [LIMITERS, csv]);
    const a = got.split("\n");
    const b = node.split("\n");
    const first = a.findIndex((x, i) => x !== b[i]);
    assert.ok(a.length === b.length && first === -1, `${what}: hit ${first} decided ${a[first]} in Chromium, ${b[first]} in Node`);
    assert.deepEqual(errors, [], what);
  } finally {
    await browser.close();
  }
}

test("vite build, served as static files", async () => {
  const dir = appCopy("browser", "vite-build");
  await run(bin("vite"), ["build", "--outDir", "dist", "--logLevel", "warn"], { cwd: dir });
  const server = await staticServer(join(dir, "dist"));
  try {
    await assertSameDecisions(server.base + "/", "vite build");
  } finally {
    await server.stop();
  }
});

test("vite dev", async () => {
  const dir = appCopy("browser", "vite-dev");
  const port = await freePort();
  const server = await serve(bin("vite"), ["--host", "127.0.0.1", "--port", String(port), "--strictPort"], { port, cwd: dir, lifetimeMs: 180_000 });
  try {
    await assertSameDecisions(server.base + "/", "vite dev");
  } finally {
    await server.stop();
  }
});

test("webpack 5 production build, served as static files", async () => {
  const dir = appCopy("browser", "webpack");
  const stats = await new Promise((ok, fail) =>
    webpack({ mode: "production", context: dir, entry: "./main.js", output: { path: join(dir, "dist"), filename: "main.js" } }, (e, s) => (e ? fail(e) : ok(s))),
  );
  assert.ok(!stats.hasErrors(), stats.toString("errors-only"));
  copyFileSync(join(dir, "index.html"), join(dir, "dist/index.html"));
  const server = await staticServer(join(dir, "dist"));
  try {
    await assertSameDecisions(server.base + "/", "webpack");
  } finally {
    await server.stop();
  }
});
