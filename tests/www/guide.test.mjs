// The guide (www/guide/) in headless Chromium: every widget's Hit is decided as the Node build
// decides the same hits, the state it draws is the core's describe at that instant (the
// widget's data attributes and the numbers in its picture), Hit pauses the automatic traffic,
// the keyboard works, the boundary attack and the chat are the core's, and the last hit's
// response is the package's headers. Screenshots of each widget go to artifacts/www/.
import { test, before, after } from "node:test";
import assert from "node:assert/strict";
import fs from "node:fs";
import path from "node:path";
import { launch, openPage, ARTIFACTS } from "./browser.mjs";
import { serveWww } from "./static-server.mjs";
import { RateLimiter, describe } from "./core-node.mjs";

let server;
let browser;
let page;
before(async () => {
  server = await serveWww();
  browser = await launch();
  page = await openPage(browser, `${server.url}/guide/`);
});
after(async () => {
  await browser?.close();
  await server?.close();
});

/** The widget's drawn model, its tape and the picture's text, read in one go (no frame between). */
const snapshot = (id) =>
  page.evaluate((id) => {
    const r = document.querySelector(`[data-widget='${id}']`);
    return {
      state: JSON.parse(r.dataset.state),
      at: Number(r.dataset.at),
      hits: Number(r.dataset.hits),
      auto: r.dataset.auto,
      tape: window.guide.tape(id),
      picture: r.querySelector("svg").textContent,
      entries: r.querySelectorAll("svg .entry").length,
      response: r.querySelector(".client pre").textContent,
    };
  }, id);

