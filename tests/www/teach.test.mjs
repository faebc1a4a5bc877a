// The playground teaches: beside the chart, each algorithm's explanation (its module
// docs); at every hit, the state that decided it, from the core (describeState over the key's
// exported state) and matching the decision and the chart's counts; the headers of the chosen
// standardHeaders/legacyHeaders mode, equal to the package's `limiter.headers`; the copy-as-code
// snippets of the current setup; and the page and its guide working from a plain static
// server (`python3 -m http.server`), no Worker anywhere.
import { test, before, after } from "node:test";
import assert from "node:assert/strict";
import { spawn } from "node:child_process";
import { readFileSync } from "node:fs";
import path from "node:path";
import { launch, openPage, screenshot, shown, ROOT } from "./browser.mjs";
import { serveWww, WWW } from "./static-server.mjs";
import { replay } from "./replay.mjs";
import { ALGORITHM_DOCS } from "../../www/app/algorithm-docs.js";
import { limiterOptions } from "../../www/app/params.js";
import { npmSnippet, tomlSnippet, rustSnippet } from "../../www/app/snippets.js";
import { fieldsOf } from "../../www/app/state-reader.js";

// The playground's own module, in Node: the expected readout comes from a replay here.
const own = await import(path.join(WWW, "vendor/tollgate-www/tollgate_www.js"));
own.initSync({ module: readFileSync(path.join(WWW, "vendor/tollgate-www/tollgate_www_bg.wasm")) });
const START = Date.UTC(2026, 0, 1);

let server;
let browser;
before(async () => {
  server = await serveWww();
  browser = await launch();
});
after(async () => {
  await browser?.close();
  await server?.close();
});

const readout = (page) =>
  page.evaluate(() => {
    const el = document.getElementById("state-readout");
    return { text: el.textContent, kind: el.dataset.kind, hit: Number(el.dataset.hit), counted: Number(el.dataset.counted), fields: window.playground.readout() };
  });

// A limit of 4 a day: the trace's own hits are hours apart, so every click of Hit lands in
// the same window (and, for the bucket and the meter, before any refill): before the i-th
// click the state holds i - 1 of the 4 units, whatever the machine's speed.
const LIMIT = 4;
const DAY = 86_400_000;
for (const id of Object.keys(ALGORITHM_DOCS)) {
  test(`${id}: the explanation beside the chart, and at every hit the core's state that decided it`, async () => {
    const page = await openPage(browser, `${server.url}/?algorithm=${id}&limit=${LIMIT}&window=${DAY}&speed=0.25`);
    const doc = ALGORITHM_DOCS[id];
    assert.equal(await page.locator("#explain-title").textContent(), doc.title);
    // The module docs' words, their `code` spans set as <code>.
    for (const k of ["guarantee", "pros", "cons", "pick"]) assert.equal(await page.locator(`#explain-${k}`).textContent(), doc[k].replaceAll("`", ""));
    if (doc.guarantee.includes("`")) assert.ok((await page.locator("#explain-guarantee code").count()) > 0);
    assert.equal(await page.locator("#explain-source").textContent(), doc.source);
    assert.ok(await page.locator("#explain").isVisible(), "beside the chart, visible");

    for (let i = 1; i <= LIMIT + 2; i++) {
      await page.click("#hit");
      const r = await readout(page);
      const n = await shown(page, "total-count");
      assert.equal(r.kind, id);
      assert.equal(r.hit, n - 1, "the readout is the latest hit's");
      assert.equal(r.counted, Math.min(i - 1, LIMIT), `click ${i}: units held before it (${r.text})`);
      assert.equal(await shown(page, "allowed-count"), Math.min(i, LIMIT), "the chart's admitted count");
      assert.match(r.text, i <= LIMIT ? /was admitted/ : /was denied/);
    }
    const tape = await page.evaluate(() => window.playground.tape());
    assert.equal(tape.manual, LIMIT + 2);
    // The same fields from an independent replay: the Node build's limiter, its exported state
    // before the last hit, described by the same core function.
    const options = limiterOptions(id, await page.evaluate(() => window.playground.state()));
    const last = tape.times.length - 1;
    const before = replay(options, { ...tape, times: tape.times.slice(0, last), keyIdx: tape.keyIdx.slice(0, last) }, START);
    const now = START + tape.times[last];
    const want = { ...fieldsOf(own.describeState(options, before.rl.export(tape.keys[tape.keyIdx[last]]), now)), now };
    const r = await readout(page);
    assert.deepEqual(r.fields, want);
    const words = {
      "fixed-window": /4 of 4 counted in this clock window/,
      "fixed-window-first-hit": /4 of 4 counted in this key's window/,
      "sliding-log": /The log holds 4 entries/,
      "sliding-window": /4 in this window, 0 weighted from the last/,
      "sliding-buckets": /Buckets of .*: 4 of 4 counted/,
      "token-bucket": /0 of 4 tokens in the bucket/,
      gcra: /Theoretical arrival time \(TAT\) .*room for 0 of 4 now/,
    };
    assert.match(r.text, words[id]);
    // Stepping back shows that hit's state: the first click found a fresh key.
    for (let k = 0; k < LIMIT + 1; k++) await page.click("#prev-hit");
    assert.equal((await readout(page)).counted, 0);
    assert.deepEqual(page.problems, []);
    await page.close();
  });
}

