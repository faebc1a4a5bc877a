//! Token bucket, refilled in whole steps.
//!
//! A bucket holds up to `capacity` tokens (the largest burst). Every `interval`, counted from
//! the bucket's creation at its first hit, `refill_amount` tokens are added, never above the
//! capacity. A hit takes `cost` tokens; a bucket holding fewer rejects it. (The continuously
//! refilling bucket is [`crate::Gcra`].)
//!
//! A full bucket is indistinguishable from a new one: when a hit finds the bucket full, its
//! refill schedule starts again at that hit. This is what makes a stored state that was
//! dropped once full (by an in-memory map, a Redis TTL or a Durable Object alarm) decide
//! exactly like one that was kept.
//!
//! **Guarantee**: in any interval `[t, t + d)` at most `capacity + refill_amount *
//! ceil(d / interval)` units.
//!
//! **Pros**: allows bursts up to the capacity while holding a long-term rate; state is 16
//! bytes; intuitive to explain (Stripe: 100/s with bursts of 500). **Cons**: two numbers to
//! tune instead of one; a drained bucket refills in steps, so `retry_after` can be a whole
//! interval; not mergeable across nodes.
//!
//! **Pick it when**: clients may burst above a steady rate: the capacity sets the burst and the
//! refill the long-term rate (Stripe, AWS).

use crate::algorithm::{validate_cost, Algorithm};
use crate::decision::{Decision, Outcome};
use crate::error::{CheckError, ConfigError};
use crate::quota::{check_limit, Quota, MAX_WINDOW};
use crate::time::Nanos;

/// The longest time a bucket may take to refill from empty (about 146 years): far beyond any
/// sane configuration, and far from overflowing time arithmetic.
pub(crate) const MAX_SPAN: u64 = 1 << 62;

/// A token bucket.
///
/// A chat: bursts of 3, then one message per 4 s.
///
/// ```
/// use tollgate::{algorithm::check_slot, Nanos, TokenBucket};
/// let chat = TokenBucket::new(3, 1, Nanos::from_secs(4)).unwrap();
/// let mut state = None;
/// for _ in 0..3 {
///     assert!(check_slot(&chat, &mut state, Nanos::from_secs(10), 1).unwrap().allowed);
/// }
/// let fourth = check_slot(&chat, &mut state, Nanos::from_secs(10), 1).unwrap();
/// assert!(!fourth.allowed);
/// assert_eq!(fourth.retry_after, Nanos::from_secs(4));
/// ```
#[derive(Copy, Clone, Debug)]
pub struct TokenBucket {
    capacity: u64,
    refill_amount: u64,
    interval: Nanos,
    /// The refill rate as configured, units per duration (what `RateLimit-Policy` advertises).
    rate: (u64, Nanos),
}

/// Buckets that decide alike are equal, however their rate was written (`100/s` or one
/// token every 10 ms): the advertised form is not part of the algorithm.
impl PartialEq for TokenBucket {
    fn eq(&self, other: &TokenBucket) -> bool {
        (self.capacity, self.refill_amount, self.interval) == (other.capacity, other.refill_amount, other.interval)
    }
}

impl Eq for TokenBucket {}

impl core::hash::Hash for TokenBucket {
    fn hash<H: core::hash::Hasher>(&self, state: &mut H) {
        (self.capacity, self.refill_amount, self.interval).hash(state);
    }
}

/// One key's bucket: 16 bytes.
#[derive(Copy, Clone, Debug, Default, PartialEq, Eq, Hash)]
pub struct TokenBucketState {
    /// Tokens in the bucket at `anchor`.
    pub tokens: u64,
    /// The latest refill instant; refills happen at `anchor + k * interval`.
    pub anchor: Nanos,
}

impl TokenBucket {
    /// A bucket of `capacity` tokens that gains `refill_amount` every `interval`.
    pub fn new(capacity: u64, refill_amount: u64, interval: Nanos) -> Result<TokenBucket, ConfigError> {
        check_limit(capacity)?;
        if refill_amount == 0 || refill_amount > capacity {
            return Err(ConfigError::BadRefillAmount { amount: refill_amount, capacity });
        }
        if interval == Nanos::ZERO || interval > MAX_WINDOW {
            return Err(ConfigError::BadRefillInterval { interval_ns: interval.as_nanos() });
        }
        let bucket = TokenBucket { capacity, refill_amount, interval, rate: (refill_amount, interval) };
        if (bucket.steps_for(capacity) as u128) * interval.as_nanos() as u128 > MAX_SPAN as u128 {
            return Err(ConfigError::BadRefillInterval { interval_ns: interval.as_nanos() });
        }
        Ok(bucket)
    }

    /// `quota.limit()` tokens per window, one token at a time (one every `window / limit`),
    /// with the quota's burst as the capacity: `100/s burst 500` is Stripe's bucket.
    pub fn from_quota(quota: Quota) -> Result<TokenBucket, ConfigError> {
        TokenBucket::from_quota_in_steps(quota, 1)
    }

