// Proxy mode against a local origin: allowed requests are forwarded with the rate-limit
// headers, denied ones answered 429 and never reach the origin; keys come from the client IP
// (IPv6 grouped by ipv6Subnet, /56 by default) or, only when configured, a header. The origin
// gets neither hop-by-hop headers nor the limiter's own from the client, gets ORIGIN_SECRET
// when set, and keeps its own /v1 when the admin API moves (API_PREFIX).
import { test, before, after } from "node:test";
import assert from "node:assert/strict";
import http from "node:http";
import { parseList } from "structured-headers";
import { start, get, post, request, freshKey, clearOfMinuteTurn } from "./harness.mjs";

let origin;
let seen = [];
let s;

before(async () => {
  origin = http.createServer((req, res) => {
    let body = "";
    req.on("data", (c) => (body += c));
    req.on("end", () => {
      seen.push({ method: req.method, url: req.url, headers: req.headers, body });
      res.setHeader("content-type", "application/json");
      res.setHeader("x-origin", "yes");
      res.statusCode = req.url.startsWith("/teapot") ? 418 : 200;
      res.end(JSON.stringify({ from: "origin", url: req.url, body }));
    });
  });
  await new Promise((r) => origin.listen(0, "127.0.0.1", r));
  s = await start({
    bindings: {
      ORIGIN: `http://127.0.0.1:${origin.address().port}`,
      PROXY: { policy: "login", keyHeader: "x-api-key" },
    },
  });
});
after(async () => {
  await s?.stop();
  origin?.close();
});

test("allowed requests reach the origin with the headers added; the 6th is a 429 that does not", async () => {
  const apiKey = freshKey("key");
  seen = [];
  await clearOfMinuteTurn(10_000); // login is 5/m: a turn of the minute would admit more
  for (let i = 0; i < 5; i++) {
    const r = await get(s.url, `/orders/42?page=${i}`, { headers: { "x-api-key": apiKey } });
    assert.equal(r.status, 200, r.text);
    assert.equal(r.headers.get("x-origin"), "yes");
    assert.equal(r.body.url, `/orders/42?page=${i}`);
    const rl = parseList(r.headers.get("ratelimit"));
    assert.equal(rl[0][1].get("r"), 4 - i);
    parseList(r.headers.get("ratelimit-policy"));
  }
  assert.equal(seen.length, 5);
  assert.ok(seen[0].headers["ratelimit-policy"], "the origin sees the headers too");
  const denied = await get(s.url, "/orders/42", { headers: { "x-api-key": apiKey } });
  assert.equal(denied.status, 429);
  assert.equal(denied.body.allowed, false);
  assert.ok(Number(denied.headers.get("retry-after")) >= 1);
  assert.equal(seen.length, 5, "a denied request never reaches the origin");
});

test("methods, bodies and origin statuses pass through", async () => {
  const r = await fetch(`${s.url}/teapot`, {
    method: "POST",
    headers: { "x-api-key": freshKey("key"), "content-type": "text/plain" },
    body: "hello origin",
  });
  assert.equal(r.status, 418);
  const body = await r.json();
  assert.equal(body.body, "hello origin");
  assert.ok(r.headers.get("ratelimit"));
});

test("without the key header the client IP is the key; IPv6 is grouped by /56", async () => {
  // Each address family gets its own fresh network so reruns do not collide.
  const n = (Date.now() % 65000).toString(16);
  const a = { "cf-connecting-ip": `2001:db8:${n}:1::1` };
  const b = { "cf-connecting-ip": `2001:db8:${n}:ff:ffff:ffff:ffff:fffe` };
  const c = { "cf-connecting-ip": `2001:db8:${n}:100::1` };
  await clearOfMinuteTurn(10_000);
  const remaining = async (h) => parseList((await get(s.url, "/x", { headers: h })).headers.get("ratelimit"))[0][1].get("r");
  assert.equal(await remaining(a), 4);
  assert.equal(await remaining(b), 3, "same /56 (another /64 of it), same key");
  assert.equal(await remaining(c), 4, "another /56");
  const v4 = { "cf-connecting-ip": `198.51.100.${Date.now() % 250}` };
  assert.equal(await remaining(v4), 4);
});

test("by default the key is the client IP: a client changing x-api-key (or any header) gets no fresh limit", async () => {
  const w = await start({ bindings: { ORIGIN: s.bindings.ORIGIN, PROXY: { policy: "login", ipv6Subnet: 64 } } });
  try {
    await clearOfMinuteTurn(10_000);
    const n = (Date.now() % 65000).toString(16);
    const statuses = [];
    for (let i = 0; i < 7; i++) {
      // Each request from a new address of one /64 (the configured ipv6Subnet), with a new key header.
      const headers = { "cf-connecting-ip": `2001:db8:${n}:7::${i + 1}`, "x-api-key": freshKey("forged") };
      statuses.push((await get(w.url, "/x", { headers })).status);
    }
    assert.deepEqual(statuses, [200, 200, 200, 200, 200, 429, 429]);
    const otherNet = await get(w.url, "/x", { headers: { "cf-connecting-ip": `2001:db8:${n}:8::1` } });
    assert.equal(otherNet.status, 200, "ipv6Subnet 64: the next /64 is another client");
  } finally {
    await w.stop();
  }
});

