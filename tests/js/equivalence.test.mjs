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
import { reserveTrace, replayReserve, firstDifference, census } from "./reserve-fixture.mjs";



/**
 * Replays the CSV fixture; returns the first mismatch, or the number of hits replayed. Hits
 * of limiters past the end of `LIMITERS` are skipped (the lite module's replay leaves out the
 * policy of several limits).
 */
function replay(RateLimiter, LIMITERS, csv) {
  const limiters = LIMITERS.map((o) => new RateLimiter(o));
  let n = 0;
  for (const line of csv.split("\n")) {
    if (!line) continue;
    const [l, key, now, cost, allowed, remaining, resetAt, retryAfter] = line.split(",");
    if (+l >= limiters.length) continue;
    const d = limiters[+l].limit(key.includes("+") ? key.split("+") : key, { now: +now, cost: +cost });
    const got = `${+d.allowed},${d.remaining},${d.resetAt},${d.retryAfter}`;
    const want = `${allowed},${remaining},${resetAt},${retryAfter}`;
    if (got !== want) return { line: n + 1, hit: line, got };
    n++;
  }
  return n;
}

let csv, multiCsv;
/** The one-limit limiters (all but the last, SEVERAL) and how many of the fixture's hits are theirs. */
const ONE_LIMIT = LIMITERS.slice(0, -1);
let oneLimitHits;
before(() => {
  csv = nativeFixture();
  multiCsv = nativeFixture(true);
  oneLimitHits = csv.split("\n").filter((l) => l && +l.split(",")[0] < ONE_LIMIT.length).length;
});

test("the fixture has denials and admissions for every algorithm", () => {
  const seen = new Set(csv.split("\n").filter(Boolean).map((l) => l.split(",").slice(0, 1).concat(l.split(",")[4]).join()));
  assert.equal(seen.size, LIMITERS.length * 2);
});

test("Node makes the native crate's decisions", async () => {
  const { RateLimiter } = await import(resolve(root, "pkg/dist/lib/index.js"));
  assert.equal(replay(RateLimiter, LIMITERS, csv), HITS);
});

test("Node makes the native crate's all-or-nothing decisions over several keys", async () => {
  const { RateLimiter } = await import(resolve(root, "pkg/dist/lib/index.js"));
  assert.ok(multiCsv.includes("+"));
  assert.equal(replay(RateLimiter, MULTI_LIMITERS, multiCsv), MULTI_HITS);
});

test("Node makes the native crate's reserve/settle decisions", async () => {
  const { RateLimiter } = await import(resolve(root, "pkg/dist/lib/index.js"));
  const ops = reserveTrace();
  const c = census(ops);
  assert.ok(c.denied > 300 && c.settled > 800 && c.refused.unknown_reservation > 100 && c.resets > 20, JSON.stringify(c));
  const limiters = LIMITERS.map((o) => new RateLimiter(o));
  const outcomes = await replayReserve(ops, (l) => limiters[l]);
  assert.equal(firstDifference(ops, outcomes), null);
});

test("Node makes the native crate's one-limit decisions with tollgate/lite", async () => {
  const { RateLimiter } = await import(resolve(root, "pkg/dist/lib/lite.js"));
  assert.ok(ONE_LIMIT.every((o) => o.limits === undefined) && oneLimitHits > HITS / 2);
  assert.equal(replay(RateLimiter, ONE_LIMIT, csv), oneLimitHits);
});

test("Chromium makes the native crate's decisions, with tollgate and with tollgate/lite", async () => {
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
    // Unbundled, the package's own "#wasm" imports resolve as its "browser" condition maps them.
    const imports = { "#wasm": "/dist/load/web.js", "#wasm-lite": "/dist/load/web-lite.js" };
    await page.setContent(`<script type="importmap">${JSON.stringify({ imports })}</script>`);
    const result = await page.evaluate(
      async ([src, LIMITERS, ONE_LIMIT, csv]) => {
        const replay = new Function(`return (${src})`)();
        const full = await import("/dist/lib/index.js");
        const lite = await import("/dist/lib/lite.js");
        return [replay(full.RateLimiter, LIMITERS, csv), replay(lite.RateLimiter, ONE_LIMIT, csv)];
      },
      [replay.toString(), LIMITERS, ONE_LIMIT, csv],
    );
    assert.deepEqual(result, [HITS, oneLimitHits]);
  } finally {
    await browser.close();
    server.close();
  }
});
