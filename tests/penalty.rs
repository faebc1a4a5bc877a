//! Penalties (`blockDuration`, and its escalations `continueExceeding` and
//! `exponentialBackoff`): a policy with a block decides every trace exactly like the rule
//! written out plainly beside it (a key the limits deny is refused until the block ends,
//! without counting; a denial during a block renews or doubles it when the policy says so),
//! through the state's encoding as every store keeps it, also when the clock goes back.

use proptest::prelude::*;
use tollgate::penalty::Escalation;
use tollgate::policy::{Limit, Policy, PolicyState};
use tollgate::{AnyAlgorithm, Kind, LimitSpec, Nanos};

fn algorithm() -> impl Strategy<Value = AnyAlgorithm> {
    (0usize..7, 1u64..=5, 1u64..=40).prop_map(|(k, limit, w)| {
        let kind = Kind::ALL[k];
        let mut s = LimitSpec::new(kind, limit, Nanos::new(w.max(limit) * 2));
        if kind == Kind::SlidingBuckets {
            s.precision = Some(Nanos::new(w.max(limit)));
        }
        AnyAlgorithm::from_spec(&s).expect("valid spec")
    })
}

/// What the penalty promises, written without it: the same limits, and a block kept aside.
struct Model {
    plain: Policy,
    block: Nanos,
    escalation: Escalation,
    blocked_until: [Nanos; 2],
    strikes: [u32; 2],
    states: [Option<PolicyState>; 2],
}

impl Model {
    fn check(&mut self, keys: &[usize], now: Nanos, cost: u64) -> (bool, Nanos) {
        let until = keys.iter().map(|&k| self.blocked_until[k]).max().unwrap();
        let mut states: Vec<Option<PolicyState>> = keys.iter().map(|&k| self.states[k].clone()).collect();
        if until > now {
            // Denied during a block: each blocked key's block renewed or doubled from now, and
            // never shortened (the clock may have gone back).
            let blocked: Vec<usize> = keys.iter().copied().filter(|&k| self.blocked_until[k] > now).collect();
            for k in blocked {
                let length = match self.escalation {
                    Escalation::None => continue,
                    Escalation::Renew => self.block,
                    Escalation::Double { cap } => {
                        self.strikes[k] += 1;
                        let doubled = (0..self.strikes[k]).fold(self.block, |b, _| b.saturating_mul(2));
                        doubled.min(cap.max(self.block))
                    }
                };
                self.blocked_until[k] = self.blocked_until[k].max(now + length);
            }
            let until = keys.iter().map(|&k| self.blocked_until[k]).max().unwrap();
            let d = self.plain.peek(&states, now, cost).unwrap();
            return (false, d.decision.retry_after.max(until - now));
        }
        let d = self.plain.check(&mut states, now, cost).unwrap();
        for (i, &k) in keys.iter().enumerate() {
            self.states[k] = states[i].clone();
        }
        if d.allowed {
            return (true, Nanos::ZERO);
        }
        for l in d.limits.iter().filter(|l| !l.decision.allowed) {
            self.blocked_until[keys[l.at.key]] = now + self.block;
            self.strikes[keys[l.at.key]] = 0;
        }
        (false, d.decision.retry_after.max(self.block))
    }
}

fn escalation() -> impl Strategy<Value = Escalation> {
    prop_oneof![
        Just(Escalation::None),
        Just(Escalation::Renew),
        (1u64..=2_000).prop_map(|cap| Escalation::Double { cap: Nanos::new(cap) }),
    ]
}

