// Every figure the guide's text states, computed from the core's decisions: the boundary attack
// against the seven algorithms, two servers without a shared store, calendar days against
// 24-hour windows, a retry storm against Retry-After and the Pacer, reserve and settle,
// concurrency against rate, and the side-by-side of the ending. Pure functions of the package's classes (the page passes the
// browser's build, the tests the Node build), so the tests compare the page's text with the
// core's answers, and nothing stated is typed.

/** The guide's settings: every widget's limit and window. */
export const LIMIT = 3;
export const WINDOW = 4000;
/** The page's clock: midnight UTC, so clock-aligned windows start at 0 s. */
export const START = Date.UTC(2026, 0, 1);

/** The seven algorithms at the guide's settings, by id, with the names the text uses. */
export const ALGORITHMS = [
  ["fixed-window", "Fixed window (on the clock)", { algorithm: "fixed-window", align: "clock", limit: LIMIT, window: WINDOW }],
  ["fixed-window-first-hit", "Fixed window (from the first hit)", { algorithm: "fixed-window", align: "first-hit", limit: LIMIT, window: WINDOW }],
  ["sliding-log", "Sliding log", { algorithm: "sliding-log", limit: LIMIT, window: WINDOW }],
  ["sliding-window", "Sliding window counter", { algorithm: "sliding-window", limit: LIMIT, window: WINDOW }],
  ["sliding-buckets", "Sub-buckets (1 s)", { algorithm: "sliding-buckets", limit: LIMIT, window: WINDOW, precision: 1000 }],
  ["token-bucket", "Token bucket", { algorithm: "token-bucket", limit: LIMIT, window: WINDOW }],
  ["gcra", "GCRA", { algorithm: "gcra", limit: LIMIT, window: WINDOW }],
];

/** The boundary attack: three hits just before the boundary at 8 s, three just after (ms). */
export const BOUNDARY = START + 8000;
export const ATTACK = [-1500, -1000, -500, 500, 1000, 1500].map((o) => BOUNDARY + o);

import { Jobs, JOB_MS } from "./jobs.js";

const s1 = (ms) => `${+(ms / 1000).toFixed(2)} s`;
const marks = (v) => v.map((a) => (a ? "✓" : "✗")).join("");

/** The most of `times` (sorted epoch ms) within any span [t, t + span]. */
export function mostWithin(times, span) {
  let best = 0;
  for (let hi = 0, lo = 0; hi < times.length; hi++) {
    while (times[hi] - times[lo] > span) lo++;
    best = Math.max(best, hi - lo + 1);
  }
  return best;
}

/**
 * The bound each algorithm's property test holds (tests/properties.rs), in words, with its
 * figure over the attack's span. `d`: the decisions' core description of a fresh key (the
 * refill interval, the emission interval) from `describe`.
 */
export function boundOf(id, options, span, d) {
  const L = options.limit;
  const W = s1(options.window);
  switch (id) {
    case "fixed-window":
      return { most: 2 * L, text: `at most ${L} per window on the clock; so up to ${2 * L} (2 × ${L}) in any ${W}` };
    case "fixed-window-first-hit":
      return { most: 2 * L, text: `at most ${L} per window from a first hit; up to ${2 * L} (2 × ${L}) in any ${W}` };
    case "sliding-log":
      return { most: L, text: `at most ${L} in any ${W}` };
    case "sliding-window":
      return { most: 2 * L, text: `at most ${L} per window on the clock, up to ${2 * L} (2 × ${L}) in any ${W}` };
    case "sliding-buckets": {
      const n = options.window / options.precision;
      return { most: 2 * L, text: `at most ${L} in any ${n} buckets in a row (${s1(options.precision)} each); up to ${2 * L} in any ${W}` };
    }
    case "token-bucket": {
      const most = d.capacity + d.refillAmount * Math.ceil(span / d.interval);
      return { most, text: `at most ${d.capacity} + ${d.refillAmount} per ${s1(d.interval)} begun: ${most} in ${s1(span)}` };
    }
    case "gcra": {
      const most = d.burst + Math.floor(span / d.emissionInterval);
      return { most, text: `at most ${d.burst} + 1 per ${s1(d.emissionInterval)} elapsed: ${most} in ${s1(span)}` };
    }
    default:
      throw new Error(id);
  }
}

/** The attack decided by each algorithm: its verdicts, how many passed, and its bound. */
export function boundaryRows(RateLimiter, describe) {
  const span = ATTACK.at(-1) - ATTACK[0];
  return ALGORITHMS.map(([id, name, options]) => {
    const rl = new RateLimiter(options);
    const verdicts = ATTACK.map((now) => rl.limit("attacker", { now }).allowed);
    const fresh = new RateLimiter(options);
    const d = describe(options, fresh, "nobody", START);
    const admitted = verdicts.filter(Boolean).length;
    return { id, name, verdicts, marks: marks(verdicts), admitted, span, bound: boundOf(id, options, span, d) };
  });
}

