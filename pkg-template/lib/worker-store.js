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
import { known } from "./options.js";
import { Insurance, insuranceShare } from "./insurance.js";
import { WorkerTransport } from "./worker-transport.js";
import { WorkerLimiter } from "./worker-limiter.js";

const FAILURES = ["open", "closed", "throw", "insurance"];
/** `blockedCache: true`: as the Redis store's, how late another client's reset or refund may be seen. */
const BLOCKED_CACHE_MS = 1000;
const show = (v) => (typeof v === "string" ? JSON.stringify(v) : String(v));

function wholeNumber(field, v, min) {
  if (typeof v !== "number" || !Number.isInteger(v) || v < min) {
    const err = typeof v === "number" ? RangeError : TypeError;
    throw Object.assign(new err(`${field} must be a whole number of at least ${min}, got ${show(v)}`), {
      code: typeof v === "number" ? "out_of_range" : "invalid_type",
      field,
    });
  }
  return v;
}

function typeError(field, message) {
  return Object.assign(new TypeError(message), { code: "invalid_type", field });
}

export class WorkerStore {
  /** @param options see types/worker-store.d.ts */
  constructor(options) {
    if (options === null || typeof options !== "object") throw typeError("options", `options must be an object, got ${show(options)}`);
    known(options, [
      "url", "token", "binding", "fetch", "policy", "timeoutMs", "failure", "insurance", "blockedCache",
      "maxCachedKeys", "closedRetryMs", "now", "onError",
    ]);
    const {
      url,
      token,
      binding,
      fetch = globalThis.fetch,
      policy,
      timeoutMs = 1000,
      failure = "open",
      insurance,
      blockedCache = true,
      maxCachedKeys = 10_000,
      closedRetryMs = 1000,
      now = Date.now,
      onError,
    } = options;
    if ((url === undefined) === (binding === undefined)) {
      throw Object.assign(new TypeError("give the Worker as url (HTTP) or binding (a service binding), one of them"), {
        code: url === undefined ? "missing_field" : "conflicting_fields",
        field: url === undefined ? "url" : "binding",
      });
    }
    if (url !== undefined) {
      if (typeof url !== "string" || !/^https?:\/\//.test(url)) throw typeError("url", `url must be an http(s) URL, got ${show(url)}`);
      if (typeof fetch !== "function") throw typeError("fetch", "fetch must be a function (no global fetch here)");
    }
    if (binding !== undefined && (binding === null || typeof binding.fetch !== "function")) {
      throw typeError("binding", "binding must be a service binding: an object with fetch(request)");
    }
    if (token !== undefined && (typeof token !== "string" || token === "")) throw typeError("token", "token must be a non-empty string");
    if (typeof policy !== "string" || policy === "") {
      throw Object.assign(new TypeError(`policy must name one of the Worker's policies, got ${show(policy)}`), {
        code: policy === undefined ? "missing_policy" : "invalid_type",
        field: "policy",
      });
    }
    if (!FAILURES.includes(failure)) {
      throw Object.assign(new TypeError(`failure must be "open", "closed", "throw" or "insurance", got ${show(failure)}`), {
        code: "invalid_value",
        field: "failure",
      });
    }
    if (failure === "insurance" && insurance === undefined) {
      throw typeError("insurance", 'failure "insurance" needs insurance: the share of each limit one process admits during an outage (e.g. 1 / processes)');
    }
    if (failure !== "insurance" && insurance !== undefined) {
      throw typeError("insurance", `insurance applies with failure "insurance" only, not ${show(failure)}`);
    }
    if (typeof now !== "function") throw typeError("now", `now must be a function returning epoch ms, got ${show(now)}`);
    if (onError !== undefined && typeof onError !== "function") throw typeError("onError", `onError must be a function, got ${show(onError)}`);
    this._insuranceShare = insurance === undefined ? 0 : insuranceShare(insurance);
    this._transport = new WorkerTransport({ url, binding, fetch, token });
    /** The Worker policy every decision of this store is made by. */
    this.policy = policy;
    this._timeoutMs = wholeNumber("timeoutMs", timeoutMs, 1);
    this._failure = failure;
    this._blockedCacheMs =
      blockedCache === true ? BLOCKED_CACHE_MS : blockedCache === false ? 0 : wholeNumber("blockedCache", blockedCache, 0);
    this._maxCachedKeys = wholeNumber("maxCachedKeys", maxCachedKeys, 0);
    this._closedRetryMs = wholeNumber("closedRetryMs", closedRetryMs, 1);
    this._now = now;
    this._onError = onError;
  }

  /**
   * A limiter deciding by the Worker's policy (what `new RateLimiter({ ..., store })` returns).
   * `options`: nothing (the Worker's limits), or limits that must equal the Worker's policy
   * (checked on the first call; `policy_mismatch` otherwise).
   */
  limiter(options = {}) {
    if (options === null || typeof options !== "object") throw typeError("options", `options must be an object, got ${show(options)}`);
    const own = Object.keys(options).length === 0 ? null : options;
    if (own === null && this._failure === "insurance") {
      throw typeError("insurance", 'failure "insurance" decides in memory while the Worker is unavailable: give the limiter its limits (equal to the Worker policy\'s)');
    }
    return new WorkerLimiter(this, own);
  }

  /** Sends one request to the Worker. @internal */
  _send(method, path, body) {
    return this._transport.send(method, path, body, this._timeoutMs);
  }

  /** The in-memory limiter of `failure: "insurance"` for a limiter's options. @internal */
  _insurance(options) {
    return new Insurance(options, this._insuranceShare);
  }
}
