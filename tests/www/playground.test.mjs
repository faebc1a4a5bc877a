// The playground in headless Chromium, served by a static server: it loads cleanly, its counts
// are the core's (replayed in Node), it redraws on every change and refuses bad input, the
// compare view shows the fixed window's boundary burst, the URL carries the state, the
// keyboard works, headers match the package's, and 100,000 hits play through.
import { test, before, after } from "node:test";
import assert from "node:assert/strict";
import { launch, openPage, screenshot, shown } from "./browser.mjs";
import { serveWww } from "./static-server.mjs";
import { replay, maxAdmitted } from "./replay.mjs";

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

const tapeOf = (page) => page.evaluate(() => window.playground.tape());
const START = Date.UTC(2026, 0, 1);

async function clickHit(page, n, gapMs) {
  for (let i = 0; i < n; i++) {
    await page.click("#hit");
    if (gapMs) await page.waitForTimeout(gapMs);
  }
}

test("the page loads with no console errors, every control labelled, and draws a timeline", async () => {
  const page = await openPage(browser, `${server.url}/`);
  await page.waitForFunction(() => Number(document.body.dataset.hits) > 0);
  const unlabelled = await page.evaluate(() =>
    [...document.querySelectorAll("input, select, button")]
      .filter((el) => (el.labels?.length ?? 0) === 0 && !el.getAttribute("aria-label") && el.tagName !== "BUTTON")
      .map((el) => el.id),
  );
  assert.deepEqual(unlabelled, []);
  const buttonsNamed = await page.evaluate(() => [...document.querySelectorAll("button")].every((b) => b.textContent.trim() || b.getAttribute("aria-label")));
  assert.ok(buttonsNamed);
  await screenshot(page, "single");
  assert.deepEqual(page.problems, []);
  // The page imports `tollgate/lite`'s entry: of the package's modules, the lite one only
  // (replay.mjs decides the same traces with the full package in Node, so the page is held to
  // the full module); and its own small module (www-wasm/, describeState) for the readout.
  assert.deepEqual(page.requested.filter((p) => p.endsWith(".wasm")), ["/vendor/tollgate/tollgate_wasm_lite_bg.wasm", "/vendor/tollgate-www/tollgate_www_bg.wasm"]);
  await page.close();
});

// Windows of 2 s at speed 1: the 25 clicks take well under 3 s even on a loaded machine, so
// they always meet both outcomes (at most 12 fixed-window or 6 + 3 x 1.5 token-bucket
// admissions). With 0.4-0.5 s windows at speed 4, slow clicks on a busy machine fell into fresh
// windows or refilled buckets and the trace had no denial.
for (const [name, query, options] of [
  ["fixed window", "algorithm=fixed-window&limit=4&window=2000", { algorithm: "fixed-window", align: "clock", limit: 4, window: 2000 }],
  ["token bucket with a burst", "algorithm=token-bucket&limit=3&window=2000&burst=6", { algorithm: "token-bucket", limit: 3, window: 2000, burst: 6 }],
]) {
  test(`${name}: clicks of Hit give exactly the core's counts for the same trace`, async () => {
    const page = await openPage(browser, `${server.url}/?${query}&speed=1`);
    await clickHit(page, 15, 20);
    await clickHit(page, 10, 0);
    const tape = await tapeOf(page);
    const manual = tape.keyIdx.length;
    assert.ok(manual >= 25, `at least the 25 clicks are on the tape (${manual})`);
    const want = replay(options, tape, START);
    assert.equal(await shown(page, "allowed-count"), want.allowed);
    assert.equal(await shown(page, "blocked-count"), want.blocked);
    assert.equal(await shown(page, "total-count"), tape.times.length);
    assert.ok(want.blocked > 0 && want.allowed > 0, "the trace has both outcomes");
    // The headers shown for the latest hit are the package's for that decision.
    const last = want.decisions.length - 1;
    const expected = want.rl.headers(want.decisions[last], START + tape.times[last]);
    const text = await page.locator("#headers").textContent();
    for (const [k, v] of Object.entries(expected)) assert.ok(text.includes(`${k}: ${v}`), `${k}: ${v} in\n${text}`);
    assert.equal(text.includes("Retry-After"), !want.decisions[last].allowed);
    assert.deepEqual(page.problems, []);
    await page.close();
  });
}

