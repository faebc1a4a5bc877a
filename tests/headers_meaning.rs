//! Property tests of what the headers promise a client (src/headers.rs, docs/headers.md):
//! `t` is exactly the wait for one more unit, `r` never promises a hit that is then denied, a
//! client pacing at the advertised `q/w` from a fresh key is admitted every time (within the
//! bounds docs/headers.md names), and `Retry-After` is never below `t`.

use proptest::prelude::*;
use tollgate::algorithm::check_slot;
use tollgate::headers::{advertised_rate, headers, HeaderOptions, LimitStatus, Standard};
use tollgate::{Algorithm, AnyAlgorithm, Kind, LimitSpec, Nanos};

/// A valid configuration of any algorithm with small numbers (windows in nanoseconds, so a
/// trace crosses many windows).
fn spec() -> impl Strategy<Value = LimitSpec> {
    (0usize..7, 1u64..=6, 1u64..=60, 1u64..=6, any::<u64>(), any::<u64>()).prop_map(|(k, limit, w, n, r1, r2)| {
        let kind = Kind::ALL[k];
        let mut s = LimitSpec::new(kind, limit, Nanos::new(w.max(limit) * n));
        let window = s.window.as_nanos();
        match kind {
            Kind::FixedWindow | Kind::SlidingWindow if r1 % 3 == 0 => s.offset = Some(Nanos::new(r2 % window)),
            Kind::SlidingBuckets => s.precision = Some(Nanos::new(window / n)),
            Kind::TokenBucket | Kind::Gcra => {
                if r1 % 2 == 0 {
                    s.burst = Some(1 + r2 % 8);
                }
                if kind == Kind::TokenBucket && r1 % 3 == 0 {
                    let cap = s.burst.unwrap_or(limit);
                    s.refill_amount = Some(1 + (r2 >> 8) % cap);
                }
            }
            _ => {}
        }
        s
    })
}

fn algorithm() -> impl Strategy<Value = AnyAlgorithm> {
    spec().prop_map(|s| AnyAlgorithm::from_spec(&s).expect("the strategy only makes valid specs"))
}

const ORIGIN: u64 = 1_000_000;

