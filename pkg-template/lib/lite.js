// `tollgate/lite`: `RateLimiter` over the lite wasm module, smaller than the full module
// (sizes in docs/benchmarks.md): one limit per limiter and one key per call, every algorithm, `peek`, `refund`,
// `reset`, `headers`, state export (the same bytes as the full module's, which imports them), key
// count and pruning. No multi-limit policies or penalty, no several keys at once, no key handles,
// `limitBatch` or state import: those throw a TypeError naming the full entry. Same methods and decisions otherwise (the
// same Rust code, built without its `full` feature; docs/js-layer.md, "The lite module").
import { Controls, Limiter, Policy, durationMs, wasmMemory } from "./lite-wasm.js";
import { float64View } from "./limiter/decision.js";
import { MemoryLimiter } from "./limiter/memory-limiter.js";

const LITE = Object.freeze({ Controls, Limiter, Policy, durationMs, view: float64View(wasmMemory), limitBatch: null, limitEach: null, lite: true });

export class RateLimiter extends MemoryLimiter {
  constructor(options) {
    super(options, LITE);
  }
}
