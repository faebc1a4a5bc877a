//! `describe` (src/describe.rs) says what decided each hit: on random configurations and
//! traces, the view a hit at `now` finds admits it exactly when the check does, and an
//! admitted hit moves the view by its cost. So the playground's readout, which words these
//! views, cannot disagree with the dots it explains.

use proptest::prelude::*;
use tollgate::describe::{describe, StateView};
use tollgate::{Algorithm, AnyAlgorithm, Kind, LimitSpec, Nanos};

fn algorithm() -> impl Strategy<Value = AnyAlgorithm> {
    (0usize..7, 1u64..=6, 1u64..=60, 1u64..=6, any::<u64>()).prop_map(|(k, limit, w, n, r)| {
        let kind = Kind::ALL[k];
        let window = if kind == Kind::SlidingBuckets { n * (1 + r % 10) } else { w.max(limit) };
        let mut s = LimitSpec::new(kind, limit, Nanos::new(window));
        match kind {
            Kind::SlidingBuckets => s.precision = Some(Nanos::new(window / n)),
            Kind::TokenBucket | Kind::Gcra if r % 2 == 0 => s.burst = Some(1 + (r >> 4) % 8),
            Kind::FixedWindow | Kind::SlidingWindow if r % 3 == 0 => s.offset = Some(Nanos::new((r >> 8) % window)),
            _ => {}
        }
        AnyAlgorithm::from_spec(&s).expect("a valid spec")
    })
}

/// Units the view says are counted (for windows and the log) or available (bucket, meter).
fn used_and_room(v: &StateView) -> (u64, u64) {
    match v {
        StateView::FixedWindow { count, limit, .. }
        | StateView::FixedWindowFirstHit { count, limit, .. }
        | StateView::SlidingLog { count, limit, .. }
        | StateView::SlidingWindow { count, limit, .. }
        | StateView::SlidingBuckets { count, limit, .. } => (*count, limit.saturating_sub(*count)),
        StateView::TokenBucket { tokens, capacity, .. } => (capacity - tokens, *tokens),
        StateView::Gcra { room, burst, .. } => (burst - room, *room),
        StateView::Concurrency { leases, limit } => (leases.len() as u64, limit - leases.len() as u64),
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(400))]
    #[test]
    fn the_view_decides_as_the_check_does(alg in algorithm(), trace in prop::collection::vec((0u64..=25, 1u64..=8), 1..100)) {
        let mut state = None;
        let mut now = Nanos::new(1_000_000);
        for (step, draw) in trace {
            now = now + Nanos::new(step);
            let cost = 1 + draw % alg.limit();
            let before = describe(&alg, state.as_ref(), now);
            let (used, room) = used_and_room(&before);
            let outcome = alg.check(state.as_ref(), now, cost).unwrap();
            prop_assert_eq!(outcome.decision.allowed, room >= cost, "view {:?}, cost {}", before, cost);
            if let Some(s) = outcome.state {
                state = Some(s);
            }
            let after = describe(&alg, state.as_ref(), now);
            let grew = if outcome.decision.allowed { cost } else { 0 };
            prop_assert_eq!(used_and_room(&after).0, used + grew, "before {:?} after {:?}", before, after);
            if let StateView::SlidingLog { entries, count, .. } = &after {
                prop_assert_eq!(entries.iter().map(|e| e.cost).sum::<u64>(), *count);
            }
            if let StateView::SlidingBuckets { counts, count, .. } = &after {
                prop_assert_eq!(counts.iter().sum::<u64>(), *count);
            }
        }
    }
}
