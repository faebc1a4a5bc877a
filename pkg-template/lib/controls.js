// A limiter's operator controls beside its limits: allow and deny lists, checked before the
// limits (access-list.js), and shadow mode (decide and count as enforcement would, admit every
// hit), and the decision hook, `onDecision` (decision-hook.js: every limiter's decisions pass
// here, so it is called in this one place). The penalty, `blockDuration`, is the core policy's
// own (src/penalty.rs) and needs nothing here. A limiter without controls is not touched: its
// `limit`, `peek` and `reserve` stay the class's own, so the controls cost nothing when they
// are off. `reserve` is a hit (of its estimate) and passes the controls as `limit` does; a
// listed key reserves nothing (`reservation: null`). `settle` decides no hit: it is not reported.
import { AccessList } from "./access-list.js";
import { callOptions as readCallOptions, costOf, flagOf } from "./options.js";
import { decisionHookOf, report } from "./decision-hook.js";

/** The controls' option names (docs/vocabulary.md; options.js lists them among a limiter's). */
export const CONTROL_FIELDS = ["shadow", "allowList", "denyList", "onDecision"];

/** Each controlled limiter's controls, for the middleware to match the client address too. */
export const controlsOf = new WeakMap();

class Controls {
  constructor(options, store) {
    this.shadow = flagOf("shadow", options.shadow ?? false);
    this.allow = options.allowList === undefined ? null : new AccessList(options.allowList, "allowList");
    this.deny = options.denyList === undefined ? null : new AccessList(options.denyList, "denyList");
    this.hook = decisionHookOf(options);
    // The Worker policy a WorkerStore's limiter decides by, for the hook's reports.
    this.policy = typeof store?.policy === "string" ? store.policy : null;
  }

  /**
   * `"denyList"`, `"allowList"` or null for `key` (a string or an array of keys: listed when
   * any is) and `ip`, the client address an HTTP edge keyed by. The deny list first, so that
   * an entry on both denies.
   */
  listed(key, ip) {
    const keys = Array.isArray(key) ? key : [key];
    if (this.deny !== null && keys.some((k) => this.deny.matches(k, ip))) return "denyList";
    if (this.allow !== null && keys.some((k) => this.allow.matches(k, ip))) return "allowList";
    return null;
  }
}

/** Whether `options` ask for a control. */
export function hasControls(options) {
  return options !== null && typeof options === "object" && CONTROL_FIELDS.some((f) => options[f] !== undefined);
}

/** `options` without the controls' fields (what a store's limiter is made of). */
export function withoutControls(options) {
  const rest = { ...options };
  for (const f of CONTROL_FIELDS) delete rest[f];
  return rest;
}

/**
 * A listed hit's decision: nothing counted, no limit decided (so `limits` is empty and no
 * rate-limit header describes it); `reason` says which list (upstash/ratelimit's field).
 */
export function listedDecision(reason, limit, now) {
  const allowed = reason === "allowList";
  return { allowed, limit, remaining: allowed ? limit : 0, resetAt: now, retryAfter: 0, blockedBy: null, limits: [], reason };
}

/**
 * In shadow mode, the enforcing decision `d` admitting the hit: `shadow: true`, `wouldAllow`
 * what enforcement answered, every other figure enforcement's. Nothing more was counted than
 * enforcement counted: a would-be denial counts nowhere, so the limiter's state, and every
 * later decision, are an enforcing limiter's on the same hits.
 */
function shadowed(d) {
  d.wouldAllow = d.allowed;
  d.allowed = true;
  d.shadow = true;
  return d;
}

/** The first limit's figure, for a listed hit's `limit`. */
export function firstLimit(limiter) {
  const advertised = limiter.policy?.advertised?.();
  return advertised instanceof Map && advertised.size > 0 ? advertised.values().next().value[0] : 0;
}

/**
 * Gives `limiter` the controls `options` ask for (returned as it is when they ask for none):
 * its own `limit`, `peek` and `reserve` (where it has one) wrapped on the instance. `async`: its methods return promises;
 * `store`: the store the limiter decides over, if any (a `WorkerStore` names its policy).
 */
export function applyControls(limiter, options, async, store = undefined) {
  if (!hasControls(options)) return limiter;
  const c = new Controls(options, store);
  controlsOf.set(limiter, c);
  const answer = async ? (v) => Promise.resolve(v) : (v) => v;
  const limitOf = () => firstLimit(limiter);
  for (const method of ["limit", "peek", "reserve"]) {
    const plain = limiter[method];
    if (typeof plain !== "function") continue;
    // A peek decides nothing: only hits (and reservations, hits of their estimate) are reported.
    const hook = method === "peek" ? undefined : c.hook;
    const after = (d, callOptions) => {
      if (c.shadow) shadowed(d);
      if (hook !== undefined) report(hook, c.policy, d, costOf(callOptions));
      return d;
    };
    limiter[method] = function (key, callOptions) {
      const reason = c.listed(key instanceof Object && !Array.isArray(key) ? key.key : key, undefined);
      if (reason !== null) {
        // Bad call options are refused here too, as the limits would refuse them.
        let now;
        try {
          now = readCallOptions(callOptions).now;
        } catch (e) {
          if (async) return Promise.reject(e);
          throw e;
        }
        const d = listedDecision(reason, limitOf(), now);
        if (method === "reserve") d.reservation = null;
        if (hook !== undefined) report(hook, c.policy, d, costOf(callOptions));
        return answer(d);
      }
      const d = plain.call(this, key, callOptions);
      if (!c.shadow && hook === undefined) return d;
      return async ? d.then((v) => after(v, callOptions)) : after(d, callOptions);
    };
  }
  return limiter;
}
