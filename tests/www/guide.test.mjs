// The guide (www/guide/) in headless Chromium: from a fresh arrival at each algorithm widget,
// four quick Hits give ✓✓✓✗ (as the text says), decided as the Node build decides the same
// hits, with the drawn state the core's describe at that instant; Reset and Hit ×4; the live
// boundary attack's score; the chat's switch; the keyboard; reduced motion's stepped clock.
// The widgets' clock is the test's (heldClock): time moves only as each test moves it, so what
// "quick" means does not depend on the machine's load. Screenshots of each widget go to
// artifacts/www/.
import { test, before, after } from "node:test";
import assert from "node:assert/strict";
import fs from "node:fs";
import path from "node:path";
import { launch, openPage, heldClock, arrive as arriveAt, ARTIFACTS } from "./browser.mjs";
import { serveWww } from "./static-server.mjs";
import { RateLimiter, describe } from "./core-node.mjs";
import { mostWithin } from "../../www/guide/facts.js";
import { BURST_GAP } from "../../www/guide/widget.js";

const ALGORITHM_WIDGETS = ["fixed-window", "fixed-window-first-hit", "sliding-log", "sliding-window", "sliding-buckets", "token-bucket", "gcra"];
const ALL = ["fixed-window", "fixed-window-first-hit", "attack", "sliding-log", "sliding-window", "sliding-buckets", "token-bucket", "gcra", "client"];

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

/** The widget's drawn model, its tape and the picture's text, read in one go (no frame between). */
const snapshot = (p, id) =>
  p.evaluate((id) => {
    const r = document.querySelector(`[data-widget='${id}']`);
    return {
      state: JSON.parse(r.dataset.state),
      at: Number(r.dataset.at),
      hits: Number(r.dataset.hits),
      fresh: r.dataset.fresh,
      tape: window.guide.tape(id),
      picture: r.querySelector("svg").textContent,
      entries: r.querySelectorAll("svg .entry").length,
      response: r.querySelector(".client pre")?.textContent ?? null,
      said: r.querySelector(".said").textContent,
    };
  }, id);

/** The numbers each picture must show, from the core's fields. */
function pictured(f) {
  switch (f.kind) {
    case "fixed-window":
    case "fixed-window-first-hit":
      return [`${f.count} / ${f.limit}`];
    case "sliding-log":
      return [`: ${f.count} of ${f.limit}`, `${f.count} / ${f.limit}`];
    case "sliding-window":
      return [`${f.current} current + ${f.weightedPrevious} of the previous ${f.previous}`, `${f.current} + ${f.weightedPrevious} = ${f.count} of ${f.limit}`];
    case "sliding-buckets":
      return [`${f.counts.join(" + ")} = ${f.count} of ${f.limit}`];
    case "token-bucket":
      return [`${f.tokens} of ${f.capacity} tokens`];
    case "gcra":
      return [`room for ${f.room} of ${f.burst}`];
    default:
      throw new Error(f.kind);
  }
}

/** Replays the tape in Node: the verdicts of every hit, the state after the first `n` at `at`, and the last decision. */
function replay(tape, n, at) {
  const rl = new RateLimiter(tape.options);
  let last = null;
  const verdicts = tape.times.map((now, i) => {
    const d = rl.limit(tape.key, { now });
    if (i === n - 1) last = { d, now, headers: rl.headers(d, { standardHeaders: "draft-10", legacyHeaders: false, now }) };
    return d.allowed;
  });
  const upTo = new RateLimiter(tape.options);
  for (const now of tape.times.slice(0, n)) upTo.limit(tape.key, { now });
  return { verdicts, state: describe(tape.options, upTo, tape.key, at), last };
}

/** Scrolls to widget `id` and waits until it has seen the reader arrive. */
const arrive = (p, id) => arriveAt(p, `[data-widget='${id}']`);

