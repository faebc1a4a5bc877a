//! The options of the spec as the npm package declares them: each option's name, its
//! TypeScript type and what it does, in one row. The field lists every edge checks names against
//! ([`super::LIMIT_FIELDS`], [`super::POLICY_OPTIONS`], [`super::CONTROL_FIELDS`], [`super::QUEUE_FIELDS`],
//! [`super::STORE_FIELDS`], [`REDIS_STORE_FIELDS`]) are these rows' names, and tests/contracts.rs writes the rows into
//! `pkg-template/types/options.generated.d.ts`, so a name, a list and a type cannot drift apart.

/// One option: its name, its TypeScript type, whether it is optional, and its doc comment.
#[derive(Copy, Clone, Debug)]
pub struct Typed {
    /// The option's name, as every edge spells it.
    pub name: &'static str,
    /// Its type in TypeScript (`Duration` and the generated unions are the package's own).
    pub ts: &'static str,
    /// Whether it may be left out.
    pub optional: bool,
    /// What it does, for the doc comment.
    pub doc: &'static str,
}

const fn opt(name: &'static str, ts: &'static str, doc: &'static str) -> Typed {
    Typed { name, ts, optional: true, doc }
}

const fn req(name: &'static str, ts: &'static str, doc: &'static str) -> Typed {
    Typed { name, ts, optional: false, doc }
}

/// The names of `rows`, in order.
pub const fn names<const N: usize>(rows: &[Typed; N]) -> [&'static str; N] {
    let mut out = [""; N];
    let mut i = 0;
    while i < N {
        out[i] = rows[i].name;
        i += 1;
    }
    out
}

/// One limit (`LimitOptions`).
pub const LIMIT: [Typed; 10] = [
    Typed { name: "algorithm", ts: "Algorithm", optional: false, doc: "" },
    opt("limit", "number", "Hits per window (whole number, at least 1)."),
    opt("window", "Duration", "A duration, or calendar months (`\"month\"`, `\"3months\"`: `fixed-window` on the clock only)."),
    opt("quota", "string", "`\"<limit>/<window>\"`, replacing `limit` and `window`."),
    opt("burst", "number", "Largest burst: the token bucket's capacity, GCRA's burst (of the `Algorithm` union); defaults to `limit`."),
    opt("refillAmount", "number", "The token bucket only: tokens added per refill (default 1; at most the capacity)."),
    opt("align", "Align", "The fixed window only: windows on the clock (default) or starting at a key's first hit."),
    opt("precision", "Duration", "The sliding window of sub-buckets only: sub-bucket length, dividing the window."),
    opt("offset", "Duration", "Clock-aligned windows (the fixed window, the sliding window and its sub-buckets of `Algorithm`): boundaries shifted by this much (UTC); negative (`\"-2h\"`) for boundaries before UTC's, e.g. months at UTC+2."),
    opt("name", "string", "Shown in headers and in `blockedBy`; defaults to `\"default\"` (one limit) or `\"limit-<i>\"`."),
];

/// A concurrency limit (`ConcurrencyLimitOptions`): the fields `spec::concurrency` reads.
pub const CONCURRENCY_LIMIT: [Typed; 4] = [
    req("algorithm", "\"concurrency\"", ""),
    req("limit", "number", "The slots: how many at once (1 to 10,000)."),
    opt("leaseTtl", "Duration", "How long a lease lasts unless renewed or released (1 ms to an hour; default 30 s)."),
    LIMIT[9],
];

/// A policy's penalty beside its limits (`PenaltyOptions`).
pub const PENALTY: [Typed; 4] = [
    opt("blockDuration", "Duration", "A penalty: once the limits deny a key, it is denied for this long, counted nowhere (rate-limiter-flexible's name); 0: none."),
    opt("continueExceeding", "boolean", "Each hit denied during a block renews it to `blockDuration` from that hit (@fastify/rate-limit's name); without `blockDuration`, the longest window."),
    opt("exponentialBackoff", "boolean", "Each hit denied during a block doubles it from that hit (@fastify/rate-limit's name), to at most `maxBlockDuration`; without `blockDuration`, from the longest window."),
    opt("maxBlockDuration", "Duration", "The longest block `exponentialBackoff` doubles to (default a day); only with `exponentialBackoff: true`."),
];

