// A deploy ships everything: `wrangler deploy --dry-run --outdir` from a tree without the
// playground's module copy (www/vendor) builds it (the Worker's build runs
// scripts/build-www.sh), and the Worker bundled in that output, serving wrangler.toml's
// assets folder (www/) in workerd (Miniflare) with an API token set and nothing public,
// serves a page that loads its module. Its live mode then works with the token typed into
// the page: kept for the tab only (sessionStorage), sent as a bearer token.
import { test, before, after } from "node:test";
import assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import fs from "node:fs";
import path from "node:path";
import { start, post, tempDir, clearOfMinuteTurn } from "../../worker/test/harness.mjs";
import { ROOT, launch, openPage, screenshot, shown } from "./browser.mjs";

const WORKER = path.join(ROOT, "worker");
const TOKEN = "deploy-test-token";
const auth = { authorization: `Bearer ${TOKEN}` };
const unauthorized = (p) => p.includes("status of 401");

let out;
let worker;
let browser;
before(async () => {
  fs.rmSync(path.join(ROOT, "www/vendor"), { recursive: true, force: true });
  out = tempDir("tollgate-deploy-");
  // The Worker's wasm is built already (make test-www runs the build); the rest of the build
  // (the configuration check, the playground's module) runs as on any deploy.
  const r = spawnSync(path.join(WORKER, "node_modules/.bin/wrangler"), ["deploy", "--dry-run", "--outdir", out], {
    cwd: WORKER,
    env: { ...process.env, SKIP_WORKER_BUILD: "1", CLOUDFLARE_CF_FETCH_ENABLED: "false", WRANGLER_SEND_METRICS: "false", CI: "1" },
    encoding: "utf8",
    timeout: 600_000,
  });
  assert.equal(r.status, 0, r.stdout + r.stderr);
  worker = await start({ script: path.join(out, "index.js"), assets: true, bindings: { API_TOKEN: TOKEN, PUBLIC: undefined, TEST_MODE: undefined } });
  browser = await launch();
});
after(async () => {
  await browser?.close();
  await worker?.stop();
  if (out) fs.rmSync(out, { recursive: true, force: true });
});

test("the dry run's output holds the Worker and the build made the playground's module", () => {
  const files = fs.readdirSync(out);
  assert.ok(files.includes("index.js"), files.join(", "));
  assert.ok(files.some((f) => f.endsWith(".wasm")), files.join(", "));
  for (const f of ["web/lite.js", "tollgate_wasm_lite_bg.wasm"]) {
    assert.ok(fs.existsSync(path.join(ROOT, "www/vendor/tollgate", f)), `www/vendor/tollgate/${f}`);
  }
  assert.ok(fs.existsSync(path.join(ROOT, "www/vendor/tollgate-www/tollgate_www_bg.wasm")), "the playground's own module (describeState)");
});

test("the page and its guide served by the deployed bundle load their modules and decide with the core", async () => {
  const page = await openPage(browser, `${worker.url}/`);
  assert.ok(page.requested.some((p) => p.endsWith("/tollgate_wasm_lite_bg.wasm")), "the page fetched its wasm");
  await page.click("#hit");
  await page.waitForFunction(() => Number(document.querySelector("#allowed-count").textContent) >= 1);
  assert.deepEqual(page.problems, []);
  await page.close();
  // The guide ships with it.
  const guide = await openPage(browser, `${worker.url}/guide/`);
  await guide.click("[data-widget='fixed-window'] button.hit");
  assert.equal(await guide.locator("[data-widget='fixed-window']").getAttribute("data-status"), "200");
  assert.deepEqual(guide.problems, []);
  await guide.close();
});

test("live mode against the deployed bundle: refused without the token, works with it typed in, kept for this tab only", async () => {
  await clearOfMinuteTurn(20_000); // login is 5 a minute (sliding window counter)
  const page = await openPage(browser, `${worker.url}/?live=1&policy=login`);
  await page.waitForFunction(() => !document.querySelector("#error").hidden);
  assert.match(await page.locator("#error").textContent(), /API token/);
  assert.equal(await page.evaluate(() => window.playground.live()), null);

  await page.fill("#token", TOKEN);
  await page.locator("#token").dispatchEvent("change");
  await page.check("#live");
  await page.waitForFunction(() => window.playground.live() !== null);
  for (let i = 0; i < 8; i++) await page.click("#hit");
  await page.waitForFunction(() => {
    const l = window.playground.live();
    return l.inFlight === 0 && l.answered === l.sent;
  });
  const live = await page.evaluate(() => window.playground.live());
  assert.equal(await shown(page, "allowed-count"), 5);
  assert.equal(await shown(page, "blocked-count"), live.sent - 5);
  const peek = await post(worker.url, "/v1/peek", { key: `${live.prefix}client`, policy: "login" }, auth);
  assert.equal(peek.body.allowed, false, peek.text);

  // In this tab's sessionStorage only: not in localStorage, cookies or the URL.
  const stored = await page.evaluate(() => ({ session: sessionStorage.getItem("tollgate.apiToken"), local: localStorage.length, cookie: document.cookie }));
  assert.deepEqual(stored, { session: TOKEN, local: 0, cookie: "" });
  assert.doesNotMatch(page.url(), new RegExp(TOKEN));
  // The tab keeps it across a reload (live mode works without typing it again); a new
  // browser session does not have it.
  await page.reload();
  await page.waitForSelector("body[data-ready='1']");
  await page.waitForFunction(() => window.playground.live() !== null);
  assert.equal(await page.locator("#token").inputValue(), TOKEN);
  const other = await openPage(browser, `${worker.url}/`);
  assert.equal(await other.locator("#token").inputValue(), "");
  assert.equal(await other.evaluate(() => sessionStorage.getItem("tollgate.apiToken")), null);
  await other.close();
  // The 401 of the first attempt is the only complaint.
  assert.deepEqual(page.problems.filter((p) => !unauthorized(p)), []);
  await screenshot(page, "live-token");
  await page.close();
});
