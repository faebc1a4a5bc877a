// A bundler user: a file importing "tollgate" from the installed tarball, bundled by esbuild for
// the browser platform (so the `browser` condition of package.json's "imports" picks dist/load/web.js), run in headless
// Chromium. esbuild leaves `new URL("../tollgate_wasm_bg.wasm", import.meta.url)` as it is
// (webpack 5 and Vite emit that asset themselves), so, as the npm README says, the .wasm files
// (the limiter's module, or the lite module) are copied to where the
// bundle's URLs point.
import test, { before, after } from "node:test";
import assert from "node:assert/strict";
import { execFileSync } from "node:child_process";
import { copyFileSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { createServer } from "node:http";
import { tmpdir } from "node:os";
import { dirname, extname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { build } from "esbuild";
import { launchChromium } from "./chromium.mjs";
import { tarballIn } from "./packed.mjs";

const here = dirname(fileURLToPath(import.meta.url));
let project;

const run = (cmd, args, cwd) => execFileSync(cmd, args, { cwd, encoding: "utf8", stdio: ["ignore", "pipe", "pipe"] });

before(() => {
  project = mkdtempSync(join(tmpdir(), "tollgate-bundler-"));
  // The tarball make test-pkg packed once for every file (TOLLGATE_TARBALL), else packed here.
  const tarball = tarballIn(project);
  writeFileSync(join(project, "package.json"), JSON.stringify({ name: "user", private: true, type: "module" }));
  run("npm", ["install", "--no-audit", "--no-fund", "--offline", tarball], project);
});

after(() => rmSync(project, { recursive: true, force: true }));

/**
 * Serves `html` at / and the files below `root` at their paths, opens the page in Chromium and
 * waits for `globalThis.result`. Returns the page's errors, its result and the URLs it asked for.
 */
async function runPage(root, html) {
  const types = { ".js": "text/javascript", ".wasm": "application/wasm" };
  const requests = [];
  const server = createServer((req, res) => {
    requests.push(req.url);
    if (req.url === "/") {
      res.writeHead(200, { "content-type": "text/html" }).end(html);
      return;
    }
    const file = resolve(root, "." + req.url);
    let body;
    try {
      if (!file.startsWith(root)) throw new Error("outside");
      body = readFileSync(file);
    } catch {
      res.writeHead(404).end();
      return;
    }
    res.writeHead(200, { "content-type": types[extname(file)] ?? "application/octet-stream" }).end(body);
  });
  await new Promise((ok) => server.listen(0, "127.0.0.1", ok));
  const browser = await launchChromium();
  try {
    const page = await browser.newPage();
    const errors = [];
    page.on("pageerror", (e) => errors.push(e.message));
    await page.goto(`http://127.0.0.1:${server.address().port}/`);
    const result = await page.waitForFunction(() => globalThis.result, null, { timeout: 20_000 }).then((h) => h.jsonValue()).catch(() => undefined);
    return { errors, result, requests };
  } finally {
    await browser.close();
    server.close();
  }
}

/**
 * Bundles `app` (a module importing "tollgate" that sets `globalThis.result`) with esbuild for
 * the browser, serves it with the given .wasm files of the package next to it, and runs it in
 * Chromium. Returns the bundle's text, the page's errors, its result and the URLs it asked for.
 */
async function bundleAndRun(app, wasmFiles) {
  writeFileSync(join(project, "app.js"), app);
  const www = mkdtempSync(join(project, "www-"));
  mkdirSync(join(www, "app"), { recursive: true });
  const r = await build({
    absWorkingDir: project,
    entryPoints: ["app.js"],
    bundle: true,
    platform: "browser",
    format: "esm",
    outfile: join(www, "app", "app.js"),
    logLevel: "silent",
  });
  assert.deepEqual(r.errors, []);
  const bundle = readFileSync(join(www, "app", "app.js"), "utf8");
  for (const wasm of wasmFiles) copyFileSync(join(project, "node_modules/tollgate/dist", wasm), join(www, wasm));
  return { bundle, ...(await runPage(www, '<!doctype html><script type="module" src="/app/app.js"></script>')) };
}

test("esbuild bundles an import of tollgate for the browser, and the bundle runs in Chromium", async () => {
  const { bundle, errors, result, requests } = await bundleAndRun(`
    import { RateLimiter, Pacer } from "tollgate";
    const limiter = new RateLimiter({ algorithm: "gcra", quota: "2/s" });
    const now = 1_700_000_000_000;
    const user = limiter.key("user:42");
    const batch = limiter.limitBatch([user, user, user], { now });
    const d = limiter.limit("user:7", { now });
    const pacer = new Pacer({ rate: "10/s", grain: "100ms" });
    globalThis.result = JSON.stringify([Array.from(batch.allowed), d.allowed, d.remaining, pacer.maxCost]);`,
  ["tollgate_wasm_bg.wasm"]);
  assert.doesNotMatch(bundle, /node:fs|readFileSync/, "the browser condition must not pull in the Node entry");
  assert.deepEqual(errors, []);
  assert.equal(result, "[[1,1,0],true,1,1]");
  assert.deepEqual(requests.filter((u) => u.endsWith(".wasm")), ["/tollgate_wasm_bg.wasm"], "the Pacer is in the limiter's module");
});

test("a bundle of RateLimiter alone leaves the stores' and the pacer's JavaScript out", async () => {
  // The limiter's module is all an in-memory limiter needs; esbuild drops the JavaScript of the
  // stores, the pacer and the lease (sideEffects: false).
  const { bundle, errors, result, requests } = await bundleAndRun(`
    import { RateLimiter } from "tollgate";
    const limiter = new RateLimiter({ limits: [{ algorithm: "sliding-log", limit: 2, window: "1s" }, { algorithm: "gcra", quota: "5/s" }] });
    const now = 1_700_000_000_000;
    const d = [1, 2, 3].map(() => limiter.limit("user:42", { now }));
    const state = limiter.export("user:42");
    globalThis.result = JSON.stringify([d.map((x) => x.allowed), d[2].blockedBy, state.length > 0, "Retry-After" in limiter.headers(d[2], now)]);`,
  ["tollgate_wasm_bg.wasm"]);
  assert.doesNotMatch(bundle, /RedisStore|LeasedPacer|WorkerStore|PacerQueueFullError/, "no store's, pacer's or lease's JavaScript is bundled");
  assert.deepEqual(errors, []);
  assert.equal(result, '[[true,true,false],"limit-0",true,true]');
  assert.deepEqual(requests.filter((u) => u.endsWith(".wasm")), ["/tollgate_wasm_bg.wasm"]);
});

test("a bundle of tollgate/lite holds and fetches only the lite module", async () => {
  // The lite module: one limit per limiter, one key per call.
  const { bundle, errors, result, requests } = await bundleAndRun(`
    import { RateLimiter } from "tollgate/lite";
    const limiter = new RateLimiter({ algorithm: "sliding-log", limit: 2, window: "1s" });
    const now = 1_700_000_000_000;
    const d = [1, 2, 3].map(() => limiter.limit("user:42", { now }));
    let refused = "";
    try { limiter.limitBatch("user:42"); } catch (e) { refused = e.constructor.name; }
    globalThis.result = JSON.stringify([d.map((x) => x.allowed), d[2].retryAfter, limiter.export("user:42").length > 0, refused]);`,
  ["tollgate_wasm_lite_bg.wasm"]); // the limiter's module is not even served
  assert.doesNotMatch(bundle, /tollgate_wasm_bg|limitBatchKeys/, "nothing of the limiter's module is bundled");
  assert.deepEqual(errors, []);
  // An entry exactly a window old still counts: the log admits again 1 ns after it, 1001 ms.
  assert.equal(result, '[[true,true,false],1001,true,"TypeError"]');
  assert.deepEqual(requests.filter((u) => u.endsWith(".wasm")), ["/tollgate_wasm_lite_bg.wasm"]);
});

/**
 * Runs `app` (a module setting `globalThis.result`) unbundled in Chromium, the user's project
 * (node_modules included) served, with an import map resolving "tollgate" and
 * "tollgate/limiter" as the package's `browser` condition does. Returns the result and the
 * .wasm files the page asked for.
 */
async function runUnbundled(app) {
  const dist = "/node_modules/tollgate/dist";
  // The entries, and the package's own "#wasm" imports as its "browser" condition maps them.
  const importMap = { imports: {
    tollgate: `${dist}/lib/index.js`, "tollgate/limiter": `${dist}/lib/limiter.js`, "tollgate/lite": `${dist}/lib/lite.js`,
    "#wasm": `${dist}/load/web.js`, "#wasm-lite": `${dist}/load/web-lite.js`,
  } };
  const html = `<!doctype html><script type="importmap">${JSON.stringify(importMap)}</script><script type="module">${app}</script>`;
  const { errors, result, requests } = await runPage(project, html);
  assert.deepEqual(errors, []);
  return { result, wasm: requests.filter((u) => u.endsWith(".wasm")).map((u) => u.split("/").pop()).sort() };
}

test("unbundled ESM: tollgate/lite fetches only the lite module, tollgate/limiter and tollgate only the limiter's", async () => {
  const app = (entry) => `
    import { RateLimiter } from "${entry}";
    const limiter = new RateLimiter({ algorithm: "fixed-window", quota: "2/s" });
    const now = 1_700_000_000_000;
    globalThis.result = JSON.stringify([1, 2, 3].map(() => limiter.limit("ip:1", { now }).allowed));`;
  const lite = await runUnbundled(app("tollgate/lite"));
  assert.equal(lite.result, "[true,true,false]");
  assert.deepEqual(lite.wasm, ["tollgate_wasm_lite_bg.wasm"]);
  const limiterOnly = await runUnbundled(app("tollgate/limiter"));
  assert.equal(limiterOnly.result, "[true,true,false]");
  assert.deepEqual(limiterOnly.wasm, ["tollgate_wasm_bg.wasm"]);
  const everything = await runUnbundled(app("tollgate"));
  assert.equal(everything.result, "[true,true,false]");
  assert.deepEqual(everything.wasm, ["tollgate_wasm_bg.wasm"]);
});