/** The page's tape of `id` matches the Node build, and its picture the core's describe. */
async function checkDecided(p, id) {
  const s = await snapshot(p, id);
  const want = replay(s.tape, s.hits, s.at);
  assert.deepEqual(s.tape.allowed, want.verdicts, `${id}: every hit decided as in Node`);
  assert.deepEqual(s.state, want.state, `${id}: the drawn model at ${s.at}`);
  for (const text of pictured(s.state)) assert.ok(s.picture.includes(text), `${id}: "${text}" in the picture: ${s.picture}`);
  if (s.state.kind === "sliding-log") assert.equal(s.entries, s.state.entries.length, "one diamond per log entry");
  return { s, want };
}

test("the guide loads cleanly: the chat first, then a widget per algorithm, each with Hit, Hit ×4 and Reset", async () => {
  const ids = await page.evaluate(() => window.guide.widgets);
  assert.deepEqual(ids, ALL);
  for (const id of ids) {
    const root = page.locator(`[data-widget='${id}']`);
    assert.equal(await root.locator("button.hit").textContent(), "Hit");
    assert.equal(await root.locator("button.hit4").textContent(), "Hit ×4");
    assert.equal(await root.locator("button.reset").textContent(), "Reset");
  }
  const first = await page.evaluate(() => document.querySelector("main > section .widget").id);
  assert.equal(first, "chat", "the page opens on the story");
  assert.deepEqual(page.problems, []);
});

for (const id of [...ALGORITHM_WIDGETS, "client"]) {
  test(`${id}: from a fresh arrival, four quick Hits read ✓✓✓✗, decided as the Node build does`, async () => {
    const root = page.locator(`[data-widget='${id}']`);
    await arrive(page, id);
    const before = await snapshot(page, id);
    assert.equal(before.tape.times.length, 0, "a fresh client");
    const hit = root.getByRole("button", { name: "Hit", exact: true });
    for (let i = 0; i < 4; i++) {
      await hit.click();
      await checkDecided(page, id);
      await page.clock.runFor(100); // quick presses, a tenth of a second apart
    }
    const { s, want } = await checkDecided(page, id);
    assert.deepEqual(s.tape.allowed, [true, true, true, false], "3 admitted, the fourth refused: what the text says");
    assert.match(s.said, /^✗ Hit refused \(429\), try again in \d+\.\d s\./);
    if (id === "client") {
      // The last response: the core's headers for the last decision (the Node build's).
      const lines = [want.last.d.allowed ? "HTTP/1.1 200 OK" : "HTTP/1.1 429 Too Many Requests", ...Object.entries(want.last.headers).map(([k, v]) => `${k}: ${v}`)];
      assert.equal(s.response, lines.join("\n"));
      assert.ok(s.response.includes("Retry-After"));
    }
    // Reset: a fresh client again; Hit ×4 gives the same lesson with its marks apart.
    await root.getByRole("button", { name: "Reset" }).click();
    assert.equal((await snapshot(page, id)).tape.times.length, 0);
    await root.getByRole("button", { name: "Hit ×4" }).click();
    await page.clock.runFor(3 * BURST_GAP);
    await page.waitForFunction((id) => window.guide.tape(id).times.length === 4, id);
    const four = await checkDecided(page, id);
    assert.deepEqual(four.s.tape.allowed, [true, true, true, false]);
    const gaps = four.s.tape.times.slice(1).map((t, i) => t - four.s.tape.times[i]);
    assert.deepEqual(gaps, [BURST_GAP, BURST_GAP, BURST_GAP], "Hit ×4's hits apart on the axis");
    assert.match(four.s.said, /^✓ ✓ ✓ ✗ Last hit refused/);
    fs.mkdirSync(ARTIFACTS, { recursive: true });
    await root.screenshot({ path: path.join(ARTIFACTS, `guide-widget-${id}.png`) });
    assert.deepEqual(page.problems, []);
  });
}

