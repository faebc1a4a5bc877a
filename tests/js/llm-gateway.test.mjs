// The LLM gateway example (examples/llm-gateway) on Node, from the packed package, in front of
// its mock upstream: OpenAI's x-ratelimit-* headers beside the RateLimit draft's, tokens
// reserved on the estimate and settled on the answer's usage (JSON and streamed), a usage past
// the estimate charged into debt, and under concurrent clients no key is admitted more tokens
// in its window than its TPM limit and one TPM of debt.
import { test, before, after } from "node:test";
import assert from "node:assert/strict";
import { copyFileSync, mkdirSync } from "node:fs";
import { join, resolve } from "node:path";
import { pathToFileURL } from "node:url";
import { install, here } from "./packed.mjs";
import { EXAMPLE_FILES, assertHeld, body, call, estimateOf, load } from "./llm-gateway.mjs";

const example = resolve(here, "../../examples/llm-gateway");
// A fixed window from each key's first call: the test runs well inside one minute, so every
// call of a key falls in one window and its admitted tokens are held to TPM exactly.
const WINDOW = { ALGORITHM: "fixed-window", ALIGN: "first-hit" };

let pkg, dir, upstream, mod;
/** The tokens the mock upstream served each API key. */
const served = new Map();
before(async () => {
  pkg = install();
  dir = join(pkg.project, "llm-gateway");
  mkdirSync(dir);
  for (const f of EXAMPLE_FILES) copyFileSync(join(example, f), join(dir, f));
  const at = (f) => import(pathToFileURL(join(dir, f)).href);
  const [{ mockUpstream }, { serve }, { startGateway }] = await Promise.all([at("mock-upstream.mjs"), at("serve.mjs"), at("node.mjs")]);
  upstream = await serve(mockUpstream({ delayMs: 1, served }));
  // Idle kept-alive connections stay open for the test (close() ends them): a server that closes
  // one after its keep-alive timeout races a client reusing it at that moment, and the gateway
  // answers that call "the upstream did not answer: Network connection lost" (a 5 s timeout
  // makes it rare, a loaded machine less so; at 2 ms it fails every run).
  upstream.server.keepAliveTimeout = 0;
  mod = { startGateway, serve, upstreamUrl: `http://127.0.0.1:${upstream.port}` };
});
after(async () => {
  await upstream?.close();
  pkg?.remove();
});

/** A gateway with `env`'s limits, for the length of `use`; `use(fetchAt)`. */
async function withGateway(env, use) {
  const gw = await mod.startGateway({ upstreamUrl: mod.upstreamUrl, env: { ...WINDOW, ...env } });
  const base = `http://127.0.0.1:${gw.port}`;
  try {
    return await use((url, init) => fetch(url.replace("http://gateway.test", base), init));
  } finally {
    await gw.close();
  }
}

test("an answer carries OpenAI's x-ratelimit-* headers beside the RateLimit draft's", () =>
  withGateway({ RPM: 5, TPM: 1000 }, async (at) => {
    const b = body({ max_tokens: 200, completion: 10 });
    const r = await call(at, "k", b);
    assert.equal(r.status, 200);
    assert.equal(r.headers["x-ratelimit-limit-requests"], "5");
    assert.equal(r.headers["x-ratelimit-remaining-requests"], "4");
    assert.equal(r.headers["x-ratelimit-limit-tokens"], "1000");
    // The reservation's: the estimate is charged while the call is under way.
    assert.equal(r.headers["x-ratelimit-remaining-tokens"], String(1000 - estimateOf(b)));
    assert.match(r.headers["x-ratelimit-reset-tokens"], /^(\d+m\d+s|[\d.]+s|\d+ms)$/);
    // The in-flight limit (MAX_IN_FLIGHT, default 8; its window the lease's 5 minutes) is a member too.
    assert.match(r.headers["ratelimit-policy"], /"requests";q=5;w=60, "in-flight";q=8;w=300, "tokens";q=1000;w=60/);
    assert.match(r.headers.ratelimit, /"requests";r=4;t=\d+, "in-flight";r=7;t=\d+, "tokens";r=\d+;t=\d+/);
    assert.equal(r.usage.total_tokens, 3 + 10);
    // The next call sees the first one settled: only its usage is still charged.
    const next = await call(at, "k", b);
    assert.equal(next.headers["x-ratelimit-remaining-tokens"], String(1000 - 13 - estimateOf(b)));
  }));

