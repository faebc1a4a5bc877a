// Observability in workerd: one JSON log line per error and per sampled denial (the policy
// and a hash of the key, never the key), and one Workers Analytics Engine data point per
// decision when the optional ANALYTICS binding is there, none when it is not.
//
// The recording binding is a Miniflare wrapped binding whose writeDataPoint prints each data
// point as a line (the runtime's output, read through the harness's onLog); Miniflare's own
// local Analytics Engine simulator, which keeps nothing, is used to check the real binding
// type works too.
import { test } from "node:test";
import assert from "node:assert/strict";
import { start, post, request, freshKey, clearOfMinuteTurn } from "./harness.mjs";

/** The test clock (TEST_MODE, on where no API_TOKEN is set): hits in one window of login's 5/m. */
const T0 = 1_700_000_000_000;

const MARK = "AE_POINT ";
const RECORDER = {
  name: "ae-recorder",
  modules: true,
  script: `export default function () {
    return { writeDataPoint(point) { console.log(${JSON.stringify(MARK)} + JSON.stringify(point)); } };
  }`,
};

/** A Worker whose runtime output is collected; `lines()` the JSON log lines, `points()` the data points. */
async function observed({ bindings = {}, recorder = false, simulator = false } = {}) {
  const out = [];
  const extra = {};
  if (recorder) extra.wrappedBindings = { ANALYTICS: { scriptName: RECORDER.name } };
  if (simulator) extra.analyticsEngineDatasets = { ANALYTICS: { dataset: "tollgate" } };
  const s = await start({
    bindings: { DENIAL_LOG_SAMPLE_RATE: "1", ...bindings },
    extra,
    extraWorkers: recorder ? [RECORDER] : [],
    onLog: (line) => out.push(line),
  });
  const json = () =>
    out.flatMap((l) => {
      const at = l.indexOf("{");
      try {
        return at >= 0 ? [JSON.parse(l.slice(at))] : [];
      } catch {
        return [];
      }
    });
  return {
    s,
    raw: () => out.join("\n"),
    lines: () => json().filter((o) => o.event),
    points: () => out.filter((l) => l.includes(MARK)).map((l) => JSON.parse(l.slice(l.indexOf(MARK) + MARK.length))),
  };
}

// The runtime's output arrives on its own schedule: wait for what a test expects to see.
async function until(what, check) {
  for (let i = 0; i < 100; i++) {
    const v = check();
    if (v) return v;
    await new Promise((r) => setTimeout(r, 50));
  }
  assert.fail(`never logged: ${what}`);
}

test("a sampled denial is one JSON line with the policy and the key's hash, never the key", async () => {
  const o = await observed({ bindings: { API_TOKEN: "obs-token" } });
  try {
    const key = `user:${freshKey("secret-user")}`;
    const auth = { authorization: "Bearer obs-token" };
    // The real clock (API_TOKEN turns TEST_MODE off): a turn of the minute between the hits
    // would weigh login's 5/m down and admit the denials.
    await clearOfMinuteTurn(15_000);
    await post(o.s.url, "/v1/limit", { key, policy: "login", cost: 5 }, auth);
    const denied = await post(o.s.url, "/v1/limit", { key, policy: "login" }, auth);
    assert.equal(denied.body.allowed, false);
    const line = await until("denied", () => o.lines().find((l) => l.event === "denied"));
    assert.equal(line.level, "warn");
    assert.equal(line.policy, "login");
    assert.equal(line.limit, "per-minute");
    assert.match(line.keyHash, /^[0-9a-f]{16}$/);
    assert.equal(line.route, "limit");
    // The next denial of the same key hashes alike; the key never appears in any output.
    await post(o.s.url, "/v1/limit", { key, policy: "login" }, auth);
    await until("a second denial", () => o.lines().filter((l) => l.event === "denied").length === 2);
    const hashes = o.lines().filter((l) => l.event === "denied").map((l) => l.keyHash);
    assert.equal(hashes[0], hashes[1]);
    assert.ok(!o.raw().includes("secret-user"), "the raw key is never logged");
    assert.ok(!o.raw().includes("obs-token"), "nor the token");
    assert.deepEqual(o.points(), [], "no ANALYTICS binding: no data point");
  } finally {
    await o.s.stop();
  }
});

