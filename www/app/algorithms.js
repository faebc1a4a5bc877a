// What the playground says and shows of each algorithm, by the id the page uses in its URL
// (the core's kind names: `KINDS` of the generated contract, fixed-window-first-hit being
// fixed-window with align "first-hit"). The one hand-written list of the algorithms in www/:
// params.js, prose.js, readout.js, snippets.js, state-reader.js and state-overlay.js read
// their per-algorithm parts from here. Nothing here decides: the numbers are the core's.
//
// Per algorithm: `label` (the form), `options` (RateLimiter options; `burst`/`precision`: the
// form offers them), `prose` (a few plain sentences beside the chart), `rust` (the core's
// `tollgate::Kind` variant, for the Rust snippet), `fields` and `rest` (describeState's numbers
// in its order, wasm-extras/src/describe.rs), `hit(f, verdict, at, sec)` (the state that
// decided a hit in words), `counted(f)` (units counted before the hit, when not `f.count`),
// `overlay(f, draw)` (that state on the timeline, with state-overlay.js's pens).

const windowHit = (where, after) => (f, verdict, at) =>
  `${f.count} of ${f.limit} counted in ${where} [${at(f.start)}, ${at(f.end)})${after.before} before this hit, ${verdict}; ${after.then(at(f.end))}.`;

const windowOverlay = (f, p) => p.band(f.start, f.end, p.BLUE, `${f.count}/${f.limit} in this window`);

