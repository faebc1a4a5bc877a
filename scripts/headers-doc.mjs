// Writes docs/headers.md from the real package: the headers each algorithm sends fresh, partly
// used and exhausted, in every mode, as `limiter.headers` (the core's writer) gives them.
//   node scripts/headers-doc.mjs          prints the page
//   node scripts/headers-doc.mjs --write  writes docs/headers.md (after `make pkg`)
// tests/js/headers-doc.test.mjs fails when the page is not what this prints.
import { writeFileSync } from "node:fs";
import { dirname, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { ALGORITHMS } from "../pkg-template/lib/contract/contract.generated.js";

const root = resolve(dirname(fileURLToPath(import.meta.url)), "..");
const { RateLimiter } = await import(resolve(root, "pkg/dist/lib/index.js"));

/** 20 s into a clock minute (UTC): fixed windows have 40 s left. */
const NOW = 1_700_000_000_000;
/** What an algorithm needs beside its quota to show its headers. */
const BESIDE = { "sliding-buckets": { precision: "10s" }, "token-bucket": { burst: 20 }, gcra: { burst: 5 } };
/** Each algorithm of the core's list, fixed windows also opened at the first hit. */
const SECTIONS = ALGORITHMS.flatMap((algorithm) => [
  [algorithm, { algorithm, quota: "10/m", ...BESIDE[algorithm] }],
  ...(algorithm === "fixed-window" ? [["fixed-window, first hit", { algorithm, align: "first-hit", quota: "10/m" }]] : []),
]);
const MODES = [
  ["draft-10 (default)", { legacyHeaders: false }],
  ["draft-8", { standardHeaders: "draft-8", legacyHeaders: false }],
  ["draft-7", { standardHeaders: "draft-7", legacyHeaders: false }],
  ["draft-6 (or true)", { standardHeaders: "draft-6", legacyHeaders: false }],
  ["legacyHeaders only", { standardHeaders: false }],
];

/** Fresh: the first hit; partial: the 4th, 3 s later; exhausted: the first denied hit, 5 s later. */
function states(options) {
  const l = new RateLimiter({ ...options, name: "api" });
  const fresh = l.limit("k", { now: NOW });
  l.limit("k", { now: NOW + 3_000 });
  l.limit("k", { now: NOW + 3_000 });
  const partial = l.limit("k", { now: NOW + 3_000 });
  let exhausted;
  do exhausted = l.limit("k", { now: NOW + 5_000 });
  while (exhausted.allowed);
  return [["fresh", fresh, NOW], ["partial", partial, NOW + 3_000], ["exhausted", exhausted, NOW + 5_000]].map(([s, d, now]) => [s, d, now, l]);
}

function section([name, options]) {
  const out = [`### ${name}`, "", `\`${JSON.stringify(options)}\``, ""];
  for (const [state, d, now, l] of states(options)) {
    out.push(`${state} (at +${(now - NOW) / 1000} s, ${d.allowed ? "allowed" : "denied"}):`, "", "```http");
    for (const [mode, o] of MODES) {
      out.push(`# ${mode}`);
      for (const [h, v] of Object.entries(l.headers(d, { now, ...o }))) out.push(`${h}: ${v}`);
    }
    out.push("```", "");
  }
  return out.join("\n");
}

const INTRO = `# Rate-limit headers

What tollgate sends, and what each number promises. One writer, in the core
([\`src/headers.rs\`](../src/headers.rs)), serves every edge: \`limiter.headers(decision, options)\`
and both middlewares of the npm package (through the wasm module) and the Worker's decision API
and proxy (natively). The examples below are generated from the package by
\`node scripts/headers-doc.mjs --write\`; \`tests/js/headers-doc.test.mjs\` fails when they drift.

## Modes

The option names are express-rate-limit's, at every edge (npm \`limiter.headers\` options,
\`rateLimit\`/\`rateLimitFetch\` options, a Worker policy in \`wrangler.toml\`):

| option | values | default |
|---|---|---|
| \`standardHeaders\` | \`"draft-6"\`, \`"draft-7"\`, \`"draft-8"\`, \`"draft-10"\`, \`true\` (= \`"draft-6"\`, as in express-rate-limit v8), \`false\` | \`"draft-10"\`; \`false\` in \`rateLimit\`'s express-rate-limit mode (below) |
| \`legacyHeaders\` | \`true\`, \`false\`: \`X-RateLimit-Limit\`, \`-Remaining\`, \`-Reset\` | \`true\` |
| \`partitionKey\` | npm \`limiter.headers\`: the key (a string); middlewares and Worker: \`true\`/\`false\` (the limited key) | none / \`false\` |
| \`jitter\` | npm: \`true\` (\`Math.random\`) or a function returning a number in [0, 1); Worker: \`true\`/\`false\` | \`false\` |

**express-rate-limit mode.** \`rateLimit\` options written for express-rate-limit (no \`algorithm\`,
\`quota\`, \`limits\` or \`limiter\`) get express-rate-limit v8's header behaviour, so that an app
moving over sends what it sent: \`standardHeaders\` defaults to \`false\` (only the legacy headers);
an unsupported \`standardHeaders\` value is reported through \`logger\`
(\`ERR_ERL_HEADERS_UNSUPPORTED_DRAFT_VERSION\`) and sends no standard headers instead of throwing;
express-rate-limit's boolean \`headers\` option (from before its v6) is the default of
\`legacyHeaders\`; and with both options \`false\` not even \`Retry-After\` is sent. With tollgate's
own limit options the defaults are the table's, a bad value throws, and \`Retry-After\` goes with
every denial.

Elsewhere a \`headers\` option is refused (code \`renamed\`) with what to write instead: \`"both"\` is
the default, \`"draft-10"\` is \`{ legacyHeaders: false }\`, \`"legacy"\` is \`{ standardHeaders: false }\`.

- **draft-10** ([draft-ietf-httpapi-ratelimit-headers-10](https://datatracker.ietf.org/doc/draft-ietf-httpapi-ratelimit-headers/10/)):
  \`RateLimit-Policy\` and \`RateLimit\` are Structured Field Lists (RFC 9651) with one member per
  limit, named by a String; the limit the decision is about (the one that denied, else the one
  with the least left) comes first. Policy parameters \`q\` and \`w\`, state parameters \`r\` and
  \`t\`, and \`pk\` on both when a partition key is given.
- **draft-8**: the same fields; \`t\` is that draft's reset, the seconds until the limit is back to
  fresh (as express-rate-limit's draft-8 sends it).
- **draft-7**: \`RateLimit: limit=10, remaining=9, reset=40\` (a Dictionary, for the limit the decision
  is about) and \`RateLimit-Policy: 10;w=60\` (a List, one Integer per limit, with \`w\`).
- **draft-6**: \`RateLimit-Limit\`, \`RateLimit-Remaining\`, \`RateLimit-Reset\` (Integers, the limit
  the decision is about) and \`RateLimit-Policy\` as in draft-7.
- **legacy**: \`X-RateLimit-Limit\` (the limit the decision is about: its capacity, below), \`X-RateLimit-Remaining\`,
  \`X-RateLimit-Reset\` (Unix seconds, rounded up, as GitHub and express-rate-limit send it).
  express-rate-limit also sets \`Date\` with it; tollgate leaves \`Date\` to the server.
- \`Retry-After\` on **every denial**, whatever the mode (also with both options false, except in
  \`rateLimit\`'s express-rate-limit mode): whole
  seconds, rounded up, at least 1, and never less than any draft-10 \`t\` (draft-8's \`t\` is a reset and can be later).

## What the numbers mean

- \`r\`: units that fit right now. A hit of cost up to \`r\` is admitted now (with several limits,
  up to the smallest \`r\`).
- \`t\` (draft-10): whole seconds, rounded up, until at least one more unit can be admitted: 0 while
  \`r\` > 0. It comes from the state (\`Decision::next_unit_after\`, exact to the nanosecond and
  property-tested for every algorithm), not from the window's end: a sliding window of 100 per
  minute that is exhausted says when a unit returns, not when the key is fresh. Waiting \`t\`
  seconds always admits a hit of cost 1. \`Retry-After\` is the wait for the denied hit itself
  (its cost), so it can be longer.
- \`q\`/\`w\`: the limit's **sustained rate**, \`w\` in whole seconds. A window that is not a whole
  number of seconds is scaled up by the smallest factor that makes it one, so the rate is exact:
  5 per 250 ms is \`q=20;w=1\`, 7 per 1.5 s is \`q=14;w=3\`. (Only where that would not fit a
  Structured Field Integer, \`w\` is the window rounded up and \`q\` rounded down: never a faster
  rate than the limit's.)
  - GCRA: its rate as configured (\`limit\` per \`window\`), not its burst: 1000/s with a burst of
    100 is \`q=1000;w=1\`. The burst shows in \`r\` (and \`X-RateLimit-Remaining\`) of a fresh key.
  - Token bucket: the refill rate as configured (\`limit\` per \`window\`), not the capacity.
  - The windows: \`limit\` per window.
- **One meaning of limit and remaining.** Wherever a header pairs a limit with what remains of
  it (\`X-RateLimit-Limit\` beside \`X-RateLimit-Remaining\`, draft-6's \`RateLimit-Limit\` beside
  \`RateLimit-Remaining\`, draft-7's \`limit=\` beside \`remaining=\`), the limit is the decision's
  \`limit\`: the most units the key can hold at once (a token bucket's or GCRA's burst, a
  window's limit), the number the decision object, \`req.rateLimit\`, the Fastify plugin's
  headers and the Worker's JSON call \`limit\`. So \`remaining\` is never above the \`limit\` beside
  it, and a fresh key shows \`remaining = limit - cost\`: a token bucket of 100/s with a burst of
  500 sends \`X-RateLimit-Limit: 500\`, \`X-RateLimit-Remaining: 499\`, and \`RateLimit-Policy:
  "default";q=100;w=1\` (the rate). Those drafts define that limit as the quota the client has
  in the current window, which for a bucket is its capacity; the sustained rate is what
  \`RateLimit-Policy\` (\`q\`/\`w\`) states. Without a burst (and for every window algorithm) the
  capacity is the limit, and a window that is not a whole number of seconds keeps its own
  limit there (3 per 500 ms: \`X-RateLimit-Limit: 3\`, \`RateLimit-Policy: 6;w=1\`). Draft-8 and
  draft-10 carry no limit beside \`r\`: their \`q\` stays the rate.
- **A client pacing evenly at \`q/w\` from a fresh key is admitted every time**
  ([\`tests/headers_meaning.rs\`](../tests/headers_meaning.rs), [\`tests/js/headers.test.mjs\`](../tests/js/headers.test.mjs)),
  except where named here:
  - sliding window counter: its estimate weighs a steady previous window in full, so a client
    exactly at \`limit\` per window is denied about once a window; at \`limit - 1\` per window it is
    never denied. \`q\` stays the configured limit, which is what a burst can take.
  - sliding log: a hit counts for the closed interval of one window, so hits exactly one window
    apart (to the nanosecond) overlap; any slack (1 ns in Rust, 1 ms with a millisecond timer)
    avoids it.
  - GCRA and token bucket whose window does not divide by the limit in nanoseconds (3 per
    second): the emission or refill interval is rounded up, by under 1 ns per unit, and \`q/w\`
    states the configured rate; a client exact to the nanosecond can be early by that much
    (with GCRA's burst of \`b\`, not before \`(b - 1) x T / (T - window / limit)\` units).
- \`pk\`: FNV-1a (64 bits) of the key's UTF-8 bytes, as an 8-byte Byte Sequence (\`:base64:\`). It
  tells partitions apart without showing the key. It is not a secret: a key from a small set
  (an IPv4 address) can be found by trying them all, so it is off unless asked for.
- **Jitter** (off by default): on a denial, \`Retry-After\` and every \`t\` (or draft-6/7/8 reset) of
  \`w\` seconds become \`w + floor(u x (ceil(w / 2) + 1))\` for one draw \`u\` in [0, 1) per response:
  never earlier than the true wait, at most half as long again (rounded up), and \`Retry-After\`
  stays at least every \`t\`. Allowed answers and \`X-RateLimit-Reset\` (an instant) are never
  jittered. The draw is injectable (npm: \`jitter: () => u\`; Rust: \`HeaderOptions::jitter\`), so
  tests are deterministic. The Worker draws with \`Math.random\`.

## Several limits, several keys

Each limit is its own list member, the one the decision is about first (draft-6/7 and legacy
show only that one). When a hit is limited under several keys at once (\`limit(["ip:…", "user:…"])\`),
each limit shows the key with the least left (the longest \`t\` on ties), so no member promises
more than every key has.

## Examples: 10 per minute, key "k", at ${new Date(NOW).toISOString()}

Each algorithm fresh (the first hit), partial (the 4th hit, 3 s later) and exhausted (the first
denied hit, 5 s after the first).
`;

export function render() {
  return [INTRO, ...SECTIONS.map(section)].join("\n");
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const page = render();
  if (process.argv.includes("--write")) writeFileSync(resolve(root, "docs/headers.md"), page);
  else process.stdout.write(page);
}