test("the old PROXY options are refused with a pointer to ipv6Subnet", async () => {
  const w = await start({ bindings: { ORIGIN: s.bindings.ORIGIN, PROXY: { policy: "login", ipv6Prefix: 64 } } });
  try {
    const r = await get(w.url, "/healthz");
    assert.equal(r.status, 500);
    assert.equal(r.body.error.code, "config_error");
    assert.match(r.body.error.message, /ipv6Subnet/);
  } finally {
    await w.stop();
  }
});

test("the API is not proxied", async () => {
  const r = await get(s.url, "/v1/policies");
  assert.equal(r.status, 200);
  assert.ok(r.body.policies.login);
});

/** The headers the origin saw for the one request `send` makes. */
async function seenBy(send) {
  seen = [];
  const r = await send();
  assert.equal(r.status, 200, r.text);
  assert.equal(seen.length, 1);
  return seen[0].headers;
}

const FORGED = {
  "tollgate-test-fault": "error",
  "tollgate-origin-secret": "forged",
  "tollgate-shadow": "allow",
  ratelimit: "forged",
  "ratelimit-policy": "forged",
  "x-ratelimit-remaining": "999",
  "proxy-authorization": "Basic Zm9yZ2Vk",
  "keep-alive": "timeout=99",
  "x-kept": "yes",
};

test("the origin gets no hop-by-hop header and none of the limiter's own from the client", async () => {
  const h = await seenBy(() => get(s.url, "/headers", { headers: { "x-api-key": freshKey("key"), ...FORGED } }));
  assert.equal(h["x-kept"], "yes", "other headers pass");
  assert.ok(h["x-api-key"]);
  for (const name of ["tollgate-test-fault", "tollgate-origin-secret", "tollgate-shadow", "proxy-authorization", "keep-alive"]) {
    assert.equal(h[name], undefined, name);
  }
  // The rate-limit headers are the limiter's own, never the client's.
  assert.notEqual(h.ratelimit, "forged");
  assert.notEqual(h["ratelimit-policy"], "forged");
  assert.notEqual(h["x-ratelimit-remaining"], "999");
  assert.ok(h["ratelimit-policy"]);
});

test("ORIGIN_SECRET goes to the origin as Tollgate-Origin-Secret, whatever the client sent", async () => {
  const w = await start({ bindings: { ORIGIN: s.bindings.ORIGIN, PROXY: { policy: "api" }, ORIGIN_SECRET: "0rigin-s3cret" } });
  try {
    const h = await seenBy(() => get(w.url, "/secret", { headers: { ...FORGED, "cf-connecting-ip": "198.51.100.7" } }));
    assert.equal(h["tollgate-origin-secret"], "0rigin-s3cret");
    assert.equal(h["x-kept"], "yes");
    // Never in an answer to the client.
    const r = await get(w.url, "/secret", { headers: { "cf-connecting-ip": "198.51.100.7" } });
    assert.ok(!JSON.stringify([...r.headers]).includes("0rigin-s3cret"));
  } finally {
    await w.stop();
  }
});

test("API_PREFIX moves the admin API: the origin's own /v1 is proxied", async () => {
  const w = await start({ bindings: { ORIGIN: s.bindings.ORIGIN, PROXY: { policy: "api" }, API_PREFIX: "/_tollgate/v1" } });
  try {
    const ip = { "cf-connecting-ip": "198.51.100.8" };
    seen = [];
    const own = await get(w.url, "/v1/policies", { headers: ip });
    assert.equal(own.status, 200);
    assert.equal(own.body.from, "origin");
    assert.equal(own.body.url, "/v1/policies");
    assert.ok(own.headers.get("ratelimit"), "limited by the proxy policy like any proxied path");
    const api = await get(w.url, "/_tollgate/v1/policies");
    assert.equal(api.status, 200);
    assert.ok(api.body.policies.login);
    const key = freshKey();
    const hit = await post(w.url, "/_tollgate/v1/limit", { key, policy: "login" });
    assert.deepEqual([hit.status, hit.body.allowed, hit.body.remaining], [200, true, 4]);
    assert.equal((await request(w.url, `/_tollgate/v1/keys/login/${encodeURIComponent(key)}`, { method: "DELETE" })).status, 200);
    assert.equal(seen.length, 1, "only the origin's own path reached it");
  } finally {
    await w.stop();
  }
  const bad = await start({ bindings: { API_PREFIX: "v1/" } });
  try {
    const r = await get(bad.url, "/healthz");
    assert.equal(r.body.error.code, "config_error");
    assert.match(r.body.error.message, /API_PREFIX must be a path/);
  } finally {
    await bad.stop();
  }
});
