// Debian's headless Chromium driven by playwright-core (never a downloaded browser), a page
// that records every console error, page error and failed request, and screenshots saved
// under artifacts/www/ (git-ignored) as the test's artifacts.
import { chromium } from "playwright-core";
import fs from "node:fs";
import path from "node:path";
import { fileURLToPath } from "node:url";

export const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "../..");
export const ARTIFACTS = path.join(ROOT, "artifacts/www");

export async function launch() {
  return chromium.launch({
    executablePath: process.env.CHROMIUM ?? "/usr/bin/chromium",
    headless: true,
    args: ["--no-sandbox", "--disable-gpu", "--disable-background-networking", "--disable-component-update", "--disable-sync", "--no-first-run"],
  });
}

/**
 * A new page (1200 x 900) whose problems accumulate in `page.problems`, its requests' paths in
 * `page.requested`. `prepare(page)`: awaited before the page is opened (e.g. its routes).
 */
export async function openPage(browser, url, prepare) {
  const page = await browser.newPage({ viewport: { width: 1200, height: 900 } });
  await prepare?.(page);
  page.problems = [];
  page.requested = [];
  page.on("request", (r) => page.requested.push(new URL(r.url()).pathname));
  page.on("console", (m) => {
    if (m.type() === "error" || m.type() === "warning") page.problems.push(`console.${m.type()}: ${m.text()}`);
  });
  page.on("pageerror", (e) => page.problems.push(`pageerror: ${e.message}`));
  page.on("requestfailed", (r) => page.problems.push(`requestfailed: ${r.url()} ${r.failure()?.errorText}`));
  page.setDefaultTimeout(20000);
  await page.goto(url);
  await page.waitForSelector("body[data-ready='1']");
  return page;
}

/**
 * `openPage`'s `prepare` for a page whose clock is the test's: Playwright's clock (Date,
 * performance.now, timers and animation frames) held still from the page's start, so its
 * widgets' time moves only when the test moves it (`page.clock.runFor(ms)`) and a loaded
 * machine never changes what they decide. `page.clock.resume()` lets it run with real time.
 */
export async function heldClock(page) {
  await page.clock.install({ time: Date.UTC(2026, 0, 1) });
  // Paused ahead of the clock's start (an hour), before the page is opened: no race with it.
  await page.clock.pauseAt(Date.UTC(2026, 0, 1, 1));
}

/** Scrolls to the guide's widget at `selector` and waits until it has seen the reader arrive (a fresh client). */
export async function arrive(page, selector) {
  const root = page.locator(selector);
  await root.scrollIntoViewIfNeeded();
  await page.waitForFunction((s) => {
    const r = document.querySelector(s);
    return r.dataset.visible === "1" && r.dataset.fresh === "1";
  }, selector);
  return root;
}

export async function screenshot(page, name) {
  fs.mkdirSync(ARTIFACTS, { recursive: true });
  const file = path.join(ARTIFACTS, `${name}.png`);
  await page.screenshot({ path: file, fullPage: true });
  return file;
}

/** The number shown in an <output> (or any element) by id. */
export async function shown(page, id) {
  return Number(await page.locator(`#${id}`).textContent());
}
