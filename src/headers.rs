//! HTTP headers from a decision: the one writer every edge calls (the npm package through
//! its wasm module, the Worker natively). docs/headers.md shows what each mode sends.
//!
//! Modes, named as express-rate-limit names them (`standardHeaders`, `legacyHeaders`):
//!
//! - **draft-10** (the default; draft-ietf-httpapi-ratelimit-headers-10):
//!   `RateLimit-Policy: "name";q=100;w=60` and `RateLimit: "name";r=50;t=0`, Structured Field
//!   Lists with one member per limit, the limit the decision is about (the one that denied)
//!   first. `r` is what is left now; `t` the whole seconds, rounded up, until at least one more
//!   unit can be admitted ([`Decision::next_unit_after`]; 0 while `r` > 0). `q`/`w` are the
//!   limit's sustained rate with `w` in whole seconds ([`advertised_rate`]).
//! - **draft-8**: the same fields, with `t` the seconds until the limit resets (the key is back
//!   to fresh), as that draft and express-rate-limit define it.
//! - **draft-7**: `RateLimit: limit=100, remaining=50, reset=30` (a Dictionary, for the limit
//!   the decision is about) and `RateLimit-Policy: 100;w=60, 1000;w=3600`.
//! - **draft-6**: `RateLimit-Limit`, `RateLimit-Remaining`, `RateLimit-Reset` (seconds until
//!   reset) and `RateLimit-Policy` as in draft-7.
//! - **legacy**: `X-RateLimit-Limit` (the capacity of the limit the decision is about:
//!   [`Decision::limit`], a bucket's burst), `X-RateLimit-Remaining`, `X-RateLimit-Reset` (Unix
//!   seconds, rounded up, as GitHub and express-rate-limit send it).
//!
//! One meaning of limit and remaining: wherever a header pairs a limit with what remains of
//! it (legacy, draft-6's `RateLimit-Limit`, draft-7's `limit=`), the limit is the decision's
//! [`Decision::limit`], the most `remaining` can ever be, and the number every JSON answer
//! calls `limit`; so `remaining` is never above it. The sustained rate is the policy's
//! `q`/`w` (`RateLimit-Policy`), which for a bucket with a burst above its rate is lower.
//! - `Retry-After` on every denial, whatever the mode: whole seconds, rounded up, at least 1,
//!   never less than any draft-10 `t` (draft-8's `t`, a reset, can be later).
//!
//! Seconds are always rounded up, so a client that waits what the headers say is never early.
//! Numbers are written without `core::fmt`, which the npm package's wasm modules do not link.

use alloc::string::String;
use alloc::vec::Vec;

use crate::algorithm::Algorithm;
use crate::decision::Decision;
use crate::policy::{Policy, PolicyDecision};
use crate::text::push_u64;
use crate::time::Nanos;

/// Which `RateLimit` draft to send (`standardHeaders`).
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum Standard {
    /// draft-ietf-httpapi-ratelimit-headers-06.
    Draft6,
    /// draft-ietf-httpapi-ratelimit-headers-07.
    Draft7,
    /// draft-ietf-httpapi-ratelimit-headers-08.
    Draft8,
    /// draft-ietf-httpapi-ratelimit-headers-10.
    Draft10,
}

impl Standard {
    /// Every mode, in the order of the drafts.
    pub const ALL: [Standard; 4] = [Standard::Draft6, Standard::Draft7, Standard::Draft8, Standard::Draft10];