test("a streamed answer passes through and settles on the usage of its last event", () =>
  withGateway({ RPM: 100, TPM: 1000 }, async (at) => {
    const b = body({ max_tokens: 300, completion: 7, stream: true });
    const r = await call(at, "s", b);
    assert.equal(r.status, 200);
    assert.equal(r.headers["content-type"], "text/event-stream");
    assert.equal(r.events.at(-1), "[DONE]");
    // Seven words, the finish event, the usage event, [DONE].
    assert.equal(r.events.length, 10);
    assert.equal(r.usage.total_tokens, 3 + 7);
    const next = await call(at, "s", body({ max_tokens: 1 }));
    assert.equal(next.headers["x-ratelimit-remaining-tokens"], String(1000 - 10 - 4));
  }));

test("settling gives back what the estimate overshot: more calls fit than the estimates alone allow", () =>
  withGateway({ RPM: 1000, TPM: 1000 }, async (at) => {
    // Each call reserves 203 tokens and uses 13: five reservations would fill the minute.
    for (let i = 0; i < 30; i += 1) {
      const r = await call(at, "refund", body({ max_tokens: 200, completion: 10, stream: i % 2 === 1 }));
      assert.equal(r.status, 200, `call ${i}`);
    }
  }));

test("a usage past the estimate is charged into debt: the key's next calls wait it out", () =>
  withGateway({ RPM: 100, TPM: 1000 }, async (at) => {
    // Reserves 103 tokens, uses 1413: 413 past the minute's 1000, charged as debt.
    const r = await call(at, "debt", body({ max_tokens: 100, completion: 10, extra: 1400 }));
    assert.equal(r.status, 200);
    assert.equal(r.usage.total_tokens, 1413);
    const next = await call(at, "debt", body({ max_tokens: 1 }));
    assert.equal(next.status, 429);
    assert.equal(next.headers["x-ratelimit-remaining-tokens"], "0");
    assert.ok(Number(next.headers["retry-after"]) > 0);
  }));

test("a client that goes away mid-stream leaves its estimate charged", () =>
  withGateway({ RPM: 100, TPM: 1000 }, async (at) => {
    // 200 words at 1 ms or more each: read to its end, the call would settle at 203 tokens.
    const b = body({ max_tokens: 300, completion: 200, stream: true });
    const r = await call(at, "gone", b, { abortAfter: 2 });
    assert.ok(r.aborted);
    await new Promise((r) => setTimeout(r, 600));
    const probe = body({ max_tokens: 1 });
    const next = await call(at, "gone", probe);
    assert.equal(next.headers["x-ratelimit-remaining-tokens"], String(1000 - estimateOf(b) - estimateOf(probe)));
  }));

test("denials: 429 with OpenAI's error body and headers; a call no limit can hold is a 400", () =>
  withGateway({ RPM: 2, TPM: 500 }, async (at) => {
    const b = body({ max_tokens: 100, completion: 100 });
    assert.equal((await call(at, "d", b)).status, 200);
    assert.equal((await call(at, "d", b)).status, 200);
    const third = await call(at, "d", b);
    assert.equal(third.status, 429);
    assert.equal(third.json.error.code, "rate_limit_exceeded");
    assert.deepEqual(Object.keys(third.json.error).sort(), ["code", "message", "param", "type"], "OpenAI's error fields");
    assert.equal(third.json.error.type, "requests");
    assert.equal(third.headers["x-ratelimit-remaining-requests"], "0");
    assert.ok(Number(third.headers["retry-after"]) > 0);
    const tokens = await call(at, "t", body({ max_tokens: 480 }));
    assert.equal(tokens.status, 200);
    const over = await call(at, "t", body({ max_tokens: 480 }));
    assert.equal(over.status, 429);
    assert.match(over.json.error.message, /tokens/);
    assert.equal(over.json.error.type, "tokens", "a tokens 429 says tokens, as OpenAI's");
    // Its request hit was given back: of RPM 2, the first call's one is used.
    assert.equal(over.headers["x-ratelimit-remaining-requests"], "1");
    // The denied call was not sent upstream: its request hit is given back, so a second call fits.
    assert.equal((await call(at, "t", body({ max_tokens: 1 }))).status, 200);
    const huge = await call(at, "h", body({ max_tokens: 5000 }));
    assert.equal(huge.status, 400);
    assert.equal(huge.json.error.code, "max_tokens_too_large");
    const anonymous = await at("http://gateway.test/v1/chat/completions", { method: "POST", body: JSON.stringify(body()) });
    assert.equal(anonymous.status, 401);
    assert.equal((await anonymous.json()).error.code, "invalid_api_key");
  }));

