//! Our GCRA makes exactly governor's decisions on the same trace (governor is the reference
//! GCRA in Rust), for several quotas and bursty, irregular traffic.

use std::num::NonZeroU32;
use std::time::Duration;

use governor::clock::FakeRelativeClock;
use governor::{Quota as GQuota, RateLimiter};
use tollgate::algorithm::check_slot;
use tollgate::{Gcra, Nanos, Quota};

#[test]
fn gcra_decides_like_governor() {
    for (per_second, burst) in [(1000u32, 100u32), (10, 1), (3, 5), (1, 1), (50_000, 7)] {
        let ours = Gcra::new(Quota::per_second(per_second as u64).unwrap().with_burst(burst as u64).unwrap()).unwrap();
        let clock = FakeRelativeClock::default();
        let theirs = RateLimiter::direct_with_clock(
            GQuota::per_second(NonZeroU32::new(per_second).unwrap()).allow_burst(NonZeroU32::new(burst).unwrap()),
            clock.clone(),
        );
        let mut state = None;
        let mut now = Nanos::ZERO;
        let mut x: u64 = 12345;
        let mut agreed = 0;
        for _ in 0..200_000 {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            // Mostly tiny steps (bursts), sometimes long pauses.
            let step = if x % 50 == 0 { x % 3_000_000_000 } else { x % 2_000_000 };
            now = now + Nanos::new(step);
            clock.advance(Duration::from_nanos(step));
            let a = check_slot(&ours, &mut state, now, 1).unwrap().allowed;
            let b = theirs.check().is_ok();
            assert_eq!(a, b, "{per_second}/s burst {burst}: disagree at {now:?}");
            agreed += a as u32;
        }
        assert!(agreed > 0);
    }
}

#[test]
fn per_key_state_is_at_most_16_bytes_for_gcra_and_token_bucket() {
    assert_eq!(std::mem::size_of::<tollgate::algorithms::GcraState>(), 8);
    assert_eq!(std::mem::size_of::<tollgate::algorithms::TokenBucketState>(), 16);
}
