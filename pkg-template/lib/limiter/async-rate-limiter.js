// `AsyncRateLimiter`: a limiter over a store (e.g. `RedisStore`), whose methods return
// promises. A class of its own so that the asynchronous limiter is named where it is made:
// `new AsyncRateLimiter({ ..., store })` is `store.limiter(options)`.

import { objectOf, optionError } from "../contract/options.js";
import { storeLimiter } from "./memory-limiter.js";
import { Controls } from "../wasm.js";

export class AsyncRateLimiter {
  /** `options`: the limits (as for `RateLimiter`) and the `store` they are decided over. */
  constructor(options) {
    objectOf(options);
    if (options.store === undefined) {
      throw optionError("missing_field", "store", "store is required: AsyncRateLimiter decides over a store (e.g. new RedisStore(client)); in memory, use RateLimiter");
    }
    // A constructor that returns an object makes it the result of `new`.
    return storeLimiter(options, Controls);
  }
}
