// Each algorithm in a few plain sentences, shown first beside the chart; the module docs'
// precise wording and formulas (algorithm-docs.js) follow behind a "details" fold.
export const PROSE = {
  "fixed-window":
    "Time is cut into windows by the clock, the same for every key, with a counter per window. A hit is admitted while the counter is below the limit; when the next window starts, the count starts over. Cheap, but a key can get twice the limit through by hitting just before and just after a boundary.",
  "fixed-window-first-hit":
    "Each key's window opens with its first hit and lasts one window; the next hit after it closed opens a new one. The counter works as in the clock-aligned window, but each key's boundaries are its own.",
  "sliding-log":
    "The time of every admitted hit is kept. A new hit counts the entries of the last window; below the limit it is admitted and logged. Exact: never more than the limit in any window, at the price of one entry per admitted hit.",
  "sliding-window":
    "Two counters: this clock window's and the previous one's. The window that ends now still covers part of the previous window, so the previous count is weighted by that part and added to the current one. Two numbers per key, close to the exact log.",
  "sliding-buckets":
    "The window is cut into small clock-aligned buckets, each with its own count; a hit is admitted while the buckets still inside the window sum to less than the limit. The oldest bucket drops out as a whole, so smaller buckets come closer to the exact log.",
  "token-bucket":
    "A bucket of tokens, full at first: each hit takes one, and tokens come back at a steady pace until the bucket is full again. A key that was quiet can spend a burst at once; a busy one gets the steady rate.",
  gcra: "The token bucket stored as one time, the theoretical arrival time (TAT): when the key would be caught up at the steady rate. Each hit moves it one step later; a hit is admitted unless it comes too far ahead of that schedule (more than the tolerance the burst allows).",
};