    /// The mode's name as `standardHeaders` spells it: `"draft-10"`.
    pub fn name(self) -> &'static str {
        match self {
            Standard::Draft6 => "draft-6",
            Standard::Draft7 => "draft-7",
            Standard::Draft8 => "draft-8",
            Standard::Draft10 => "draft-10",
        }
    }

    /// The mode named `name` (`"draft-6"` to `"draft-10"`).
    pub fn parse(name: &str) -> Option<Standard> {
        Standard::ALL.into_iter().find(|s| s.name() == name)
    }

    /// The mode of draft number `n` (6, 7, 8 or 10), as the npm package passes it to its wasm
    /// module; `None` for any other number (no `RateLimit` headers).
    pub fn from_draft(n: u32) -> Option<Standard> {
        match n {
            6 => Some(Standard::Draft6),
            7 => Some(Standard::Draft7),
            8 => Some(Standard::Draft8),
            10 => Some(Standard::Draft10),
            _ => None,
        }
    }
}

/// What to send besides the decision itself.
#[derive(Copy, Clone, Debug, PartialEq)]
pub struct HeaderOptions<'a> {
    /// The `RateLimit` draft, or `None` for none (`standardHeaders: false`).
    pub standard: Option<Standard>,
    /// Whether to send `X-RateLimit-*` (`legacyHeaders`).
    pub legacy: bool,
    /// The partition key (the limited key): sent hashed as `pk` in draft-8 and draft-10, never
    /// as it is ([`partition_key`]).
    pub partition_key: Option<&'a str>,
    /// For a denial, a draw in `[0, 1)` that spreads `Retry-After` and the wait in the
    /// `RateLimit` fields over up to half as long again ([`jittered`]); `None`: exact.
    pub jitter: Option<f64>,
}

impl Default for HeaderOptions<'_> {
    /// draft-10 and legacy, as the middleware sends by default; no `pk`, no jitter.
    fn default() -> Self {
        HeaderOptions { standard: Some(Standard::Draft10), legacy: true, partition_key: None, jitter: None }
    }
}

/// One limit's part in the headers.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct LimitStatus<'a> {
    /// The limit's name (a Structured Field string).
    pub name: &'a str,
    /// The limit's sustained rate as its algorithm gives it ([`Algorithm::advertised_quota`]):
    /// `quota` units per `window`; written scaled to whole seconds.
    pub quota: u64,
    /// See `quota`.
    pub window: Nanos,
    /// The limit's answer for the key the headers are about.
    pub decision: Decision,
}

/// The largest Structured Field Integer (15 digits).
const SF_MAX: u64 = 999_999_999_999_999;
const NS_PER_SEC: u64 = 1_000_000_000;

fn gcd(mut a: u64, mut b: u64) -> u64 {
    while b != 0 {
        (a, b) = (b, a % b);
    }
    a
}

/// `quota` per `window` as `(q, w)` with `w` in whole seconds and the same rate: the window
/// is scaled up by the smallest factor that makes it whole seconds (5 per 250 ms is 20 per
/// 1 s; 7 per 1.5 s is 14 per 3 s). Where that would not fit a Structured Field Integer, `w`
/// is the window rounded up to seconds and `q` the most units that rate allows in it
/// (rounded down: never a faster rate than the limit's).
#[inline(never)]
pub fn advertised_rate(quota: u64, window: Nanos) -> (u64, u64) {
    let window = window.as_nanos().max(1);
    let k = NS_PER_SEC / gcd(window, NS_PER_SEC);
    let exact = (quota as u128 * k as u128, window as u128 * k as u128 / NS_PER_SEC as u128);
    if exact.0 <= SF_MAX as u128 && exact.1 <= SF_MAX as u128 {
        return (exact.0 as u64, exact.1 as u64);
    }
    let w = window.div_ceil(NS_PER_SEC).min(SF_MAX);
    let q = (quota as u128 * w as u128 * NS_PER_SEC as u128 / window as u128).min(SF_MAX as u128);
    (q as u64, w)
}

/// Whole seconds in `d`, rounded up, within a Structured Field Integer.
fn secs(d: Nanos) -> u64 {
    d.as_secs_ceil().min(SF_MAX)
}

