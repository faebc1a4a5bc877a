// The gateway as a Cloudflare Worker: the same handler (gateway.mjs), the upstream at
// env.UPSTREAM_URL, RPM and TPM from env. The limiters are in the isolate's memory: one
// isolate's count (wrangler dev runs one). The settlement of a call outlives its answer through
// ctx.waitUntil.
import { RateLimiter } from "tollgate";
import { gateway } from "./gateway.mjs";
import { limitsOf } from "./limits.mjs";

let handler;

export default {
  fetch(request, env, ctx) {
    if (handler === undefined) {
      const limits = limitsOf(env);
      handler = gateway({
        upstream: (path, init) => fetch(new URL(path, env.UPSTREAM_URL), init),
        requests: new RateLimiter(limits.requests),
        tokens: new RateLimiter(limits.tokens),
      });
    }
    return handler(request, (p) => ctx.waitUntil(p));
  },
};
