// Simulated time for the pacer's tests: nothing sleeps on the real clock.

/** Epoch ms on a whole second, so clock-aligned fixed windows start exactly at T0. */
export const T0 = 1_700_000_000_000;

/**
 * A clock whose sleeps return at once, moving time forward by what they waited. As on the
 * real clock, whatever is already runnable (work released a moment ago) runs before time moves.
 */
export function instantClock(t0 = T0) {
  let t = t0;
  return {
    now: () => t,
    sleep: async (ms, signal) => {
      await new Promise((r) => setImmediate(r));
      if (signal?.aborted) throw signal.reason;
      t += ms;
    },
  };
}

/**
 * A clock that moves only when the test calls `advance`; sleeps wake as it passes them. Pass
 * its `now` and `sleep` to a Pacer, not the whole object (`advance` is not a Pacer option).
 */
export function manualClock(t0 = T0) {
  let t = t0;
  const sleepers = new Set();
  return {
    now: () => t,
    sleep: (ms, signal) =>
      new Promise((resolve, reject) => {
        if (signal?.aborted) return reject(signal.reason);
        const s = { at: t + ms, resolve };
        sleepers.add(s);
        signal?.addEventListener("abort", () => {
          sleepers.delete(s);
          reject(signal.reason);
        }, { once: true });
      }),
    /** Moves time forward by `ms`, waking sleepers due, and lets the promises settle. */
    async advance(ms) {
      t += ms;
      for (const s of [...sleepers]) {
        if (s.at <= t) {
          sleepers.delete(s);
          s.resolve();
        }
      }
      await settle();
    },
    get sleeping() {
      return sleepers.size;
    },
  };
}

/** Lets every pending promise callback run. */
export async function settle() {
  for (let i = 0; i < 20; i++) await new Promise((r) => setImmediate(r));
}