test("any hit of a busy trace, every algorithm: the readout is the core's description of the state that hit found", async () => {
  const page = await openPage(browser, `${server.url}/?traffic=chat&limit=5&window=1000&hits=200&speed=1000`);
  await page.click("#to-end");
  await page.waitForFunction(() => document.body.dataset.hits === "200");
  await page.click("#pause");
  await page.focus("#timeline");
  const back = 37;
  for (let k = 0; k < back; k++) await page.keyboard.press("ArrowLeft");
  const tape = await page.evaluate(() => window.playground.tape());
  const i = tape.times.length - 1 - back;
  const now = START + tape.times[i];
  const key = tape.keys[tape.keyIdx[i]];
  const upTo = { ...tape, times: tape.times.slice(0, i), keyIdx: tape.keyIdx.slice(0, i) };
  for (const id of Object.keys(ALGORITHM_DOCS)) {
    await page.selectOption("#algorithm", id);
    const r = await readout(page);
    assert.equal(r.hit, i, `${id}: the chosen hit stays chosen`);
    const options = limiterOptions(id, await page.evaluate(() => window.playground.state()));
    const want = { ...fieldsOf(own.describeState(options, replay(options, upTo, START).rl.export(key), now)), now };
    assert.deepEqual(r.fields, want, id);
    const decision = replay(options, tape, START).decisions[i];
    assert.match(r.text, decision.allowed ? /was admitted/ : /was denied/, id);
  }
  assert.deepEqual(page.problems, []);
  await page.close();
});