test("the monthly token budget: a calendar month from the 1st (UTC), a denial until then", () =>
  withGateway({ RPM: 100, TPM: 10000, MONTHLY: 500 }, async (at) => {
    const b = body({ max_tokens: 100, completion: 100 });
    for (let i = 0; i < 4; i += 1) assert.equal((await call(at, "m", b)).status, 200, `call ${i}`);
    const denied = await call(at, "m", b);
    assert.equal(denied.status, 429);
    assert.match(denied.json.error.message, /monthly token budget/);
    assert.match(denied.headers["ratelimit-policy"], /"month";q=500;w=2678400/);
    const now = new Date();
    const firstOfNext = Date.UTC(now.getUTCFullYear(), now.getUTCMonth() + 1, 1);
    const wait = Number(denied.headers["retry-after"]);
    assert.ok(Math.abs(wait - (firstOfNext - Date.now()) / 1000) <= 5, `Retry-After ${wait} s, to the 1st of next month`);
    // OpenAI's headers stay the minute's.
    assert.equal(denied.headers["x-ratelimit-limit-tokens"], "10000");
  }));

test("MAX_IN_FLIGHT calls of a key upstream at once: the next is a 429 until one ends", async () => {
  // An upstream that answers only when the test says so: the calls stay in flight meanwhile.
  let inside = 0;
  const waiting = [];
  const slow = await mod.serve(async () => {
    inside += 1;
    await new Promise((go) => waiting.push(go));
    inside -= 1;
    return Response.json({ choices: [], usage: { total_tokens: 5 } });
  });
  const gw = await mod.startGateway({ upstreamUrl: `http://127.0.0.1:${slow.port}`, env: { ...WINDOW, RPM: 100, TPM: 100000, MAX_IN_FLIGHT: 2 } });
  const at = (url, init) => fetch(url.replace("http://gateway.test", `http://127.0.0.1:${gw.port}`), init);
  const until = async (ok) => {
    for (let i = 0; i < 500 && !ok(); i++) await new Promise((r) => setTimeout(r, 10));
    assert.ok(ok());
  };
  try {
    const b = body({ max_tokens: 10 });
    const first = [call(at, "f", b), call(at, "f", b)];
    await until(() => inside === 2);
    const denied = await call(at, "f", b);
    assert.equal(denied.status, 429);
    assert.match(denied.json.error.message, /2 calls in flight at once/);
    assert.ok(Number(denied.headers["retry-after"]) > 0);
    assert.equal(inside, 2, "the denied call never went upstream");
    // Another key has its own slots.
    const other = call(at, "g", b);
    await until(() => inside === 3);
    waiting.splice(0).forEach((go) => go());
    for (const r of await Promise.all([...first, other])) assert.equal(r.status, 200);
    // Their answers ended: the slots are back (released as the answer was read upstream).
    const next = [call(at, "f", b), call(at, "f", b)];
    await until(() => inside === 2);
    waiting.splice(0).forEach((go) => go());
    for (const r of await Promise.all(next)) assert.equal(r.status, 200, "admitted again once the first calls ended");
  } finally {
    waiting.splice(0).forEach((go) => go());
    await gw.close();
    await slow.close();
  }
});

test("concurrent clients: no key is admitted more tokens in its window than TPM and its debt", () =>
  withGateway({ RPM: 10000, TPM: 3000 }, async (at) => {
    const per = await load(at, { keys: ["a", "b", "c"], clients: 6, calls: 12, seed: 7 });
    // A stream left mid-way settles once its cancellation reached the mock.
    await new Promise((r) => setTimeout(r, 100));
    assertHeld(per, served, 3000);
  }));

test("from its folder, `npm install && npm start` installs tollgate (a file: dependency on the repository's pkg/) and serves", async () => {
  const { execFileSync, spawn } = await import("node:child_process");
  const { existsSync } = await import("node:fs");
  execFileSync("npm", ["install", "--no-audit", "--no-fund", "--offline"], { cwd: example, stdio: "ignore", timeout: 120_000 });
  assert.ok(existsSync(join(example, "node_modules/tollgate/package.json")), "tollgate installed");
  const child = spawn("npm", ["start"], { cwd: example, env: { ...process.env, PORT: "0", UPSTREAM_PORT: "0" }, detached: true, stdio: ["ignore", "pipe", "inherit"] });
  try {
    const base = await new Promise((ok, fail) => {
      let out = "";
      const timer = setTimeout(() => fail(new Error(`not started: ${out}`)), 30_000);
      child.stdout.on("data", (chunk) => {
        out += chunk;
        const m = /the gateway on (http:\/\/127\.0\.0\.1:\d+)/.exec(out);
        if (m) {
          clearTimeout(timer);
          ok(m[1]);
        }
      });
      child.once("exit", (code) => fail(new Error(`exited ${code}: ${out}`)));
    });
    const r = await fetch(`${base}/v1/chat/completions`, { method: "POST", headers: { authorization: "Bearer key-1" }, body: JSON.stringify(body({ max_tokens: 10 })) });
    assert.equal(r.status, 200);
    assert.equal(r.headers.get("x-ratelimit-remaining-requests"), "59");
    await r.text();
  } finally {
    // npm and the node it started: the process group this test made.
    process.kill(-child.pid, "SIGINT");
  }
});