/// Runs `trace` (steps of the clock, which may go back; costs; which keys) through the policy
/// of `algorithms` with a block of `block` escalating as `escalation` says, against the model.
fn decide_as_the_model(
    algorithms: Vec<AnyAlgorithm>,
    block: u64,
    escalation: Escalation,
    trace: Vec<(i64, u64, usize)>,
) -> Result<(), TestCaseError> {
    let limits: Vec<Limit> =
        algorithms.iter().enumerate().map(|(i, a)| Limit::new(&format!("l{i}"), a.clone()).unwrap()).collect();
    let plain = Policy::new(limits).unwrap();
    let block = Nanos::new(block);
    let policy = match escalation {
        Escalation::None => plain.clone().with_block_duration(block),
        Escalation::Renew => plain.clone().with_block_duration(block).with_continue_exceeding(),
        Escalation::Double { cap } => plain.clone().with_block_duration(block).with_exponential_backoff(cap),
    };
    let mut model =
        Model { plain, block, escalation, blocked_until: [Nanos::ZERO; 2], strikes: [0; 2], states: [None, None] };
    // Kept encoded between hits, as Redis and the Durable Objects keep it.
    let mut stored: [Option<Vec<u8>>; 2] = [None, None];
    let mut now = Nanos::new(1_000_000);
    let capacity = algorithms.iter().map(|a| tollgate::Algorithm::capacity(a)).min().unwrap();
    for (step, cost, which) in trace {
        now = Nanos::new(now.as_nanos().saturating_add_signed(step));
        let cost = 1 + (cost - 1) % capacity;
        let keys: &[usize] = match which {
            0 => &[0],
            1 => &[1],
            _ => &[0, 1],
        };
        let mut states: Vec<Option<PolicyState>> = keys
            .iter()
            .map(|&k| {
                stored[k].as_ref().map(|b| {
                    let s = PolicyState::decode(b).unwrap();
                    policy.validate_state(&s).unwrap();
                    s
                })
            })
            .collect();
        let before = states.clone();
        let peeked = policy.peek(&states, now, cost).unwrap();
        prop_assert_eq!(&states, &before, "a peek changes nothing");
        let d = policy.check(&mut states, now, cost).unwrap();
        let (allowed, retry_after) = model.check(keys, now, cost);
        prop_assert_eq!(d.allowed, allowed);
        prop_assert_eq!(d.decision.allowed, allowed);
        prop_assert_eq!(d.decision.retry_after, retry_after, "retryAfter is exact");
        prop_assert_eq!(peeked.allowed, allowed, "a peek answers as the check");
        if peeked.penalty {
            // A peek answers the block as it stands; the check's denial covers it as renewed.
            prop_assert!(peeked.decision.retry_after <= d.decision.retry_after);
            if escalation == Escalation::None {
                prop_assert_eq!(&peeked.decision, &d.decision, "a peek during a block gives the check's figures");
            }
        }
        prop_assert!(!peeked.penalty || d.penalty);
        if !allowed {
            prop_assert!(d.penalty, "every denial under a penalty covers a block");
            prop_assert!(d.decision.reset_at >= now + d.decision.retry_after);
            prop_assert_eq!(d.decision.remaining, 0);
        }
        for (i, &k) in keys.iter().enumerate() {
            if let Some(s) = &states[i] {
                prop_assert!(s.expires_at() >= s.blocked_until(), "a store keeps the key while it is blocked");
                prop_assert_eq!(s.blocked_until(), model.blocked_until[k]);
                if matches!(escalation, Escalation::Double { .. }) && s.blocked_until() > now {
                    prop_assert_eq!(s.strikes(), model.strikes[k]);
                } else if !matches!(escalation, Escalation::Double { .. }) {
                    prop_assert_eq!(s.strikes(), 0);
                }
                match &model.states[k] {
                    Some(m) => prop_assert_eq!(s.slots(), m.slots(), "the limits count only what they admit"),
                    None => prop_assert!(s.slots().iter().all(Option::is_none)),
                }
            }
            stored[k] = states[i].as_ref().map(PolicyState::encode);
        }
    }
    Ok(())
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(std::env::var("PROPTEST_CASES").ok().and_then(|c| c.parse().ok()).unwrap_or(400)))]

    #[test]
    fn a_penalized_policy_decides_as_the_plain_rule(
        algorithms in prop::collection::vec(algorithm(), 1..=2),
        block in 1u64..=200,
        escalation in escalation(),
        trace in prop::collection::vec((0i64..=30, 1u64..=3, 0usize..3), 1..150),
    ) {
        decide_as_the_model(algorithms, block, escalation, trace)?;
    }

    #[test]
    fn a_clock_that_goes_back_never_shortens_a_block_or_counts_a_denial(
        algorithms in prop::collection::vec(algorithm(), 1..=2),
        block in 1u64..=200,
        escalation in escalation(),
        trace in prop::collection::vec((-60i64..=30, 1u64..=3, 0usize..3), 1..150),
    ) {
        decide_as_the_model(algorithms, block, escalation, trace)?;
    }
}

