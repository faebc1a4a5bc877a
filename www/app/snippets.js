// Copy as code: the page's current limit as npm code, as a Worker policy (wrangler.toml) and
// as Rust over the core crate, each written from the same RateLimiter options the page decides
// with (params.js limiterOptions), so a snippet means the limit on screen.
// tests/www/snippets.test.mjs runs each one and checks it decides like the page.

import { limiterOptions } from "./params.js";
import { ALGORITHM_PAGES } from "./algorithms.js";

/** A duration as the options write it: the largest whole unit ("1s", "15m"), else ms. */
export function duration(ms) {
  for (const [unit, size] of [["d", 86400000], ["h", 3600000], ["m", 60000], ["s", 1000]]) {
    if (ms % size === 0) return `${ms / size}${unit}`;
  }
  return `${ms}ms`;
}

/** The options as written in the snippets: durations as strings, in the options' order. */
export function snippetOptions(algorithmId, s) {
  const o = limiterOptions(algorithmId, s);
  const out = {};
  for (const [k, v] of Object.entries(o)) out[k] = k === "window" || k === "precision" ? duration(v) : v;
  return out;
}

/** The headers options shown with the snippets (the page's headers mode). */
export function headerOptions(s) {
  return { standardHeaders: s.standardHeaders, legacyHeaders: s.legacyHeaders };
}

const js = (v) => (typeof v === "string" ? JSON.stringify(v) : String(v));

export function npmSnippet(algorithmId, s) {
  const o = Object.entries(snippetOptions(algorithmId, s)).map(([k, v]) => `${k}: ${js(v)}`);
  const h = Object.entries(headerOptions(s)).map(([k, v]) => `${k}: ${js(v)}`);
  return `import { RateLimiter } from "tollgate";

const limiter = new RateLimiter({ ${o.join(", ")} });

const decision = limiter.limit(key); // { allowed, remaining, resetAt, retryAfter, ... }
const headers = limiter.headers(decision, { ${h.join(", ")} });
`;
}

export function tomlSnippet(algorithmId, s, policy = "playground") {
  const o = Object.entries(snippetOptions(algorithmId, s)).map(([k, v]) => `${k} = ${js(v)}`);
  const h = headerOptions(s);
  return `[vars.POLICIES.${policy}]
limits = [
  { name = "default", ${o.join(", ")} },
]
standardHeaders = ${js(h.standardHeaders)}
legacyHeaders = ${js(h.legacyHeaders)}
`;
}

/** The spec lines of the Rust snippet (also the body of tests/playground_snippets.rs's cases). */
export function rustSpec(algorithmId, s) {
  const o = limiterOptions(algorithmId, s);
  const tuned = o.burst !== undefined || o.precision !== undefined;
  const lines = [`let ${tuned ? "mut " : ""}spec = LimitSpec::new(Kind::${ALGORITHM_PAGES[algorithmId].rust}, ${o.limit}, Nanos::from_millis(${o.window}));`];
  if (o.burst !== undefined) lines.push(`spec.burst = Some(${o.burst});`);
  if (o.precision !== undefined) lines.push(`spec.precision = Some(Nanos::from_millis(${o.precision}));`);
  return lines;
}

export function rustSnippet(algorithmId, s) {
  return `use tollgate::{AnyAlgorithm, KeyedLimiter, Kind, LimitSpec, Nanos};

${rustSpec(algorithmId, s).join("\n")}
let mut limiter = KeyedLimiter::new(AnyAlgorithm::from_spec(&spec)?);

let decision = limiter.check(key, Nanos::now(), 1)?; // Decision { allowed, remaining, .. }
// Headers: tollgate::headers, the writer every edge uses (docs/headers.md).
`;
}
