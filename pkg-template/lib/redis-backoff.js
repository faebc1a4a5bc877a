// The pause before deciding again after a lost compare-and-swap. When many processes write one
// key, the ones that lost a race all learn the new bytes at once; retrying at once, they race
// again, and all but one lose again, each loss a script call and a wake-up of a process for
// nothing. A random pause (full jitter) spreads them out, so that fewer race per round, and the
// hits that queue meanwhile join the next attempt of their batch (redis-limiter.js), which
// then writes more hits per swap. The first retry is immediate: a single lost race is the
// common case and costs nothing to retry.

/** Longest pause, ms: well inside any sensible `timeoutMs`. */
const MAX_PAUSE_MS = 16;

/** Resolves after the pause for `attempt` (1: first lost race): 0, then up to 1, 2, 4... ms. */
export function backoff(attempt) {
  if (attempt < 2) return Promise.resolve();
  const ms = Math.random() * Math.min(MAX_PAUSE_MS, 2 ** (attempt - 2));
  return new Promise((resolve) => setTimeout(resolve, ms));
}