test("the live boundary attack: three just before the boundary and three after; the score is the core's", async () => {
  const root = await arrive(page, "attack");
  const clock = () => page.evaluate(() => Number(document.querySelector("[data-widget='attack']").dataset.at) % 4000);
  // The widget's clock starts 0.5 s into a 4 s window; move it on until 1.2 s are left.
  assert.equal(await clock(), 500, "a fresh arrival, half a second into the window");
  await page.clock.runFor(2300);
  await root.getByRole("button", { name: "Hit ×4" }).click();
  await page.clock.runFor(3 * BURST_GAP);
  await page.waitForFunction(() => window.guide.tape("attack").times.length === 4);
  // Past the boundary (at 3.7 s the last hit), then the same again.
  await page.clock.runFor(400);
  await root.getByRole("button", { name: "Hit ×4" }).click();
  await page.clock.runFor(3 * BURST_GAP);
  await page.waitForFunction(() => window.guide.tape("attack").times.length === 8);
  const inWindow = (await page.evaluate(() => window.guide.tape("attack").times)).map((t) => t % 4000);
  assert.deepEqual(inWindow, [2800, 3100, 3400, 3700, 100, 400, 700, 1000], "four before the boundary, four after");
  const { s } = await checkDecided(page, "attack");
  const passed = s.tape.times.filter((_, i) => s.tape.allowed[i]);
  const most = mostWithin(passed, 3999);
  assert.equal(await page.locator("#attack-most").textContent(), String(most));
  assert.ok(most > 3, `more than the limit within 4 s: ${most}`);
  await root.screenshot({ path: path.join(ARTIFACTS, "guide-widget-attack.png") });
});

test("the chat: limiting on, refused spam never reaches the room; off, the spammer floods it", async () => {
  // The chat's crowd and spammer post on their own timers, at real time's pace from here.
  await page.clock.resume();
  const root = page.locator("#chat");
  await root.scrollIntoViewIfNeeded();
  await page.fill("#chat-input", "hi all");
  await page.press("#chat-input", "Enter");
  await page.waitForFunction(() => window.guide.chat().keys.filter((k) => k === "spammer").length >= 8, null, { timeout: 20000 });
  const s = await page.evaluate(() => ({ tape: window.guide.chat(), room: [...document.querySelectorAll("#chat .chat-log li")].map((l) => l.className) }));
  const rl = new RateLimiter(s.tape.options);
  assert.deepEqual(s.tape.allowed, s.tape.times.map((now, i) => rl.limit(s.tape.keys[i], { now }).allowed), "every message decided as in Node");
  assert.ok(s.tape.allowed.some((a, i) => !a && s.tape.keys[i] === "spammer"), "the spammer was refused");
  assert.ok(s.tape.allowed.every((a, i) => a || s.tape.keys[i] === "spammer"), "nobody else was");
  const shownSpam = s.room.filter((c) => c === "spammer").length;
  assert.ok(shownSpam <= s.tape.allowed.filter((a, i) => a && s.tape.keys[i] === "spammer").length, "the room shows only admitted spam");
  assert.match(await root.locator(".chat-tally").textContent(), /^Limiter on: the spammer sent \d+, the room saw \d+, \d+ refused \(429\)\.$/);
  await root.screenshot({ path: path.join(ARTIFACTS, "guide-chat-on.png") });
  // Off: nothing is decided, and the spammer's messages fill the room.
  await root.getByRole("switch").click();
  assert.equal(await root.getByRole("switch").getAttribute("aria-checked"), "false");
  const decided = await page.evaluate(() => window.guide.chat().times.length);
  await page.waitForFunction(() => [...document.querySelectorAll("#chat .chat-log li")].filter((l) => l.className === "spammer").length >= 5, null, { timeout: 10000 });
  assert.equal(await page.evaluate(() => window.guide.chat().times.length), decided, "no decisions with the limiter off");
  await root.screenshot({ path: path.join(ARTIFACTS, "guide-chat-off.png") });
  await root.getByRole("switch").click();
  assert.deepEqual(page.problems, []);
});