test("every error is one JSON line: its status, code and route, never a key from the path", async () => {
  const o = await observed({ bindings: { API_TOKEN: "obs-token" } });
  try {
    await post(o.s.url, "/v1/limit", { policy: "login" }, { authorization: "Bearer obs-token" });
    await post(o.s.url, "/v1/limit", { key: "k", policy: "login" }, { authorization: "Bearer wrong-guess" });
    await request(o.s.url, "/v1/keys/nope/private-key-42", { method: "DELETE", headers: { authorization: "Bearer obs-token" } });
    const errors = await until("three errors", () => {
      const e = o.lines().filter((l) => l.event === "error");
      return e.length >= 3 && e;
    });
    const byCode = Object.fromEntries(errors.map((e) => [e.code, e]));
    assert.deepEqual([byCode.missing_key.status, byCode.missing_key.route, byCode.missing_key.level], [400, "/v1/limit", "warn"]);
    assert.equal(byCode.unauthorized.status, 401);
    assert.equal(byCode.unknown_policy.route, "/v1/keys/{policy}/{key}");
    assert.ok(!o.raw().includes("private-key-42"));
    assert.ok(!o.raw().includes("wrong-guess"), "a guessed token is never echoed");
  } finally {
    await o.s.stop();
  }
});

test("without API_TOKEN or PUBLIC the 503 is logged as an error saying what to set", async () => {
  const o = await observed({ bindings: { PUBLIC: undefined } });
  try {
    assert.equal((await post(o.s.url, "/v1/limit", { key: "k", policy: "login" })).status, 503);
    const line = await until("auth_not_configured", () => o.lines().find((l) => l.code === "auth_not_configured"));
    assert.equal(line.level, "error");
    assert.match(line.message, /API_TOKEN/);
  } finally {
    await o.s.stop();
  }
});

test("DENIAL_LOG_SAMPLE_RATE 0 logs no denial", async () => {
  const o = await observed({ bindings: { DENIAL_LOG_SAMPLE_RATE: "0" } });
  try {
    const key = freshKey();
    await post(o.s.url, "/v1/limit", { key, policy: "login", cost: 5, now: T0 });
    assert.equal((await post(o.s.url, "/v1/limit", { key, policy: "login", now: T0 })).body.allowed, false);
    await post(o.s.url, "/v1/limit", { policy: "login" }); // an error, logged: the output is flowing
    await until("the error", () => o.lines().find((l) => l.event === "error"));
    assert.equal(o.lines().filter((l) => l.event === "denied").length, 0);
  } finally {
    await o.s.stop();
  }
});

test("with the ANALYTICS binding each decision writes one data point: policy, outcome, route, limit; cost, remaining, retryAfter", async () => {
  const o = await observed({ recorder: true });
  try {
    const key = freshKey();
    await post(o.s.url, "/v1/limit", { key, policy: "login", cost: 4, now: T0 });
    await post(o.s.url, "/v1/peek", { key, policy: "login", now: T0 });
    await post(o.s.url, "/v1/limit", { key, policy: "login", cost: 2, now: T0 });
    const points = await until("three data points", () => o.points().length >= 3 && o.points());
    assert.equal(points.length, 3);
    assert.deepEqual(points[0], { indexes: ["login"], blobs: ["login", "allowed", "limit", "per-minute"], doubles: [4, 1, 0] });
    assert.deepEqual(points[1].blobs, ["login", "allowed", "peek", "per-minute"]);
    assert.deepEqual(points[2].blobs.slice(0, 3), ["login", "denied", "limit"]);
    assert.equal(points[2].doubles[0], 2);
    assert.ok(points[2].doubles[2] > 0, "retryAfter of the denial");
    assert.ok(!JSON.stringify(points).includes(key), "no key in a data point");
  } finally {
    await o.s.stop();
  }
});

test("Miniflare's own Analytics Engine binding takes the data points without error; answers are unchanged", async () => {
  const o = await observed({ simulator: true });
  try {
    const key = freshKey();
    const r = await post(o.s.url, "/v1/limit", { key, policy: "login" });
    assert.equal(r.status, 200, r.text);
    assert.equal(r.body.remaining, 4);
    await post(o.s.url, "/v1/limit", { policy: "login" });
    await until("the error", () => o.lines().find((l) => l.event === "error"));
    assert.equal(o.lines().filter((l) => l.event === "analytics_write_failed").length, 0);
  } finally {
    await o.s.stop();
  }
});
