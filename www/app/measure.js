// Measurements of what the algorithms did (not decisions): counted from the admitted hits'
// times, the way a server's access log would be audited.

/**
 * The most hits one key got admitted within any interval shorter than `windowMs` (two
 * admitted hits less than a window apart share some window of that length), over all keys.
 * Two pointers per key over the ascending times: O(hits).
 */
export function maxInWindow(track, windowMs, keyCount) {
  let best = 0;
  const byKey = Array.from({ length: keyCount }, () => []);
  for (let i = 0; i < track.n; i++) if (track.allowed[i] === 1) byKey[track.key[i]].push(track.t[i]);
  for (const ts of byKey) {
    let lo = 0;
    for (let hi = 0; hi < ts.length; hi++) {
      while (ts[hi] - ts[lo] >= windowMs) lo++;
      if (hi - lo + 1 > best) best = hi - lo + 1;
    }
  }
  return best;
}

/** Hits (same index in both tracks: the same trace) one track admitted and the other denied. */
export function disagreements(a, b) {
  const n = Math.min(a.n, b.n);
  const mask = new Uint8Array(n);
  let count = 0;
  for (let i = 0; i < n; i++) {
    if (a.allowed[i] !== b.allowed[i]) {
      mask[i] = 1;
      count++;
    }
  }
  return { count, mask };
}
