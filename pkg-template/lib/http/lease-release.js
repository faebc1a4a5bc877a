// The middlewares' side of a concurrency limit (docs/concurrency.md): a request the policy
// admitted holds its decision's lease while the request is in flight, and the middleware gives
// it back once, when the answer was sent in full, the connection closed (a client that went
// away), the handler threw, or a streamed body ended, failed or was cancelled. What a release
// frees and what the key's figures become is the core's; this module only knows when.
//
// A release that fails (a store that is gone) is dropped: the lease still expires by its
// `leaseTtl`, the bound the docs state for a holder that never comes back.

/**
 * A function giving back `decision`'s lease on `limiter` at most once (its promise settles
 * when the release is done, never rejects), or `null` when the decision holds no lease (a
 * denial, a policy without a concurrency limit, a list's or an outage's answer).
 */
export function releaserOf(limiter, decision) {
  const lease = decision?.lease;
  if (typeof lease !== "string" || limiter === null || limiter === undefined) return null;
  let released = null;
  return () => {
    released ??= Promise.resolve()
      .then(() => limiter.release(lease))
      .then(
        () => undefined,
        () => undefined,
      );
    return released;
  };
}

/**
 * Releases once `res` (node:http's `ServerResponse`: Express, Connect, Fastify's `reply.raw`)
 * is over: its answer finished, its connection closed or it failed; at once when it already is.
 */
export function releaseWhenDone(res, release) {
  if (release === null) return;
  if (res.writableFinished || res.destroyed) {
    void release();
    return;
  }
  const done = () => void release();
  res.once("finish", done);
  res.once("close", done);
  res.once("error", done);
}

/**
 * `response` (a fetch `Response`) whose lease is released when its body has been read to the
 * end, failed or was cancelled by the client; released at once when it has no body to stream
 * or is a 101 (a WebSocket's socket is not this response's body), and when `signal` (the
 * request's) aborts: a client that went away before its body was read (a server may then never
 * read nor cancel it). `keepAlive(promise)` hands the release to the runtime's `waitUntil`
 * where there is one (Workers), so that it outlives the response.
 */
export function releasingResponse(response, release, keepAlive, signal) {
  if (release === null) return response;
  const done = () => keepAlive(release());
  if (!(response instanceof Response) || response.body === null || response.status === 101 || signal?.aborted) {
    done();
    return response;
  }
  signal?.addEventListener("abort", done, { once: true });
  const reader = response.body.getReader();
  const body = new ReadableStream({
    async pull(controller) {
      let chunk;
      try {
        chunk = await reader.read();
      } catch (e) {
        done();
        controller.error(e);
        return;
      }
      if (chunk.done) {
        done();
        controller.close();
      } else {
        controller.enqueue(chunk.value);
      }
    },
    cancel(reason) {
      done();
      return reader.cancel(reason);
    },
  });
  return new Response(body, { status: response.status, statusText: response.statusText, headers: response.headers });
}

/**
 * A middleware's hit: `limiter.limit`, or with `queue` (`{ maxQueue, maxWait }`, the
 * middleware's options) `limiter.acquire` waiting in line for a concurrency slot, admitted in
 * order, refused (the core's denial) when the line is full or `maxWait` passes; `signal` (the
 * request's) aborting takes the request out of the line and rejects with its reason.
 */
export function limitOrWait(limiter, key, cost, now, queue, signal) {
  if (queue === null || typeof limiter.acquire !== "function") return limiter.limit(key, { cost, now });
  return limiter.acquire(key, { cost, maxQueue: queue.maxQueue, maxWait: queue.maxWait, signal });
}

/** An AbortSignal that aborts when `res` (node:http's) closes before its answer is sent; `done()` stops watching. */
export function closeSignal(res) {
  const controller = new AbortController();
  const onClose = () => {
    if (!res.writableFinished) controller.abort(new Error("the client went away while waiting in line"));
  };
  res.once("close", onClose);
  return { signal: controller.signal, done: () => res.off("close", onClose) };
}
