// The LLM gateway example as a Worker (examples/llm-gateway/worker.mjs) in workerd: bundled
// (esbuild, the `workerd` condition) from the packed package and run by Miniflare, in front of
// the example's mock upstream on Node, twice: counting in the isolate's memory, and through
// WorkerStore over a service binding to the tollgate Worker (its test build), whose policies
// decide. The same calls as on Node: headers, a streamed answer settled on its usage, and
// concurrent clients held to each key's TPM and its debt.
import { test, before, after } from "node:test";
import assert from "node:assert/strict";
import { copyFileSync, mkdirSync } from "node:fs";
import { join, resolve } from "node:path";
import { pathToFileURL } from "node:url";
import { build } from "esbuild";
import { install, here } from "./packed.mjs";
import { post, start } from "../../worker/test/harness.mjs";
import { EXAMPLE_FILES, assertHeld, body, call, estimateOf, load } from "./llm-gateway.mjs";

const example = resolve(here, "../../examples/llm-gateway");

// A fixed window from each key's first call: every call of the test falls in one window.
const minute = (name, limit) => ({ name, algorithm: "fixed-window", align: "first-hit", limit, window: "1m" });
// Each requests policy holds the gateway's in-flight limit, as README.md's does: 8 (the memory
// variant's default) for the shared tests, 2 for the cap's own test.
const inFlight = (limit) => ({ name: "in-flight", algorithm: "concurrency", limit, leaseTtl: "5m" });
const POLICIES = {
  "llm-requests": { limits: [inFlight(8), minute("requests", 10000)] },
  "llm-requests-cap": { limits: [inFlight(2), minute("requests", 10000)] },
  "llm-tokens": { limits: [minute("tokens", 3000), { name: "month", algorithm: "fixed-window", quota: "1000000/month" }] },
};

let pkg, upstream, slow, s;
/** The slow upstream's calls inside now, and their answers held until the test lets them go. */
let inside = 0;
const waiting = [];
/** The tokens the mock upstream served each API key. */
const served = new Map();
/** The gateway Worker's `fetch`, by variant: "memory" and "worker" (WorkerStore). */
const gateways = {};

before(async () => {
  pkg = install();
  const dir = join(pkg.project, "llm-gateway");
  mkdirSync(dir);
  for (const f of EXAMPLE_FILES) copyFileSync(join(example, f), join(dir, f));
  const at = (f) => import(pathToFileURL(join(dir, f)).href);
  const [{ mockUpstream }, { serve }] = await Promise.all([at("mock-upstream.mjs"), at("serve.mjs")]);
  upstream = await serve(mockUpstream({ delayMs: 1, served }));
  // Idle kept-alive connections stay open for the test (close() ends them): a server that closes
  // one after its keep-alive timeout races a client reusing it at that moment, and the gateway
  // answers that call "the upstream did not answer: Network connection lost" (a 5 s timeout
  // makes it rare, a loaded machine less so; at 2 ms it fails every run).
  upstream.server.keepAliveTimeout = 0;
  // An upstream that answers only when the test says so: its calls stay in flight meanwhile.
  slow = await serve(async () => {
    inside += 1;
    await new Promise((go) => waiting.push(go));
    inside -= 1;
    return Response.json({ choices: [], usage: { total_tokens: 5 } });
  });
  slow.server.keepAliveTimeout = 0;
  // Bundled into dist/workerd/ so that the package's imports of ../*.wasm (left external,
  // loaded by workerd as compiled modules) resolve as in the package.
  const dist = join(pkg.project, "node_modules/tollgate/dist");
  const script = join(dist, "workerd/llm-gateway.js");
  await build({
    entryPoints: [join(dir, "worker.mjs")],
    bundle: true,
    format: "esm",
    platform: "neutral",
    conditions: ["workerd", "worker", "browser"],
    mainFields: ["module", "main"],
    external: ["*.wasm"],
    outfile: script,
    logLevel: "warning",
  });
  const gateway = (name, bindings, serviceBindings = {}) => ({
    name,
    modules: true,
    modulesRoot: dist,
    scriptPath: script,
    modulesRules: [
      { type: "ESModule", include: ["**/*.js"] },
      { type: "CompiledWasm", include: ["**/*.wasm"] },
    ],
    compatibilityDate: "2026-04-01",
    bindings: { UPSTREAM_URL: `http://127.0.0.1:${upstream.port}`, ...bindings },
    serviceBindings,
  });
  s = await start({
    bindings: { POLICIES },
    extraWorkers: [
      gateway("llm-memory", { RPM: "10000", TPM: "3000", ALGORITHM: "fixed-window", ALIGN: "first-hit" }),
      gateway("llm-worker", {}, { TOLLGATE: "w0" }),
      gateway("llm-cap", { UPSTREAM_URL: `http://127.0.0.1:${slow.port}`, REQUESTS_POLICY: "llm-requests-cap" }, { TOLLGATE: "w0" }),
    ],
  });
  for (const [variant, name] of [["memory", "llm-memory"], ["worker", "llm-worker"], ["cap", "llm-cap"]]) {
    const w = await s.mf.getWorker(name);
    gateways[variant] = (url, init) => w.fetch(url, init);
  }
});
after(async () => {
  waiting.splice(0).forEach((go) => go());
  await s?.stop();
  await upstream?.close();
  await slow?.close();
  pkg?.remove();
});