/// The jittered form of a wait of `secs` whole seconds for the draw `u` in `[0, 1)`: `secs`
/// plus `floor(u * (ceil(secs / 2) + 1))`, so between the wait and half as long again (rounded
/// up), never earlier. It grows with `secs` for any one `u`, so a `Retry-After` never ends up
/// below a `t` jittered by the same draw. A draw outside `[0, 1)` counts as 0.
#[inline(never)]
pub fn jittered(secs: u64, u: f64) -> u64 {
    if !(0.0..1.0).contains(&u) || secs == 0 {
        return secs;
    }
    let spread = secs.div_ceil(2) + 1;
    let extra = (u * spread as f64) as u64;
    secs.saturating_add(extra.min(spread - 1)).min(SF_MAX)
}

/// The `pk` of a partition key: FNV-1a (64 bits) of its UTF-8 bytes, big-endian, as the
/// base64 of a Structured Field Byte Sequence (12 characters). It tells partitions apart
/// without showing the key; it is not a secret (a key from a small set, such as an IPv4
/// address, can be found by trying them all).
pub fn partition_key(key: &str) -> String {
    let mut h: u64 = 0xcbf2_9ce4_8422_2325;
    for b in key.bytes() {
        h ^= b as u64;
        h = h.wrapping_mul(0x0000_0100_0000_01b3);
    }
    let mut out = String::new();
    base64(&mut out, &h.to_be_bytes());
    out
}

fn base64(out: &mut String, bytes: &[u8]) {
    const ALPHABET: &[u8; 64] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    for chunk in bytes.chunks(3) {
        let n = chunk.iter().enumerate().fold(0u32, |n, (i, &b)| n | (b as u32) << (16 - 8 * i));
        for i in 0..4 {
            out.push(if i <= chunk.len() { ALPHABET[(n >> (18 - 6 * i) & 63) as usize] as char } else { '=' });
        }
    }
}

/// A Structured Field string: quoted, with `\` and `"` escaped. Other characters are
/// replaced by `?`, since an sf-string holds printable ASCII only.
#[inline(never)]
fn sf_string(out: &mut String, s: &str) {
    out.push('"');
    for c in s.chars() {
        match c {
            '"' | '\\' => {
                out.push('\\');
                out.push(c);
            }
            ' '..='~' => out.push(c),
            _ => out.push('?'),
        }
    }
    out.push('"');
}

/// `;name=n`
#[inline(never)]
fn param(out: &mut String, name: &str, n: u64) {
    out.push(';');
    out.push_str(name);
    out.push('=');
    push_u64(out, n);
}

/// Starts the field `name` in the `name\nvalue\n...` text [`write`] makes.
#[inline(never)]
fn field(out: &mut String, name: &str) {
    if !out.is_empty() {
        out.push('\n');
    }
    out.push_str(name);
    out.push('\n');
}

/// `name: n`
#[inline(never)]
fn number_field(out: &mut String, name: &str, n: u64) {
    field(out, name);
    push_u64(out, n);
}

