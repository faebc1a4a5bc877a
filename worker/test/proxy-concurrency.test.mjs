// Proxy mode over a policy with a concurrency limit: each proxied request holds a slot from
// before the origin is asked until the origin's answer has reached the client (its body read
// to the end, streamed or not) or the client went away; a request without a slot is the core's
// 429 with Retry-After and never reaches the origin. The origin counts what is inside it. The
// leases last 30 s, far longer than the test: every slot back means it was released, not
// expired.
import { test, before, after } from "node:test";
import assert from "node:assert/strict";
import http from "node:http";
import { start, post, freshKey, sleep, POLICIES } from "./harness.mjs";

const N = 3;
let origin;
let s;
/** Requests inside the origin now, and the most at once. */
let inside = 0;
let most = 0;
/** Streamed answers the test holds open: call one to write its last chunk and end it. */
const held = [];

before(async () => {
  origin = http.createServer((req, res) => {
    inside += 1;
    most = Math.max(most, inside);
    let done = false;
    const leave = () => {
      if (!done) inside -= 1;
      done = true;
    };
    res.on("close", leave);
    req.resume();
    const url = new URL(req.url, "http://origin");
    const ms = Number(url.searchParams.get("ms") ?? 0);
    // Not text: the local runtime would compress a text answer, holding its chunks back.
    res.writeHead(200, { "content-type": "application/octet-stream" });
    res.write("first;");
    let ticks = null;
    const end = () => {
      clearInterval(ticks);
      leave();
      if (!res.destroyed) res.end("last");
    };
    if (url.searchParams.has("hold")) {
      // A stream that goes on until the test ends it: a chunk every 50 ms.
      ticks = setInterval(() => res.write("tick;"), 50);
      held.push(end);
    } else setTimeout(end, ms);
  });
  await new Promise((r) => origin.listen(0, "127.0.0.1", r));
  origin.keepAliveTimeout = 0;
  s = await start({
    persist: false,
    bindings: {
      POLICIES: { ...POLICIES, slots: { limits: [{ name: "in-flight", algorithm: "concurrency", limit: N, leaseTtl: "30s" }] } },
      ORIGIN: `http://127.0.0.1:${origin.address().port}`,
      PROXY: { policy: "slots", keyHeader: "x-api-key" },
    },
  });
});
after(async () => {
  held.splice(0).forEach((end) => end());
  await s?.stop();
  origin?.close();
});

/** A proxied GET read to its end: { status, headers, text }. */
async function get(apiKey, query, signal) {
  const r = await fetch(`${s.url}/work?${query}`, { headers: { "x-api-key": apiKey }, signal });
  return { status: r.status, headers: r.headers, text: await r.text() };
}

/** The slots free for `apiKey` at the Worker, by a peek (which takes none). */
async function free(apiKey) {
  const d = (await post(s.url, "/v1/peek", { policy: "slots", key: `key:${apiKey}` })).body;
  return d.allowed ? d.remaining + 1 : 0;
}

/** Waits (at most 10 s, a third of the leases' 30 s) until `ok()`. */
async function until(ok, what) {
  const by = Date.now() + 10_000;
  while (!(await ok()) && Date.now() < by) await sleep(20);
  assert.ok(await ok(), what);
}

test("16 clients through 3 slots: never more than 3 inside the origin, 429 with Retry-After when full, every call served as slots free", async () => {
  const apiKey = freshKey("key");
  inside = 0;
  most = 0;
  let denied = 0;
  let served = 0;
  const client = async (c) => {
    for (let i = 0; i < 3; i++) {
      for (;;) {
        const r = await get(apiKey, `ms=${40 + ((c * 7 + i * 13) % 60)}`);
        if (r.status === 200) {
          assert.equal(r.text, "first;last");
          served += 1;
          break;
        }
        assert.equal(r.status, 429);
        const wait = Number(r.headers.get("retry-after"));
        assert.ok(wait >= 1 && wait <= 30, `Retry-After ${wait}: the nearest lease's expiry`);
        denied += 1;
        await sleep(10 + ((c * 11) % 30));
      }
    }
  };
  await Promise.all(Array.from({ length: 16 }, (_, c) => client(c)));
  assert.equal(served, 48);
  assert.ok(most <= N, `${most} inside the origin at once`);
  assert.equal(most, N, "the bound was reached (the test can fail)");
  assert.ok(denied > 0, "some calls found every slot held");
  await until(async () => (await free(apiKey)) === N, "every slot released, none left to expire");
});

test("a streamed answer holds its slot until its last byte; a client that goes away mid-stream releases it", async () => {
  const apiKey = freshKey("key");
  const streams = [];
  for (let i = 0; i < N; i++) {
    const ctl = new AbortController();
    const r = await fetch(`${s.url}/work?hold`, { headers: { "x-api-key": apiKey }, signal: ctl.signal });
    assert.equal(r.status, 200);
    const reader = r.body.getReader();
    assert.equal(new TextDecoder().decode((await reader.read()).value), "first;");
    streams.push({ ctl, reader });
  }
  await until(() => held.length === N, "the origin holds the three streams");
  assert.equal(await free(apiKey), 0, "three streams in flight hold the three slots");
  const full = await get(apiKey, "ms=0");
  assert.equal(full.status, 429);
  assert.equal(held.length, N, "the fourth never reached the origin");
  // The first client goes away mid-stream while its origin streams on: its slot comes back
  // long before its lease ends (the runtime cancels the answer's body at its next write).
  streams[0].ctl.abort();
  await until(async () => (await free(apiKey)) === 1, "the aborted client's slot released");
  // The second stream ends at the origin and is read to its end: its slot comes back too.
  held.shift()(); // the first one held (its client gone)
  held.shift()();
  let text = "";
  for (let c = await streams[1].reader.read(); !c.done; c = await streams[1].reader.read()) text += new TextDecoder().decode(c.value);
  assert.match(text, /^(tick;)*last$/);
  await until(async () => (await free(apiKey)) === 2, "the ended stream's slot released");
  held.shift()();
  await streams[2].reader.cancel();
  await until(async () => (await free(apiKey)) === N, "every slot released");
  assert.equal((await get(apiKey, "ms=0")).status, 200);
});
