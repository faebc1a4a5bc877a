// The guide's lanes widgets in headless Chromium: the store outage, the hot key, concurrency
// against rate and the live side-by-side of the ending. From a fresh arrival each gives what
// the text beside it says, decided as the Node build decides the same hits (the outage's
// store-down answers too: the Node build's WorkerStore limiter, its store unreachable, answers
// each with its failure mode: open admits and counts nothing, closed refuses; concurrency's
// acquisitions and releases through the Node build's limiters); the sentence spoken to screen
// readers says the same; reduced motion steps their clocks. The page's clock is the test's
// (heldClock): time moves only as the test moves it. Screenshots to artifacts/www/.
import { test, before, after } from "node:test";
import assert from "node:assert/strict";
import fs from "node:fs";
import path from "node:path";
import { launch, openPage, heldClock, arrive as arriveAt, ARTIFACTS } from "./browser.mjs";
import { serveWww } from "./static-server.mjs";
import { RateLimiter, WorkerStore, describe } from "./core-node.mjs";
import { ALGORITHMS } from "../../www/guide/facts.js";
import { BURST_GAP } from "../../www/guide/widget.js";
import { Jobs, JOB_MS } from "../../www/guide/jobs.js";

let server;
let browser;
let page;
before(async () => {
  server = await serveWww();
  browser = await launch();
  page = await openPage(browser, `${server.url}/guide/`, heldClock);
});
after(async () => {
  await browser?.close();
  await server?.close();
});

const tape = (p, id) => p.evaluate((id) => window.guide.laneTape(id), id);
const said = (p, id) => p.locator(`[data-live='${id}'] .said`).textContent();
const shot = (p, id, name) => {
  fs.mkdirSync(ARTIFACTS, { recursive: true });
  return p.locator(`[data-live='${id}']`).screenshot({ path: path.join(ARTIFACTS, `guide-widget-${name}.png`) });
};
async function arrive(p, id) {
  const root = await arriveAt(p, `[data-live='${id}']`);
  heights[id] = await height(p, id);
  return root;
}
/** The widget's height on arrival: its presses must not move the page (its slot reserves it). */
const heights = {};
const height = (p, id) => p.locator(`[data-live='${id}']`).evaluate((e) => e.getBoundingClientRect().height);
const unmoved = async (p, id) => assert.equal(await height(p, id), heights[id], `${id}: nothing below it moved`);
/** Waits for a press to be over (its sentence said). */
const settled = (p, id, before) => p.waitForFunction(([id, b]) => document.querySelector(`[data-live='${id}'] .said`).textContent !== b, [id, before]);

test("the lanes widgets are there: the outage, the hot key, concurrency and the live ending", async () => {
  assert.deepEqual(await page.evaluate(() => window.guide.lanes), ["outage", "hot", "concurrency", "side"]);
  assert.deepEqual(page.problems, []);
});

