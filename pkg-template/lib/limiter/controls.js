// A limiter's operator controls beside its limits: allow and deny lists, checked before the
// limits, and shadow mode (decide and count as enforcement would, admit every hit), both parsed,
// and the lists matched, by the core through the wasm module's `Controls` (wasm/src/controls.rs:
// `tollgate::spec` and `tollgate::access`, as the Worker's); and the decision hook, `onDecision`
// (decision-hook.js: every limiter's decisions pass here, so it is called in this one place).
// The penalty, `blockDuration`, is the core policy's own (src/penalty.rs) and needs nothing
// here. A limiter without controls is not touched: its `limit`, `peek` and `reserve` stay the
// class's own, so the controls cost nothing when they are off. `reserve` is a hit (of its
// estimate) and passes the controls as `limit` does; a listed key reserves nothing
// (`reservation: null`). `settle` decides no hit: it is not reported.
import { callOptions as readCallOptions, costOf } from "../contract/options.js";
import { decisionHookOf, report } from "./decision-hook.js";

/** The controls' option names (docs/vocabulary.md; options.js lists them among a limiter's). */
export const CONTROL_FIELDS = ["shadow", "allowList", "denyList", "onDecision"];

/** Each controlled limiter's controls, for the middleware to match the client address too. */
export const controlsOf = new WeakMap();

class Controls {
  /** `WasmControls`: the `Controls` class of the wasm module the limiter has loaded. */
  constructor(options, store, WasmControls) {
    const parsed = new WasmControls(options);
    /** The core's controls (the wasm `Controls`): the lists, and the answers of the controls. */
    this.parsed = parsed;
    this.shadow = parsed.shadow;
    /** The lists, matched in the core; null when both are empty. */
    this.lists = parsed.lists ? parsed : null;
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
    if (this.lists === null) return null;
    // What is not a key is listed nowhere; the limits refuse it as they would without lists.
    const keys = (Array.isArray(key) ? key : [key]).filter((k) => typeof k === "string");
    return this.lists.listed(keys, typeof ip === "string" ? ip : undefined) ?? null;
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
 * A listed hit's decision for `limiter` (controlled) at `now`, the core's answer
 * (`tollgate::answer::Answer::listed`): nothing counted, no limit decided (so `limits` is empty
 * and no rate-limit header describes it); `reason` says which list (upstash/ratelimit's field).
 */
export function listedAnswer(limiter, reason, now) {
  const figures = controlsOf.get(limiter).parsed.listedFigures(reason === "denyList", firstLimit(limiter), now);
  const [allowed, limit, remaining, resetAt, retryAfter] = figures;
  return { allowed: allowed === 1, limit, remaining, resetAt, retryAfter, blockedBy: null, limits: [], reason };
}

/**
 * In shadow mode, the enforcing decision `d` as the core answers it
 * (`tollgate::answer::Answer::shadowed`): admitted, `shadow: true`, `wouldAllow` what
 * enforcement answered, every other figure enforcement's. Nothing more was counted than
 * enforcement counted: a would-be denial counts nowhere, so the limiter's state, and every
 * later decision, are an enforcing limiter's on the same hits.
 */
function inShadow(c, d) {
  d.wouldAllow = d.allowed;
  d.allowed = c.parsed.shadowAllowed(d.wouldAllow);
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
 * `WasmControls`: the loaded wasm module's `Controls`; `store`: the store the limiter decides
 * over, if any (a `WorkerStore` names its policy).
 */
export function applyControls(limiter, options, async, WasmControls, store = undefined) {
  if (!hasControls(options)) return limiter;
  const c = new Controls(options, store, WasmControls);
  controlsOf.set(limiter, c);
  const answer = async ? (v) => Promise.resolve(v) : (v) => v;
  for (const method of ["limit", "peek", "reserve"]) {
    const plain = limiter[method];
    if (typeof plain !== "function") continue;
    // A peek decides nothing: only hits (and reservations, hits of their estimate) are reported.
    const hook = method === "peek" ? undefined : c.hook;
    const after = (d, callOptions) => {
      if (c.shadow) inShadow(c, d);
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
        const d = listedAnswer(limiter, reason, now);
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
