// Both pages fit the screen: at 1280 x 800 and at 390 x 844 (a phone) the chart's top edge
// (the tool's timeline, the guide's chat) is within the first screen and nothing scrolls
// sideways; and axe-core (pinned, injected into the page) finds no serious or critical
// accessibility violation on the tool, and none of any impact on the guide.
import { test, before, after } from "node:test";
import assert from "node:assert/strict";
import { createRequire } from "node:module";
import fs from "node:fs";
import path from "node:path";
import { launch, ARTIFACTS } from "./browser.mjs";
import { serveWww } from "./static-server.mjs";

const AXE = createRequire(import.meta.url).resolve("axe-core/axe.min.js");

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

const PAGES = [
  ["tool", "/", "#timeline", ["serious", "critical"]],
  ["guide", "/guide/", "#chat .chat-log", ["minor", "moderate", "serious", "critical"]],
];

async function open(url, width, height) {
  const page = await browser.newPage({ viewport: { width, height } });
  page.problems = [];
  page.on("pageerror", (e) => page.problems.push(`pageerror: ${e.message}`));
  page.on("console", (m) => m.type() === "error" && page.problems.push(`console.error: ${m.text()}`));
  await page.goto(url);
  await page.waitForSelector("body[data-ready='1']");
  return page;
}

for (const [name, route, chart, impacts] of PAGES) {
  for (const [width, height] of [
    [1280, 800],
    [390, 844],
  ]) {
    test(`${name} at ${width} x ${height}: the chart starts on the first screen, no sideways scroll`, async () => {
      const page = await open(`${server.url}${route}`, width, height);
      const box = await page.locator(chart).boundingBox();
      assert.ok(box && box.y >= 0 && box.y < height - 100, `the chart's top edge at ${box?.y} px, the screen ${height} px high`);
      const overflow = await page.evaluate(() => ({ scroll: document.documentElement.scrollWidth, client: document.documentElement.clientWidth }));
      assert.ok(overflow.scroll <= overflow.client, `page ${overflow.scroll} px wide on a ${overflow.client} px screen`);
      fs.mkdirSync(ARTIFACTS, { recursive: true });
      await page.screenshot({ path: path.join(ARTIFACTS, `layout-${name}-${width}.png`) });
      assert.deepEqual(page.problems, []);
      await page.close();
    });
  }

  test(`${name}: axe-core finds no violation of impact ${impacts.join(", ")}`, async () => {
    const page = await open(`${server.url}${route}`, 1280, 800);
    // Every fold open, so what it hides is checked too.
    await page.evaluate(() => document.querySelectorAll("details").forEach((d) => (d.open = true)));
    await page.addScriptTag({ path: AXE });
    const violations = await page.evaluate(async (impacts) => {
      const r = await window.axe.run(document, { resultTypes: ["violations"] });
      return r.violations.filter((v) => impacts.includes(v.impact)).map((v) => `${v.id} (${v.impact}): ${v.nodes.map((n) => n.target.join(" ")).join(", ")}`);
    }, impacts);
    assert.deepEqual(violations, []);
    await page.close();
  });
}
