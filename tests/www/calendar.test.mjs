// The calendar window panel: a day, an ISO week or a month at a UTC offset, chosen on the
// page (and from the link), decided by the core in Chromium, its reset shown at the real
// calendar boundary; a refused offset shows the core's message.
import { test, before, after } from "node:test";
import assert from "node:assert/strict";
import { launch, openPage, screenshot } from "./browser.mjs";
import { serveWww } from "./static-server.mjs";

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

/** Sets the panel's instant (UTC) and returns the reset it shows, as epoch ms and as text. */
async function resetAt(page, now) {
  // Set as a value: a datetime-local input's fill depends on the browser's locale widget.
  await page.$eval("#calendar-now", (e, v) => {
    e.value = v;
    e.dispatchEvent(new Event("change"));
  }, now);
  return [Number(await page.locator("#calendar-reset").getAttribute("data-reset-at")), await page.locator("#calendar-reset").textContent()];
}

test("a month resets on the 1st, 28 to 31 days on, at either side of UTC; the link keeps the choice", async () => {
  const page = await openPage(browser, `${server.url}/`);
  assert.equal(await page.locator("#calendar-unit").inputValue(), "month");
  const [feb, text] = await resetAt(page, "2026-02-10T12:00:00");
  assert.equal(feb, Date.parse("2026-03-01T00:00:00Z"));
  assert.match(text, /^2026-03-01T00:00:00.000Z \(Sunday\), in 18 d 12 h 0 min$/);
  assert.equal((await resetAt(page, "2028-02-29T23:59:59"))[0], Date.parse("2028-03-01T00:00:00Z"), "a leap day");
  assert.equal((await resetAt(page, "2026-03-01T00:00:00"))[0], Date.parse("2026-04-01T00:00:00Z"));
  // UTC+2: the month turns at 22:00 UTC on its last day.
  await page.fill("#calendar-offset", "-2h");
  await page.locator("#calendar-offset").dispatchEvent("change");
  assert.equal((await resetAt(page, "2026-02-10T12:00:00"))[0], Date.parse("2026-02-28T22:00:00Z"));
  assert.equal((await resetAt(page, "2026-02-28T22:00:00"))[0], Date.parse("2026-03-31T22:00:00Z"));
  assert.match(page.url(), /offset=-2h/);
  // Hits count in the window, and the headers say when it resets.
  await page.fill("#calendar-limit", "2");
  await page.locator("#calendar-limit").dispatchEvent("change");
  await resetAt(page, "2026-02-10T12:00:00");
  for (let i = 0; i < 3; i++) await page.click("#calendar-hit");
  assert.match(await page.locator("#calendar-decision").textContent(), /^blocked, 0 left of 2; 3 hits so far$/);
  const headers = await page.locator("#calendar-headers").textContent();
  const seconds = (Date.parse("2026-02-28T22:00:00Z") - Date.parse("2026-02-10T12:00:00Z")) / 1000;
  assert.match(headers, new RegExp(`Retry-After: ${seconds}`));
  assert.match(page.url(), /quota=2%2Fmonth/);
  await screenshot(page, "calendar-month");
  assert.deepEqual(page.problems, []);
  await page.close();
});

test("a week from the link is the ISO week; a day turns at its offset; a bad offset shows the core's message", async () => {
  const page = await openPage(browser, `${server.url}/?quota=500%2Fweek&offset=9h`);
  assert.equal(await page.locator("#calendar-unit").inputValue(), "week");
  assert.equal(await page.locator("#calendar-offset").inputValue(), "9h");
  // 2026-02-10 is a Tuesday: the week turns on Monday 2026-02-16 at 09:00 UTC.
  assert.equal((await resetAt(page, "2026-02-10T12:00:00"))[0], Date.parse("2026-02-16T09:00:00Z"));
  await page.selectOption("#calendar-unit", "day");
  assert.equal((await resetAt(page, "2026-02-10T12:00:00"))[0], Date.parse("2026-02-11T09:00:00Z"));
  await page.selectOption("#calendar-unit", "month");
  await page.fill("#calendar-offset", "28d");
  await page.locator("#calendar-offset").dispatchEvent("change");
  await page.waitForSelector("#calendar-error:not([hidden])");
  assert.match(await page.locator("#calendar-error").textContent(), /offset 28d must be shorter than 28 days/);
  assert.deepEqual(page.problems, []);
  await page.close();
});
