//! The isolate's blocked-key cache: a hot key over its limit is denied without a Durable
//! Object call. The cache is the core's [`BlockedCache`] (the npm Redis store uses the same):
//! it keeps the state the object decided a denial over, and a later hit is decided by the
//! policy's `peek` over that state at the hit's own time and cost, so its figures are the
//! object's whenever no other isolate changed the key meanwhile.
//!
//! An entry is trusted for [`TRUST`] after the object confirmed it, so a reset or refund
//! through another isolate, or hits other isolates added, are seen within that time. The
//! entry's time is this isolate's clock when the request was sent (before the object
//! decided), so the cache never trusts an entry for longer than the bound. Answers from it
//! are marked as estimates (`"estimate": true`, header `Tollgate-Cache: hit`).

use std::cell::RefCell;

use tollgate::blocked::BlockedCache;
use tollgate::{Nanos, PolicyDecision, PolicyState};

use crate::config::settings::PolicyConfig;

/// The most keys remembered per isolate.
pub const MAX_ENTRIES: usize = 10_000;

/// How long a denial's state is trusted after the object confirmed it (the npm Redis store's
/// default `blockedCache` bound too).
pub const TRUST: Nanos = Nanos::from_millis(1000);

thread_local! {
    static BLOCKED: RefCell<BlockedCache<Option<PolicyState>>> = RefCell::new(BlockedCache::new(MAX_ENTRIES, TRUST));
}

/// The denial of a hit of `cost` at `now` on `name` (a `policy/key` name), if the cached state
/// denies it; `None`: ask the object (not cached, trusted no longer, admitted, or a cost the
/// object should refuse itself).
pub fn lookup(pc: &PolicyConfig, name: &str, cost: u64, now: Nanos) -> Option<PolicyDecision> {
    BLOCKED.with(|b| b.borrow().denial(&pc.policy, name, now, cost).ok().flatten())
}

/// After the object's answer to a check sent at `sent_at`: remembers the state of a denial
/// (`state`: the bytes the object sent), forgets the key otherwise (an admitted hit changed
/// the state; a denial without state is not cacheable).
pub fn after_check(pc: &PolicyConfig, name: &str, sent_at: Nanos, allowed: bool, state: Option<&[u8]>) {
    let decoded = state
        .filter(|_| !allowed)
        .and_then(|bytes| PolicyState::decode(bytes).ok())
        .filter(|s| pc.policy.validate_state(s).is_ok());
    BLOCKED.with(|b| {
        let mut b = b.borrow_mut();
        match decoded {
            Some(s) => b.remember(name, Some(s), sent_at),
            None => b.forget(name),
        }
    });
}

/// Forgets `name` (after a reset or refund through this isolate).
pub fn forget(name: &str) {
    BLOCKED.with(|b| b.borrow_mut().forget(name));
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::settings::parse_policy;

    fn gcra() -> PolicyConfig {
        let v = serde_json::json!({ "limits": [{ "name": "s", "algorithm": "gcra", "limit": 100, "window": "1s", "burst": 20 }] });
        parse_policy("p", &v).unwrap()
    }

    #[test]
    fn a_heavier_hit_is_denied_with_its_own_wait_and_an_admitted_one_forgets_the_key() {
        let pc = gcra();
        let t = Nanos::from_secs(10);
        let mut states = [None];
        pc.policy.check(&mut states, t, 20).unwrap();
        let bytes = states[0].as_ref().unwrap().encode();
        after_check(&pc, "p/a", t, false, Some(&bytes));
        let heavy = lookup(&pc, "p/a", 4, t).unwrap();
        assert_eq!(heavy, pc.policy.peek(&states, t, 4).unwrap());
        assert_eq!(heavy.decision.retry_after, Nanos::from_millis(40));
        assert!(lookup(&pc, "p/a", 1, t + Nanos::from_millis(10)).is_none(), "admitted: ask the object");
        assert!(lookup(&pc, "p/a", 1, t + TRUST + Nanos::new(1)).is_none(), "trusted no longer");
        after_check(&pc, "p/a", t, true, None);
        assert!(lookup(&pc, "p/a", 4, t).is_none());
    }

    #[test]
    fn bytes_that_are_not_the_policy_s_state_are_not_cached() {
        let pc = gcra();
        let t = Nanos::from_secs(10);
        after_check(&pc, "p/b", t, false, Some(&[1, 2, 3]));
        assert!(lookup(&pc, "p/b", 1, t).is_none());
        let mut states = [None];
        pc.policy.check(&mut states, t, 20).unwrap();
        after_check(&pc, "p/b", t, false, Some(&states[0].as_ref().unwrap().encode()));
        forget("p/b");
        assert!(lookup(&pc, "p/b", 1, t).is_none());
    }
}
