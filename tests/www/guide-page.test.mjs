// The guide as a page, at 1280 x 800 and 390 x 844: every figure the text states (the boundary
// table included) is the core's (facts.js run again on the Node build, and each stated bound
// checked against the core's decisions on random traffic); no text under 12 px on a phone; no
// label meets a widget's "now" line; layout shift (CLS) under 0.05 while the page loads and is
// read; axe-core finds no violation on the page as read, at either size; the ending's link
// carries the guide's settings to the playground, which reads them and fits a phone in compare
// view. A screenshot of each section at both sizes goes to artifacts/www/guide-section-<id>-<width>.png.
import { test, before, after } from "node:test";
import assert from "node:assert/strict";
import fs from "node:fs";
import path from "node:path";
import { launch, ARTIFACTS } from "./browser.mjs";
import { serveWww } from "./static-server.mjs";
import { RateLimiter, describe } from "./core-node.mjs";
import { ROOT } from "./browser.mjs";
import { computeFacts, ALGORITHMS, ATTACK, START } from "../../www/guide/facts.js";
import { createRequire } from "node:module";

const { Pacer } = await import(path.join(ROOT, "pkg/dist/lib/index.js"));
const AXE = createRequire(import.meta.url).resolve("axe-core/axe.min.js");
const SIZES = [
  [1280, 800],
  [390, 844],
];

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

async function open(width, height, url = "/guide/") {
  const page = await browser.newPage({ viewport: { width, height } });
  page.problems = [];
  page.on("pageerror", (e) => page.problems.push(`pageerror: ${e.message}`));
  page.on("console", (m) => m.type() === "error" && page.problems.push(`console.error: ${m.text()}`));
  page.setDefaultTimeout(20000);
  // Layout shifts from the first paint on, recorded by the page itself.
  await page.addInitScript(() => {
    window.__shifts = [];
    new PerformanceObserver((l) => {
      for (const e of l.getEntries()) if (!e.hadRecentInput) window.__shifts.push({ value: e.value, sources: (e.sources ?? []).map((s) => s.node?.id || s.node?.className || s.node?.nodeName || "?") });
    }).observe({ type: "layout-shift", buffered: true });
  });
  await page.goto(`${server.url}${url}`);
  await page.waitForSelector("body[data-ready='1']");
  return page;
}

test("every stated figure is the core's: the page's facts are facts.js on the Node build, shown where the text says", async () => {
  const want = await computeFacts({ RateLimiter, Pacer, describe });
  const page = await open(1280, 800);
  const shown = await page.evaluate(() => ({ facts: window.guide.facts, text: Object.fromEntries([...document.querySelectorAll("[data-fact]")].map((e) => [e.dataset.fact, e.textContent])) }));
  assert.deepEqual(shown.facts, want.facts);
  for (const [name, text] of Object.entries(shown.text)) assert.equal(text, want.facts[name], name);
  // Every row of the boundary table is on the page, and nothing in it is a placeholder.
  for (const r of want.rows) for (const part of ["marks", "admitted", "bound"]) assert.equal(shown.text[`row-${r.id}-${part}`], want.facts[`row-${r.id}-${part}`]);
  assert.ok(!Object.values(shown.text).includes("…"));
  assert.deepEqual(page.problems, []);
  await page.close();
});

test("the boundary table's verdicts are the core's, and each algorithm's stated bound holds its attack", async () => {
  const { rows } = await computeFacts({ RateLimiter, Pacer, describe });
  for (const [id, , options] of ALGORITHMS) {
    const rl = new RateLimiter(options);
    const verdicts = ATTACK.map((now) => rl.limit("someone", { now }).allowed);
    const row = rows.find((r) => r.id === id);
    assert.deepEqual(row.verdicts, verdicts, id);
    assert.ok(row.admitted <= row.bound.most, `${id}: ${row.admitted} within its bound ${row.bound.most}`);
  }
  assert.equal(rows.find((r) => r.id === "fixed-window").admitted, 6, "the fixed window lets twice its limit through");
  assert.equal(rows.find((r) => r.id === "sliding-log").admitted, 3);
});

