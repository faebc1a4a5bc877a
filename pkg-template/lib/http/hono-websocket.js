// `webSocketLimiter(options)` of `tollgate/hono`: hono-rate-limiter's limiter of WebSocket
// messages. It wraps the events a Hono `upgradeWebSocket` helper takes,
// `limiter((c) => events)`, and decides each message by the key of the connection's upgrade
// context (`keyGenerator(c)`); a denied message never reaches `onMessage`, and the default
// handler closes the socket with `statusCode` (1008, policy violation) and `message`.
import { honoOptions } from "./hono-options.js";
import { rateLimitInfo, settleHit } from "./http-options.js";

async function defaultHandler(event, ws, options) {
  const m = options.message;
  const reason = typeof m === "function" ? await m(event, ws) : m;
  ws.close(options.statusCode, typeof reason === "string" ? reason : JSON.stringify(reason));
}

/**
 * `webSocketLimiter(options)(createEvents)` is a function of the upgrade's context `c`
 * answering the events of `createEvents(c)` with `onMessage` limited. The options are
 * `rateLimiter`'s (`skip(event, ws)` and `handler(event, ws, options)` take the message's
 * event and socket, as in hono-rate-limiter; there are no headers and no
 * `requestWasSuccessful`: a message is failed when `onMessage` throws).
 */
export function webSocketLimiter(options) {
  const h = honoOptions(options, "ws");
  const { o, limits, config } = h;
  const handler = o.handler ?? defaultHandler;
  const limited = (createEvents) => async (c) => {
    const events = await createEvents(c);
    return {
      ...events,
      onMessage: async (event, ws) => {
        if (o.skip !== undefined && (await o.skip(event, ws))) return events.onMessage?.(event, ws);
        const key = await o.key(c);
        const cost = o.costOf !== undefined ? await o.costOf(c) : 1;
        const limiter = await limits.forRequest(c);
        limits.handOver(limiter, key);
        const decision = await limiter.limit(key, { cost, now: Date.now() });
        c.set(h.property, rateLimitInfo(decision, key, cost));
        c.set(h.storeProperty, h.storeMethods);
        if (!decision.allowed) return handler(event, ws, decision.reason !== undefined ? { ...config, statusCode: 1008 } : config);
        try {
          await events.onMessage?.(event, ws);
        } catch (e) {
          if (o.skipFailed) await settleHit(o, () => false, key, cost, limiter);
          throw e;
        }
        if (o.skipSuccessful) await settleHit(o, () => true, key, cost, limiter);
      },
    };
  };
  limited.limiter = limits.fixed;
  return limited;
}
