// The guide's link to the real tollgate core: the npm package's web build (RateLimiter: every
// decision, with reserve and settle; Pacer: the client side; WorkerStore: a store limiter's
// outage answers) and the playground's own module (describeState: the core's description of
// a key's state, src/describe.rs). Nothing here decides or computes an algorithm.
import { fieldsOf } from "../app/state-reader.js";

/** Simulated epoch of the widgets' clocks: midnight, so clock-aligned windows start at 0. */
export const START = Date.UTC(2026, 0, 1);

/** Resolves to { RateLimiter, Pacer, WorkerStore, describe(options, rl, key, now) -> named fields }. */
export async function loadCore() {
  const { RateLimiter, Pacer, WorkerStore } = await import("../vendor/tollgate/web/index.js");
  const own = await import("../vendor/tollgate-www/tollgate_www.js");
  await own.default({ module_or_path: new URL("../vendor/tollgate-www/tollgate_www_bg.wasm", import.meta.url) });
  return {
    RateLimiter,
    Pacer,
    WorkerStore,
    /** The fields of `key`'s state in `rl` at epoch ms `now`, as the core describes them. */
    describe: (options, rl, key, now) => fieldsOf(own.describeState(options, rl.export(key), now)),
  };
}

/** The response a client gets for a decision: status and the core's headers (draft-10). */
export function response(rl, decision, now) {
  const headers = rl.headers(decision, { standardHeaders: "draft-10", legacyHeaders: false, now });
  return { status: decision.allowed ? 200 : 429, headers };
}