/** A seeded generator, so a failure names its traffic. */
function rng(seed) {
  let s = seed >>> 0;
  return () => ((s = (s * 1664525 + 1013904223) >>> 0) / 2 ** 32);
}

test("each bound the table states holds for the core's decisions on random traffic", async () => {
  const fresh = (options) => describe(options, new RateLimiter(options), "k", START);
  for (const [id, , options] of ALGORITHMS) {
    const L = options.limit;
    const W = options.window;
    for (let seed = 1; seed <= 60; seed++) {
      const next = rng(seed * 7919 + id.length);
      const rl = new RateLimiter(options);
      let t = START + Math.floor(next() * W);
      const passed = [];
      for (let i = 0; i < 60; i++) {
        t += Math.floor(next() ** 2 * 1500);
        if (rl.limit("k", { now: t }).allowed) passed.push(t);
      }
      const within = (a, b) => passed.filter((u) => u >= a && u <= b).length;
      for (const a of passed) {
        const where = `${id}, seed ${seed}, from ${a - START} ms`;
        switch (id) {
          case "fixed-window":
            assert.ok(passed.filter((u) => Math.floor((u - START) / W) === Math.floor((a - START) / W)).length <= L, where);
            assert.ok(within(a, a + W - 1) <= 2 * L, where);
            break;
          case "fixed-window-first-hit":
            assert.ok(within(a, a + W - 1) <= 2 * L, where);
            break;
          case "sliding-log":
            assert.ok(within(a, a + W) <= L, where);
            break;
          case "sliding-window":
            assert.ok(passed.filter((u) => Math.floor((u - START) / W) === Math.floor((a - START) / W)).length <= L, where);
            assert.ok(within(a, a + W - 1) <= 2 * L, where);
            break;
          case "sliding-buckets": {
            const p = options.precision;
            const n = W / p;
            const first = Math.floor((a - START) / p);
            assert.ok(passed.filter((u) => Math.floor((u - START) / p) >= first && Math.floor((u - START) / p) < first + n).length <= L, where);
            assert.ok(within(a, a + W - 1) <= 2 * L, where);
            break;
          }
          case "token-bucket": {
            const d = fresh(options);
            for (const b of passed.filter((u) => u >= a)) assert.ok(within(a, b) <= d.capacity + d.refillAmount * Math.ceil((b - a) / d.interval), where);
            break;
          }
          case "gcra": {
            const d = fresh(options);
            for (const b of passed.filter((u) => u >= a)) assert.ok(within(a, b) <= d.burst + Math.floor((b - a) / d.emissionInterval), where);
            break;
          }
          default:
            throw new Error(id);
        }
      }
    }
  }
});

