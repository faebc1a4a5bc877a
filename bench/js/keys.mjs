// What the Node benchmarks share: the key space and the key sequence of the workloads over
// many keys (W2 in bench.mjs, the resident keys in resident.mjs), so both draw the same keys.

/** Distinct keys of the many-keys workloads. */
export const KEYS = 1_000_000;

/** `n` keys `user:<i>`: xorshift32 with a fixed seed, reduced to `KEYS` keys. */
export function keysByPrng(n) {
  const keys = new Array(n);
  let s = 0x2545f491;
  for (let i = 0; i < n; i++) {
    s ^= s << 13; s ^= s >>> 17; s ^= s << 5;
    keys[i] = `user:${(s >>> 0) % KEYS}`;
  }
  return keys;
}
