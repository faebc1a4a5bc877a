// The page's state: what the form shows and what the URL carries, so a view can be shared.
// Only shapes are checked here (numbers, known names); whether a limit makes sense is the
// core's call (the RateLimiter constructor throws a RangeError/TypeError naming the field).
import { ALGORITHM_PAGES } from "./algorithms.js";
import { calendarQuota, isOffset } from "./calendar.js";

/** The algorithms the page offers, by the id used in the URL, as RateLimiter options (algorithms.js). */
export const ALGORITHMS = Object.entries(ALGORITHM_PAGES).map(([id, a]) => ({
  id,
  label: a.label,
  options: a.options,
  ...(a.precision ? { precision: true } : {}),
  ...(a.burst ? { burst: true } : {}),
}));

export const TRAFFIC = ["steady", "bursty", "boundary", "chat"];
export const HIT_COUNTS = [200, 1000, 10000, 100000];
export const SPEEDS = [0.25, 1, 4, 16, 100, 1000];
export const SPANS = [0, 5, 10, 50];
/** `standardHeaders` values the page offers (false: no RateLimit headers). */
export const HEADER_MODES = ["draft-10", "draft-8", "draft-7", "draft-6", false];

export const DEFAULTS = Object.freeze({
  algorithm: ALGORITHMS[0].id,
  limit: 5,
  window: 1000,
  burst: null, // none: the limit
  precision: null, // none: a tenth of the window
  traffic: "steady",
  hits: 200,
  seed: 1,
  speed: 1,
  view: "single",
  span: 5, // windows shown, ending at the clock; 0: the whole trace
  live: false,
  policy: "",
  // The headers shown per hit and in the code snippets: the package's defaults.
  standardHeaders: "draft-10",
  legacyHeaders: true,
  // The calendar window panel (app/calendar.js): a fixed window of a day, week or month.
  quota: "100/month",
  offset: "",
});

const wholeIn = (v, lo, hi) => {
  if (v === null || v === "") return undefined;
  const n = Number(v);
  return Number.isInteger(n) && n >= lo && n <= hi ? n : undefined;
};

/** Page state from URL search parameters; anything missing or malformed takes its default. */
export function fromSearch(search) {
  const q = new URLSearchParams(search);
  const s = { ...DEFAULTS };
  if (ALGORITHMS.some((a) => a.id === q.get("algorithm"))) s.algorithm = q.get("algorithm");
  s.limit = wholeIn(q.get("limit"), 1, 100000) ?? s.limit;
  s.window = wholeIn(q.get("window"), 10, 86400000) ?? s.window;
  s.burst = wholeIn(q.get("burst"), 1, 100000) ?? null;
  s.precision = wholeIn(q.get("precision"), 1, 86400000) ?? null;
  if (TRAFFIC.includes(q.get("traffic"))) s.traffic = q.get("traffic");
  const hits = wholeIn(q.get("hits"), 1, 100000);
  if (HIT_COUNTS.includes(hits)) s.hits = hits;
  s.seed = wholeIn(q.get("seed"), 0, 4294967295) ?? s.seed;
  const speed = Number(q.get("speed"));
  if (SPEEDS.includes(speed)) s.speed = speed;
  if (q.get("view") === "compare") s.view = "compare";
  if (q.has("span") && SPANS.includes(Number(q.get("span")))) s.span = Number(q.get("span"));
  s.live = q.get("live") === "1";
  s.policy = q.get("policy") ?? "";
  const mode = q.get("standardHeaders");
  if (mode === "0" || mode === "false") s.standardHeaders = false;
  else if (HEADER_MODES.includes(mode)) s.standardHeaders = mode;
  if (q.get("legacyHeaders") === "0") s.legacyHeaders = false;
  if (calendarQuota(q.get("quota"))) s.quota = q.get("quota");
  if (isOffset(q.get("offset"))) s.offset = q.get("offset");
  return s;
}

/** The URL search string for a state: only what differs from the defaults, so links stay short. */
export function toSearch(s) {
  const q = new URLSearchParams();
  for (const [k, d] of Object.entries(DEFAULTS)) {
    const v = s[k];
    if (v === d || v === null || v === undefined) continue;
    q.set(k, typeof v === "boolean" ? (v ? "1" : "0") : String(v));
  }
  const str = q.toString();
  return str ? `?${str}` : "";
}

/** RateLimiter options for one algorithm under the state's limit, window, burst and precision. */
export function limiterOptions(algorithmId, s) {
  const a = ALGORITHMS.find((x) => x.id === algorithmId);
  const o = { ...a.options, limit: s.limit, window: s.window };
  if (a.burst && s.burst !== null) o.burst = s.burst;
  if (a.precision) o.precision = s.precision ?? defaultPrecision(s.window);
  return o;
}

/** A tenth of the window, or the next whole divisor above it (the core wants a divisor). */
export function defaultPrecision(windowMs) {
  for (let d = Math.max(1, Math.ceil(windowMs / 10)); d < windowMs; d++) if (windowMs % d === 0) return d;
  return windowMs;
}