test("keyboard: Tab reaches a widget's Hit; Enter and Space hit; its traffic button plays and pauses", async () => {
  const p = await openPage(browser, `${server.url}/guide/#fixed`);
  await p.focus("[data-widget='fixed-window'] button.hit");
  const count = () => p.evaluate(() => window.guide.tape("fixed-window").times.length);
  const before = await count();
  await p.keyboard.press("Enter");
  await p.keyboard.press("Space");
  await p.waitForFunction((n) => window.guide.tape("fixed-window").times.length >= n, before + 2);
  assert.match(await p.locator("[data-widget='fixed-window'] .said").textContent(), /admitted|refused/);
  for (const name of ["Hit ×4", "Reset", "Play traffic"]) {
    await p.keyboard.press("Tab");
    assert.equal(await p.evaluate(() => document.activeElement.getAttribute("aria-label") ?? document.activeElement.textContent), name);
  }
  await p.keyboard.press("Enter");
  assert.equal(await p.locator("[data-widget='fixed-window']").getAttribute("data-auto"), "1");
  await p.waitForFunction((n) => window.guide.tape("fixed-window").times.length > n, before + 2, { timeout: 5000 });
  await p.keyboard.press("Enter");
  assert.equal(await p.locator("[data-widget='fixed-window']").getAttribute("data-auto"), "0");
  // Tabbing from the first control reaches the first Hit within a few presses.
  await p.goto(`${server.url}/guide/`);
  await p.waitForSelector("body[data-ready='1']");
  let tabs = 0;
  while (!(await p.evaluate(() => document.activeElement?.classList.contains("hit")))) {
    await p.keyboard.press("Tab");
    assert.ok(++tabs < 30, "a Hit button is reachable with Tab");
  }
  assert.deepEqual(p.problems, []);
  await p.close();
});

test("reduced motion: nothing moves by itself; a stepped clock (+1 s), and four Hits still read ✓✓✓✗", async () => {
  const ctx = await browser.newContext({ reducedMotion: "reduce", viewport: { width: 1200, height: 900 } });
  const p = await ctx.newPage();
  await p.goto(`${server.url}/guide/`);
  await p.waitForSelector("body[data-ready='1']");
  await p.waitForTimeout(1500);
  const hits = await p.evaluate(() => window.guide.widgets.map((id) => window.guide.tape(id).times.length));
  assert.deepEqual(hits, hits.map(() => 0), "no widget sent anything on its own");
  assert.equal(await p.evaluate(() => window.guide.chat().times.length), 0, "the chat waits for the reader");
  assert.equal(await p.locator("[data-widget='fixed-window'] button.auto").count(), 0);
  const root = p.locator("[data-widget='token-bucket']");
  await root.scrollIntoViewIfNeeded();
  const at0 = Number(await root.getAttribute("data-at"));
  await p.waitForTimeout(600);
  assert.equal(Number(await root.getAttribute("data-at")), at0, "the clock stands still");
  for (let i = 0; i < 4; i++) await root.getByRole("button", { name: "Hit", exact: true }).click();
  const { s } = await checkDecided(p, "token-bucket");
  assert.deepEqual(s.tape.allowed, [true, true, true, false]);
  assert.ok(s.tape.times.slice(1).every((t, i) => t > s.tape.times[i]), "each hit its own instant");
  await root.getByRole("button", { name: "+1 s: move the clock one second on" }).click();
  assert.equal(Number(await root.getAttribute("data-at")), s.tape.times.at(-1) + 1000);
  await checkDecided(p, "token-bucket");
  await p.locator("#chat button.round").click();
  assert.ok((await p.evaluate(() => window.guide.chat().times.length)) > 0, "a round on demand");
  await ctx.close();
});