/** Two servers, each with its own limiter (no shared store), against one shared limiter. */
export function twoServers(RateLimiter) {
  const options = ALGORITHMS[2][2];
  const times = Array.from({ length: 12 }, (_, i) => START + i * 150);
  const a = new RateLimiter(options);
  const b = new RateLimiter(options);
  const server = times.map((now, i) => ({ at: now, on: i % 2 ? "B" : "A", allowed: (i % 2 ? b : a).limit("client", { now }).allowed }));
  const one = new RateLimiter(options);
  const store = times.map((now) => ({ at: now, allowed: one.limit("client", { now }).allowed }));
  const count = (hits) => hits.filter((h) => h.allowed).length;
  return { sent: times.length, split: count(server), shared: count(store), span: s1(times.at(-1) - times[0]), server, store };
}

const hhmm = (ms, offsetH) => new Date(ms + offsetH * 3_600_000).toISOString().slice(11, 16);

/** A hit at 23:30 in UTC+2: when a calendar day, a 24 h window on UTC's clock and one from the first hit start over. */
export function calendarDay(RateLimiter) {
  const at = Date.UTC(2026, 2, 10, 21, 30); // 23:30 at UTC+2
  const reset = (options) => new RateLimiter(options).limit("user", { now: at }).resetAt;
  const local = reset({ algorithm: "fixed-window", quota: "100/day", offset: "-2h" });
  const utc = reset({ algorithm: "fixed-window", limit: 100, window: "24h" });
  const rolling = reset({ algorithm: "fixed-window", align: "first-hit", limit: 100, window: "24h" });
  const h = (ms) => `${+((ms - at) / 3_600_000).toFixed(1)} h`;
  return {
    hit: hhmm(at, 2),
    local: `${hhmm(local, 2)} (in ${h(local)})`,
    utc: `${hhmm(utc, 2)} (in ${h(utc)})`,
    rolling: `${hhmm(rolling, 2)} the next day (in ${h(rolling)})`,
  };
}

/** The service of the retry section: GCRA at the guide's settings. */
export const SERVICE = ALGORITHMS[6][2];
const JOBS = 8;

/**
 * One client with JOBS requests to make from t = 0 against SERVICE, three ways: retrying 100 ms
 * after each refusal (a retry storm), waiting each refusal's Retry-After header, and pacing with
 * `Pacer` before sending. Returns each way's sends (`log`: { at, allowed }) and totals.
 */
export async function retries(RateLimiter, Pacer) {
  const run = async (next) => {
    const rl = new RateLimiter(SERVICE);
    const sends = [];
    let t = START;
    for (let job = 0; job < JOBS; job++) {
      for (;;) {
        t = await next(t, sends);
        const d = rl.limit("client", { now: t });
        sends.push({ at: t, allowed: d.allowed, retryAfter: Number(rl.headers(d, { standardHeaders: "draft-10", legacyHeaders: false, now: t })["Retry-After"] ?? 0) * 1000 });
        if (d.allowed) break;
      }
    }
    return sends;
  };
  const storm = await run(async (t, sends) => (sends.length && !sends.at(-1).allowed ? t + 100 : t));
  const polite = await run(async (t, sends) => (sends.length && !sends.at(-1).allowed ? t + sends.at(-1).retryAfter : t));
  let clock = START;
  const pacer = new Pacer({ rate: { limit: SERVICE.limit, window: SERVICE.window }, grain: Math.ceil(SERVICE.window / SERVICE.limit), now: () => clock, sleep: async (ms) => void (clock += ms) });
  const paced = await run(async () => {
    clock = await pacer.acquire();
    return clock;
  });
  const sum = (sends) => ({ log: sends, sends: sends.length, refused: sends.filter((s) => !s.allowed).length, done: s1(sends.at(-1).at - START) });
  return { jobs: JOBS, storm: sum(storm), polite: sum(polite), paced: sum(paced) };
}

/** Six jobs handed to a Pacer at once: when each may start (the leaky bucket as a queue). */
export async function pacerQueue(Pacer) {
  let clock = START;
  const pacer = new Pacer({ rate: { limit: LIMIT, window: WINDOW }, grain: Math.ceil(WINDOW / LIMIT), now: () => clock, sleep: async (ms) => void (clock += ms) });
  const starts = [];
  for (let i = 0; i < 6; i++) starts.push(await pacer.acquire());
  return { times: starts, starts: starts.map((t) => s1(t - START)).join(", ") };
}

