//! Bad input, fuzzed (proptest): the core's state decoders and spec parsers take any bytes or
//! text without a panic, a hang or an out-of-range value, and what they accept is usable. The
//! Redis store and the Durable Object hand stored bytes to `PolicyState::decode` and
//! `Policy::validate_state`; every edge hands limits to the quota, duration and algorithm
//! parsers and `AnyAlgorithm::from_spec`. `FUZZ_CASES` sets the cases per property (2,000 by
//! default; docs/reliability.md records the counts).

use proptest::prelude::*;
use tollgate::policy::{Limit, Policy, PolicyState};
use tollgate::quota::parse_duration;
use tollgate::{AnyAlgorithm, Kind, LimitSpec, Nanos, Quota};

const NOW: u64 = 1_700_000_000_000_000_000;

fn cases() -> u32 {
    std::env::var("FUZZ_CASES").ok().and_then(|c| c.parse().ok()).unwrap_or(2_000)
}

/// One policy per algorithm (and one with two limits), with states written by real hits.
fn policies_and_states() -> Vec<(Policy, Vec<u8>)> {
    let kinds = Kind::ALL;
    let limit = |name: &str, kind: Kind| {
        let mut spec = LimitSpec::new(kind, 5, Nanos::from_secs(1));
        if kind == Kind::SlidingBuckets {
            spec.precision = Some(Nanos::from_millis(100));
        }
        Limit::new(name, AnyAlgorithm::from_spec(&spec).unwrap()).unwrap()
    };
    let mut out = Vec::new();
    for kind in kinds {
        out.push(Policy::new(vec![limit("a", kind)]).unwrap());
    }
    out.push(Policy::new(vec![limit("a", Kind::SlidingLog), limit("b", Kind::Gcra)]).unwrap());
    out.into_iter()
        .map(|p| {
            let mut states = [None];
            for i in 0..3 {
                p.check(&mut states, Nanos::new(NOW + i * 1_000_000), 1).unwrap();
            }
            let bytes = states[0].as_ref().unwrap().encode();
            (p, bytes)
        })
        .collect()
}

/// Decodes and validates `bytes` for `policy` as a store does; a state it accepts is decided,
/// peeked and refunded without a panic, and the decision's figures stay within the limit.
fn store_reads(policy: &Policy, bytes: &[u8]) -> Result<(), TestCaseError> {
    let Ok(state) = PolicyState::decode(bytes) else { return Ok(()) };
    if policy.validate_state(&state).is_err() {
        return Ok(());
    }
    let mut states = [Some(state)];
    let before = states.clone();
    let peeked = policy.peek(&states, Nanos::new(NOW + 5_000_000), 1).unwrap();
    let d = policy.check(&mut states, Nanos::new(NOW + 5_000_000), 1).unwrap();
    prop_assert_eq!(peeked.allowed, d.allowed);
    prop_assert!(d.decision.remaining <= d.decision.limit);
    if !d.allowed {
        prop_assert_eq!(&states, &before, "a denial changed the state");
    }
    policy.refund(&mut states, Nanos::new(NOW + 6_000_000), 1);
    Ok(())
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(cases()))]

    /// Real states cut short, with a byte changed, with bytes appended, or read by another
    /// policy: an error or a usable state, never a panic.
    #[test]
    fn damaged_and_foreign_states_are_refused_or_usable(
        which in 0usize..8, reader in 0usize..8, cut in any::<usize>(), at in any::<usize>(), x in 1u8..=255,
        extra in prop::collection::vec(any::<u8>(), 0..6),
    ) {
        let all = policies_and_states();
        let (_, bytes) = &all[which];
        let (policy, _) = &all[reader];
        store_reads(policy, &bytes[..cut % (bytes.len() + 1)])?;
        let mut flipped = bytes.clone();
        let i = at % flipped.len();
        flipped[i] ^= x;
        store_reads(policy, &flipped)?;
        let mut longer = bytes.clone();
        longer.extend_from_slice(&extra);
        store_reads(policy, &longer)?;
        store_reads(policy, bytes)?;
    }

    /// Any bytes at all (up to 256), for every policy.
    #[test]
    fn garbage_state_bytes_are_refused_or_usable(reader in 0usize..8, bytes in prop::collection::vec(any::<u8>(), 0..256)) {
        let all = policies_and_states();
        store_reads(&all[reader].0, &bytes)?;
    }

    /// Quota, duration and algorithm texts: parsed or a `ConfigError`, never a panic; a parsed
    /// quota has a limit and a window of at least 1.
    #[test]
    fn spec_texts_parse_or_are_refused(
        text in "\\PC{0,24}",
        count in "[0-9]{0,22}", unit in prop::sample::select(vec!["", "ms", "s", "m", "h", "d", "us", "ns", "x", "1s", "250ms", "0s"]),
    ) {
        for input in [text.clone(), format!("{count}/{unit}"), format!("{count}{unit}"), format!("{count}/{text}")] {
            if let Ok(q) = input.parse::<Quota>() {
                prop_assert!(q.limit() >= 1 && q.window() >= Nanos::new(1), "{input:?} parsed to {q:?}");
            }
            let _ = parse_duration(&input);
            let _ = input.parse::<Kind>();
        }
    }

    /// Any numbers as a limit's spec: a working algorithm or a `ConfigError`, never a panic.
    #[test]
    fn limit_specs_build_or_are_refused(
        kind in 0usize..7, limit in any::<u64>(), window in any::<u64>(), burst in proptest::option::of(any::<u64>()),
        precision in proptest::option::of(any::<u64>()), small in any::<bool>(),
    ) {
        let kinds = [Kind::FixedWindow, Kind::FixedWindowFirstHit, Kind::SlidingLog, Kind::SlidingWindow, Kind::SlidingBuckets, Kind::TokenBucket, Kind::Gcra];
        let (limit, window) = if small { (limit % 1000, window % 10_000_000_000) } else { (limit, window) };
        let mut spec = LimitSpec::new(kinds[kind], limit, Nanos::new(window));
        spec.burst = burst.map(|b| if small { b % 2000 } else { b });
        spec.precision = precision.map(|p| Nanos::new(if small { p % 10_000_000_000 } else { p }));
        if let Ok(a) = AnyAlgorithm::from_spec(&spec) {
            let policy = Policy::new(vec![Limit::new("l", a).unwrap()]).unwrap();
            let mut states = [None];
            let _ = policy.check(&mut states, Nanos::new(NOW), 1);
        }
    }
}
