//! The numbers that cross the wasm boundary in a `Float64Array`, laid out here once: the wasm
//! modules write and read them in this order, and the npm package reads and writes them
//! through `pkg-template/lib/contract.generated.js`, generated from these lists
//! (`tests/contracts.rs`).

/// A decision's summary, the first numbers of the decision buffer (wasm-common's `out.rs`
/// writes it, `lib/decision.js` reads it): `allowed` is 1 admitted, 0 denied, and
/// [`DENIED_BY_PENALTY`] denied by a penalty's block; `bindingKey` and `bindingLimit` index the
/// pair the figures are about; `pairs` is how many pair records follow.
pub const DECISION_SUMMARY: [&str; 8] =
    ["allowed", "limit", "remaining", "resetAt", "retryAfter", "bindingKey", "bindingLimit", "pairs"];

/// One (key, limit) pair's record after the summary: the indices of its key and limit, then
/// its own decision (`nextUnitAfter`: ms until one more unit fits, the headers' `t`).
pub const DECISION_PAIR: [&str; 8] =
    ["key", "limit", "allowed", "limit", "remaining", "resetAt", "retryAfter", "nextUnitAfter"];

/// The summary's `allowed` of a hit denied by a penalty's block.
pub const DENIED_BY_PENALTY: f64 = 2.0;

/// The record `Policy.headers` reads (`lib/header-record.js` lays it out): the decision's
/// time, its summary as a pair's numbers, the binding pair and the count of pairs; then
/// [`DECISION_PAIR`] records.
pub const HEADER_RECORD: [&str; 10] = [
    "now",
    "allowed",
    "limit",
    "remaining",
    "resetAt",
    "retryAfter",
    "nextUnitAfter",
    "bindingKey",
    "bindingLimit",
    "pairs",
];

/// One counter diff a synced limiter pushes (`takeDiffs`): the key's index into its keys, the
/// limit, the window's start in nanoseconds as two 32-bit halves, the count, and the epoch ms
/// after which the window no longer matters.
pub const SYNC_DIFF: [&str; 6] = ["key", "limit", "startHigh", "startLow", "delta", "expiresAt"];