test("store outage: up, the core decides (✓✓✓✗); down and open, admitted and nothing counted; down and closed, all refused", async () => {
  const root = await arrive(page, "outage");
  const options = (await tape(page, "outage")).options;
  const press4 = async () => {
    const b = await said(page, "outage");
    await root.getByRole("button", { name: "Hit ×4" }).click();
    await page.clock.runFor(3 * BURST_GAP);
    await settled(page, "outage", b);
  };
  await press4();
  let t = await tape(page, "outage");
  assert.deepEqual(t.log.map((h) => h.allowed), [true, true, true, false], "the text's first lesson: 3 of 3 per 4 s");
  await root.getByRole("button", { name: "Store down" }).click();
  await press4();
  t = await tape(page, "outage");
  assert.deepEqual(t.log.slice(4).map((h) => [h.down, h.failure, h.allowed]), Array(4).fill([true, "open", true]), "failing open admits everyone");
  await root.getByRole("button", { name: 'failure: "closed"' }).click();
  await press4();
  t = await tape(page, "outage");
  assert.deepEqual(t.log.slice(8).map((h) => [h.down, h.failure, h.allowed]), Array(4).fill([true, "closed", false]), "failing closed refuses everyone");
  // The store-up decisions are the core's on the store-up hits only: the store counted nothing
  // while it was down.
  const rl = new RateLimiter(options);
  const figures = (d) => ({ allowed: d.allowed, remaining: d.remaining, retryAfter: d.retryAfter, degraded: d.degraded ?? null });
  const seen = ({ allowed, remaining, retryAfter, degraded }) => ({ allowed, remaining, retryAfter, degraded });
  const up = t.log.filter((h) => !h.down);
  assert.deepEqual(up.map((h) => figures(rl.limit("you", { now: h.at }))), up.map(seen));
  // The store-down answers are the package's outage path's, figures and all: the Node build's
  // store limiter of each failure mode, its store unreachable, answers the same hits the same.
  const unreachable = () => Promise.reject(new TypeError("fetch failed"));
  for (const failure of ["open", "closed"]) {
    const gone = new WorkerStore({ url: "https://store.invalid", fetch: unreachable, policy: "guide", failure }).limiter(options);
    const down = t.log.filter((h) => h.down && h.failure === failure);
    const expected = [];
    for (const h of down) expected.push(figures(await gone.limit("you", { now: h.at })));
    assert.deepEqual(down.map(seen), expected, failure);
    assert.ok(expected.every((d) => d.degraded === "unavailable"), "marked as an outage's answers");
  }
  const counted = describe(options, rl, "you", t.log.at(-1).at).count;
  const retry = t.log.at(-1).retryAfter;
  assert.ok(retry > 0, "failing closed says when to try again");
  const text = await said(page, "outage");
  assert.ok(text.startsWith(`Store up: 3 admitted, 1 refused by the limit. Store down: 4 admitted uncounted, 4 refused by failure "closed" (429, try again in ${(Math.ceil(retry / 100) / 10).toFixed(1)} s).`), text);
  assert.ok(text.endsWith(`The store counts ${counted} in the last 4 s.`), text);
  assert.match(await root.locator("svg").getAttribute("aria-label"), /Store down: 4 admitted uncounted/);
  await unmoved(page, "outage");
  await shot(page, "outage", "outage");
  // Reset: the store back up, a fresh client.
  await root.getByRole("button", { name: "Reset" }).click();
  assert.equal((await tape(page, "outage")).log.length, 0);
  assert.equal(await root.getAttribute("data-down"), "0");
  assert.equal(await root.getByRole("button", { name: "Store down" }).getAttribute("aria-pressed"), "false");
  assert.deepEqual(page.problems, []);
});

test("hot key: one round refuses the hot key at its limit (✓✓✓✗) while every cold key passes, decided as the Node build does", async () => {
  const root = await arrive(page, "hot");
  const b = await said(page, "hot");
  await root.getByRole("button", { name: "Send a round" }).click();
  await page.clock.runFor(3 * BURST_GAP);
  await settled(page, "hot", b);
  const t = await tape(page, "hot");
  assert.deepEqual(t.log["office NAT"].map((h) => h.allowed), [true, true, true, false]);
  const cold = Object.entries(t.log).filter(([k]) => k !== "office NAT");
  assert.equal(cold.length, 5);
  assert.ok(cold.every(([, hs]) => hs.length === 1 && hs[0].allowed), "every cold key passes");
  // The same hits, in time order, through the Node build's one limiter.
  const rl = new RateLimiter(t.options);
  const all = Object.entries(t.log).flatMap(([k, hs]) => hs.map((h) => ({ k, ...h }))).sort((a, c) => a.at - c.at);
  for (const h of all) assert.equal(rl.limit(h.k, { now: h.at }).allowed, h.allowed, `${h.k} at ${h.at}`);
  assert.equal(await said(page, "hot"), "office NAT: 3 admitted, 1 refused, 4 updates of its one key. The 5 cold keys: 5 admitted, 0 refused, 1 update each at most.");
  await unmoved(page, "hot");
  await shot(page, "hot", "hot-key");
  assert.deepEqual(page.problems, []);
});