/** An LLM budget of 10,000 tokens a minute: a call reserves its estimate, then settles the actual count. */
export function tokenBudget(RateLimiter) {
  const rl = new RateLimiter({ algorithm: "token-bucket", limit: 10000, window: 60000 });
  const now = START;
  const r = rl.reserve("team-a", { cost: 2000, now });
  const s = rl.settle(r.reservation, 700, { now });
  let big;
  try {
    big = rl.limit("team-a", { cost: 12000, now }).allowed ? "admitted" : "refused (429)";
  } catch (e) {
    big = `a client error (${e.code}), not a 429: it could never fit, so waiting would not help`;
  }
  const fmt = (n) => n.toLocaleString("en-US");
  return {
    reserved: fmt(2000),
    afterReserve: fmt(r.remaining),
    actual: fmt(700),
    refunded: fmt(s.refunded),
    afterSettle: fmt(s.remaining),
    big,
  };
}

/** The ending's traffic: a burst, a pause, a steady run, a burst at a boundary (ms after START). */
export const TRACE = [0, 350, 700, 1050, 2400, 3200, 4000, 4800, 5600, 6400, 7000, 7350, 7700, 8300, 8650, 9000, 10600, 11500].map((t) => START + t);

/** The ending's side-by-side: every algorithm's verdicts on TRACE. */
export function sideBySide(RateLimiter) {
  return ALGORITHMS.map(([id, name, options]) => {
    const rl = new RateLimiter(options);
    const verdicts = TRACE.map((now) => rl.limit("client", { now }).allowed);
    const passed = TRACE.filter((_, i) => verdicts[i]);
    return { id, name, verdicts, admitted: passed.length, most: mostWithin(passed, WINDOW - 1) };
  });
}

/**
 * Concurrency against rate (jobs.js): Hit ×4 from a fresh start (300 ms apart, as the widget's
 * button), then one hit just after the first job ends, asked of the sliding log at the guide's
 * settings and of the concurrency limit.
 */
export function concurrencyFacts(RateLimiter) {
  const jobs = new Jobs(RateLimiter, ALGORITHMS.find(([id]) => id === "sliding-log")[2]);
  const t = START + WINDOW + 500;
  for (let i = 0; i < 4; i++) jobs.hit(t + 300 * i);
  const after = jobs.hit(t + JOB_MS + 100);
  const four = jobs.hits.slice(0, 4);
  const word = (d) => (d.allowed ? "admitted" : "refused");
  jobs.free();
  return { rateFour: marks(four.map((h) => h.rate.allowed)), concFour: marks(four.map((h) => h.conc.allowed)), rateAfter: word(after.rate), concAfter: word(after.conc) };
}

/** Everything the text states, by the name of the element that shows it (`data-fact`). */
export async function computeFacts({ RateLimiter, Pacer, describe }) {
  const rows = boundaryRows(RateLimiter, describe);
  const by = Object.fromEntries(rows.map((r) => [r.id, r]));
  const two = twoServers(RateLimiter);
  const cal = calendarDay(RateLimiter);
  const re = await retries(RateLimiter, Pacer);
  const q = await pacerQueue(Pacer);
  const llm = tokenBudget(RateLimiter);
  const side = sideBySide(RateLimiter);
  const conc = concurrencyFacts(RateLimiter);
  const facts = {
    "attack-fixed": String(by["fixed-window"].admitted),
    "attack-log": String(by["sliding-log"].admitted),
    "attack-over": rows.filter((r) => r.admitted > LIMIT).map((r) => r.name).join(", "),
    "two-sent": String(two.sent),
    "two-span": two.span,
    "two-split": String(two.split),
    "two-shared": String(two.shared),
    "cal-hit": cal.hit,
    "cal-local": cal.local,
    "cal-utc": cal.utc,
    "cal-rolling": cal.rolling,
    "retry-jobs": String(re.jobs),
    "storm-sends": String(re.storm.sends),
    "storm-refused": String(re.storm.refused),
    "storm-done": re.storm.done,
    "polite-sends": String(re.polite.sends),
    "polite-refused": String(re.polite.refused),
    "polite-done": re.polite.done,
    "paced-sends": String(re.paced.sends),
    "paced-refused": String(re.paced.refused),
    "paced-done": re.paced.done,
    "pacer-starts": q.starts,
    "llm-reserved": llm.reserved,
    "llm-after-reserve": llm.afterReserve,
    "llm-actual": llm.actual,
    "llm-refunded": llm.refunded,
    "llm-after-settle": llm.afterSettle,
    "llm-big": llm.big,
    "conc-rate-four": conc.rateFour,
    "conc-four": conc.concFour,
    "conc-rate-after": conc.rateAfter,
    "conc-after": conc.concAfter,
  };
  for (const r of rows) {
    facts[`row-${r.id}-marks`] = r.marks;
    facts[`row-${r.id}-admitted`] = `${r.admitted} of 6`;
    facts[`row-${r.id}-bound`] = r.bound.text;
  }
  for (const r of side) facts[`side-${r.id}`] = `${r.admitted} of ${TRACE.length}; most in any ${s1(WINDOW)}: ${r.most}`;
  facts["side-count"] = String(TRACE.length);
  return { facts, rows, retries: re, side, two, queue: q };
}
