// Words for the state that decided a hit: the fields `describeState` gave (state-reader.js)
// and the hit's decision, as one sentence per algorithm. Arithmetic here is only for wording
// (a percentage, a time relative to the trace's start); the numbers are the core's.

const sec = (ms) => (Math.abs(ms) >= 1000 ? `${(ms / 1000).toFixed(3)} s` : `${+ms.toFixed(3)} ms`);

/**
 * @param f fields of the state the hit found (state-reader.js fieldsOf)
 * @param d the hit's decision ({ allowed, ... })
 * @param start epoch ms of simulated time 0 (times are shown from it)
 */
export function describeHit(f, d, start) {
  const at = (t) => sec(t - start);
  const verdict = d.allowed ? "so this hit fit and was admitted" : "so this hit did not fit and was denied";
  switch (f.kind) {
    case "fixed-window":
      return `${f.count} of ${f.limit} counted in this clock window [${at(f.start)}, ${at(f.end)}) before this hit, ${verdict}; the count starts over at ${at(f.end)}.`;
    case "fixed-window-first-hit":
      return `${f.count} of ${f.limit} counted in this key's window [${at(f.start)}, ${at(f.end)}) (opened by its first hit) before this hit, ${verdict}; the next hit after ${at(f.end)} opens a new window.`;
    case "sliding-log": {
      // A log of a large limit holds thousands of entries: its ends say enough.
      const shown = f.entries.length > 12 ? [...f.entries.slice(0, 5), null, ...f.entries.slice(-5)] : f.entries;
      const list = shown
        .map((e) => (e === null ? `... ${f.entries.length - 10} more ...` : e.cost === 1 ? at(e.at) : `${at(e.at)} x${e.cost}`))
        .join(", ");
      return `The log holds ${f.entries.length} ${f.entries.length === 1 ? "entry" : "entries"} still within one window of this hit${list ? ` (${list})` : ""}: ${f.count} of ${f.limit} counted, ${verdict}.`;
    }
    case "sliding-window": {
      const share = ((f.end - (f.now ?? f.end)) / (f.end - f.start)) * 100;
      return `${f.current} in this window, ${f.weightedPrevious} weighted from the last (${f.previous} in the previous window, ${share.toFixed(0)}% of it still overlapping): ${f.count} of ${f.limit} counted, ${verdict}.`;
    }
    case "sliding-buckets":
      return `Buckets of ${sec(f.precision)} from ${at(f.oldestStart)}, oldest first: [${f.counts.join(", ")}]: ${f.count} of ${f.limit} counted, ${verdict}.`;
    case "token-bucket":
      return `${f.tokens} of ${f.capacity} tokens in the bucket (${f.refillAmount} added every ${sec(f.interval)}${f.tokens < f.capacity ? `, next at ${at(f.nextRefillAt)}` : ", full"}); the hit needs 1, ${verdict}.`;
    case "gcra":
      return `Theoretical arrival time (TAT) ${at(f.tat)}; one unit every ${sec(f.emissionInterval)} (T), tolerance ${sec(f.tolerance)} (tau = T x (burst - 1)): a hit is admitted from TAT - tau = ${at(f.tat - f.tolerance)}, room for ${f.room} of ${f.burst} now, ${verdict}.`;
    default:
      return "";
  }
}

/** How many units the state counted before the hit (windows, log) or had left (bucket, meter). */
export function countedOf(f) {
  if (f.kind === "token-bucket") return f.capacity - f.tokens;
  if (f.kind === "gcra") return f.burst - f.room;
  return f.count;
}
