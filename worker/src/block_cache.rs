//! The isolate's cache of keys known to be blocked until a time: a hot key over its limit is
//! answered 429 without a Durable Object call.
//!
//! It is safe because every algorithm only gets more permissive as time passes without hits:
//! a hit of cost `c` denied at `t` with `retry_after` `r` is denied for any cost `>= c` until
//! `t + r`, whatever other isolates do meanwhile (they can only take more). `t` is taken when
//! the Worker sent the request (before the object decided), so the cache never blocks longer
//! than the object would, up to the clock difference between the isolate and the object.
//! A reset or refund through this isolate drops the entry; one through another isolate
//! cannot, so such a key may stay blocked here until `t + r` (documented in the README).

use std::cell::RefCell;
use std::collections::HashMap;

use tollgate::{Nanos, PolicyDecision};

/// The most keys remembered per isolate.
pub const MAX_ENTRIES: usize = 10_000;

#[derive(Clone, Debug)]
struct Blocked {
    since: Nanos,
    until: Nanos,
    min_cost: u64,
    decision: PolicyDecision,
}

thread_local! {
    static BLOCKED: RefCell<HashMap<String, Blocked>> = RefCell::new(HashMap::new());
}

/// The cached denial for `name` (a `policy/key` name) at `now` for `cost`, with its wait
/// recomputed, if the key is known to be blocked.
pub fn lookup(name: &str, cost: u64, now: Nanos) -> Option<PolicyDecision> {
    BLOCKED.with(|b| {
        let mut b = b.borrow_mut();
        let entry = b.get(name)?;
        if now >= entry.until || now < entry.since {
            b.remove(name);
            return None;
        }
        if cost < entry.min_cost {
            return None;
        }
        let mut d = entry.decision.clone();
        d.decision.retry_after = entry.until - now;
        // The waits for one more unit (the headers' `t`) have run for as long.
        let elapsed = now - entry.since;
        d.decision.next_unit_after = d.decision.next_unit_after.saturating_sub(elapsed);
        for l in &mut d.limits {
            l.decision.next_unit_after = l.decision.next_unit_after.saturating_sub(elapsed);
        }
        Some(d)
    })
}

/// Remembers a denial of `cost` for `name`, decided for a request sent at `sent_at`.
pub fn remember(name: &str, cost: u64, sent_at: Nanos, d: &PolicyDecision) {
    if d.allowed || d.decision.retry_after == Nanos::ZERO {
        return;
    }
    let until = sent_at + d.decision.retry_after;
    BLOCKED.with(|b| {
        let mut b = b.borrow_mut();
        if b.len() >= MAX_ENTRIES && !b.contains_key(name) {
            b.retain(|_, e| e.until > sent_at);
            if b.len() >= MAX_ENTRIES {
                return;
            }
        }
        b.insert(name.to_string(), Blocked { since: sent_at, until, min_cost: cost, decision: d.clone() });
    });
}

/// Forgets `name` (after a reset or refund).
pub fn forget(name: &str) {
    BLOCKED.with(|b| {
        b.borrow_mut().remove(name);
    });
}

#[cfg(test)]
mod tests {
    use super::*;
    use tollgate::policy::LimitRef;
    use tollgate::Decision;

    fn denial(retry_ms: u64) -> PolicyDecision {
        let d = Decision {
            allowed: false,
            limit: 1,
            remaining: 0,
            reset_at: Nanos::from_secs(100),
            retry_after: Nanos::from_millis(retry_ms),
            next_unit_after: Nanos::from_millis(retry_ms),
        };
        PolicyDecision { allowed: false, decision: d, binding: LimitRef::default(), limits: vec![] }
    }

    #[test]
    fn a_denial_is_served_until_its_wait_is_over_and_only_for_costs_as_large() {
        let t = Nanos::from_secs(10);
        remember("p/a", 2, t, &denial(500));
        assert_eq!(
            lookup("p/a", 2, t + Nanos::from_millis(100)).unwrap().decision.retry_after,
            Nanos::from_millis(400)
        );
        assert!(lookup("p/a", 1, t + Nanos::from_millis(100)).is_none());
        assert!(lookup("p/a", 3, t + Nanos::from_millis(499)).is_some());
        assert!(lookup("p/a", 3, t + Nanos::from_millis(500)).is_none());
        assert!(lookup("p/a", 3, t + Nanos::from_millis(100)).is_none(), "expired entries are dropped");
    }

    #[test]
    fn forget_and_a_clock_that_went_back_bypass_the_cache() {
        let t = Nanos::from_secs(10);
        remember("p/b", 1, t, &denial(500));
        assert!(lookup("p/b", 1, t - Nanos::from_millis(1)).is_none());
        remember("p/b", 1, t, &denial(500));
        forget("p/b");
        assert!(lookup("p/b", 1, t).is_none());
    }
}
