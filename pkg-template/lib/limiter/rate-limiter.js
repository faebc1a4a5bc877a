// `RateLimiter`: what users write. In memory (synchronous) unless a `store` is given, in which
// case the store's own limiter is returned (asynchronous, same methods). The methods are
// memory-limiter.js's, over the limiter's full wasm module (several keys and limits, key
// handles, `limitBatch`).
import { Controls, Limiter, Policy, durationMs, wasmMemory } from "../wasm.js";
import { float64View } from "./decision.js";
import { limitBatch, limitEach } from "./batch.js";
import { MemoryLimiter } from "./memory-limiter.js";

const FULL = Object.freeze({ Controls, Limiter, Policy, durationMs, view: float64View(wasmMemory), limitBatch, limitEach, lite: false });

export class RateLimiter extends MemoryLimiter {
  constructor(options) {
    super(options, FULL);
  }
}
