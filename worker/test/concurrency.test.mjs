// Correctness under concurrency: 50 concurrent clients x 40 hits on one key with a limit of
// 100 admit exactly 100, however the 2000 requests interleave. Every request carries the same
// `now` (the test build's clock), so a token bucket refilling one token every 36 s adds none
// however long a loaded machine takes to send them.
import { test } from "node:test";
import assert from "node:assert/strict";
import { Agent, fetch } from "undici";
import { start, post, freshKey } from "./harness.mjs";

async function hammer(url, policy, key, clients, hits, extra = {}) {
  const dispatcher = new Agent({ connections: clients, pipelining: 1 });
  const counts = { allowed: 0, denied: 0, other: 0 };
  const client = async () => {
    for (let i = 0; i < hits; i++) {
      const res = await fetch(`${url}/v1/limit`, {
        method: "POST",
        dispatcher,
        headers: { "content-type": "application/json" },
        body: JSON.stringify({ key, policy, ...extra }),
      });
      const body = await res.json().catch(() => ({}));
      counts[res.status !== 200 ? "other" : body.allowed === true ? "allowed" : body.allowed === false ? "denied" : "other"] += 1;
    }
  };
  await Promise.all(Array.from({ length: clients }, client));
  await dispatcher.close();
  return counts;
}

test("50 clients x 40 hits on one key with a limit of 100: exactly 100 allowed", async () => {
  const s = await start();
  try {
    const key = freshKey("hot");
    const now = Date.now();
    const counts = await hammer(s.url, "hundred", key, 50, 40, { now });
    assert.deepEqual(counts, { allowed: 100, denied: 1900, other: 0 });
    // And the stored state agrees: nothing left.
    const peek = await fetch(`${s.url}/v1/peek`, { method: "POST", body: JSON.stringify({ key, policy: "hundred", now }) });
    const answer = await peek.json();
    assert.equal(answer.allowed, false);
    assert.equal(answer.remaining, 0);
  } finally {
    await s.stop();
  }
});

test("the same through two isolates sharing the Durable Object: still exactly 100", async () => {
  const s = await start({ isolates: 2 });
  try {
    const key = freshKey("hot2");
    const now = Date.now();
    let allowed = 0;
    let checked = 0;
    const client = async (c) => {
      for (let i = 0; i < 40; i++) {
        const r = await post(s.url, "/v1/limit", { key, policy: "hundred", now }, { host: `w${(c + i) % 2}.test` });
        if (r.body.allowed === true) allowed += 1;
        checked += 1;
      }
    };
    await Promise.all(Array.from({ length: 50 }, (_, c) => client(c)));
    assert.equal(checked, 2000);
    assert.equal(allowed, 100);
  } finally {
    await s.stop();
  }
});
