// The LLM gateway example's clients (examples/llm-gateway), shared by its Node and workerd
// tests: calls as an OpenAI SDK makes them (JSON, or a streamed answer read to its usage), and
// a load of concurrent clients per API key whose admitted tokens the tests hold to the limit.
import assert from "node:assert/strict";

/** The example's files, copied into a test project beside the installed package. */
export const EXAMPLE_FILES = ["gateway.mjs", "headers.mjs", "limits.mjs", "mock-upstream.mjs", "node.mjs", "serve.mjs", "worker.mjs"];

/**
 * A chat call's body: `content` makes the prompt (its characters / 4 tokens); `extra`: tokens
 * the mock counts in the usage beyond what it sends (a usage above the estimate).
 */
export const body = ({ content = "hello there", max_tokens = 100, completion, extra, stream = false } = {}) => ({
  model: "mock-1",
  messages: [{ role: "user", content }],
  max_tokens,
  ...(completion !== undefined ? { mock_completion_tokens: completion } : {}),
  ...(extra !== undefined ? { mock_extra_tokens: extra } : {}),
  ...(stream ? { stream: true } : {}),
});

/** The tokens the gateway reserves for `b` (its estimate: prompt characters / 4 and max_tokens). */
export const estimateOf = (b) => Math.ceil(b.messages.map((m) => m.content).join("").length / 4) + b.max_tokens;

/**
 * One call through `fetch` (a URL's, or Miniflare's `dispatchFetch`) as API key `key`. Returns
 * the status, the headers, and the usage the answer reported (a streamed answer's from its last
 * event; with `abortAfter` chunks the client goes away and the usage is undefined), and the
 * streamed events.
 */
export async function call(fetchAt, key, b, { abortAfter } = {}) {
  const controller = new AbortController();
  const r = await fetchAt("http://gateway.test/v1/chat/completions", {
    method: "POST",
    headers: { authorization: `Bearer ${key}`, "content-type": "application/json" },
    body: JSON.stringify(b),
    signal: controller.signal,
  });
  const headers = Object.fromEntries(r.headers);
  if (r.status !== 200 || b.stream !== true) {
    const json = await r.json();
    return { status: r.status, headers, json, usage: json.usage };
  }
  const reader = r.body.getReader();
  const decoder = new TextDecoder();
  let text = "";
  let chunks = 0;
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    text += decoder.decode(value, { stream: true });
    chunks += 1;
    if (abortAfter !== undefined && chunks >= abortAfter) {
      await reader.cancel();
      controller.abort();
      return { status: r.status, headers, events: [], usage: undefined, aborted: true };
    }
  }
  const events = text.split("\n\n").filter((e) => e.startsWith("data: ")).map((e) => e.slice(6));
  const last = events.filter((e) => e !== "[DONE]").map((e) => JSON.parse(e)).find((e) => e.usage);
  return { status: r.status, headers, events, usage: last?.usage };
}

/** A deterministic draw in [0, 1) (mulberry32), so a failure replays. */
export function draws(seed) {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/**
 * `clients` concurrent clients on each of `keys`, each making `calls` calls in turn (JSON and
 * streamed, some read to the end, some left mid-stream), with max_tokens and completions drawn
 * so that the estimates run out the keys' tokens, and one call in eight using 1 to 300 tokens
 * more than its estimate (the key goes into debt). Returns per key the usage of the calls read
 * to their end (`tokens`) and the count of admitted, denied, abandoned and over-estimate
 * (`over`) calls; what the upstream served each key, abandoned calls included, is the mock's
 * `served`.
 */
export async function load(fetchAt, { keys, clients, calls, seed = 1 }) {
  const random = draws(seed);
  const per = Object.fromEntries(keys.map((k) => [k, { tokens: 0, admitted: 0, denied: 0, aborted: 0, over: 0 }]));
  const client = async (key) => {
    for (let i = 0; i < calls; i += 1) {
      const stream = random() < 0.5;
      const max_tokens = 20 + Math.floor(random() * 300);
      const completion = 1 + Math.floor(random() * 200);
      // Past the estimate by 1 to 300 tokens: what max_tokens left unused, and more.
      const extra = random() < 0.125 ? max_tokens - Math.min(max_tokens, completion) + 1 + Math.floor(random() * 300) : undefined;
      const b = body({ content: "x".repeat(1 + Math.floor(random() * 200)), max_tokens, completion, extra, stream });
      const abortAfter = stream && random() < 0.2 ? 2 : undefined;
      const r = await call(fetchAt, key, b, { abortAfter });
      const mine = per[key];
      // 429: denied; 503: the limiter's store could not decide in time (failure "closed"), as
      // a machine this busy may make the tollgate Worker: not admitted either.
      if (r.status === 429 || r.status === 503) {
        if (r.status === 503) assert.equal(r.json.error.code, "rate_limiter_unavailable");
        mine.denied += 1;
        continue;
      }
      assert.equal(r.status, 200, JSON.stringify(r.json));
      mine.admitted += 1;
      if (r.aborted) {
        mine.aborted += 1;
      } else {
        assert.ok(r.usage, "an answered call reports its usage");
        assert.ok(r.usage.total_tokens <= estimateOf(b) + (b.mock_extra_tokens ?? 0), "the mock uses at most its extra past the estimate");
        if (r.usage.total_tokens > estimateOf(b)) mine.over += 1;
        mine.tokens += r.usage.total_tokens;
      }
    }
  };
  await Promise.all(keys.flatMap((k) => Array.from({ length: clients }, () => client(k))));
  return per;
}

/**
 * Holds the load's keys to `tpm` and its debt: the tokens the upstream served each key (`served`,
 * the mock's record) within its window never exceed `tpm` plus the debt cap, one `tpm`
 * (docs/reserve.md: a call's usage past its estimate is charged into debt, and only what passes
 * the cap is forgiven; here at most six calls in flight, 300 tokens each, can pass the limit,
 * so nothing is forgiven and every served token was counted), the load ran each key out of
 * tokens, some call used more than its estimate, and settling admitted more calls than the
 * estimates alone.
 */
export function assertHeld(per, served, tpm) {
  const over = Object.values(per).reduce((n, p) => n + p.over, 0);
  assert.ok(over > 0, "some call used more than its estimate");
  for (const [key, { tokens, admitted, denied }] of Object.entries(per)) {
    const total = served.get(key) ?? 0;
    assert.ok(total <= 2 * tpm, `${key}: the upstream served ${total} tokens, TPM ${tpm} and as much debt`);
    assert.ok(tokens <= total, `${key}: the answers read to their end reported ${tokens} tokens, the upstream served ${total}`);
    assert.ok(denied > 0, `${key}: the load runs out the key's tokens`);
    // No estimate is above 50 + 320 tokens: without settling, at most tpm / 370 calls would fit.
    assert.ok(admitted > tpm / 370, `${key}: settling admits more calls than the estimates alone (${admitted})`);
  }
}