export const ALGORITHM_PAGES = {
  "fixed-window": {
    label: "Fixed window (clock)",
    options: { algorithm: "fixed-window", align: "clock" },
    prose:
      "Time is cut into windows by the clock, the same for every key, with a counter per window. A hit is admitted while the counter is below the limit; when the next window starts, the count starts over. Cheap, but a key can get twice the limit through by hitting just before and just after a boundary.",
    rust: "FixedWindow",
    fields: ["start", "end", "count", "limit"],
    hit: windowHit("this clock window", { before: "", then: (end) => `the count starts over at ${end}` }),
    overlay: windowOverlay,
  },
  "fixed-window-first-hit": {
    label: "Fixed window (first hit)",
    options: { algorithm: "fixed-window", align: "first-hit" },
    prose:
      "Each key's window opens with its first hit and lasts one window; the next hit after it closed opens a new one. The counter works as in the clock-aligned window, but each key's boundaries are its own.",
    rust: "FixedWindowFirstHit",
    fields: ["start", "end", "count", "limit"],
    hit: windowHit("this key's window", { before: " (opened by its first hit)", then: (end) => `the next hit after ${end} opens a new window` }),
    overlay: windowOverlay,
  },
  "sliding-log": {
    label: "Sliding log",
    options: { algorithm: "sliding-log" },
    prose:
      "The time of every admitted hit is kept. A new hit counts the entries of the last window; below the limit it is admitted and logged. Exact: never more than the limit in any window, at the price of one entry per admitted hit.",
    rust: "SlidingLog",
    fields: ["count", "limit"],
    rest: "entries",
    hit(f, verdict, at) {
      // A log of a large limit holds thousands of entries: its ends say enough.
      const shown = f.entries.length > 12 ? [...f.entries.slice(0, 5), null, ...f.entries.slice(-5)] : f.entries;
      const list = shown
        .map((e) => (e === null ? `... ${f.entries.length - 10} more ...` : e.cost === 1 ? at(e.at) : `${at(e.at)} x${e.cost}`))
        .join(", ");
      return `The log holds ${f.entries.length} ${f.entries.length === 1 ? "entry" : "entries"} still within one window of this hit${list ? ` (${list})` : ""}: ${f.count} of ${f.limit} counted, ${verdict}.`;
    },
    overlay(f, p) {
      for (const e of f.entries) p.vline(e.at, p.ORANGE, null);
      p.bracket(f.now - p.windowMs, f.now, `log: ${f.count}/${f.limit}`);
    },
  },
  "sliding-window": {
    label: "Sliding window counter",
    options: { algorithm: "sliding-window" },
    prose:
      "Two counters: this clock window's and the previous one's. The window that ends now still covers part of the previous window, so the previous count is weighted by that part and added to the current one. Two numbers per key, close to the exact log.",
    rust: "SlidingWindow",
    fields: ["start", "end", "current", "previous", "weightedPrevious", "count", "limit"],
    hit(f, verdict) {
      const share = ((f.end - (f.now ?? f.end)) / (f.end - f.start)) * 100;
      return `${f.current} in this window, ${f.weightedPrevious} weighted from the last (${f.previous} in the previous window, ${share.toFixed(0)}% of it still overlapping): ${f.count} of ${f.limit} counted, ${verdict}.`;
    },
    overlay(f, p) {
      const w = f.end - f.start;
      p.band(f.start - w, f.start, p.GREY, `previous ${f.previous}`);
      p.band(f.start, f.end, p.BLUE, `current ${f.current}`);
      p.bracket(f.now - w, f.now, `${f.current} + ${f.weightedPrevious} weighted = ${f.count}/${f.limit}`);
    },
  },
  "sliding-buckets": {
    label: "Sliding window, sub-buckets",
    options: { algorithm: "sliding-buckets" },
    precision: true,
    prose:
      "The window is cut into small clock-aligned buckets, each with its own count; a hit is admitted while the buckets still inside the window sum to less than the limit. The oldest bucket drops out as a whole, so smaller buckets come closer to the exact log.",
    rust: "SlidingBuckets",
    fields: ["oldestStart", "precision", "count", "limit"],
    rest: "counts",
    hit: (f, verdict, at, sec) => `Buckets of ${sec(f.precision)} from ${at(f.oldestStart)}, oldest first: [${f.counts.join(", ")}]: ${f.count} of ${f.limit} counted, ${verdict}.`,
    overlay(f, p) {
      f.counts.forEach((c, i) => p.band(f.oldestStart + i * f.precision, f.oldestStart + (i + 1) * f.precision, c > 0 ? p.BLUE : "transparent", String(c)));
      p.bracket(f.oldestStart, f.oldestStart + f.counts.length * f.precision, `${f.count}/${f.limit}`);
    },
  },
  "token-bucket": {
    label: "Token bucket",
    options: { algorithm: "token-bucket" },
    burst: true,
    prose:
      "A bucket of tokens, full at first: each hit takes one, and tokens come back at a steady pace until the bucket is full again. A key that was quiet can spend a burst at once; a busy one gets the steady rate.",
    rust: "TokenBucket",
    fields: ["tokens", "capacity", "refillAmount", "interval", "nextRefillAt"],
    hit: (f, verdict, at, sec) =>
      `${f.tokens} of ${f.capacity} tokens in the bucket (${f.refillAmount} added every ${sec(f.interval)}${f.tokens < f.capacity ? `, next at ${at(f.nextRefillAt)}` : ", full"}); the hit needs 1, ${verdict}.`,
    counted: (f) => f.capacity - f.tokens,
    overlay(f, p) {
      if (f.tokens < f.capacity) p.vline(f.nextRefillAt, p.EDGE, `+${f.refillAmount}`);
      p.text(`${f.tokens}/${f.capacity} tokens`, p.x(f.now) + 8, p.bottom);
    },
  },
  gcra: {
    label: "GCRA",
    options: { algorithm: "gcra" },
    burst: true,
    prose:
      "The token bucket stored as one time, the theoretical arrival time (TAT): when the key would be caught up at the steady rate. Each hit moves it one step later; a hit is admitted unless it comes too far ahead of that schedule (more than the tolerance the burst allows).",
    rust: "Gcra",
    fields: ["tat", "emissionInterval", "tolerance", "burst", "room"],
    hit: (f, verdict, at, sec) =>
      `Theoretical arrival time (TAT) ${at(f.tat)}; one unit every ${sec(f.emissionInterval)} (T), tolerance ${sec(f.tolerance)} (tau = T x (burst - 1)): a hit is admitted from TAT - tau = ${at(f.tat - f.tolerance)}, room for ${f.room} of ${f.burst} now, ${verdict}.`,
    counted: (f) => f.burst - f.room,
    overlay(f, p) {
      p.band(f.tat - f.tolerance, f.tat, p.BLUE, "tolerance");
      p.vline(f.tat, p.EDGE, "TAT");
      p.text(`room ${f.room}/${f.burst}`, p.x(f.now) + 8, p.bottom);
    },
  },
};

/** The page's algorithm ids, in the form's order. */
export const ALGORITHM_IDS = Object.keys(ALGORITHM_PAGES);