/// A policy's controls beside its limits (`ControlFields`).
pub const CONTROL: [Typed; 3] = [
    opt("shadow", "boolean", "Decide and count as enforcement would, but admit every hit: decisions say `shadow: true` and `wouldAllow`."),
    opt("allowList", "readonly string[]", "Keys, IP addresses and networks (CIDR, v4 and v6) admitted without counting, checked before the limits."),
    opt("denyList", "readonly string[]", "Keys, IP addresses and networks denied without counting, checked before the limits and before `allowList`."),
];

/// Waiting in line for a concurrency slot (`QueueFields`): the fields `spec::queue` reads.
pub const QUEUE: [Typed; 2] = [
    opt("maxQueue", "number", "Waiting in line for a concurrency slot: the most waiters per key (0 to 10,000; default 1000 with `maxWait`); a full line answers the core's denial (a 429) at once (docs/concurrency.md)."),
    opt("maxWait", "Duration", "Waiting in line for a concurrency slot: the longest to wait (ms, or a duration such as `\"5s\"`; 0 to an hour), then the core's denial (a 429)."),
];

/// The header options of an HTTP answer (`HeaderFields`), as `parse_headers_at` reads them at
/// every edge; `headers()` takes `partitionKey` as the key itself.
pub const HEADERS: [Typed; 4] = [
    opt("standardHeaders", "HeaderDraft | boolean", "The RateLimit draft (default \"draft-10\"; true is express-rate-limit's \"draft-6\"); `Retry-After` is sent on every denial. Where a peer's defaults apply (`tollgate/hono`, `rateLimit` with options written for express-rate-limit), the peer's: \"draft-6\" at `tollgate/hono`, false with express-rate-limit's options, and with every header off, not even `Retry-After`."),
    opt("legacyHeaders", "boolean", "X-RateLimit-* (default true; false at `tollgate/hono` with hono-rate-limiter's options)."),
    opt("partitionKey", "boolean", "Send the key, hashed, as `pk` (draft-8, draft-10; default false)."),
    opt("jitter", "boolean | (() => number)", "Spreads Retry-After and `t` of a denial by up to half the wait: true (Math.random) or a draw in [0, 1)."),
];

/// The options every npm store reads alike (`StoreFields`).
pub const STORE: [Typed; 6] = [
    opt("failure", "StoreFailure", "What to answer when the store is unavailable (its `RedisFailureMode`, `WorkerFailureMode`): `\"open\"` (default): admit; `\"closed\"`: deny for `closedRetryMs`; `\"insurance\"`: decide in memory in this process with `insurance` of each limit (a `WorkerStore`'s limiter must give its limits); each with `degraded: \"unavailable\"`. `\"throw\"`: reject with the store's `*UnavailableError`."),
    opt("insurance", "number", "With `failure: \"insurance\"` (and required by it): the share of each limit (and burst) one process admits in memory while the store is unavailable, more than 0 and at most 1, e.g. `1 / processes` (each scaled limit is at least 1)."),
    opt("timeoutMs", "number", "Longest wait for the store per call, ms (default 500 for `RedisStore`, 1000 for `WorkerStore`), counted in time this process could run: a process held longer than half of it (a long synchronous task) starts the count again, and replies already received are read before the store is called unavailable (docs/reliability.md)."),
    opt("blockedCache", "boolean | number | string", "Answer hits on a key this process knows is blocked without asking the store, for up to this many ms after the store last confirmed its state (`true`, the default: 1000; `false` or `0`: ask every time; a duration string such as `\"500ms\"` as its ms), with `estimate: true`. The bound is how late a `reset` or `refund` made by another process is seen here."),
    opt("maxCachedKeys", "number", "Most keys whose state this process remembers (default 10,000)."),
    opt("closedRetryMs", "number", "`retryAfter` of a fail-closed decision, ms (default 1000)."),
];

