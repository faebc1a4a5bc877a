// Starts the built Worker in the real local runtime (Miniflare's programmatic API over
// workerd) on 127.0.0.1 with a free port and persistence in a temporary folder, and stops it.
// By default the test build (build-test/index.js + index_bg.wasm, worker/scripts/build.sh
// --test: the test hooks, with TEST_MODE on unless ORIGIN or API_TOKEN is set, beside which
// the Worker refuses it); `script: PRODUCTION_BUILD` runs the production build (build/, as
// `make run` and `wrangler deploy` build it). Several named workers can share one Durable
// Object namespace: each is its own isolate (used to measure sync mode's over-admission).
import { Miniflare } from "miniflare";
import fs from "node:fs";
import http from "node:http";
import os from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";

export const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "..");
const COMPAT = "2026-04-01";

/** The test build's entry module (worker/scripts/build.sh --test). */
export const TEST_BUILD = path.join(root, "build-test/index.js");
/** The production build's entry module (worker/scripts/build.sh). */
export const PRODUCTION_BUILD = path.join(root, "build/index.js");

export const POLICIES = {
  api: { limits: [{ name: "per-second", algorithm: "token-bucket", limit: 100, window: "1s", burst: 500 }] },
  login: {
    limits: [
      { name: "per-minute", algorithm: "sliding-window", quota: "5/m" },
      { name: "per-hour", algorithm: "sliding-window", quota: "20/h" },
    ],
  },
  hundred: { limits: [{ name: "total", algorithm: "token-bucket", limit: 100, window: "1h" }] },
  gcra: { limits: [{ name: "per-second", algorithm: "gcra", quota: "10/s" }] },
  // From the first hit, so a key's state lasts exactly one window after it (a clock-aligned
  // window may end a moment after the hit, before a test can read the state).
  short: { limits: [{ name: "per-second", algorithm: "fixed-window", align: "first-hit", limit: 2, window: "1s" }] },
  open: { limits: [{ name: "per-minute", algorithm: "fixed-window", quota: "5/m" }], failure: "open", timeoutMs: 300 },
  closed: { limits: [{ name: "per-minute", algorithm: "fixed-window", quota: "5/m" }], failure: "closed", timeoutMs: 300 },
};

/** Capacity pools, as in wrangler.toml: 500/s as 20 partitions of 25/s (the notes' example). */
export const POOLS = { ingest: { partitions: 20, rate: "25/s", maxTtl: "1m" } };

export function tempDir(prefix = "tollgate-test-") {
  return fs.mkdtempSync(path.join(os.tmpdir(), prefix));
}

function workerOptions(name, bindings, hostObjects, scriptPath) {
  return {
    name,
    modules: true,
    scriptPath,
    // Module names are paths relative to this root (a bundle outside the working folder,
    // such as a dry run's output, would otherwise need "..").
    modulesRoot: path.dirname(scriptPath),
    modulesRules: [
      { type: "ESModule", include: ["**/*.js"] },
      { type: "CompiledWasm", include: ["**/*.wasm"] },
    ],
    compatibilityDate: COMPAT,
    durableObjects: {
      LIMITER: hostObjects ? { className: "KeyLimiter", useSQLite: true } : { className: "KeyLimiter", scriptName: "w0", useSQLite: true },
      LEASES: hostObjects ? { className: "CapacityPool", useSQLite: true } : { className: "CapacityPool", scriptName: "w0", useSQLite: true },
    },
    bindings,
  };
}

/**
 * Starts Miniflare. `isolates` > 1 starts workers w0..wN-1 (w0 hosts the Durable Objects);
 * `urls[i]` reaches worker i through its own HTTP port-less route (see `fetchFor`).
 * `script`: the Worker's entry module (default the test build, TEST_BUILD; PRODUCTION_BUILD, or
 * e.g. the output of `wrangler deploy --dry-run --outdir`). `extra`: more Miniflare options for worker 0 (e.g.
 * `analyticsEngineDatasets`), `extraWorkers` more workers after them (e.g. a wrapped binding's).
 * `onLog(line)`: every line the runtime prints (console.*). `persist`: the folder the objects' storage
 * is kept in (default a new temporary one), or false to keep it in memory. `direct`: each worker
 * also listens on a port of its own, `directUrls[i]` (Miniflare's direct sockets), which reaches
 * it without the runtime's entry worker, the routing hop in front of every request to `url`
 * that a deployed Worker does not have (benchmarks use it: the hop costs about as much CPU
 * as a decision made in the isolate).
 */
