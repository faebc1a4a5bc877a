// The gateway on Node: in-memory limiters (one process; give the limiters a store, such as
// RedisStore, to share the counts between processes), the upstream at UPSTREAM_URL.
import { RateLimiter } from "tollgate";
import { gateway } from "./gateway.mjs";
import { limitsOf } from "./limits.mjs";
import { serve } from "./serve.mjs";

/** Serves the gateway on `port` (0: a free one) in front of `upstreamUrl`. */
export function startGateway({ upstreamUrl, port = 0, env = process.env }) {
  const limits = limitsOf(env);
  const handler = gateway({
    upstream: (path, init) => fetch(new URL(path, upstreamUrl), init),
    requests: new RateLimiter(limits.requests),
    tokens: new RateLimiter(limits.tokens),
  });
  return serve(handler, { port });
}
