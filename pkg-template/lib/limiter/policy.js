// `Policy`: the low-level pure decision over encoded states, for stores that keep state
// elsewhere (Redis). See docs/js-layer.md. The limits are validated by the limiter's module
// (`Limits`, which `RateLimiter` decides by); deciding over encoded states is the extras
// module's `StorePolicy`, made on first use (an in-memory limiter never needs it).
import { Limits } from "./limits.js";
import { Policy as WasmPolicy } from "../wasm.js";
import { extras } from "../extras.js";
import { extrasOutView } from "./extras-view.js";
import { readDecision } from "./decision.js";
import { POLICY_FIELDS, optionError } from "../contract/options.js";

const SINGLE = [""];

/** The states as new arrays (absent as `null`), as a step that changed them would return. */
function copies(states) {
  return Array.from(states, (s) => (s == null ? null : s.slice()));
}

export class Policy extends Limits {
  #store = null;

  constructor(options) {
    super(options, WasmPolicy);
  }

  check(states, now, cost = 1) {
    const store = this._store;
    // The core's compare-and-swap step; `null`: the states are unchanged (a denial).
    const next = store.step(states, now, cost, false) ?? copies(states);
    const d = this.#written(store, states);
    d.states = next;
    d.expiresAt = Array.from(store.lastExpiresAt());
    return d;
  }

  peek(states, now, cost = 1) {
    const store = this._store;
    store.peek(states, now, cost);
    return this.#written(store, states);
  }

  /** The decision `store` just wrote for `states` (the limits' names without a copy: `_names`). */
  #written(store, states) {
    return readDecision(store.outPtr, this._names, states.length > 1 ? states.map((_, i) => i) : SINGLE, extrasOutView());
  }

  refund(states, now, cost = 1) {
    return this._store.step(states, now, cost, true) ?? copies(states);
  }

  validateState(state) {
    if (!(state instanceof Uint8Array)) throw optionError("invalid_type", "state", `state must be a Uint8Array, got ${typeof state}`);
    this._store.validateState(state);
  }

  /**
   * The extras module's `StorePolicy` for these limits (decisions over encoded states; they
   * are written to the extras module's buffer, `extrasOutView`). @internal
   */
  get _store() {
    if (this.#store === null) {
      this.#store = new (extras().StorePolicy)(this._options, POLICY_FIELDS);
    }
    return this.#store;
  }
}