for (const [width, height] of SIZES) {
  test(`at ${width} x ${height}: text of 12 px and up, no label on a "now" line, CLS under 0.05, axe-core clean, a screenshot of each section`, async () => {
    const page = await open(width, height);
    // The first screen while the chat runs, then the page as a reader reads it
    await page.waitForTimeout(2500);
    // Read the page as a reader does: each section in turn, pressing Hit ×4 where there is one.
    const sections = await page.locator("main > section").count();
    assert.ok(sections >= 10, `${sections} sections`);
    const ids = [];
    for (let i = 0; i < sections; i++) {
      const section = page.locator("main > section").nth(i);
      await section.scrollIntoViewIfNeeded();
      const burst = section.locator("button.hit4");
      for (let b = 0; b < (await burst.count()); b++) {
        await burst.nth(b).scrollIntoViewIfNeeded();
        await burst.nth(b).click();
      }
      if (await burst.count()) await page.waitForTimeout(1000);
      // No label meets the "now" line, at this moment of every widget in view.
      const overlaps = await page.evaluate(() => {
        const out = [];
        for (const svg of document.querySelectorAll("figure[data-widget] svg")) {
          const r = svg.getBoundingClientRect();
          if (r.bottom < 0 || r.top > innerHeight) continue;
          for (const line of svg.querySelectorAll("line.now")) {
            const l = line.getBoundingClientRect();
            for (const t of svg.querySelectorAll("text")) {
              const b = t.getBoundingClientRect();
              if (b.left < l.right && l.left < b.right && b.top < l.bottom && l.top < b.bottom) out.push(`${svg.closest("figure").id}: "${t.textContent}"`);
            }
          }
        }
        return out;
      });
      assert.deepEqual(overlaps, [], "labels on the now line");
      const id = await section.evaluate((s) => s.getAttribute("aria-labelledby"));
      ids.push(id);
      fs.mkdirSync(ARTIFACTS, { recursive: true });
      await section.screenshot({ path: path.join(ARTIFACTS, `guide-section-${id}-${width}.png`) });
    }
    // Text sizes: every HTML text and every SVG text as rendered (font size times the drawing's scale).
    const small = await page.evaluate(() => {
      const out = [];
      const walker = document.createTreeWalker(document.body, NodeFilter.SHOW_TEXT);
      for (let n = walker.nextNode(); n; n = walker.nextNode()) {
        if (!n.textContent.trim()) continue;
        const e = n.parentElement;
        if (!e || e.closest(".visually-hidden,[hidden],script,style")) continue;
        const rect = e.getBoundingClientRect();
        if (rect.width === 0 && rect.height === 0) continue;
        let px = parseFloat(getComputedStyle(e).fontSize);
        const svg = e.closest("svg");
        if (svg) px *= svg.getScreenCTM().a;
        if (px < 12 - 1e-6) out.push(`${px.toFixed(2)} px: "${n.textContent.trim().slice(0, 30)}"`);
      }
      return out;
    });
    assert.deepEqual(small, [], "text under 12 px");
    const shifts = await page.evaluate(() => window.__shifts);
    const cls = shifts.reduce((a, s) => a + s.value, 0);
    assert.ok(cls < 0.05, `CLS ${cls.toFixed(4)}: ${JSON.stringify(shifts)}`);
    const overflow = await page.evaluate(() => document.documentElement.scrollWidth - document.documentElement.clientWidth);
    assert.ok(overflow <= 0, `${overflow} px of sideways scroll`);
    // axe-core on the page as it was read (every widget pressed, its sentence said), every fold
    // open: no violation of any impact at this size.
    await page.evaluate(() => document.querySelectorAll("details").forEach((d) => (d.open = true)));
    await page.addScriptTag({ path: AXE });
    const violations = await page.evaluate(async () => {
      const r = await window.axe.run(document, { resultTypes: ["violations"] });
      return r.violations.map((v) => `${v.id} (${v.impact}): ${v.nodes.map((n) => n.target.join(" ")).join(", ")}`);
    });
    assert.deepEqual(violations, [], "axe-core");
    assert.deepEqual(page.problems, []);
    await page.close();
  });
}

test("the ending links to the playground with the guide's settings, which it reads; its compare view fits 390 px", async () => {
  const page = await open(390, 844);
  const href = await page.locator("a[data-playground]").getAttribute("href");
  const q = new URL(href, `${server.url}/guide/`).searchParams;
  assert.equal(q.get("limit"), "3");
  assert.equal(q.get("window"), "4000");
  assert.equal(q.get("view"), "compare");
  await page.locator("a[data-playground]").click();
  await page.waitForSelector("body[data-ready='1']");
  const form = await page.evaluate(() => ({
    limit: document.getElementById("limit").value,
    window: document.getElementById("window").value,
    compare: document.getElementById("view-compare").checked,
    shown: !document.getElementById("compare-view").hidden,
    overflow: document.documentElement.scrollWidth - document.documentElement.clientWidth,
    // Every cell of the compare table inside the screen, its content inside the cell (none cut off).
    outside: [...document.querySelectorAll("#compare-table tbody th, #compare-table tbody td")].filter((c) => c.getBoundingClientRect().right > document.documentElement.clientWidth + 0.5 || c.scrollWidth > c.clientWidth + 1).map((c) => c.className || c.textContent.slice(0, 20)),
  }));
  assert.deepEqual(form, { limit: "3", window: "4000", compare: true, shown: true, overflow: 0, outside: [] });
  await page.locator("#compare-view").scrollIntoViewIfNeeded();
  await page.screenshot({ path: path.join(ARTIFACTS, "guide-playground-compare-390.png") });
  assert.deepEqual(page.problems, []);
  await page.close();
});
