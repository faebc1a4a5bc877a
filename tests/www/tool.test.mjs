// The playground's fixes of issue 37: a click selects by lane and time; a refused option is
// reported against the algorithm the reader selected; the state drawn over the chosen hit is
// the one the readout names (the core's, teach.test.mjs); the default view is a few windows;
// live mode's default policy is the one that shows denials soonest.
import { test, before, after } from "node:test";
import assert from "node:assert/strict";
import { launch, openPage, screenshot } from "./browser.mjs";
import { serveWww } from "./static-server.mjs";
import { quickestPolicy } from "../../www/app/live.js";

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

test("a click on a lane selects that key's hit nearest in time, never another lane's", async () => {
  const page = await openPage(browser, `${server.url}/?traffic=chat&hits=200&speed=1000&span=0`);
  await page.click("#to-end");
  await page.waitForFunction(() => document.body.dataset.hits === "200");
  await page.click("#pause");
  const keys = (await page.evaluate(() => window.playground.tape())).keys;
  assert.ok(keys.length > 1, keys.join(", "));
  const canvas = page.locator("#timeline");
  const box = await canvas.boundingBox();
  const lane = Number(await canvas.getAttribute("data-lane"));
  let clicks = 0;
  for (const [k, name] of keys.entries()) {
    for (const f of [0.2, 0.5, 0.8]) {
      await canvas.click({ position: { x: box.width * f, y: k * lane + lane / 2 } });
      const label = await page.locator("#hit-label").textContent();
      assert.match(label, new RegExp(`key "${name}"`), `lane ${k} at ${f}: ${label}`);
      clicks++;
    }
  }
  assert.equal(clicks, keys.length * 3);
  await screenshot(page, "tool-lanes");
  assert.deepEqual(page.problems, []);
  await page.close();
});

test("a refused option names the selected algorithm", async () => {
  const page = await openPage(browser, `${server.url}/?algorithm=sliding-window`);
  await page.fill("#window", "0");
  await page.locator("#window").blur();
  await page.waitForSelector("#error:not([hidden])");
  assert.match(await page.locator("#error").textContent(), /^Sliding window counter: .*window/);
  assert.deepEqual(page.problems, []);
  await page.close();
});

test("the chosen hit's state is drawn on the chart: the readout's, at that hit; the view is a few windows", async () => {
  const page = await openPage(browser, `${server.url}/?algorithm=sliding-window&speed=16`);
  assert.equal(await page.evaluate(() => window.playground.state().span), 5, "the last 5 windows by default");
  await page.waitForFunction(() => Number(document.body.dataset.hits) > 10);
  await page.click("#pause");
  await page.focus("#timeline");
  await page.keyboard.press("ArrowLeft");
  await page.keyboard.press("ArrowLeft");
  const drawn = await page.evaluate(() => {
    const c = document.getElementById("timeline");
    return { state: JSON.parse(c.dataset.state), hit: c.dataset.stateHit, readout: window.playground.readout(), shown: document.getElementById("state-readout").dataset.hit };
  });
  assert.deepEqual(drawn.state, drawn.readout);
  assert.equal(drawn.hit, drawn.shown);
  assert.equal(drawn.state.kind, "sliding-window");
  assert.match(await page.locator("#explain-what").textContent(), /Two counters/);
  assert.equal(await page.locator("#explain-more").evaluate((d) => d.tagName), "DETAILS");
  await screenshot(page, "tool-state");
  assert.deepEqual(page.problems, []);
  await page.close();
});

test("live mode starts with the policy of the smallest limit; an unknown name keeps the first", () => {
  const policies = { api: { limits: [{ limit: 100, windowMs: 1000 }] }, login: { limits: [{ limit: 5, windowMs: 60000 }] }, search: { limits: [{ limit: 600, windowMs: 60000 }] } };
  assert.equal(quickestPolicy(policies), "login");
  assert.equal(quickestPolicy({ only: policies.api }), "only");
});