/// The headers for `limits` (one list member each; the first is the limit `summary` is
/// about) and the `summary` decision, at `now`, as `(name, value)` pairs in a stable order.
///
/// ```
/// use tollgate::{headers::{headers, HeaderOptions, LimitStatus}, Decision, Nanos};
/// let d = Decision { allowed: true, limit: 100, remaining: 50, reset_at: Nanos::from_secs(1030), retry_after: Nanos::ZERO, next_unit_after: Nanos::ZERO };
/// let h = headers(&[LimitStatus { name: "api", quota: 100, window: Nanos::from_secs(60), decision: d }], &d, Nanos::from_secs(1000), &HeaderOptions::default());
/// assert_eq!(h[0], ("RateLimit-Policy", "\"api\";q=100;w=60".to_string()));
/// assert_eq!(h[1], ("RateLimit", "\"api\";r=50;t=0".to_string()));
/// assert_eq!(h[4], ("X-RateLimit-Reset", "1030".to_string()));
/// ```
pub fn headers(
    limits: &[LimitStatus<'_>],
    summary: &Decision,
    now: Nanos,
    options: &HeaderOptions<'_>,
) -> Vec<(&'static str, String)> {
    let mut text = String::new();
    write(&mut text, limits, summary, now, options);
    let mut lines = text.split('\n');
    let mut out = Vec::new();
    while let (Some(name), Some(value)) = (lines.next(), lines.next()) {
        let name = NAMES.iter().find(|n| **n == name).copied().unwrap_or("");
        out.push((name, String::from(value)));
    }
    out
}

/// Whether `name` can be a header's name: an RFC 9110 token (letters, digits and
/// ``!#$%&'*+-.^_`|~``), at least one character. Edges check the header names a configuration
/// gives them (a key or a tier read from a request header) with it.
pub fn is_field_name(name: &str) -> bool {
    !name.is_empty() && name.bytes().all(|b| b.is_ascii_alphanumeric() || b"!#$%&'*+-.^_`|~".contains(&b))
}

/// Every header name [`write`] can write.
pub const NAMES: [&str; 9] = [
    "RateLimit-Policy",
    "RateLimit",
    "RateLimit-Limit",
    "RateLimit-Remaining",
    "RateLimit-Reset",
    "X-RateLimit-Limit",
    "X-RateLimit-Remaining",
    "X-RateLimit-Reset",
    "Retry-After",
];

/// [`headers`] as one text, `name\nvalue` pairs joined by `\n` (no name or value holds a
/// line break): what the wasm module hands JavaScript, without a string per header.
pub fn write(
    out: &mut String,
    limits: &[LimitStatus<'_>],
    summary: &Decision,
    now: Nanos,
    options: &HeaderOptions<'_>,
) {
    let denied = !summary.allowed;
    // A wait the client is told, in whole seconds, jittered on a denial.
    let u = if denied { options.jitter.unwrap_or(0.0) } else { 0.0 };
    let wait = |d: Nanos| jittered(secs(d), u);
    // The limit paired with `remaining`: its capacity, never below what can remain.
    let summary_limit = summary.limit;
    let pk = options.partition_key.map(partition_key);
    match options.standard {
        Some(standard @ (Standard::Draft8 | Standard::Draft10)) => {
            for state in [false, true] {
                field(out, if state { "RateLimit" } else { "RateLimit-Policy" });
                for (i, l) in limits.iter().enumerate() {
                    if i > 0 {
                        out.push_str(", ");
                    }
                    sf_string(out, l.name);
                    if state {
                        param(out, "r", l.decision.remaining);
                        let t = if standard == Standard::Draft10 {
                            l.decision.next_unit_after
                        } else {
                            l.decision.reset_after(now)
                        };
                        param(out, "t", wait(t));
                    } else {
                        let (q, w) = advertised_rate(l.quota, l.window);
                        param(out, "q", q);
                        param(out, "w", w);
                    }
                    if let Some(pk) = &pk {
                        out.push_str(";pk=:");
                        out.push_str(pk);
                        out.push(':');
                    }
                }
            }
        }
        Some(standard) => {
            field(out, "RateLimit-Policy");
            for (i, l) in limits.iter().enumerate() {
                if i > 0 {
                    out.push_str(", ");
                }
                let (q, w) = advertised_rate(l.quota, l.window);
                push_u64(out, q);
                param(out, "w", w);
            }
            let reset = wait(summary.reset_after(now));
            if standard == Standard::Draft6 {
                number_field(out, "RateLimit-Limit", summary_limit);
                number_field(out, "RateLimit-Remaining", summary.remaining);
                number_field(out, "RateLimit-Reset", reset);
            } else {
                field(out, "RateLimit");
                out.push_str("limit=");
                push_u64(out, summary_limit);
                out.push_str(", remaining=");
                push_u64(out, summary.remaining);
                out.push_str(", reset=");
                push_u64(out, reset);
            }
        }
        None => {}
    }
    if options.legacy {
        number_field(out, "X-RateLimit-Limit", summary_limit);
        number_field(out, "X-RateLimit-Remaining", summary.remaining);
        number_field(out, "X-RateLimit-Reset", secs(summary.reset_at));
    }
    if denied {
        // Never below any member's `t` (each is a wait for one unit, this one for the hit).
        let longest = limits.iter().map(|l| l.decision.next_unit_after).max().unwrap_or(Nanos::ZERO);
        number_field(out, "Retry-After", wait(summary.retry_after.max(longest)).max(1));
    }
}

/// The headers of `summary` when no limit is known (a shared store that failed before its
/// policy was fetched): there are no figures to advertise, so an admission has none and a
/// denial only its `Retry-After`, jittered like [`write`]'s. The same `name\nvalue` text.
pub fn write_unknown_policy(out: &mut String, summary: &Decision, options: &HeaderOptions<'_>) {
    if !summary.allowed {
        let u = options.jitter.unwrap_or(0.0);
        number_field(out, "Retry-After", jittered(secs(summary.retry_after), u).max(1));
    }
}

impl Policy {
    /// The headers for a decision of this policy, one member per limit. With several keys,
    /// each limit shows the key with the least left (the longest wait on ties), and the limit
    /// the decision is about shows the pair it names: no member promises more than every key
    /// has.
    pub fn headers(
        &self,
        decision: &PolicyDecision,
        now: Nanos,
        options: &HeaderOptions<'_>,
    ) -> Vec<(&'static str, String)> {
        let limits = self.statuses(decision);
        headers(&limits, &self.summary(decision), now, options)
    }

    /// [`Policy::headers`] as [`write`]'s text.
    pub fn write_headers(&self, out: &mut String, decision: &PolicyDecision, now: Nanos, options: &HeaderOptions<'_>) {
        let limits = self.statuses(decision);
        write(out, &limits, &self.summary(decision), now, options);
    }

    /// The decision the headers summarise, its `limit` the binding limit's capacity as this
    /// policy configures it (what every decision of that limit says; a record handed in from
    /// outside cannot make it another).
    fn summary(&self, decision: &PolicyDecision) -> Decision {
        let mut summary = decision.decision;
        if let Some(limit) = self.limits().get(decision.binding.limit) {
            summary.limit = limit.algorithm().limit();
        }
        summary
    }

    /// The members of the headers of `decision`, the limit it is about first.
    fn statuses(&self, decision: &PolicyDecision) -> Vec<LimitStatus<'_>> {
        let first = decision.binding.limit;
        let mut limits = Vec::with_capacity(self.limits().len());
        let order = core::iter::once(first).chain((0..self.limits().len()).filter(|&j| j != first));
        for (j, limit) in order.filter_map(|j| Some((j, self.limits().get(j)?))) {
            // The binding pair's figures are the summary's; for another limit, its pair with
            // the least left, the longest wait on ties.
            let mut pick: Option<Decision> = (j == first).then_some(decision.decision);
            for l in decision.limits.iter().filter(|l| l.at.limit == j && j != first) {
                let d = l.decision;
                let worse = pick.is_none_or(|p| (d.remaining, p.next_unit_after) < (p.remaining, d.next_unit_after));
                if worse {
                    pick = Some(d);
                }
            }
            let Some(d) = pick else { continue };
            let (quota, window) = limit.algorithm().advertised_quota();
            limits.push(LimitStatus { name: limit.name(), quota, window, decision: d });
        }
        limits
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_are_escaped_as_structured_field_strings() {
        let mut s = String::new();
        sf_string(&mut s, "a\"b\\c\u{e9}");
        assert_eq!(s, "\"a\\\"b\\\\c?\"");
    }

    #[test]
    fn a_denial_carries_retry_after_rounded_up() {
        let d = Decision {
            allowed: false,
            limit: 10,
            remaining: 0,
            reset_at: Nanos::from_millis(1_500),
            retry_after: Nanos::from_millis(1),
            next_unit_after: Nanos::from_millis(1),
        };
        let h = headers(&[], &d, Nanos::ZERO, &HeaderOptions::default());
        assert!(h.contains(&("Retry-After", "1".into())));
        assert!(h.contains(&("X-RateLimit-Reset", "2".into())));
    }

    #[test]
    fn with_no_limit_known_only_a_denial_says_when_to_come_back() {
        let mut d = Decision { allowed: true, limit: 0, remaining: 0, reset_at: Nanos::ZERO, retry_after: Nanos::ZERO, next_unit_after: Nanos::ZERO };
        let mut out = String::new();
        write_unknown_policy(&mut out, &d, &HeaderOptions::default());
        assert_eq!(out, "");
        (d.allowed, d.retry_after) = (false, Nanos::from_millis(1_001));
        write_unknown_policy(&mut out, &d, &HeaderOptions::default());
        assert_eq!(out, "Retry-After\n2");
    }

    #[test]
    fn rates_scale_to_whole_seconds_exactly() {
        assert_eq!(advertised_rate(5, Nanos::from_millis(250)), (20, 1));
        assert_eq!(advertised_rate(3, Nanos::from_millis(500)), (6, 1));
        assert_eq!(advertised_rate(7, Nanos::from_millis(1_500)), (14, 3));
        assert_eq!(advertised_rate(100, Nanos::from_secs(60)), (100, 60));
        assert_eq!(advertised_rate(1000, Nanos::from_secs(1)), (1000, 1));
        // Too fine for an exact whole-second window within 15 digits: rounded down.
        let (q, w) = advertised_rate(1_000_000_000, Nanos::new(1_000_000_001));
        assert_eq!(w, 2);
        assert!(q * 1_000_000_001 <= 1_000_000_000 * 2 * NS_PER_SEC);
    }

    #[test]
    fn jitter_is_bounded_and_never_early() {
        for secs in [1u64, 2, 3, 10, 61] {
            for i in 0..100 {
                let u = i as f64 / 100.0;
                let j = jittered(secs, u);
                assert!(j >= secs && j <= secs + secs.div_ceil(2), "{secs} {u} {j}");
            }
            assert_eq!(jittered(secs, 0.0), secs);
            assert_eq!(jittered(secs, 0.999_999), secs + secs.div_ceil(2));
        }
        assert_eq!(jittered(5, 1.5), 5);
    }

    #[test]
    fn partition_keys_are_hashed_to_twelve_base64_characters() {
        let pk = partition_key("ip:203.0.113.7");
        assert_eq!(pk.len(), 12);
        assert!(!pk.contains("203"));
        assert_ne!(pk, partition_key("ip:203.0.113.8"));
        let mut s = String::new();
        base64(&mut s, b"hello");
        assert_eq!(s, "aGVsbG8=");
    }

    #[test]
    fn integers_without_fmt() {
        for n in [0u64, 7, 10, 1_000_000, u64::MAX] {
            let mut s = String::new();
            push_u64(&mut s, n);
            assert_eq!(s, alloc::format!("{n}"));
        }
    }

    #[test]
    fn field_names_are_tokens() {
        for ok in ["x-api-key", "Tollgate-Tier", "a!#$%&'*+-.^_`|~9"] {
            assert!(is_field_name(ok), "{ok}");
        }
        for bad in ["", "a b", "x:y", "é", "a\n"] {
            assert!(!is_field_name(bad), "{bad:?}");
        }
    }

    #[test]
    fn a_draft_number_names_its_mode() {
        for s in Standard::ALL {
            assert_eq!(Standard::from_draft(s.name()["draft-".len()..].parse().unwrap()), Some(s));
        }
        assert_eq!(Standard::from_draft(0), None);
        assert_eq!(Standard::from_draft(9), None);
    }
}