test("changing algorithm and parameters redraws; bad input is refused and changes nothing", async () => {
  const page = await openPage(browser, `${server.url}/?hits=200&speed=1000`);
  await page.click("#to-end");
  await page.waitForFunction(() => document.body.dataset.hits === "200");
  await page.click("#pause");
  const pixels = () => page.evaluate(() => document.getElementById("timeline").toDataURL());
  const allowed = () => shown(page, "allowed-count");
  const p0 = await pixels();
  const a0 = await allowed();
  await page.selectOption("#algorithm", "gcra");
  await page.waitForFunction(() => document.getElementById("single-title").textContent.includes("GCRA"));
  const p1 = await pixels();
  assert.notEqual(p1, p0, "the canvas changed with the algorithm");
  await page.fill("#limit", "2");
  await page.press("#limit", "Enter");
  await page.locator("#limit").blur();
  await page.waitForFunction(() => new URLSearchParams(location.search).get("limit") === "2");
  const p2 = await pixels();
  assert.notEqual(p2, p1, "the canvas changed with the limit");
  assert.notEqual(await allowed(), a0);
  assert.equal(await shown(page, "total-count"), 200, "the same trace, decided again");

  const url = page.url();
  await page.fill("#window", "0");
  await page.locator("#window").blur();
  await page.waitForSelector("#error:not([hidden])");
  const message = await page.locator("#error").textContent();
  assert.match(message, /window/);
  assert.equal(page.url(), url, "the URL keeps the last good state");
  assert.equal(await pixels(), p2, "the drawing is unchanged");
  await page.fill("#window", "1000");
  await page.locator("#window").blur();
  await page.waitForSelector("#error", { state: "hidden" });
  assert.deepEqual(page.problems, []);
  await page.close();
});

test("compare view: the fixed window admits 2 x the limit across a boundary, the sliding log never more than the limit", async () => {
  const page = await openPage(browser, `${server.url}/?view=compare&traffic=boundary&limit=10&window=1000&hits=200&speed=1000`);
  await page.click("#to-end");
  await page.waitForFunction(() => document.body.dataset.hits === "200");
  await page.click("#pause");
  await page.waitForFunction(() => document.querySelector("tr[data-algorithm='sliding-log']").dataset.allowed > 0);
  const max = async (id) => Number(await page.locator(`tr[data-algorithm='${id}']`).getAttribute("data-max"));
  assert.equal(await max("fixed-window"), 20);
  assert.equal(await max("sliding-log"), 10);
  assert.ok((await max("sliding-window")) <= 20);
  // The page's measurement agrees with one made here from the Node build's decisions.
  const tape = await tapeOf(page);
  const fixed = replay({ algorithm: "fixed-window", limit: 10, window: 1000 }, tape, START);
  assert.equal(maxAdmitted(tape, fixed.decisions, 1000), 20);
  const log = replay({ algorithm: "sliding-log", limit: 10, window: 1000 }, tape, START);
  const counter = replay({ algorithm: "sliding-window", limit: 10, window: 1000 }, tape, START);
  const differ = log.decisions.filter((d, i) => d.allowed !== counter.decisions[i].allowed).length;
  assert.equal(await shown(page, "disagreements"), differ);
  assert.equal(Number(await page.locator("tr[data-algorithm='gcra']").getAttribute("data-allowed")), replay({ algorithm: "gcra", limit: 10, window: 1000 }, tape, START).allowed);
  // A click on a strip picks that algorithm and shows the package's headers for the hit.
  const strip = page.locator("tr[data-algorithm='sliding-log'] canvas");
  const box = await strip.boundingBox();
  await strip.click({ position: { x: box.width / 2, y: 10 } });
  assert.equal(await page.locator("#algorithm").inputValue(), "sliding-log");
  const label = await page.locator("#hit-label").textContent();
  const i = Number(/hit (\d+) of/.exec(label)[1]) - 1;
  const expected = log.rl.headers(log.decisions[i], START + tape.times[i]);
  const text = await page.locator("#headers").textContent();
  for (const [k, v] of Object.entries(expected)) assert.ok(text.includes(`${k}: ${v}`), `${k}: ${v} in\n${text}`);
  assert.match(label, /^Sliding log, hit/);
  await screenshot(page, "compare");
  assert.deepEqual(page.problems, []);
  await page.close();
});