/** The numbers each picture must show, from the core's fields. */
function pictured(f) {
  switch (f.kind) {
    case "fixed-window":
    case "fixed-window-first-hit":
      return [`${f.count} / ${f.limit}`, `this window: ${f.count} of ${f.limit}`];
    case "sliding-log":
      return [`: ${f.count} of ${f.limit}`];
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

/** Replays the tape in Node: the verdicts of every hit, the state after the first `n`, and the last decision. */
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

test("the guide loads cleanly and offers a widget per algorithm, each with a Hit button", async () => {
  const ids = await page.evaluate(() => window.guide.widgets);
  assert.deepEqual(ids, ["hero", "fixed-window", "fixed-window-first-hit", "sliding-log", "sliding-window", "sliding-buckets", "token-bucket", "gcra", "client"]);
  for (const id of ids) assert.equal(await page.locator(`[data-widget='${id}'] button.hit`).textContent(), "Hit");
  assert.equal(await page.locator("a[href='../']").first().textContent(), "The playground");
  assert.deepEqual(page.problems, []);
});

for (const id of ["hero", "fixed-window", "fixed-window-first-hit", "sliding-log", "sliding-window", "sliding-buckets", "token-bucket", "gcra", "client"]) {
  test(`${id}: Hit decides as the Node build does, and the drawn state is the core's describe at each step`, async () => {
    const root = page.locator(`[data-widget='${id}']`);
    await root.scrollIntoViewIfNeeded();
    const hit = root.getByRole("button", { name: "Hit", exact: true });
    let refused = 0;
    // Quick hits against 3 per 4 s: seven within 4 s meet a refusal however they fall around a
    // window boundary or a refill; on a slow machine, up to 20 clicks are made until one is
    // refused (the check at each step holds whatever the speed).
    for (let i = 0; i < 20 && (i < 7 || refused === 0); i++) {
      await hit.click();
      const s = await snapshot(id);
      assert.equal(s.auto, "0", "Hit paused the automatic traffic");
      const want = replay(s.tape, s.hits, s.at);
      assert.deepEqual(s.tape.allowed, want.verdicts, "every hit decided as in Node");
      assert.deepEqual(s.state, want.state, `the drawn model at ${s.at}`);
      for (const text of pictured(s.state)) assert.ok(s.picture.includes(text), `"${text}" in the picture: ${s.picture}`);
      if (s.state.kind === "sliding-log") assert.equal(s.entries, s.state.entries.length, "one diamond per log entry");
      refused += s.tape.allowed.at(-1) ? 0 : 1;
    }
    assert.ok(refused >= 1, "quick hits meet the limit");
    // The last response: the core's headers for the last decision (the Node build's).
    const s = await snapshot(id);
    const want = replay(s.tape, s.tape.times.length, s.at);
    const lines = [want.last.d.allowed ? "HTTP/1.1 200 OK" : "HTTP/1.1 429 Too Many Requests", ...Object.entries(want.last.headers).map(([k, v]) => `${k}: ${v}`)];
    assert.equal(s.response, lines.join("\n"));
    assert.equal(s.response.includes("Retry-After"), !want.last.d.allowed);
    fs.mkdirSync(ARTIFACTS, { recursive: true });
    await root.screenshot({ path: path.join(ARTIFACTS, `guide-${id}.png`) });
    assert.deepEqual(page.problems, []);
  });
}

test("keyboard: Tab reaches a widget's Hit, Enter and Space hit; its traffic button plays and pauses", async () => {
  const p = await openPage(browser, `${server.url}/guide/`);
  let tabs = 0;
  while (!(await p.evaluate(() => document.activeElement?.classList.contains("hit")))) {
    await p.keyboard.press("Tab");
    assert.ok(++tabs < 30, "a Hit button is reachable with Tab");
  }
  const id = await p.evaluate(() => document.activeElement.closest("[data-widget]").dataset.widget);
  const count = () => p.evaluate((id) => window.guide.tape(id).times.length, id);
  const manual = () => p.evaluate((id) => document.querySelector(`[data-widget='${id}'] .said`).textContent, id);
  const before = await count();
  await p.keyboard.press("Enter");
  await p.keyboard.press("Space");
  assert.ok((await count()) >= before + 2, "Enter and Space each hit");
  assert.match(await manual(), /Allowed|Blocked/);
  assert.equal(await p.locator(`[data-widget='${id}']`).getAttribute("data-auto"), "0");
  await p.keyboard.press("Tab");
  assert.equal(await p.evaluate(() => document.activeElement.textContent), "Play traffic");
  await p.keyboard.press("Enter");
  assert.equal(await p.locator(`[data-widget='${id}']`).getAttribute("data-auto"), "1");
  assert.deepEqual(p.problems, []);
  await p.close();
});

test("the boundary attack: the fixed window admits 2 x the limit across the boundary, the sliding log the limit", async () => {
  const root = page.locator("#boundary");
  assert.equal(await root.getAttribute("data-fixed"), "6");
  assert.equal(await root.getAttribute("data-log"), "3");
  const { times, verdicts } = await page.evaluate(() => window.guide.boundary());
  for (const [name, options] of [
    ["fixed", { algorithm: "fixed-window", align: "clock", limit: 3, window: 4000 }],
    ["log", { algorithm: "sliding-log", limit: 3, window: 4000 }],
  ]) {
    const rl = new RateLimiter(options);
    assert.deepEqual(verdicts[name], times.map((now) => rl.limit("attacker", { now }).allowed), name);
  }
  await root.getByRole("button", { name: "Replay the attack" }).click();
  await root.scrollIntoViewIfNeeded();
  await page.waitForTimeout(1800);
  await root.screenshot({ path: path.join(ARTIFACTS, "guide-boundary.png") });
  assert.deepEqual(page.problems, []);
});

test("the chat: a token bucket of 3, one back every 4 s, per sender; the spammer's bucket drawn from describe", async () => {
  const root = page.locator("#chat");
  await root.scrollIntoViewIfNeeded();
  for (let i = 0; i < 2; i++) {
    await page.fill("#chat-input", `hi ${i}`);
    await page.press("#chat-input", "Enter");
  }
  // Let the spammer post a few (it posts about every second).
  await page.waitForFunction(() => window.guide.chat().keys.filter((k) => k === "spammer").length >= 5, null, { timeout: 20000 });
  const s = await page.evaluate(() => {
    const r = document.getElementById("chat");
    return { tape: window.guide.chat(), state: JSON.parse(r.dataset.state), at: Number(r.dataset.at), hits: Number(r.dataset.hits), picture: r.querySelector("svg").textContent };
  });
  const rl = new RateLimiter(s.tape.options);
  assert.deepEqual(s.tape.allowed, s.tape.times.map((now, i) => rl.limit(s.tape.keys[i], { now }).allowed));
  assert.ok(s.tape.allowed.filter((a, i) => s.tape.keys[i] === "you").every(Boolean), "your two messages got through");
  assert.ok(s.tape.allowed.some((a, i) => !a && s.tape.keys[i] === "spammer"), "the spammer was refused");
  const upTo = new RateLimiter(s.tape.options);
  s.tape.times.slice(0, s.hits).forEach((now, i) => upTo.limit(s.tape.keys[i], { now }));
  assert.deepEqual(s.state, describe(s.tape.options, upTo, "spammer", s.at));
  assert.ok(s.picture.includes(`${s.state.tokens} of ${s.state.capacity} tokens`), s.picture);
  assert.equal(await page.locator("#chat li.you").count(), 2);
  await page.click("#chat button.auto"); // stop the spammer
  await root.screenshot({ path: path.join(ARTIFACTS, "guide-chat.png") });
  assert.deepEqual(page.problems, []);
});

test("reduced motion: no automatic traffic until asked", async () => {
  const ctx = await browser.newContext({ reducedMotion: "reduce", viewport: { width: 1200, height: 900 } });
  const p = await ctx.newPage();
  await p.goto(`${server.url}/guide/`);
  await p.waitForSelector("body[data-ready='1']");
  await p.waitForTimeout(2500);
  const hits = await p.evaluate(() => window.guide.widgets.map((id) => window.guide.tape(id).times.length));
  assert.deepEqual(hits, hits.map(() => 0), "no widget sent anything on its own");
  assert.equal(await p.evaluate(() => window.guide.chat().times.length), 0);
  assert.equal(await p.locator("[data-widget='hero'] button.auto").textContent(), "Play traffic");
  await ctx.close();
});