#[test]
fn without_a_block_the_policy_and_its_bytes_are_unchanged() {
    let gcra = AnyAlgorithm::Gcra(tollgate::Gcra::new("2/s".parse().unwrap()).unwrap());
    let policy = Policy::single(gcra);
    assert_eq!(policy.block_duration(), Nanos::ZERO);
    let mut states = [None];
    let now = Nanos::from_secs(1_000);
    for _ in 0..3 {
        policy.check(&mut states, now, 1).unwrap();
    }
    let state = states[0].as_ref().unwrap();
    assert_eq!(state.blocked_until(), Nanos::ZERO);
    assert_eq!(state.encode()[0], tollgate::codec::FORMAT_VERSION, "no penalty: version-1 bytes");
}

#[test]
fn a_block_outlives_the_window_and_is_not_extended_by_knocking() {
    let fw = AnyAlgorithm::FixedWindow(tollgate::FixedWindow::new("1/s".parse().unwrap()));
    let policy = Policy::single(fw).with_block_duration(Nanos::from_secs(10));
    let mut states = [None];
    let t = Nanos::from_secs(1_000);
    assert!(policy.check(&mut states, t, 1).unwrap().allowed);
    let denied = policy.check(&mut states, t, 1).unwrap();
    assert!(!denied.allowed && denied.penalty);
    assert_eq!(denied.decision.retry_after, Nanos::from_secs(10));
    assert_eq!(denied.decision.reset_at, t + Nanos::from_secs(10));
    for s in 1..10 {
        let d = policy.check(&mut states, t + Nanos::from_secs(s), 1).unwrap();
        assert!(!d.allowed && d.penalty);
        assert_eq!(d.decision.retry_after, Nanos::from_secs(10 - s), "knocking does not extend the block");
        assert!(d.limits[0].decision.allowed, "the limit alone would admit it");
    }
    let after = policy.check(&mut states, t + Nanos::from_secs(10), 1).unwrap();
    assert!(after.allowed && !after.penalty);
}

#[test]
fn continue_exceeding_renews_the_block_from_each_denied_hit() {
    let fw = AnyAlgorithm::FixedWindow(tollgate::FixedWindow::new("1/s".parse().unwrap()));
    let policy = Policy::single(fw).with_block_duration(Nanos::from_secs(10)).with_continue_exceeding();
    let mut states = [None];
    let t = Nanos::from_secs(1_000);
    assert!(policy.check(&mut states, t, 1).unwrap().allowed);
    for s in 0..5 {
        let d = policy.check(&mut states, t + Nanos::from_secs(s * 5), 1).unwrap();
        assert!(!d.allowed && d.penalty);
        assert_eq!(d.decision.retry_after, Nanos::from_secs(10), "each denial renews the block");
        assert!(d.limits[0].decision.remaining <= 1, "the limit never counted the denial");
    }
    assert_eq!(states[0].as_ref().unwrap().blocked_until(), t + Nanos::from_secs(30));
    assert!(policy.check(&mut states, t + Nanos::from_secs(30), 1).unwrap().allowed);
}

#[test]
fn exponential_backoff_doubles_to_its_cap_and_starts_over_after_a_block() {
    let fw = AnyAlgorithm::FixedWindow(tollgate::FixedWindow::new("1/s".parse().unwrap()));
    let policy = Policy::single(fw).with_block_duration(Nanos::from_secs(1)).with_exponential_backoff(Nanos::from_secs(8));
    let mut states = [None];
    let t = Nanos::from_secs(1_000);
    assert!(policy.check(&mut states, t, 1).unwrap().allowed);
    for (i, want) in [1, 2, 4, 8, 8].into_iter().enumerate() {
        let d = policy.check(&mut states, t, 1).unwrap();
        assert_eq!(d.decision.retry_after, Nanos::from_secs(want));
        let st = states[0].as_ref().unwrap();
        assert_eq!(st.strikes(), i as u32);
        let back = PolicyState::decode(&st.encode()).unwrap();
        assert_eq!(&back, st, "the strikes travel in the state's bytes");
    }
    let after = t + Nanos::from_secs(8);
    assert!(policy.check(&mut states, after, 1).unwrap().allowed, "the block ended");
    let d = policy.check(&mut states, after, 1).unwrap();
    assert_eq!(d.decision.retry_after, Nanos::from_secs(1), "a new block starts at blockDuration");
    assert_eq!(states[0].as_ref().unwrap().strikes(), 0);
}
