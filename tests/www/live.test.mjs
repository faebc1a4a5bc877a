// Live mode against the real Worker: the built Worker in workerd (Miniflare, through the
// Worker tests' harness) serving www/ as its assets, as `make run` does with wrangler dev.
// The page sends its hits to POST /v1/limit and charts the Worker's answers and headers.
import { test, before, after } from "node:test";
import assert from "node:assert/strict";
import { start, post } from "../../worker/test/harness.mjs";
import { quickestPolicy } from "../../www/app/live.js";
import { launch, openPage, screenshot, shown } from "./browser.mjs";

let worker;
let browser;
before(async () => {
  worker = await start({ assets: true });
  browser = await launch();
});
after(async () => {
  await browser?.close();
  await worker?.stop();
});

test("live mode sends hits to the running Worker and charts its answers", async () => {
  const page = await openPage(browser, `${worker.url}/?live=1&policy=login`);
  await page.waitForFunction(() => window.playground.live() !== null);
  const policies = await page.locator("#policy option").allTextContents();
  assert.ok(policies.some((p) => p.startsWith("login")), policies.join(", "));
  // login: 5 a minute (and 20 an hour), so 8 hits in a few seconds are 5 allowed, 3 denied,
  // unless they straddle a clock minute (sliding window counter): the hits and the peek below
  // start clear of the turn (counted from here: opening the page on a loaded machine takes a
  // while of its own).
  const intoMinute = Date.now() % 60000;
  if (intoMinute > 50000) await new Promise((r) => setTimeout(r, 60000 - intoMinute + 200));
  for (let i = 0; i < 8; i++) await page.click("#hit");
  await page.waitForFunction(() => {
    const l = window.playground.live();
    return l.inFlight === 0 && l.answered === l.sent;
  });
  const live = await page.evaluate(() => window.playground.live());
  assert.ok(live.sent >= 8, `sent ${live.sent}`);
  assert.equal(await shown(page, "allowed-count"), 5);
  assert.equal(await shown(page, "blocked-count"), live.sent - 5);

  // The Worker kept that state: its own peek for the page's key says nothing is left.
  const peek = await post(worker.url, "/v1/peek", { key: `${live.prefix}client`, policy: "login" });
  assert.equal(peek.status, 200);
  assert.equal(peek.body.allowed, false);
  assert.equal(peek.body.remaining, 0);

  // The headers panel shows the Worker's real headers for the latest (denied) hit.
  const text = await page.locator("#headers").textContent();
  assert.match(text, /ratelimit-policy: "per-minute";q=5;w=60, "per-hour";q=20;w=3600/);
  assert.match(text, /retry-after: \d+/);
  assert.match(await page.locator("#single-title").textContent(), /Live/);
  await screenshot(page, "live");
  // Denials are answers (200 with allowed: false), so the console has nothing to report.
  assert.deepEqual(page.problems, []);
  await page.close();
});

test("a link naming a policy the Worker does not have falls back to its first policy", async () => {
  const page = await openPage(browser, `${worker.url}/?live=1&policy=nope`);
  await page.waitForFunction(() => window.playground.live() !== null);
  const policy = await page.evaluate(() => window.playground.live().policy);
  assert.notEqual(policy, "nope");
  assert.equal(await page.locator("#policy").inputValue(), policy);
  assert.deepEqual(page.problems, []);
  await page.close();
});

test("with no policy in the link, live mode picks the one that shows denials within seconds", async () => {
  const res = await fetch(`${worker.url}/v1/policies`);
  const { policies } = await res.json();
  const page = await openPage(browser, `${worker.url}/?live=1`);
  await page.waitForFunction(() => window.playground.live() !== null);
  assert.equal(await page.evaluate(() => window.playground.live().policy), quickestPolicy(policies));
  // Its traffic spreads one limit's worth over at most 5 s, not over a long window: the first
  // denial comes within seconds (bounded generously: the machine may be busy).
  await page.waitForFunction(() => Number(document.getElementById("blocked-count").textContent) > 0, null, { timeout: 30000 });
  assert.ok(Number(await page.locator("#allowed-count").textContent()) > 0);
  assert.deepEqual(page.problems, []);
  await page.close();
});
