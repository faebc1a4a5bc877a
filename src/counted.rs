//! The decision over a count another store keeps: express-rate-limit's `Store` counts each
//! window's hits itself and answers the total with when the window resets, and the npm
//! middleware's limit of 0 admits nothing. Neither runs an algorithm of this crate (the
//! store's guarantees are its own), but the decision over its answer is made here, once:
//! a hit is admitted while the count, with it, is at most the limit.

use crate::decision::Decision;
use crate::time::Nanos;

/// The decision for a hit that brought a store's count to `used` under `limit`, in a window
/// that resets at `reset_at` (judged at `now`): admitted while `used <= limit`, with what is
/// left; a denial waits for the reset. `counted(0, 0, now, now)` is the figures of no known
/// limit (a policy not read yet): admitted, nothing left, nothing to wait for.
pub fn counted(limit: u64, used: u64, reset_at: Nanos, now: Nanos) -> Decision {
    let allowed = used <= limit;
    let remaining = limit.saturating_sub(used);
    let retry_after = if allowed { Nanos::ZERO } else { reset_at.saturating_sub(now) };
    let next_unit_after = if remaining > 0 { Nanos::ZERO } else { reset_at.saturating_sub(now) };
    Decision { allowed, limit, remaining, reset_at, retry_after, next_unit_after }
}

/// The figures of a key as it stands before the hit a peek `d` asked about (of `cost`): what
/// is left now (the hit's `remaining`, plus the hit when it would be admitted, at most the
/// limit), and when all of the limit is left no window open (reset `now`). This is what
/// @fastify/rate-limit's peek (`increment: false`) reports for a key: its count without
/// the hit, and a ttl of 0 for a key holding nothing.
pub fn standing(d: &Decision, cost: u64, now: Nanos) -> Decision {
    let remaining = if d.allowed { d.remaining.saturating_add(cost).min(d.limit) } else { d.remaining };
    let reset_at = if remaining >= d.limit { now } else { d.reset_at };
    Decision { remaining, reset_at, ..*d }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn admitted_while_the_count_is_within_the_limit() {
        let (now, reset) = (Nanos::from_secs(10), Nanos::from_secs(70));
        let d = counted(5, 5, reset, now);
        assert!(d.allowed && d.remaining == 0 && d.retry_after == Nanos::ZERO);
        assert_eq!(d.next_unit_after, Nanos::from_secs(60));
        let d = counted(5, 6, reset, now);
        assert!(!d.allowed && d.remaining == 0 && d.retry_after == Nanos::from_secs(60));
        // A limit of 0 admits nothing; a reset already past is no wait.
        assert!(!counted(0, 1, reset, now).allowed);
        assert_eq!(counted(5, 9, now, reset).retry_after, Nanos::ZERO);
        let unknown = counted(0, 0, now, now);
        assert!(unknown.allowed && unknown.limit == 0 && unknown.reset_at == now);
    }

    #[test]
    fn a_peek_stands_before_its_hit() {
        let (now, reset) = (Nanos::from_secs(10), Nanos::from_secs(70));
        // 5 of 10 used: a peek of 2 would leave 3; the key stands at 5 left.
        let s = standing(&counted(10, 7, reset, now), 2, now);
        assert_eq!((s.remaining, s.reset_at), (5, reset));
        // A denied peek leaves what is left as it is.
        let s = standing(&counted(10, 11, reset, now), 2, now);
        assert_eq!((s.remaining, s.reset_at, s.allowed), (0, reset, false));
        // A key holding nothing has no window open; never more than the limit left.
        let s = standing(&counted(10, 3, reset, now), 5, now);
        assert_eq!((s.remaining, s.reset_at), (10, now));
    }
}