for (const variant of ["memory", "worker"]) {
  const at = (url, init) => gateways[variant](url, init);
  const k = (key) => `${variant}-${key}`;

  test(`workerd (${variant}): a JSON call answers OpenAI's headers and settles on its usage`, async () => {
    const b = body({ max_tokens: 200, completion: 10 });
    const r = await call(at, k("json"), b);
    assert.equal(r.status, 200);
    assert.equal(r.headers["x-ratelimit-limit-tokens"], "3000");
    assert.equal(r.headers["x-ratelimit-remaining-tokens"], String(3000 - estimateOf(b)));
    // Through WorkerStore the Worker answers the binding limit's figures only, here the
    // in-flight limit's (7 of 8 left): OpenAI's requests headers are left out, not given them.
    assert.equal(r.headers["x-ratelimit-limit-requests"], variant === "memory" ? "10000" : undefined);
    // The Worker's answers carry the binding limit's figures only, not each limit's: through
    // WorkerStore the draft's headers name the limit with the least left.
    // In memory the requests policy holds the in-flight limit too (MAX_IN_FLIGHT, default 8),
    // a member of its own beside "requests" (in the order the core writes them).
    const policy = variant === "memory" ? /"requests";q=10000;w=60, "tokens";q=3000;w=60, "month";q=1000000;w=2678400/ : /^"tokens";q=3000;w=60/;
    assert.match(r.headers["ratelimit-policy"].replace(/"in-flight";q=8;w=300, /, ""), policy);
    assert.match(r.headers["ratelimit-policy"], /"in-flight";q=8;w=300/);
    const next = await call(at, k("json"), b);
    assert.equal(next.headers["x-ratelimit-remaining-tokens"], String(3000 - 13 - estimateOf(b)));
  });

  test(`workerd (${variant}): a streamed answer passes through and settles on its last event's usage`, async () => {
    const r = await call(at, k("stream"), body({ max_tokens: 300, completion: 7, stream: true }));
    assert.equal(r.status, 200);
    assert.equal(r.events.at(-1), "[DONE]");
    assert.equal(r.usage.total_tokens, 10);
    const probe = body({ max_tokens: 1 });
    // The settlement runs in ctx.waitUntil once the answer's last byte has gone, so a probe may
    // come before it: each probe charges its own estimate, and the one after the settlement
    // sees only the usage (10) charged beside the probes.
    // Probed for up to 10 s (a loaded machine's settlement through the tollgate Worker can take
    // more than a second); at 4 tokens a probe, at most about 800 of the 2990 left.
    let remaining, expected;
    const until = Date.now() + 10_000;
    for (let i = 1; remaining !== expected && (i === 1 || Date.now() < until); i += 1) {
      if (i > 1) await new Promise((r) => setTimeout(r, 50));
      remaining = (await call(at, k("stream"), probe)).headers["x-ratelimit-remaining-tokens"];
      expected = String(3000 - 10 - i * estimateOf(probe));
    }
    assert.equal(remaining, expected);
  });

  test(`workerd (${variant}): concurrent clients: no key is admitted more tokens in its window than TPM and its debt`, async () => {
    const per = await load(at, { keys: [k("a"), k("b"), k("c")], clients: 6, calls: 10, seed: 11 });
    // A stream left mid-way reaches its end at the mock or is cancelled there; either is
    // recorded once the stream stopped.
    await new Promise((r) => setTimeout(r, 1000));
    assertHeld(per, served, 3000);
  });
}

test("workerd (WorkerStore): the tollgate Worker's in-flight limit caps a key's calls upstream; a 429 until one ends", async () => {
  const at = (url, init) => gateways.cap(url, init);
  const until = async (ok) => {
    for (let i = 0; i < 1000 && !ok(); i++) await new Promise((r) => setTimeout(r, 10));
    assert.ok(ok());
  };
  const b = body({ max_tokens: 10 });
  const first = [call(at, "cap-f", b), call(at, "cap-f", b)];
  await until(() => inside === 2);
  const denied = await call(at, "cap-f", b);
  assert.equal(denied.status, 429);
  assert.match(denied.json.error.message, /2 calls in flight at once/);
  assert.ok(Number(denied.headers["retry-after"]) > 0);
  assert.equal(inside, 2, "the denied call never went upstream");
  // Another key has its own slots.
  const other = call(at, "cap-g", b);
  await until(() => inside === 3);
  waiting.splice(0).forEach((go) => go());
  for (const r of await Promise.all([...first, other])) assert.equal(r.status, 200);
  // Their answers ended: the gateway releases their slots at the tollgate Worker in
  // ctx.waitUntil, after each answer. A peek there (which takes nothing) sees both back.
  const peek = () => post(s.url, "/v1/peek", { policy: "llm-requests-cap", key: "cap-f" });
  let free;
  const by = Date.now() + 10_000;
  while ((free = (await peek()).body) && !(free.allowed && free.remaining === 1) && Date.now() < by) await new Promise((r) => setTimeout(r, 20));
  assert.equal(free.allowed && free.remaining, 1, "both slots released");
  const again = [call(at, "cap-f", b), call(at, "cap-f", b)];
  await until(() => inside === 2);
  waiting.splice(0).forEach((go) => go());
  for (const r of await Promise.all(again)) assert.equal(r.status, 200, "admitted again once the first calls ended");
});
