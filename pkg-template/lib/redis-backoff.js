// The pause before deciding again after a lost compare-and-swap. When many processes write one
// key, the ones that lost a race all learn the new bytes at once; retrying at once, they race
// again, and all but one lose again, each loss a script call and a wake-up of a process for
// nothing. So a loser waits a random pause (full jitter) over a window that grows with how
// contended this limiter's swaps are (lost races per attempt, as the share of writers racing
// for each win) and how long a swap takes: about one attempt per writer per win, the
// randomised share that loses least. Meanwhile the hits that queue join the next attempt of
// their batch (redis-limiter.js), which then writes more hits per swap. The first retry is
// immediate: a single lost race is the common case and costs nothing to retry.

/** Longest pause, ms: several attempts still fit in the default `timeoutMs` (500). */
const MAX_PAUSE_MS = 64;
/** How fast the estimates follow what the swaps see (weight of the newest). */
const WEIGHT = 1 / 16;

export class Backoff {
  /** Lost races per compare-and-swap, moving average. */
  #lossRate = 0;
  /** Ms a compare-and-swap takes, moving average. */
  #swapMs = 1;

  /** Records one compare-and-swap: how long it took and whether it lost. */
  record(ms, lost) {
    this.#swapMs += (ms - this.#swapMs) * WEIGHT;
    this.#lossRate += ((lost ? 1 : 0) - this.#lossRate) * WEIGHT;
  }

  /** Resolves after the pause for `attempt` (1: the first lost race in a row). */
  pause(attempt) {
    if (attempt < 2) return Promise.resolve();
    // With n writers racing for each win, about (n - 1) / n of the swaps lose.
    const writers = Math.min(64, 1 / Math.max(1 / 64, 1 - this.#lossRate));
    const window = Math.min(MAX_PAUSE_MS, this.#swapMs * writers, 2 ** attempt);
    return new Promise((resolve) => setTimeout(resolve, Math.random() * window));
  }
}
