// The Worker's header options per policy (standardHeaders, legacyHeaders, partitionKey,
// jitter), against the Worker in workerd (Miniflare, TEST_MODE on, `now` per request). What
// the headers say is the core's writer's (tests/js/headers-parity.test.mjs holds the Worker to
// the npm middleware); here: each policy's choice reaches its answers, jitter stays in its bound.
import { test, before, after } from "node:test";
import assert from "node:assert/strict";
import { parseDictionary, parseList } from "structured-headers";
import { start, post, freshKey } from "./harness.mjs";

const ONE_PER_MINUTE = [{ name: "m", algorithm: "fixed-window", quota: "1/m" }];
const POLICIES = {
  d7: { limits: ONE_PER_MINUTE, standardHeaders: "draft-7", legacyHeaders: false },
  d6: { limits: ONE_PER_MINUTE, standardHeaders: true },
  none: { limits: ONE_PER_MINUTE, standardHeaders: false, legacyHeaders: false },
  pk: { limits: ONE_PER_MINUTE, partitionKey: true },
  jitter: { limits: ONE_PER_MINUTE, jitter: true },
};
/** 20 s into a clock minute: a denied hit waits 40 s. */
const T0 = 1_800_000_000_000 - (1_800_000_000_000 % 60_000) + 20_000;

let s;
before(async () => {
  s = await start({ bindings: { POLICIES } });
});
after(async () => {
  await s?.stop();
});

const rateHeaders = (r) => [...r.headers.keys()].filter((n) => /ratelimit|retry-after/.test(n)).sort();
/** An allowed hit, then a denied one, of a fresh key under `policy`. */
async function twice(policy) {
  const key = freshKey(policy);
  const ok = await post(s.url, "/v1/limit", { key, policy, now: T0 });
  const denied = await post(s.url, "/v1/limit", { key, policy, now: T0 });
  // A denial on /v1/limit is an answer (200, "allowed": false), headers included.
  assert.deepEqual([ok.status, ok.body.allowed, denied.status, denied.body.allowed], [200, true, 200, false]);
  return [ok, denied, key];
}

test("each policy's standardHeaders and legacyHeaders choose what its answers carry", async () => {
  const [ok7, denied7] = await twice("d7");
  assert.deepEqual(rateHeaders(ok7), ["ratelimit", "ratelimit-policy"]);
  assert.deepEqual([...parseDictionary(ok7.headers.get("ratelimit")).keys()], ["limit", "remaining", "reset"]);
  assert.deepEqual(parseList(denied7.headers.get("ratelimit-policy")).map(([q, p]) => [q, p.get("w")]), [[1, 60]]);
  assert.equal(denied7.headers.get("retry-after"), "40");
  const [ok6] = await twice("d6");
  assert.deepEqual(rateHeaders(ok6), ["ratelimit-limit", "ratelimit-policy", "ratelimit-remaining", "ratelimit-reset", "x-ratelimit-limit", "x-ratelimit-remaining", "x-ratelimit-reset"]);
  const [okNone, deniedNone] = await twice("none");
  assert.deepEqual(rateHeaders(okNone), []);
  assert.deepEqual(rateHeaders(deniedNone), ["retry-after"], "Retry-After on every denial");
});

test("partitionKey: the key hashed as pk, never as it is", async () => {
  const [ok, , key] = await twice("pk");
  const policy = ok.headers.get("ratelimit-policy");
  const pk = parseList(policy)[0][1].get("pk");
  assert.ok(pk instanceof ArrayBuffer && pk.byteLength === 8);
  assert.ok(!policy.includes(key) && !ok.headers.get("ratelimit").includes(key));
});

test("jitter: a denial's Retry-After and t spread within half the wait again, never earlier", async () => {
  const seen = new Set();
  for (let i = 0; i < 12; i++) {
    const [, denied] = await twice("jitter");
    const retry = Number(denied.headers.get("retry-after"));
    const t = parseList(denied.headers.get("ratelimit"))[0][1].get("t");
    assert.ok(retry >= 40 && retry <= 60 && t >= 40 && t <= retry, `Retry-After ${retry}, t ${t}`);
    seen.add(retry);
  }
  assert.ok(seen.size > 1, "the waits are spread");
});
