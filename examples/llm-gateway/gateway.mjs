// The LLM gateway: a fetch handler in front of an OpenAI-compatible upstream that limits each
// API key to requests per minute (`requests`, one hit per call) and tokens (`tokens`: per
// minute and per calendar month). A call reserves its estimate of tokens (the
// prompt's characters / 4 plus `max_tokens`) before it goes upstream, and the reservation is
// settled with the upstream's `usage.total_tokens` once the answer is done: a JSON answer when
// it is read, a streamed one (server-sent events, `stream_options.include_usage` asked of the
// upstream) when its last event has passed through. An answer without usage (the upstream
// failed, or its stream broke) and a client that goes away mid-stream settle at the estimate.
// The same handler runs on Node (node.mjs) and as a Worker (worker.mjs).
import { rateLimitHeaders } from "./headers.mjs";

/** `max_tokens` of a call that gives none. */
export const DEFAULT_MAX_TOKENS = 256;

/** The tokens a call reserves: its prompt (characters / 4, rounded up) and its largest completion. */
export function estimateTokens(body) {
  const text = Array.isArray(body.messages) ? body.messages.map((m) => (typeof m?.content === "string" ? m.content : "")).join("") : "";
  return Math.ceil(text.length / 4) + (body.max_tokens ?? body.max_completion_tokens ?? DEFAULT_MAX_TOKENS);
}

/**
 * An error answer as OpenAI's API writes one: `{ error: { message, type, param, code } }`. A
 * 429's `type` is the kind of limit it hit, `"requests"` or `"tokens"` (OpenAI's own), any other
 * error's `type` is `invalid_request_error` unless given.
 */
const openaiError = (status, code, message, headers, type = "invalid_request_error") => {
  const response = Response.json({ error: { message, type, param: null, code } }, { status });
  for (const [name, value] of headers ?? []) response.headers.set(name, value);
  return response;
};

/** A call denied because the limiter's store could not decide it (`failure: "closed"`): not a rate limit. */
const unavailable = () => openaiError(503, "rate_limiter_unavailable", "the rate limiter could not decide this call in time: retry it");

/** The `usage.total_tokens` in one server-sent event's data, or undefined. */
function usageOf(data) {
  if (!data.includes('"usage"')) return undefined;
  try {
    const total = JSON.parse(data).usage?.total_tokens;
    return Number.isInteger(total) ? total : undefined;
  } catch {
    return undefined;
  }
}

/**
 * The stream `body` passed through unchanged, its `usage` read on the way: `done(total)` is
 * called once, with the total tokens of its usage event when the stream ended, else undefined
 * (it broke, or the client cancelled it).
 */
function watchUsage(body, done) {
  const reader = body.getReader();
  const decoder = new TextDecoder();
  let pending = "";
  let total;
  let finished = false;
  const finish = (value) => {
    if (!finished) done(value);
    finished = true;
  };
  return new ReadableStream({
    async pull(controller) {
      let chunk;
      try {
        chunk = await reader.read();
      } catch (e) {
        finish(undefined);
        controller.error(e);
        return;
      }
      if (chunk.done) {
        finish(total);
        controller.close();
        return;
      }
      pending += decoder.decode(chunk.value, { stream: true });
      const lines = pending.split("\n");
      pending = lines.pop();
      for (const line of lines) if (line.startsWith("data:")) total = usageOf(line.slice(5).trim()) ?? total;
      controller.enqueue(chunk.value);
    },
    cancel(reason) {
      finish(undefined);
      return reader.cancel(reason);
    },
  });
}

/**
 * The gateway's fetch handler. `upstream(path, init)` calls the upstream API (a `fetch` of its
 * URL); `requests` and `tokens` are tollgate limiters (`RateLimiter`, or `AsyncRateLimiter`
 * over a store) keyed by API key; `waitUntil(promise)` keeps a settlement alive after the
 * answer where the runtime needs it (a Worker's `ctx.waitUntil`).
 */
