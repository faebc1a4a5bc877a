// The gateway's rate-limit headers: the RateLimit draft's, as the limiters write them (one list
// member per limit), and OpenAI's `x-ratelimit-*`, read from the same two decisions.

/** A duration as OpenAI writes it in `x-ratelimit-reset-*`: "20ms", "1.5s", "6m0s", "1h2m3s". */
export function openaiDuration(ms) {
  ms = Math.max(0, Math.ceil(ms));
  if (ms < 1000) return `${ms}ms`;
  if (ms < 60_000) return `${Number((ms / 1000).toFixed(3))}s`;
  const h = Math.floor(ms / 3_600_000);
  const m = Math.floor((ms % 3_600_000) / 60_000);
  const s = Math.round((ms % 60_000) / 1000);
  return `${h > 0 ? `${h}h` : ""}${m}m${s}s`;
}

/** The draft headers whose values are lists: the two limiters' members go in one header. */
const LISTS = new Set(["ratelimit", "ratelimit-policy"]);

/**
 * `rpm` once its hit was given back (`requests.refund` of one unit, as a call the tokens limits
 * denied is): each limit's `remaining` one more, never beyond its limit, as the refund left it.
 */
function givenBack(rpm) {
  const back = (f) => ({ ...f, remaining: Math.min(f.limit, f.remaining + 1) });
  return { ...back(rpm), limits: rpm.limits?.map(back) };
}

/**
 * The headers of an answer decided by `requests` (`rpm`, a decision of the requests limiter)
 * and `tokens` (`tpm`, the tokens limiter's reservation or settlement); either may be absent
 * when the request did not get that far. `requestGivenBack`: the call's request hit was
 * refunded after `rpm` (the tokens limits denied it), so the requests figures include it back.
 */
export function rateLimitHeaders({ requests, rpm, tokens, tpm, now, requestGivenBack = false }) {
  if (rpm && requestGivenBack) rpm = givenBack(rpm);
  const out = new Map();
  const draft = (limiter, decision) => {
    for (const [name, value] of Object.entries(limiter.headers(decision, { now, standardHeaders: "draft-10", legacyHeaders: false }))) {
      const lower = name.toLowerCase();
      if (LISTS.has(lower) && out.has(lower)) out.set(lower, `${out.get(lower)}, ${value}`);
      else if (lower === "retry-after" && out.has(lower)) out.set(lower, String(Math.max(Number(out.get(lower)), Number(value))));
      else out.set(lower, value);
    }
  };
  // OpenAI's headers are the per-minute limit's (the limit named as the kind): the monthly
  // budget is a member of the draft's headers only. The Worker, through WorkerStore, answers
  // the binding limit's figures only: when that is another limit (the in-flight one, which
  // has fewer left), OpenAI's headers of the kind are left out rather than given its figures.
  const openai = (kind, decision) => {
    const figures = decision.limits?.find((l) => l.name === kind) ?? (decision.limits?.length ? undefined : decision);
    if (figures === undefined) return;
    out.set(`x-ratelimit-limit-${kind}`, String(figures.limit));
    out.set(`x-ratelimit-remaining-${kind}`, String(Math.max(0, figures.remaining)));
    out.set(`x-ratelimit-reset-${kind}`, openaiDuration(figures.resetAt - now));
  };
  if (rpm) {
    draft(requests, rpm);
    openai("requests", rpm);
  }
  if (tpm) {
    draft(tokens, tpm);
    openai("tokens", tpm);
  }
  return out;
}
