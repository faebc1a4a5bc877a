// `WorkerStore`: the npm limiter's decisions made by the tollgate Worker (one Durable Object
// per key, one limit for every runtime that asks), over HTTP or a service binding.
//
//   const limiter = new RateLimiter({ store: new WorkerStore({ url, token, policy: "api" }) });
//   const limiter = new RateLimiter({ store: new WorkerStore({ binding: env.TOLLGATE, policy: "api" }) });
//   const d = await limiter.limit("user:42");
//
// The Worker decides (its HTTP API: worker/README.md); this store only translates calls into
// requests, answers into decisions, and outages into the failure mode, with the Redis store's
// option names and meanings (`failure`, `insurance`, `timeoutMs`, `blockedCache`, `onError`).
// See docs/worker-store.md.
import { fail, fnOf, known, objectOf, optionError } from "../../contract/options.js";
import { STORE_OPTIONS, applyStoreOptions } from "../store-options.js";
import { WorkerTransport } from "./worker-transport.js";
import { WorkerLimiter } from "./worker-limiter.js";

export class WorkerStore {
  /** @param options see types/worker-store.d.ts */
  constructor(options) {
    objectOf(options);
    known(options, ["url", "token", "binding", "fetch", "policy", ...STORE_OPTIONS]);
    const { url, token, binding, fetch = globalThis.fetch, policy } = options;
    if ((url === undefined) === (binding === undefined)) {
      const [code, field, what] = url === undefined ? ["missing_field", "url", "is required"] : ["conflicting_fields", "binding", "cannot be given with url"];
      throw optionError(code, field, `${field} ${what}: give the Worker as url (HTTP) or binding (a service binding), one of them`);
    }
    if (url !== undefined) {
      if (typeof url !== "string") throw fail("url", url, "an http(s) URL");
      if (!/^https?:\/\//.test(url)) throw fail("url", url, "an http(s) URL", "invalid_value");
      fnOf("fetch", fetch, "a function (there is no global fetch here)");
    }
    if (binding !== undefined && (binding === null || typeof binding.fetch !== "function")) {
      throw fail("binding", binding, "a service binding: an object with fetch(request)");
    }
    if (token !== undefined && typeof token !== "string") throw fail("token", token, "a non-empty string");
    if (token === "") throw fail("token", token, "a non-empty string", "invalid_value");
    if (policy === undefined) throw optionError("missing_field", "policy", "policy is required: the name of one of the Worker's policies");
    if (typeof policy !== "string") throw fail("policy", policy, "the name of one of the Worker's policies");
    if (policy === "") throw fail("policy", policy, "the name of one of the Worker's policies", "invalid_value");
    this._now = applyStoreOptions(this, options, 1000);
    this._transport = new WorkerTransport({ url, binding, fetch, token });
    /** The Worker policy every decision of this store is made by. */
    this.policy = policy;
  }

  /**
   * A limiter deciding by the Worker's policy (what `new RateLimiter({ ..., store })` returns).
   * `options`: nothing (the Worker's limits), or limits that must equal the Worker's policy
   * (checked on the first call; `policy_mismatch` otherwise).
   */
  limiter(options = {}) {
    objectOf(options);
    const own = Object.keys(options).length === 0 ? null : options;
    if (own === null && this._failure === "insurance") {
      throw optionError("missing_field", "limits", 'limits are required with failure "insurance", which decides in memory while the Worker is unavailable: give the limiter its limits (equal to the Worker policy\'s)');
    }
    return new WorkerLimiter(this, own);
  }

  /** Sends one request to the Worker. @internal */
  _send(method, path, body) {
    return this._transport.send(method, path, body, this._timeoutMs);
  }
}