proptest! {
    #![proptest_config(ProptestConfig { cases: 400, ..ProptestConfig::default() })]

    /// After any decision, a hit of cost 1 is admitted exactly `next_unit_after` later (and
    /// not a nanosecond earlier); `remaining` units fit right now.
    #[test]
    fn next_unit_after_is_the_exact_wait_for_one_unit(
        a in algorithm(),
        trace in prop::collection::vec((0u64..=40, 1u64..=8), 1..80),
    ) {
        let mut slot = None;
        let mut now = ORIGIN;
        for (step, draw) in trace {
            now += step;
            let cost = 1 + (draw - 1) % a.capacity();
            let d = check_slot(&a, &mut slot, Nanos::new(now), cost).unwrap();
            let t = d.next_unit_after;
            prop_assert_eq!(t == Nanos::ZERO, d.remaining > 0, "t is 0 exactly while r > 0: {:?}", d);
            let at = Nanos::new(now) + t;
            prop_assert!(a.peek(slot.as_ref(), at, 1).unwrap().allowed, "one unit after t: {:?}", d);
            if t > Nanos::ZERO {
                prop_assert!(!a.peek(slot.as_ref(), at - Nanos::new(1), 1).unwrap().allowed, "not before t: {:?}", d);
            }
            if d.remaining > 0 {
                let r = d.remaining.min(a.capacity());
                prop_assert!(a.peek(slot.as_ref(), Nanos::new(now), r).unwrap().allowed, "r units now: {:?}", d);
            }
            if !d.allowed {
                prop_assert!(d.retry_after >= t, "the hit's wait is at least one unit's: {:?}", d);
            }
        }
    }

    /// A client that starts on a fresh key and sends one unit every `w / q` (as advertised,
    /// rounded up to the nanosecond) is admitted every time, within the bounds docs/headers.md
    /// names: the sliding window counter's estimate counts a steady previous window in full
    /// (it admits a steady client at limit - 1 per window), the sliding log counts a hit for a
    /// closed window (1 ns of slack per window), GCRA rounds its interval up to the ns.
    #[test]
    fn pacing_at_the_advertised_rate_is_never_denied(a in algorithm(), hits in 1u64..200) {
        let (quota, window) = a.advertised_quota();
        let (q, w) = advertised_rate(quota, window);
        // The same rate in nanoseconds as the scaled q/w says.
        prop_assert_eq!(quota as u128 * w as u128 * 1_000_000_000, q as u128 * window.as_nanos() as u128);
        let (units, per) = match a.kind() {
            Kind::SlidingWindow if quota > 1 => (quota - 1, window.as_nanos()),
            Kind::SlidingWindow => return Ok(()),
            // A logged hit counts for the closed interval of one window: hits exactly one
            // window apart to the nanosecond overlap (docs/headers.md).
            Kind::SlidingLog => (quota, window.as_nanos() + 1),
            _ => (quota, window.as_nanos()),
        };
        // GCRA and the token bucket round their interval up where the window does not divide
        // by the limit (docs/headers.md names the bound).
        if let AnyAlgorithm::Gcra(g) = &a {
            if g.emission_interval().as_nanos() * quota != window.as_nanos() {
                return Ok(());
            }
        }
        if let AnyAlgorithm::TokenBucket(b) = &a {
            if b.interval().as_nanos() as u128 * quota as u128 != window.as_nanos() as u128 * b.refill_amount() as u128 {
                return Ok(());
            }
        }
        let mut slot = None;
        for i in 0..hits {
            let at = ORIGIN + (i as u128 * per as u128).div_ceil(units as u128) as u64;
            let d = check_slot(&a, &mut slot, Nanos::new(at), 1).unwrap();
            prop_assert!(d.allowed, "hit {} at {} of a client pacing at {}/{}ns: {:?}", i, at, units, per, d);
        }
    }

    /// On every denial, in every mode: `Retry-After` is at least 1 and at least every `t`,
    /// jittered or not, and a jittered wait is never shorter than the exact one.
    #[test]
    fn retry_after_is_never_below_t(
        a in algorithm(),
        trace in prop::collection::vec((0u64..=3_000_000_000, 1u64..=8), 1..40),
        u in 0.0f64..1.0,
    ) {
        let mut slot = None;
        let mut now = 1_700_000_000_000_000_000u64;
        for (step, draw) in trace {
            now += step;
            let cost = 1 + (draw - 1) % a.capacity();
            let d = check_slot(&a, &mut slot, Nanos::new(now), cost).unwrap();
            if d.allowed {
                continue;
            }
            let (quota, window) = a.advertised_quota();
            let limits = [LimitStatus { name: "l", quota, window, decision: d }];
            for jitter in [None, Some(u)] {
                let options = HeaderOptions { standard: Some(Standard::Draft10), legacy: false, partition_key: None, jitter };
                let h = headers(&limits, &d, Nanos::new(now), &options);
                let get = |n: &str| h.iter().find(|(k, _)| *k == n).map(|(_, v)| v.clone()).unwrap();
                let retry: u64 = get("Retry-After").parse().unwrap();
                let t: u64 = get("RateLimit").rsplit("t=").next().unwrap().parse().unwrap();
                prop_assert!(retry >= 1 && retry >= t, "Retry-After {} t {}", retry, t);
                prop_assert!(t >= d.next_unit_after.as_secs_ceil());
                prop_assert!(retry >= d.retry_after.as_secs_ceil());
            }
        }
    }
    /// One meaning of limit and remaining: wherever a header pairs a limit with what remains
    /// (legacy, draft-6, draft-7), the limit is the decision's `limit` (what every JSON answer
    /// calls `limit`, a bucket's burst) and `remaining` is never above it, whatever the burst.
    #[test]
    fn remaining_is_never_above_the_limit_beside_it(
        a in algorithm(),
        trace in prop::collection::vec((0u64..=40, 1u64..=8), 1..40),
    ) {
        let mut slot = None;
        let mut now = ORIGIN;
        for (step, draw) in trace {
            now += step;
            let cost = 1 + (draw - 1) % a.capacity();
            let d = check_slot(&a, &mut slot, Nanos::new(now), cost).unwrap();
            let (quota, window) = a.advertised_quota();
            let limits = [LimitStatus { name: "l", quota, window, decision: d }];
            for standard in [Some(Standard::Draft6), Some(Standard::Draft7), None] {
                let options = HeaderOptions { standard, legacy: true, partition_key: None, jitter: None };
                let h = headers(&limits, &d, Nanos::new(now), &options);
                let get = |n: &str| h.iter().find(|(k, _)| *k == n).map(|(_, v)| v.clone()).unwrap();
                let limit: u64 = get("X-RateLimit-Limit").parse().unwrap();
                let remaining: u64 = get("X-RateLimit-Remaining").parse().unwrap();
                prop_assert_eq!(limit, d.limit);
                prop_assert!(remaining <= limit, "remaining {} above limit {}", remaining, limit);
                match standard {
                    Some(Standard::Draft6) => {
                        prop_assert_eq!(get("RateLimit-Limit").parse::<u64>().unwrap(), d.limit);
                        prop_assert!(get("RateLimit-Remaining").parse::<u64>().unwrap() <= d.limit);
                    }
                    Some(_) => {
                        let dict = get("RateLimit");
                        let expected = format!("limit={}, remaining={}", d.limit, d.remaining);
                        prop_assert!(dict.starts_with(&expected), "{}", dict);
                    }
                    None => {}
                }
            }
        }
    }
}
