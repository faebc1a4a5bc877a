// Live mode against the real Worker: the built Worker in workerd (Miniflare, through the
// Worker tests' harness) serving www/ as its assets, as `make run` does with wrangler dev.
// The page sends its hits to POST /v1/limit and charts the Worker's answers and headers.
//
// The Worker decides on the test clock: every request the page sends reaches it with a `now`
// added on the way (the test build with TEST_MODE on takes it; the page itself never sends
// one), 1 ms after the one before, from a second into a minute. So the login policy's 5 a
// minute is one window however slow the machine is, whatever the page's own traffic sent before
// the clicks, and each answer can be compared with the core's decision at the same `now`.
import { test, before, after } from "node:test";
import assert from "node:assert/strict";
import { start, post, POLICIES } from "../../worker/test/harness.mjs";
import { quickestPolicy } from "../../www/app/live.js";
import { launch, openPage, screenshot, shown } from "./browser.mjs";
import { RateLimiter } from "./core-node.mjs";

/** The test clock's start: a second into a minute (Unix ms). */
const T0 = 1_800_000_000_000 - (1_800_000_000_000 % 60_000) + 1000;

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

/**
 * Opens `url` with the test clock on its hits: returns the page and `clock`, whose `answers`
 * are the Worker's bodies with the `now` each was decided at, in the order it decided them, and
 * `next()` a `now` after them. The hits reach the Worker one at a time, in the order of their
 * `now`s (the page may have several on the way; they must not overtake each other).
 */
async function openLive(url) {
  const clock = { n: 0, answers: [], next: () => T0 + clock.n++ };
  let queue = Promise.resolve();
  const forward = async (route) => {
    const now = clock.next();
    const response = await route.fetch({ postData: JSON.stringify({ ...route.request().postDataJSON(), now }) });
    clock.answers.push({ now, ...(await response.json()) });
    await route.fulfill({ response });
  };
  const page = await openPage(browser, url, (p) =>
    p.route("**/v1/limit", (route) => {
      const done = queue.then(() => forward(route));
      queue = done.catch(() => {});
      return done;
    }),
  );
  return { page, clock };
}

/** Closes a page opened by `openLive`, its hits still on their way to the Worker dropped. */
async function closeLive(page) {
  await page.unrouteAll({ behavior: "ignoreErrors" });
  await page.close();
}

test("live mode sends hits to the running Worker and charts its answers", async () => {
  const { page, clock } = await openLive(`${worker.url}/?live=1&policy=login`);
  await page.waitForFunction(() => window.playground.live() !== null);
  const policies = await page.locator("#policy option").allTextContents();
  assert.ok(policies.some((p) => p.startsWith("login")), policies.join(", "));
  // login: 5 a minute (and 20 an hour), so 8 clicks (after whatever the page's own traffic
  // sent of the same key) are 5 allowed and the rest denied.
  for (let i = 0; i < 8; i++) await page.click("#hit");
  await page.waitForFunction(() => {
    const l = window.playground.live();
    return l.inFlight === 0 && l.answered === l.sent;
  });
  const live = await page.evaluate(() => window.playground.live());
  assert.ok(live.sent >= 8, `sent ${live.sent}`);
  assert.equal(clock.answers.length, live.sent, "every hit reached the Worker on the test clock");
  assert.equal(await shown(page, "allowed-count"), 5);
  assert.equal(await shown(page, "blocked-count"), live.sent - 5);
  // The Worker's answers are the core's, figures and all (on the test clock, not the real one):
  // the Node build with the policy's limits decides the same `now`s alike.
  const rl = new RateLimiter({ limits: POLICIES.login.limits });
  const figures = ({ allowed, remaining, resetAt, retryAfter }) => ({ allowed, remaining, resetAt, retryAfter });
  assert.deepEqual(clock.answers.map(figures), clock.answers.map((a) => figures(rl.limit("k", { now: a.now }))));

  // The Worker kept that state: its own peek for the page's key says nothing is left.
  const peek = await post(worker.url, "/v1/peek", { key: `${live.prefix}client`, policy: "login", now: clock.next() });
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
  await closeLive(page);
});

test("a link naming a policy the Worker does not have falls back to its first policy", async () => {
  const { page } = await openLive(`${worker.url}/?live=1&policy=nope`);
  await page.waitForFunction(() => window.playground.live() !== null);
  const policy = await page.evaluate(() => window.playground.live().policy);
  assert.notEqual(policy, "nope");
  assert.equal(await page.locator("#policy").inputValue(), policy);
  assert.deepEqual(page.problems, []);
  await closeLive(page);
});

test("with no policy in the link, live mode picks the one that shows denials within seconds", async () => {
  const res = await fetch(`${worker.url}/v1/policies`);
  const { policies } = await res.json();
  const { page, clock } = await openLive(`${worker.url}/?live=1`);
  await page.waitForFunction(() => window.playground.live() !== null);
  const policy = await page.evaluate(() => window.playground.live().policy);
  assert.equal(policy, quickestPolicy(policies));
  // Its traffic spreads one limit's worth over at most 5 s, not over a long window: the first
  // denial comes within seconds (bounded generously: the machine may be busy). On the test
  // clock all of it is within one window: exactly the first limit's worth is admitted.
  await page.waitForFunction(() => Number(document.getElementById("blocked-count").textContent) > 0, null, { timeout: 30000 });
  const limit = policies[policy].limits[0].limit;
  assert.equal(clock.answers.filter((a) => a.allowed).length, limit, "the limit's worth admitted");
  assert.equal(Number(await page.locator("#allowed-count").textContent()), limit);
  assert.deepEqual(page.problems, []);
  await closeLive(page);
});