export function gateway({ upstream, requests, tokens }) {
  return async (request, waitUntil = () => {}) => {
    const { pathname } = new URL(request.url);
    if (request.method !== "POST" || pathname !== "/v1/chat/completions") {
      return openaiError(404, "not_found", `no route ${request.method} ${pathname}: this gateway serves POST /v1/chat/completions`);
    }
    const apiKey = /^Bearer\s+(\S+)$/i.exec(request.headers.get("authorization") ?? "")?.[1];
    if (apiKey === undefined) return openaiError(401, "invalid_api_key", "an API key is required: Authorization: Bearer <key>");
    let body;
    try {
      body = await request.json();
    } catch {
      return openaiError(400, "invalid_json", "the body is not JSON");
    }
    if (body === null || typeof body !== "object" || !Array.isArray(body.messages)) {
      return openaiError(400, "invalid_request", "the body needs messages, an array");
    }
    const estimate = estimateTokens(body);
    let now = Date.now();
    const rpm = await requests.limit(apiKey, { now });
    if (!rpm.allowed && rpm.degraded !== undefined) return unavailable();
    if (!rpm.allowed) {
      const headers = rateLimitHeaders({ requests, rpm, now });
      const why = rpm.blockedBy === "in-flight" ? `${rpm.limits?.find((l) => l.name === "in-flight")?.limit ?? rpm.limit} calls in flight at once` : `${rpm.limit} per minute`;
      return openaiError(429, "rate_limit_exceeded", `Rate limit reached for requests: ${why}`, headers, "requests");
    }
    // The call's in-flight slot (the requests policy's concurrency limit), given back once, when
    // the call ends upstream: its answer read or its stream ended, broken or cancelled, or it
    // never went. A release that fails leaves the slot to its lease's expiry (LEASE_TTL).
    let held = typeof rpm.lease === "string";
    const release = () => {
      if (!held) return Promise.resolve();
      held = false;
      return Promise.resolve().then(() => requests.release(rpm.lease, { now: Date.now() })).catch(() => {});
    };
    let tpm;
    try {
      tpm = await tokens.reserve(apiKey, { cost: estimate, now });
    } catch (e) {
      await requests.refund(apiKey, { now });
      await release();
      // An estimate that no limit can ever hold is the client's mistake (max_tokens too large).
      if (e?.code === "invalid_cost") return openaiError(400, "max_tokens_too_large", `this call may take ${estimate} tokens, more than the key's token limits allow at once: lower max_tokens`);
      throw e;
    }
    if (!tpm.allowed && tpm.degraded !== undefined) {
      await requests.refund(apiKey, { now });
      await release();
      return unavailable();
    }
    if (!tpm.allowed) {
      // Not sent upstream: the request hit is given back, as no call was made.
      await requests.refund(apiKey, { now });
      await release();
      const headers = rateLimitHeaders({ requests, rpm, tokens, tpm, now, requestGivenBack: true });
      const what = tpm.blockedBy === "month" ? "the monthly token budget" : "tokens per minute";
      return openaiError(429, "rate_limit_exceeded", `Rate limit reached for ${what}: this call reserves ${estimate} tokens, ${tpm.remaining} remain`, headers, "tokens");
    }
    const headers = rateLimitHeaders({ requests, rpm, tokens, tpm, now });
    // A settlement that fails (a store down, a cost settle refuses) leaves the estimate charged.
    const settle = (actual) =>
      Promise.all([release(), Promise.resolve().then(() => tokens.settle(tpm.reservation, actual ?? estimate, { now: Date.now() })).catch(() => {})]);

    const streams = body.stream === true;
    const sent = streams ? { ...body, stream_options: { ...body.stream_options, include_usage: true } } : body;
    let answer;
    try {
      answer = await upstream("/v1/chat/completions", {
        method: "POST",
        headers: { "content-type": "application/json", authorization: request.headers.get("authorization") },
        body: JSON.stringify(sent),
      });
    } catch (e) {
      waitUntil(settle(undefined));
      return openaiError(502, "upstream_unreachable", `the upstream did not answer: ${e?.message ?? e}`, headers);
    }
    const out = new Headers(answer.headers);
    for (const [name, value] of headers) out.set(name, value);
    out.delete("content-length");
    if (streams && answer.ok && answer.body !== null) {
      let settled;
      const ended = new Promise((resolve) => (settled = resolve));
      waitUntil(ended.then(settle));
      return new Response(watchUsage(answer.body, settled), { status: answer.status, headers: out });
    }
    let text;
    try {
      text = await answer.text();
    } catch (e) {
      waitUntil(settle(undefined));
      throw e;
    }
    let total;
    try {
      total = JSON.parse(text).usage?.total_tokens;
    } catch {}
    // An upstream error (4xx/5xx without usage) generated nothing: it settles at 0.
    const actual = Number.isInteger(total) ? total : answer.ok ? undefined : 0;
    waitUntil(settle(actual));
    return new Response(text, { status: answer.status, headers: out });
  };
}
