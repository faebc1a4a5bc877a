// No error answer of the Worker carries internals (issue 43, item 2; the npm middlewares' side
// is tests/js/error-answers.test.mjs): on every error path of the API and of proxy mode (bad
// JSON, bad bodies and keys, unknown policies, routes and methods, a key's Durable Object that
// fails, times out or whose storage fails, a bad state, an origin that is gone, a missing or
// wrong token, a bad configuration), no body or
// header holds a store key (a Durable Object's name `policy/key`, the proxy's `ip:` and `key:`
// keys), a client's address, the origin's address or a stack. The keys of these requests are
// client addresses, so an answer that echoes a key shows one. Every error answer is recorded
// (target/test-logs/worker-error-answers.jsonl) and the last test greps the record.
import { test, before, after } from "node:test";
import assert from "node:assert/strict";
import { createServer } from "node:http";
import { mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { resolve } from "node:path";
import { start, post, request, root } from "./harness.mjs";

const CLIENT = "203.0.113.7";
const CLIENT6 = "2001:db8:4:5::9";
const recorded = [];

/** Records an error answer; `where` names the path taken. */
function record(where, r) {
  recorded.push({ where, status: r.status, headers: Object.fromEntries(r.headers), body: r.text });
  assert.ok(r.status >= 400, `${where}: ${r.status} ${r.text}`);
}

let s;
let proxied;
let gone;
before(async () => {
  s = await start();
  // An origin that is gone: a port that was listening and is closed.
  const origin = createServer().listen(0, "127.0.0.1");
  await new Promise((ok) => origin.once("listening", ok));
  gone = `http://127.0.0.1:${origin.address().port}`;
  await new Promise((ok) => origin.close(ok));
  proxied = await start({ bindings: { ORIGIN: gone, PROXY: { policy: "login" } } });
});
after(async () => {
  await s?.stop();
  await proxied?.stop();
});

const FAULTS = ["error", "timeout", "storage-reads=1", "storage-writes=1", "storage-reads=1,throw", "storage-writes=1,throw"];

test("the API's refusals of a request: bad JSON, bodies, keys, costs, policies, routes and methods", async () => {
  const bodies = [
    ["bad JSON", `{"key":"${CLIENT}",`],
    ["not an object", `["${CLIENT}"]`],
    ["no key", { policy: "api" }],
    ["a key of the wrong type", { key: [CLIENT], policy: "api" }],
    ["an empty key", { key: "", policy: "api" }],
    ["a key too long", { key: `${CLIENT}:${"x".repeat(2000)}`, policy: "api" }],
    ["keys with one not a string", { keys: [CLIENT, 7], policy: "api" }],
    ["key and keys", { key: CLIENT, keys: [CLIENT6], policy: "api" }],
    ["an unknown policy", { key: CLIENT, policy: "nope" }],
    ["no policy", { key: CLIENT }],
    ["a bad cost", { key: CLIENT, policy: "api", cost: -1 }],
    ["a cost that never fits", { key: CLIENT, policy: "api", cost: 1e9 }],
    ["an unknown field", { key: CLIENT, policy: "api", extra: CLIENT6 }],
    ["a bad now", { key: CLIENT, policy: "api", now: "soon" }],
  ];
  for (const route of ["/v1/limit", "/v1/peek", "/v1/refund", "/v1/reserve"]) {
    for (const [what, body] of bodies) record(`${route}: ${what}`, await post(s.url, route, body));
  }
  record("/v1/settle: an unknown reservation", await post(s.url, "/v1/settle", { reservation: `${CLIENT}-x`, actualCost: 1 }));
  record("/v1/settle: bad JSON", await post(s.url, "/v1/settle", `{"reservation":"${CLIENT}`));
  for (const [method, route] of [
    ["GET", `/v1/nothing/${CLIENT}`],
    ["PATCH", `/v1/keys/api/${CLIENT}`],
    ["POST", `/v1/keys/api/${encodeURIComponent(CLIENT6)}/state`],
    ["GET", `/v1/limit`],
    ["DELETE", `/v1/keys/nope/${CLIENT}`],
    ["DELETE", `/v1/keys/api`],
    ["GET", `/v1/keys/nope/${CLIENT}/state`],
    ["GET", `/v1/pools/${CLIENT}/leases`],
  ]) {
    record(`${method} ${route.replace(CLIENT, "{client}")}`, await request(s.url, route, { method }));
  }
  for (const [what, body] of [
    ["bad JSON", `{"state":"${CLIENT}`],
    ["not base64", { state: `${CLIENT}!` }],
    ["not a state of the policy", { state: Buffer.from(CLIENT).toString("base64") }],
    ["no state", {}],
  ]) {
    record(`PUT state: ${what}`, await request(s.url, `/v1/keys/api/${CLIENT}/state`, { method: "PUT", headers: { "content-type": "application/json" }, body: typeof body === "string" ? body : JSON.stringify(body) }));
  }
});

test("a key's Durable Object that fails, times out or whose storage fails: every route, one key and several", async () => {
  for (const fault of FAULTS) {
    const headers = { "tollgate-test-fault": fault };
    for (const policy of ["api", "closed"]) {
      for (const route of ["/v1/limit", "/v1/peek", "/v1/refund", "/v1/reserve"]) {
        for (const keys of [{ key: CLIENT }, { keys: [CLIENT, CLIENT6] }]) {
          const r = await post(s.url, route, { ...keys, policy }, headers);
          // A decision (an admission, or a denial of the failure mode) is an answer, not an error.
          if (r.status >= 400) record(`${route} ${policy} ${Object.keys(keys)[0]}: ${fault}`, r);
        }
      }
    }
  }
  // At least the routes that cannot answer a decision (refund, reserve) answered errors.
  assert.ok(recorded.filter((r) => r.where.includes("/v1/refund")).length >= FAULTS.length, recorded.map((r) => r.where).join("\n"));
});

test("proxy mode: no client address, and an origin that is gone", async () => {
  record("proxy: no client address", await request(proxied.url, "/some/page"));
  record("proxy: the origin is gone", await request(proxied.url, `/some/${CLIENT}`, { headers: { "cf-connecting-ip": CLIENT } }));
  record("proxy: the origin is gone (IPv6 client)", await request(proxied.url, "/some/page", { headers: { "cf-connecting-ip": CLIENT6 } }));
});

test("a token that is missing or wrong, and a bad configuration", async () => {
  const guarded = await start({ bindings: { API_TOKEN: "t0ken", PUBLIC: undefined } });
  try {
    record("no token", await post(guarded.url, "/v1/limit", { key: CLIENT, policy: "api" }));
    record("a wrong token", await post(guarded.url, "/v1/limit", { key: CLIENT, policy: "api" }, { authorization: `Bearer ${CLIENT}` }));
  } finally {
    await guarded.stop();
  }
  const broken = await start({ bindings: { POLICIES: { api: { limits: [{ name: "x", algorithm: "gcra", quota: "5/fortnight" }] } } } });
  try {
    record("a bad configuration", await post(broken.url, "/v1/limit", { key: CLIENT, policy: "api" }));
  } finally {
    await broken.stop();
  }
});

test("the recorded error answers hold no store key, client or origin address, or stack", () => {
  const dir = resolve(root, "../target/test-logs");
  mkdirSync(dir, { recursive: true });
  const file = resolve(dir, "worker-error-answers.jsonl");
  writeFileSync(file, recorded.map((r) => JSON.stringify(r)).join("\n") + "\n");
  const answers = readFileSync(file, "utf8").trim().split("\n").map((line) => JSON.parse(line));
  assert.ok(answers.length >= 80, `${answers.length} answers recorded`);
  const shown = [];
  for (const { where, headers, body } of answers) {
    const all = `${JSON.stringify(headers)}\n${body}`;
    const found = [
      [/\b\d{1,3}(?:\.\d{1,3}){3}\b/, "an IPv4 address"],
      [/(?:[0-9a-f]{1,4}:){3,7}[0-9a-f]{1,4}|[0-9a-f]{1,4}::[0-9a-f]{1,4}/i, "an IPv6 address"],
      [/\b(?:ip|key):/, "a proxy key"],
      [/\b(?:api|closed|login)\//, "an object's name (policy/key)"],
      [/\n\s+at |\bat .*\.(?:js|rs):\d+/, "a stack"],
      [/limiter\.internal|127\.0\.0\.1|localhost/, "an internal address"],
      [/injected|status \d{3}:|\bError: /, "an object's or the runtime's own error text"],
    ].filter(([re]) => re.test(all));
    for (const [, what] of found) shown.push(`${where}: ${what} in ${all.slice(0, 400)}`);
  }
  assert.deepEqual(shown, []);
});
