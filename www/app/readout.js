// Words for the state that decided a hit: the fields `describeState` gave (state-reader.js)
// and the hit's decision, as one sentence per algorithm. Arithmetic here is only for wording
// (a percentage, a time relative to the trace's start); the numbers are the core's. Each
// algorithm's sentence is algorithms.js's (`hit`, `counted`).
import { ALGORITHM_PAGES } from "./algorithms.js";

const sec = (ms) => (Math.abs(ms) >= 1000 ? `${(ms / 1000).toFixed(3)} s` : `${+ms.toFixed(3)} ms`);

/**
 * @param f fields of the state the hit found (state-reader.js fieldsOf)
 * @param d the hit's decision ({ allowed, ... })
 * @param start epoch ms of simulated time 0 (times are shown from it)
 */
export function describeHit(f, d, start) {
  const at = (t) => sec(t - start);
  const verdict = d.allowed ? "so this hit fit and was admitted" : "so this hit did not fit and was denied";
  return ALGORITHM_PAGES[f.kind]?.hit(f, verdict, at, sec) ?? "";
}

/** How many units the state counted before the hit (windows, log) or had left (bucket, meter). */
export function countedOf(f) {
  const counted = ALGORITHM_PAGES[f.kind]?.counted;
  return counted === undefined ? f.count : counted(f);
}
