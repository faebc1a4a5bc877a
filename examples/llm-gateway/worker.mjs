// The gateway as a Cloudflare Worker: the same handler (gateway.mjs), the upstream at
// env.UPSTREAM_URL. With a service binding TOLLGATE to the tollgate Worker, the limits are its
// policies REQUESTS_POLICY and TOKENS_POLICY (default "llm-requests" and "llm-tokens"; see
// README.md), decided there through WorkerStore: one count for every isolate and location.
// Without it, RPM, TPM and MONTHLY from env are counted in the isolate's memory (one isolate's
// count: wrangler dev runs one). A call's settlement outlives its answer through ctx.waitUntil.
import { AsyncRateLimiter, RateLimiter, WorkerStore } from "tollgate";
import { gateway } from "./gateway.mjs";
import { limitsOf } from "./limits.mjs";

let handler;

function limitersOf(env) {
  if (env.TOLLGATE === undefined) {
    const limits = limitsOf(env);
    return { requests: new RateLimiter(limits.requests), tokens: new RateLimiter(limits.tokens) };
  }
  // Closed: a call the tollgate Worker could not decide in time is denied, not sent upstream
  // uncounted (spend is what these limits guard).
  const store = (policy) => new WorkerStore({ binding: env.TOLLGATE, policy, failure: "closed", timeoutMs: 10000 });
  const byPolicy = (policy) => new AsyncRateLimiter({ store: store(policy) });
  return { requests: byPolicy(env.REQUESTS_POLICY ?? "llm-requests"), tokens: byPolicy(env.TOKENS_POLICY ?? "llm-tokens") };
}

export default {
  fetch(request, env, ctx) {
    handler ??= gateway({ upstream: (path, init) => fetch(new URL(path, env.UPSTREAM_URL), init), ...limitersOf(env) });
    return handler(request, (p) => ctx.waitUntil(p));
  },
};