test("the URL carries the state: a shared link restores the same view", async () => {
  const page = await openPage(browser, `${server.url}/`);
  await page.selectOption("#algorithm", "token-bucket");
  await page.fill("#burst", "8");
  await page.locator("#burst").blur();
  await page.selectOption("#traffic", "chat");
  await page.selectOption("#speed", "16");
  await page.check("#view-compare");
  await page.waitForFunction(() => location.search.includes("view=compare"));
  const q = new URLSearchParams(new URL(page.url()).search);
  assert.deepEqual(Object.fromEntries(q), { algorithm: "token-bucket", burst: "8", traffic: "chat", speed: "16", view: "compare" });
  const again = await openPage(browser, page.url());
  const form = await again.evaluate(() => ({
    algorithm: document.getElementById("algorithm").value,
    burst: document.getElementById("burst").value,
    traffic: document.getElementById("traffic").value,
    speed: document.getElementById("speed").value,
    compare: document.getElementById("view-compare").checked,
    compareShown: !document.getElementById("compare-view").hidden,
  }));
  assert.deepEqual(form, { algorithm: "token-bucket", burst: "8", traffic: "chat", speed: "16", compare: true, compareShown: true });
  assert.deepEqual(await again.evaluate(() => window.playground.state().burst), 8);
  assert.deepEqual([...page.problems, ...again.problems], []);
  await page.close();
  await again.close();
});

test("keyboard: Tab reaches Hit, Enter and Space hit; arrows step through hits' headers", async () => {
  const page = await openPage(browser, `${server.url}/?speed=0.25`);
  let tabs = 0;
  while ((await page.evaluate(() => document.activeElement?.id)) !== "hit") {
    await page.keyboard.press("Tab");
    assert.ok(++tabs < 40, "Hit is reachable with Tab");
  }
  await page.keyboard.press("Enter");
  await page.keyboard.press("Space");
  const tape = await tapeOf(page);
  assert.equal(tape.manual, 2, "Enter and Space each made one hit");
  assert.equal(await page.locator("#resume-traffic").isDisabled(), false, "the automatic traffic stopped");
  const n = tape.times.length;
  const label = () => page.locator("#hit-label").textContent();
  assert.match(await label(), new RegExp(`hit ${n} of ${n}`));
  await page.focus("#timeline");
  await page.keyboard.press("ArrowLeft");
  assert.match(await label(), new RegExp(`hit ${n - 1} of ${n}`));
  assert.deepEqual(page.problems, []);
  await page.close();
});

test("100,000 hits play through (decided in per-frame batches) with the core's counts", async () => {
  const page = await openPage(browser, `${server.url}/?hits=100000&algorithm=sliding-window&limit=20&window=1000&speed=1000`);
  await page.evaluate(() => {
    window.gaps = [];
    let last = performance.now();
    const tick = (t) => {
      window.gaps.push(t - last);
      last = t;
      requestAnimationFrame(tick);
    };
    requestAnimationFrame(tick);
  });
  await page.click("#to-end");
  await page.waitForFunction(() => document.body.dataset.hits === "100000", null, { timeout: 90000 });
  await page.click("#pause");
  const tape = await tapeOf(page);
  const want = replay({ algorithm: "sliding-window", limit: 20, window: 1000 }, tape, START);
  assert.equal(await shown(page, "allowed-count"), want.allowed);
  assert.equal(await shown(page, "blocked-count"), want.blocked);
  const gaps = await page.evaluate(() => window.gaps.slice(1).sort((a, b) => a - b));
  const p = (q) => gaps[Math.min(gaps.length - 1, Math.floor(q * gaps.length))].toFixed(1);
  // Reported, not asserted (timing belongs to benchmarks): frame gaps while deciding 7 x 100,000 hits.
  console.log(`# 100,000 hits x 7 algorithms: ${gaps.length} frames, frame gap median ${p(0.5)} ms, p95 ${p(0.95)} ms, max ${p(1)} ms`);
  await screenshot(page, "hundred-thousand");
  assert.deepEqual(page.problems, []);
  await page.close();
});

test("live mode without a Worker says what it needs and the simulation goes on", async () => {
  const page = await openPage(browser, `${server.url}/?live=1`);
  await page.waitForSelector("#error:not([hidden])");
  assert.match(await page.locator("#error").textContent(), /Live mode needs the Worker/);
  assert.equal(await page.locator("#live").isChecked(), false);
  await page.waitForFunction(() => Number(document.body.dataset.hits) > 0);
  // The only problem is the 404 of /v1/policies that this static server answers.
  assert.deepEqual(page.problems.filter((p) => !p.includes("404")), []);
  await page.close();
});