test("concurrency against rate: Hit ×4 starts three jobs by rate, two by concurrency; just after the first job ends, the other way round; decided as the Node build does", async () => {
  const root = await arrive(page, "concurrency");
  const hits = (t) => t.log.filter((s) => s.op === "hit");
  let b = await said(page, "concurrency");
  await root.getByRole("button", { name: "Hit ×4" }).click();
  await page.clock.runFor(3 * BURST_GAP);
  await settled(page, "concurrency", b);
  let t = await tape(page, "concurrency");
  assert.deepEqual(hits(t).map((h) => [h.rate.allowed, h.conc.allowed]), [[true, true], [true, true], [true, false], [false, false]], "the text's first lesson: the rate limit lets three run at once, the concurrency limit two");
  // Just after the first job ends (the clock is the test's: it stands at the fourth hit).
  const [first, , , fourth] = hits(t);
  await page.clock.runFor(first.at + JOB_MS + 100 - fourth.at);
  b = await said(page, "concurrency");
  await root.getByRole("button", { name: "Hit", exact: true }).click();
  await settled(page, "concurrency", b);
  t = await tape(page, "concurrency");
  const after = hits(t).at(-1);
  assert.deepEqual([after.rate.allowed, after.conc.allowed], [false, true], "the ended job's slot is free; three starts are still within 4 s");
  assert.deepEqual(t.log.filter((s) => s.op === "release").map((s) => [s.at, s.released]), [[first.at + JOB_MS, true]], "the first job gave its slot back when it ended");
  // The same steps through the Node build's limiters: every figure alike.
  const jobs = new Jobs(RateLimiter, t.rate);
  for (const h of hits(t)) jobs.hit(h.at);
  assert.deepEqual(t.log, jobs.log);
  jobs.free();
  assert.equal(await said(page, "concurrency"), "Rate limit: 3 started, 2 refused. Concurrency limit: 3 started, 2 refused; 0 of 2 slots free at the last hit.");
  await unmoved(page, "concurrency");
  await shot(page, "concurrency", "concurrency");
  assert.deepEqual(page.problems, []);
});

test("the ending, live: one Hit ×4 and all seven algorithms decide the same hits, ✓✓✓✗ each, as the Node build does", async () => {
  const root = await arrive(page, "side");
  const b = await said(page, "side");
  await root.getByRole("button", { name: "Hit ×4" }).click();
  await page.clock.runFor(3 * BURST_GAP);
  await settled(page, "side", b);
  const t = await tape(page, "side");
  assert.equal(t.times.length, 4);
  assert.deepEqual(Object.keys(t.allowed), ALGORITHMS.map(([id]) => id));
  for (const [id, , options] of ALGORITHMS) {
    assert.deepEqual(t.allowed[id], [true, true, true, false], id);
    const rl = new RateLimiter(options);
    assert.deepEqual(t.times.map((now) => rl.limit("you", { now }).allowed), t.allowed[id], `${id}: the Node build`);
  }
  const text = await said(page, "side");
  assert.equal((text.match(/✓✓✓✗ \(3 of 4 admitted\)/g) ?? []).length, 7, text);
  assert.equal(await root.locator("svg text").filter({ hasText: "GCRA" }).count(), 1, "a lane each, named");
  await unmoved(page, "side");
  await shot(page, "side", "side-live");
  await root.getByRole("button", { name: "Reset" }).click();
  assert.equal((await tape(page, "side")).times.length, 0);
  assert.deepEqual(page.problems, []);
});

test("reduced motion: the lanes widgets send nothing by themselves, step with +1 s, and still teach on the first press", async () => {
  const ctx = await browser.newContext({ reducedMotion: "reduce", viewport: { width: 390, height: 844 } });
  const p = await ctx.newPage();
  await p.goto(`${server.url}/guide/`);
  await p.waitForSelector("body[data-ready='1']");
  for (const id of ["outage", "side"]) {
    const root = await arrive(p, id);
    const at0 = Number(await root.getAttribute("data-at"));
    await p.waitForTimeout(400);
    assert.equal(Number(await root.getAttribute("data-at")), at0, `${id}: the clock stands still`);
    for (let i = 0; i < 4; i++) await root.getByRole("button", { name: "Hit", exact: true }).click();
    const t = await tape(p, id);
    const verdicts = id === "side" ? Object.values(t.allowed) : [t.log.map((h) => h.allowed)];
    for (const v of verdicts) assert.deepEqual(v, [true, true, true, false], id);
    const last = Number(await root.getAttribute("data-at"));
    await root.getByRole("button", { name: "+1 s: move the clock one second on" }).click();
    assert.equal(Number(await root.getAttribute("data-at")), last + 1000);
    await unmoved(p, id);
  }
  const hot = await arrive(p, "hot");
  await hot.getByRole("button", { name: "Send a round" }).click();
  await p.waitForFunction(() => document.querySelector("[data-live='hot'] .said").textContent !== "");
  assert.deepEqual((await tape(p, "hot")).log["office NAT"].map((h) => h.allowed), [true, true, true, false]);
  await shot(p, "side", "side-live-390");
  await ctx.close();
});
