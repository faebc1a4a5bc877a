// Cross-runtime equivalence: the native crate decides a seeded trace of 120,000 hits over
// every algorithm and ~2,000 keys (examples/equivalence_fixture.rs, run at test time); the npm
// package replays it in Node and in headless Chromium and must make identical decisions.
import test, { before } from "node:test";
import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { createServer } from "node:http";
import { resolve, extname } from "node:path";
import { HITS, LIMITERS, MULTI_HITS, MULTI_LIMITERS, nativeFixture, root } from "./fixture.mjs";
import { launchChromium } from "./chromium.mjs";



/** Replays the CSV fixture; returns the first mismatch, or the number of hits replayed. */
function replay(RateLimiter, LIMITERS, csv) {
  const limiters = LIMITERS.map((o) => new RateLimiter(o));
  let n = 0;
  for (const line of csv.split("\n")) {
    if (!line) continue;
    const [l, key, now, cost, allowed, remaining, resetAt, retryAfter] = line.split(",");
    const d = limiters[+l].limit(key.includes("+") ? key.split("+") : key, { now: +now, cost: +cost });
    const got = `${+d.allowed},${d.remaining},${d.resetAt},${d.retryAfter}`;
    const want = `${allowed},${remaining},${resetAt},${retryAfter}`;
    if (got !== want) return { line: n + 1, hit: line, got };
    n++;
  }
  return n;
}

let csv, multiCsv;
before(() => {
  csv = nativeFixture();
  multiCsv = nativeFixture(true);
});

test("the fixture has denials and admissions for every algorithm", () => {
  const seen = new Set(csv.split("\n").filter(Boolean).map((l) => l.split(",").slice(0, 1).concat(l.split(",")[4]).join()));
  assert.equal(seen.size, LIMITERS.length * 2);
});

test("Node makes the native crate's decisions", async () => {
  const { RateLimiter } = await import(resolve(root, "pkg/dist/node/index.js"));
  assert.equal(replay(RateLimiter, LIMITERS, csv), HITS);
});

test("Node makes the native crate's all-or-nothing decisions over several keys", async () => {
  const { RateLimiter } = await import(resolve(root, "pkg/dist/node/index.js"));
  assert.ok(multiCsv.includes("+"));
  assert.equal(replay(RateLimiter, MULTI_LIMITERS, multiCsv), MULTI_HITS);
});

test("Chromium makes the native crate's decisions", async () => {
  const types = { ".js": "text/javascript", ".wasm": "application/wasm", ".html": "text/html" };
  const server = createServer((req, res) => {
    if (req.url === "/") {
      res.writeHead(200, { "content-type": "text/html" }).end("<!doctype html><title>t</title>");
      return;
    }
    try {
      const file = resolve(root, "pkg", "." + req.url);
      if (!file.startsWith(resolve(root, "pkg"))) throw new Error("outside");
      const body = readFileSync(file);
      res.writeHead(200, { "content-type": types[extname(file)] ?? "application/octet-stream" }).end(body);
    } catch {
      res.writeHead(404).end();
    }
  });
  await new Promise((r) => server.listen(0, "127.0.0.1", r));
  const browser = await launchChromium();
  try {
    const page = await browser.newPage();
    await page.goto(`http://127.0.0.1:${server.address().port}/`);
    const result = await page.evaluate(
      async ([src, LIMITERS, csv]) => {
        const { RateLimiter } = await import("/dist/web/index.js");
        return new Function(`return (${src})`)()(RateLimiter, LIMITERS, csv);
      },
      [replay.toString(), LIMITERS, csv],
    );
    assert.equal(result, HITS);
  } finally {
    await browser.close();
    server.close();
  }
});