/// `RedisStore`'s own options beside [`STORE`] (`RedisStoreFields`).
pub const REDIS_STORE: [Typed; 7] = [
    opt("prefix", "string", "Put before every key (default `\"tollgate:\"`)."),
    opt("namespace", "string", "The namespace of every limiter of this store: keys become `<prefix><namespace>:<key>` (`\"\"`: `<prefix><key>`). Default: each limiter's own, 12 hex digits derived from its policy, so limiters of different options never share a key (docs/redis.md, \"Namespaces\")."),
    opt("clock", "\"local\" | \"redis\"", "Time authority: the caller's clock (`\"local\"`, default) or the Redis server's `TIME`."),
    opt("clockRefreshMs", "number", "With `clock: \"redis\"`: measure the offset to Redis's clock again after this many ms (default 1000)."),
    opt("syncRate", "number | string", "`0` (default): every hit decided in Redis, exact, any algorithm. `N > 0`: window counters only, decided locally and synced every N ms (may over-admit between syncs), or every duration such as `\"100ms\"`. `< 0`: local only. At most an hour either way (3,600,000 ms), as in the Worker's wrangler.toml."),
    opt("maxAttempts", "number", "Compare-and-swap attempts per decision before it is denied as contention (default 64)."),
    opt("batchKeys", "boolean", "Send the one-key compare-and-swaps of different keys that are ready in the same tick as one script call (default true: fewer commands with many keys). Each key is still swapped on its own. Default `false` on a Redis Cluster client, where `true` is refused: the keys of one call must share a slot."),
];

/// The names of [`REDIS_STORE`].
pub const REDIS_STORE_FIELDS: [&str; 7] = names(&REDIS_STORE);


/// A decision as the npm package gives it (`Decision`): the Worker's JSON decision
/// ([`crate::answer::WORKER_FIELDS`]) but its `policy` and `limitName`, which a limiter in this
/// process knows already; tests/contracts.rs holds the two lists together.
pub const DECISION: [Typed; 13] = [
    req("allowed", "boolean", ""),
    req("limit", "number", ""),
    req("remaining", "number", ""),
    req("resetAt", "number", "Epoch ms at which the key is fresh again if nothing else arrives."),
    req("retryAfter", "number", "Ms to wait before this same hit would be admitted; 0 when allowed."),
    req("blockedBy", "string | null", "Name of the limit that denied the hit; `null` when allowed."),
    req("limits", "LimitResult[]", "Every (key, limit) pair, keys outer."),
    opt("degraded", "\"unavailable\" | \"contention\"", "Set by stores when the decision is not the store's exact one, and why: `\"unavailable\"` (the backend failed or did not answer; the store's `failure` mode decided) or `\"contention\"` (the backend answered, but other writers kept winning until the time ran out: denied, with the figures of the last state the backend answered with)."),
    opt("estimate", "boolean", "`true` when the decision was answered without the store deciding it (the Worker's or this process's blocked-key cache, a Worker sync mode): `allowed` stands, the figures may be stale. Absent otherwise."),
    opt("penalty", "boolean", "`true` when the wait includes a `blockDuration` block: `retryAfter` and `resetAt` cover it. Absent otherwise."),
    opt("shadow", "boolean", "`true` on every decision in shadow mode (then `allowed` is always `true`). Absent otherwise."),
    opt("wouldAllow", "boolean", "In shadow mode: what enforcement answered; the other figures are enforcement's."),
    opt("reason", "\"allowList\" | \"denyList\"", "Set when a list answered the hit instead of the limits (nothing counted)."),
];

/// One (key, limit) pair's own answer (`LimitResult`), the fields of the Worker's
/// [`crate::answer::WORKER_LIMIT_FIELDS`] in their order.
pub const LIMIT_RESULT: [Typed; 8] = [
    req("name", "string", ""),
    opt("key", "string", "Which key, when the hit named several."),
    req("allowed", "boolean", ""),
    req("limit", "number", ""),
    req("remaining", "number", ""),
    req("resetAt", "number", "Epoch ms."),
    req("retryAfter", "number", "Ms; 0 when allowed."),
    req("nextUnitAfter", "number", "Ms until one more unit (a hit of cost 1) fits, after this decision: 0 while `remaining` > 0 (the draft-10 `t`)."),
];