export async function start({ bindings = {}, persist, isolates = 1, assets = false, script = TEST_BUILD, extra = {}, extraWorkers = [], onLog, direct = false } = {}) {
  if (!fs.existsSync(script)) {
    const how = script === TEST_BUILD ? "worker/scripts/build.sh --test" : "worker/scripts/build.sh";
    throw new Error(`${script} is missing: run ${how} (make test-worker does)`);
  }
  // `persist: false`: the objects' storage in memory (no folder), for tests that make thousands.
  const dir = persist === false ? null : (persist ?? tempDir());
  // PUBLIC opens /v1 without a token, as `make run` does; tests of the secure default unset it.
  // TEST_MODE (the test build's hooks) is on unless the Worker would refuse it: beside ORIGIN
  // or API_TOKEN.
  const testMode = bindings.ORIGIN || bindings.API_TOKEN ? {} : { TEST_MODE: "on" };
  const vars = { POLICIES, POOLS, ...testMode, PUBLIC: "true", ...bindings };
  for (const [k, v] of Object.entries(vars)) if (v === undefined) delete vars[k];
  const workers = [];
  for (let i = 0; i < isolates; i++) {
    const w = workerOptions(`w${i}`, vars, i === 0, script);
    if (i === 0) Object.assign(w, extra);
    if (isolates > 1) w.routes = [`w${i}.test/*`];
    if (direct) w.unsafeDirectSockets = [{ host: "127.0.0.1", port: 0 }];
    if (assets && i === 0) {
      w.assets = {
        directory: path.join(root, "..", "www"),
        binding: "ASSETS",
        routerConfig: { has_user_worker: true, invoke_user_worker_ahead_of_assets: true },
      };
    }
    workers.push(w);
  }
  workers.push(...extraWorkers);
  const logs = onLog
    ? {
        handleRuntimeStdio(stdout, stderr) {
          for (const stream of [stdout, stderr]) {
            let rest = "";
            stream.on("data", (chunk) => {
              const lines = (rest + chunk).split("\n");
              rest = lines.pop();
              for (const line of lines) onLog(line);
            });
          }
        },
      }
    : {};
  const mf = new Miniflare({
    host: "127.0.0.1",
    port: 0,
    workers,
    durableObjectsPersist: dir ?? false,
    cf: false,
    ...logs,
  });
  const url = (await mf.ready).toString().replace(/\/$/, "");
  const directUrls = [];
  if (direct) {
    for (let i = 0; i < isolates; i++) directUrls.push((await mf.unsafeGetDirectURL(`w${i}`)).toString().replace(/\/$/, ""));
  }
  // Each isolate loads its module on its first request; under load, a cold isolate that
  // receives dozens of requests at once can have the local runtime drop some of their
  // connections (socket hang up) while it loads. One request per isolate first, so that tests
  // measure the Worker, not the local runtime's start.
  if (isolates > 1) {
    for (let i = 0; i < isolates; i++) await request(url, "/healthz", { headers: { host: `w${i}.test` } });
  }
  return {
    mf,
    url,
    directUrls,
    dir,
    bindings: vars,
    async stop() {
      await mf.dispose();
    },
  };
}

// No keep-alive: the runtime may close a connection whose request body it did not read
// (a 405, say), and a reused socket would then fail the next request.
const agent = new http.Agent({ keepAlive: false, maxSockets: 64 });

/**
 * One HTTP request with node:http (unlike fetch, it sends a Host header as given, which is
 * how requests pick an isolate: worker i answers host `wi.test`). Returns
 * { status, headers (a Headers), body (parsed JSON or undefined), text }.
 */
export function request(base, route, { method = "GET", headers = {}, body } = {}) {
  const u = new URL(base + route);
  return new Promise((resolve, reject) => {
    const req = http.request(
      { host: u.hostname, port: u.port, path: u.pathname + u.search, method, headers, agent },
      (res) => {
        const chunks = [];
        res.on("data", (c) => chunks.push(c));
        res.on("end", () => {
          const text = Buffer.concat(chunks).toString("utf8");
          const h = new Headers();
          for (const [k, v] of Object.entries(res.headers)) h.set(k, Array.isArray(v) ? v.join(", ") : v);
          let json;
          try {
            json = JSON.parse(text);
          } catch {
            json = undefined;
          }
          resolve({ status: res.statusCode, headers: h, body: json, text });
        });
        res.on("error", reject);
      },
    );
    req.on("error", reject);
    req.end(body);
  });
}

/** POSTs JSON (or a raw string) to the API. */
export function post(base, route, body, headers = {}) {
  return request(base, route, {
    method: "POST",
    headers: { "content-type": "application/json", ...headers },
    body: typeof body === "string" ? body : JSON.stringify(body),
  });
}

export function get(base, route, init = {}) {
  return request(base, route, { headers: init.headers ?? {} });
}

/** DELETE. */
export function del(base, route, headers = {}) {
  return request(base, route, { method: "DELETE", headers });
}

let counter = 0;
/** A key no other test uses. */
export function freshKey(prefix = "k") {
  counter += 1;
  return `${prefix}:${process.pid}:${Date.now()}:${counter}`;
}

export const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

/**
 * Waits, if need be, so that at least `needMs` remain before the clock's next minute. Tests on
 * the real clock that count a `login`-style per-minute sliding window counter across a slow step
 * (a restart) call it first: a turn of the minute in between weighs the earlier hits down and
 * admits more than the test expects.
 */
export async function clearOfMinuteTurn(needMs) {
  const left = 60_000 - (Date.now() % 60_000);
  if (left < needMs) await sleep(left + 100);
}
