// `rateLimitFetch(options)`: the fetch-API twin of `rateLimit`, for handlers of the shape
// `(request, ...rest) => Response` (Cloudflare Workers, Deno.serve, Bun.serve, service workers,
// and frameworks built on them). The same options as `rateLimit` (express-rate-limit's
// vocabulary) where they mean the same thing, and the same thin adapter: the decision is a
// `RateLimiter`'s, the headers are `limiter.headers(decision)`.
//
// What differs from `rateLimit`, and why:
// - `key` is required. A fetch handler has no portable client address: Workers put it in the
//   `CF-Connecting-IP` header, Deno in the handler's second argument, Bun behind
//   `server.requestIP(request)`. Reading a header by default would let any client that reaches
//   the server directly choose its own key. `ipKey` (exported) groups IPv6 clients by prefix.
// - The handler's answer is a `Response`, so "successful" (for the skip options) is known when
//   the handler returns; a handler that throws counts as failed, and its error goes on.
// - The headers are set on the handler's `Response`, or on a copy when its headers are
//   immutable (a `Response` straight from `fetch()`); a 101 (WebSocket) answer is passed on as
//   it is, since a copy would lose its socket.
import { denialBody, httpOptions, secretsOf } from "./http-options.js";
import { shadowReport } from "./shadow-report.js";
import { fnOf, objectOf, optionError } from "../contract/options.js";
import { reserve, reservedAnswer, waitUntilOf } from "./cost-after.js";
import { admitted, costOf, decideHit } from "./request-path.js";

/** The response with `headers` set: in place when it allows that, else on a copy. */
function withHeaders(response, headers) {
  if (!(response instanceof Response)) {
    throw new TypeError(`the handler must answer a Response, got ${response === null ? "null" : typeof response}`);
  }
  if (headers.length === 0) return response;
  try {
    for (const [name, value] of headers) response.headers.set(name, value);
    return response;
  } catch {
    if (response.status === 101) return response;
    const copy = new Response(response.body, response);
    for (const [name, value] of headers) copy.headers.set(name, value);
    return copy;
  }
}

/**
 * Makes a wrapper: `rateLimitFetch(options)(handler)` is a fetch handler that decides each
 * request by a `RateLimiter` before `handler` sees it, answering 429 when it is denied. See the
 * npm README ("HTTP middleware") for the options; `wrap.limiter` is the limiter.
 */
export function rateLimitFetch(options) {
  objectOf(options);
  if (options.key === undefined) {
    throw optionError("missing_field", "key", "key(request, ...rest) is required: a fetch handler has no portable client address (see the README for each runtime's)");
  }
  fnOf("key", options.key, "a function of the request (request, ...rest) returning its key");
  const o = httpOptions(options, []);
  const { key, skip, handler, limiter, after } = o;
  if (after !== null) reserve(limiter, null);
  const wasSuccessful = o.wasSuccessful ?? ((request, response) => response.status < 400);

  const wrap = (inner) => {
    if (typeof inner !== "function") throw new TypeError(`the handler must be a function, got ${typeof inner}`);
    return async (request, ...rest) => {
      if (skip !== undefined && (await skip(request, ...rest))) return inner(request, ...rest);
      const keys = await key(request, ...rest);
      const cost = await costOf(o, request, ...rest);
      const { decision, now, mistake, thrown } = await decideHit(o, limiter, keys, cost, request.signal, secretsOf(keys));
      // A runtime may answer the error: without the key or a stack.
      if (thrown !== undefined) throw thrown;
      if (mistake !== undefined) return Response.json(mistake.body, { status: mistake.status });
      // A hit a list answered (controls.js) was decided by no limit: no rate-limit header, and
      // a denied one is answered 403 (not a rate limit: nothing to wait for).
      const listed = decision.reason !== undefined;
      const headers = listed ? [] : Object.entries(o.headers(o.limiter, decision, keys, now));
      const shadow = shadowReport(decision);
      if (shadow !== null) headers.push(shadow);
      if (listed && decision.allowed) return inner(request, ...rest);
      if (!decision.allowed) {
        if (handler !== undefined) return withHeaders(await handler(request, decision, ...rest), headers);
        const { text, type } = denialBody(typeof o.message === "function" ? await o.message(decision, request) : o.message);
        return new Response(text, { status: listed ? 403 : o.status, headers: [...headers, ["Content-Type", type]] });
      }
      const route = () => inner(request, ...rest);
      if (after !== null) {
        // A handler's answer that is not a Response is its error, and settles at the estimate.
        const checked = async () => withHeaders(await route(), []);
        return reservedAnswer(limiter, decision, cost, checked, (copy) => after.actualCost(request, copy, ...rest), waitUntilOf(rest), (out) => withHeaders(out, headers));
      }
      // A concurrency limit's slot is held until the body is sent, fails or is cancelled.
      const response = await admitted(o, limiter, decision, keys, cost, route, (r) => wasSuccessful(request, r), waitUntilOf(rest), request.signal);
      return withHeaders(response, headers);
    };
  };

  wrap.limiter = limiter;
  return wrap;
}