    /// Like [`from_quota`](TokenBucket::from_quota), adding `refill_amount` tokens at a time
    /// every `window * refill_amount / limit` (rounded up to a nanosecond: never faster).
    pub fn from_quota_in_steps(quota: Quota, refill_amount: u64) -> Result<TokenBucket, ConfigError> {
        let capacity = quota.burst();
        if refill_amount == 0 || refill_amount > capacity {
            return Err(ConfigError::BadRefillAmount { amount: refill_amount, capacity });
        }
        quota.emission_interval()?;
        let interval = (quota.window().as_nanos() as u128 * refill_amount as u128).div_ceil(quota.limit() as u128);
        let interval = u64::try_from(interval).map_err(|_| ConfigError::BadRefillInterval { interval_ns: u64::MAX })?;
        let bucket = TokenBucket::new(capacity, refill_amount, Nanos::new(interval))?;
        Ok(TokenBucket { rate: (quota.limit(), quota.window()), ..bucket })
    }

    /// Tokens added per refill.
    pub fn refill_amount(&self) -> u64 {
        self.refill_amount
    }

    /// Time between refills.
    pub fn interval(&self) -> Nanos {
        self.interval
    }

    /// Refills needed to gain `tokens`.
    fn steps_for(&self, tokens: u64) -> u64 {
        tokens.div_ceil(self.refill_amount)
    }

    /// The bucket at `now`: refilled for every whole interval since the anchor. A full bucket
    /// re-anchors at `now` (a full bucket is a new bucket); a clock that went back sees the
    /// bucket as stored, and the anchor never moves back.
    pub(crate) fn level(&self, state: Option<&TokenBucketState>, now: Nanos) -> TokenBucketState {
        let Some(s) = state else {
            return TokenBucketState { tokens: self.capacity, anchor: now };
        };
        let steps = now.saturating_sub(s.anchor).as_nanos() / self.interval.as_nanos();
        let tokens = s.tokens.saturating_add(steps.saturating_mul(self.refill_amount)).min(self.capacity);
        if tokens == self.capacity {
            TokenBucketState { tokens, anchor: now.max(s.anchor) }
        } else {
            TokenBucketState { tokens, anchor: s.anchor + self.interval.saturating_mul(steps) }
        }
    }

    /// When a bucket at `level` holds `tokens`.
    fn time_to_hold(&self, level: &TokenBucketState, tokens: u64) -> Nanos {
        let missing = tokens.saturating_sub(level.tokens);
        level.anchor + self.interval.saturating_mul(self.steps_for(missing))
    }
}

impl Algorithm for TokenBucket {
    type State = TokenBucketState;

    fn name(&self) -> &'static str {
        "token-bucket"
    }

    fn limit(&self) -> u64 {
        self.capacity
    }

    /// The refill rate as configured (`limit` per `window` of a quota, else `refill_amount`
    /// per `interval`), not the capacity: a client pacing at it from a fresh key is admitted
    /// every time (the capacity is at least one refill). Where the interval was rounded up to
    /// the nanosecond, the true rate is below it by under 1 ns per refill (docs/headers.md).
    fn advertised_quota(&self) -> (u64, Nanos) {
        self.rate
    }

    fn longest_window(&self) -> Nanos {
        self.interval.saturating_mul(self.steps_for(self.capacity))
    }

    #[inline]
    fn check(
        &self,
        state: Option<&TokenBucketState>,
        now: Nanos,
        cost: u64,
    ) -> Result<Outcome<TokenBucketState>, CheckError> {
        validate_cost(cost, self.capacity)?;
        let level = self.level(state, now);
        if level.tokens >= cost {
            let new = TokenBucketState { tokens: level.tokens - cost, anchor: level.anchor };
            Ok(Outcome {
                decision: Decision {
                    allowed: true,
                    limit: self.capacity,
                    remaining: new.tokens,
                    reset_at: self.time_to_hold(&new, self.capacity),
                    retry_after: Nanos::ZERO,
                    next_unit_after: self.time_to_hold(&new, 1).saturating_sub(now),
                },
                state: Some(new),
            })
        } else {
            Ok(Outcome {
                decision: Decision {
                    allowed: false,
                    limit: self.capacity,
                    remaining: level.tokens,
                    reset_at: self.time_to_hold(&level, self.capacity),
                    retry_after: self.time_to_hold(&level, cost) - now,
                    next_unit_after: self.time_to_hold(&level, 1).saturating_sub(now),
                },
                state: None,
            })
        }
    }

    fn refund(&self, state: &TokenBucketState, now: Nanos, cost: u64) -> Option<TokenBucketState> {
        let level = self.level(Some(state), now);
        let tokens = level.tokens.saturating_add(cost).min(self.capacity);
        (tokens < self.capacity).then_some(TokenBucketState { tokens, anchor: level.anchor })
    }

    fn fresh_at(&self, state: &TokenBucketState) -> Nanos {
        self.time_to_hold(state, self.capacity)
    }
}