test("headers in the chosen standardHeaders/legacyHeaders mode equal limiter.headers; the snippets follow the setup", async () => {
  // 3 a day with a burst of 5: no refill and no hit of the trace's own during the clicks, so
  // the 7 clicks are 5 admissions and 2 denials however slowly they come.
  const page = await openPage(browser, `${server.url}/?algorithm=token-bucket&limit=3&window=${DAY}&burst=5&speed=0.25`);
  await page.selectOption("#standardHeaders", "draft-7");
  await page.uncheck("#legacyHeaders");
  await page.waitForFunction(() => location.search.includes("standardHeaders=draft-7") && location.search.includes("legacyHeaders=0"));
  for (let i = 0; i < 7; i++) await page.click("#hit");
  const tape = await page.evaluate(() => window.playground.tape());
  const state = await page.evaluate(() => window.playground.state());
  const want = replay(limiterOptions("token-bucket", state), tape, START);
  const check = async () => {
    const i = Number(await page.locator("#headers").getAttribute("data-hit"));
    const expected = want.rl.headers(want.decisions[i], { now: START + tape.times[i], standardHeaders: "draft-7", legacyHeaders: false });
    const lines = Object.entries(expected).map(([k, v]) => `${k}: ${v}`);
    assert.equal(await page.locator("#headers").textContent(), lines.join("\n"));
    return expected;
  };
  assert.equal(tape.manual, 7);
  assert.deepEqual(want.decisions.map((d) => d.allowed), [true, true, true, true, true, false, false]);
  const denied = await check();
  assert.ok("RateLimit-Policy" in denied && "Retry-After" in denied && !("X-RateLimit-Limit" in denied), JSON.stringify(denied));
  await page.click("#prev-hit");
  await page.click("#prev-hit");
  await check();
  // Copy as code: the three snippets of this setup, as www/app/snippets.js writes them
  // (tests/www/snippets.test.mjs runs each one).
  assert.equal(await page.locator("#code-npm").textContent(), npmSnippet("token-bucket", state));
  assert.equal(await page.locator("#code-toml").textContent(), tomlSnippet("token-bucket", state));
  assert.equal(await page.locator("#code-rust").textContent(), rustSnippet("token-bucket", state));
  assert.match(await page.locator("#code-npm").textContent(), /burst: 5/);
  assert.match(await page.locator("#code-toml").textContent(), /standardHeaders = "draft-7"\nlegacyHeaders = false/);
  // Copy: to the clipboard where the page may write it, else the snippet is selected for Ctrl+C.
  await page.click("button.copy[data-for='code-rust']");
  await page.waitForFunction(() => document.querySelector("button.copy[data-for='code-rust']").textContent !== "Copy");
  const copied = await page.evaluate(() => document.querySelector("button.copy[data-for='code-rust']").textContent);
  if (copied !== "Copied") assert.equal(await page.evaluate(() => getSelection().toString().trim()), rustSnippet("token-bucket", state).trim());
  await screenshot(page, "teach");
  assert.deepEqual(page.problems, []);
  await page.close();
});

/** `python3 -m http.server` on a free 127.0.0.1 port, serving `dir`; resolves to { url, close }. */
function pythonServer(dir) {
  const child = spawn("python3", ["-u", "-m", "http.server", "0", "--bind", "127.0.0.1", "--directory", dir], { stdio: ["ignore", "pipe", "pipe"] });
  return new Promise((resolve, reject) => {
    let out = "";
    const timer = setTimeout(() => reject(new Error(`python3 -m http.server did not start: ${out}`)), 20000);
    child.stdout.on("data", (b) => {
      out += b;
      const m = /port (\d+)/.exec(out);
      if (m) {
        clearTimeout(timer);
        resolve({ url: `http://127.0.0.1:${m[1]}`, close: () => new Promise((r) => (child.kill(), child.on("exit", r))) });
      }
    });
    child.on("error", reject);
  });
}

test("the static build: www/ after `make www`, served by python3 -m http.server, simulates with no Worker", async () => {
  const py = await pythonServer(path.join(ROOT, "www"));
  try {
    const page = await openPage(browser, `${py.url}/?algorithm=gcra&limit=5&window=1000&speed=16`);
    await page.waitForFunction(() => Number(document.body.dataset.hits) > 0);
    await page.click("#hit");
    assert.match(await page.locator("#state-readout").textContent(), /Theoretical arrival time/);
    assert.ok((await page.locator("#headers").textContent()).includes("RateLimit-Policy"));
    assert.equal(await page.locator("#explain-title").textContent(), ALGORITHM_DOCS.gcra.title);
    assert.deepEqual(page.problems, []);
    // The guide, linked from the page, served by the same static server.
    await page.click("a[href='guide/']");
    await page.waitForSelector("body[data-ready='1']");
    assert.equal(new URL(page.url()).pathname, "/guide/");
    await page.click("[data-widget='fixed-window'] button.hit");
    assert.equal(await page.locator("[data-widget='fixed-window']").getAttribute("data-status"), "200");
    assert.deepEqual(page.problems, []);
    await page.close();
  } finally {
    await py.close();
  }
});
