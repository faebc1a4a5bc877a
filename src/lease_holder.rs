//! The holder's side of capacity leases: which of its partitions a holder may pace to, from
//! when, and until when, so that the holders of one pool together never exceed its capacity
//! in any window, although they never talk to each other and their leases come and go.
//!
//! [`LeasePool`](crate::lease::LeasePool) makes partitions exclusive *at the pool*. That alone
//! is not enough for the sends: a holder's pacer counts the starts of the last window, and the
//! pool's clock is not the holder's. [`LeaseHolder`] adds the two rules that close the gaps,
//! using only the holder's own clock:
//!
//! 1. **A lease is measured from when its request was sent**, not from when the answer came:
//!    the pool granted it at some instant between the two, so `sent + ttl` is at or before the
//!    pool's expiry. Nothing starts at or after `sent + ttl - margin` unless a later answer
//!    renewed it; the margin covers a send's time in flight and clock drift.
//! 2. **A newly granted partition counts only one window after the answer arrived.** Its
//!    previous holder may have started work on it until just before the pool freed it, and
//!    those starts stay in the service's window for one window more. The pool freed it
//!    before granting it, and granted it before the answer arrived, so one window after the
//!    arrival none of the previous holder's starts can share a window with ours.
//!
//! A partition stays counted across answers only while the holding is unbroken: the new
//! answer arrived before the previous lease's end (`sent + ttl`), so the pool had not freed
//! it in between. Otherwise it is treated as new (and warms up again).
//!
//! Why this is enough: a holder's starts in any window are at most the rate it paced to when
//! it reserved the last of them. Two holders never count one partition in the same window:
//! the earlier one's starts on it end before its lease does, the later one's begin a window
//! after the pool gave it out again.
//!
//! ```
//! use tollgate::lease_holder::LeaseHolder;
//! use tollgate::Nanos;
//! let s = Nanos::from_secs;
//! let mut h = LeaseHolder::new(Nanos::from_secs(1));
//! // Asked at 100 s for a 15 s lease, answered at 100.05 s: partitions 0..4 of 25/s each.
//! h.granted(s(100), s(100) + Nanos::from_millis(50), &[0, 1, 2, 3], 100, s(1), s(15)).unwrap();
//! assert_eq!(h.rate_at(s(100) + Nanos::from_millis(60)), 0); // warming up: one window
//! assert_eq!(h.rate_at(s(102)), 100);
//! assert_eq!(h.usable_until(), s(114)); // sent + ttl - margin: nothing starts from then on
//! assert_eq!(h.rate_at(s(114)), 0);
//! // Renewed at 105 s (answered in time): the same partitions count at once, until 119 s.
//! h.granted(s(105), s(105), &[0, 1, 2, 3, 7], 125, s(1), s(15)).unwrap();
//! assert_eq!(h.rate_at(s(105)), 100); // partition 7 is new: it warms up until 106 s
//! assert_eq!(h.rate_at(s(106)), 125);
//! ```

use alloc::string::ToString;
use alloc::vec::Vec;

use crate::error::ConfigError;
use crate::time::Nanos;

/// A holder's leases as it may use them.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct LeaseHolder {
    margin: Nanos,
    window: Nanos,
    partition_rate: u64,
    /// Each held partition and the instant from which it counts.
    held: Vec<(u32, Nanos)>,
    /// The lease's end on the holder's clock: when its request was sent, plus the TTL.
    lease_end: Nanos,
}

impl LeaseHolder {
    /// A holder that holds nothing yet; nothing starts later than `margin` before a lease's end.
    pub fn new(margin: Nanos) -> LeaseHolder {
        LeaseHolder { margin, window: Nanos::ZERO, partition_rate: 0, held: Vec::new(), lease_end: Nanos::ZERO }
    }

    /// The pool answered a grant (or renewal) asked at `sent` and received at `received`
    /// (both on the holder's clock): the holder now holds `partitions` (indices), together
    /// `rate` units per `window`, for `ttl` from when the pool acted. An empty `partitions`
    /// means it holds nothing.
    pub fn granted(
        &mut self,
        sent: Nanos,
        received: Nanos,
        partitions: &[u32],
        rate: u64,
        window: Nanos,
        ttl: Nanos,
    ) -> Result<(), ConfigError> {
        if partitions.is_empty() {
            self.lost();
            return Ok(());
        }
        if window == Nanos::ZERO {
            return Err(ConfigError::ZeroWindow);
        }
        let n = partitions.len() as u64;
        if rate == 0 || rate % n != 0 {
            // "rate/n" without `format!`, which would bring `core::fmt` into the npm package's
            // extras module (integers' `to_string` does not).
            let mut input = rate.to_string();
            input.push('/');
            input.push_str(&n.to_string());
            return Err(ConfigError::InvalidQuota {
                input,
                reason: "the rate must be a whole multiple of the partitions held",
            });
        }
        // A clock that went backwards between send and answer: the answer came no earlier.
        let received = received.max(sent);
        let unbroken = received < self.lease_end && window == self.window;
        let fresh_from = received.saturating_add(window);
        let held = partitions
            .iter()
            .map(|&p| {
                let kept = if unbroken { self.held.iter().find(|(q, _)| *q == p).map(|&(_, from)| from) } else { None };
                (p, kept.unwrap_or(fresh_from))
            })
            .collect();
        self.held = held;
        self.window = window;
        self.partition_rate = rate / n;
        self.lease_end = sent.saturating_add(ttl);
        Ok(())
    }

    /// The holder holds nothing (it released its leases, or the pool said they lapsed).
    pub fn lost(&mut self) {
        self.held.clear();
        self.lease_end = Nanos::ZERO;
    }

    /// The rate (units per [`window`](LeaseHolder::window)) a start at `at` may be paced to:
    /// the partitions counted by then, or 0 from [`usable_until`](LeaseHolder::usable_until) on.
    pub fn rate_at(&self, at: Nanos) -> u64 {
        if at >= self.usable_until() {
            return 0;
        }
        self.partition_rate * self.held.iter().filter(|(_, from)| *from <= at).count() as u64
    }

    /// The rate of every partition held, counted yet or not: the most this lease can give.
    pub fn held_rate(&self) -> u64 {
        self.partition_rate * self.held.len() as u64
    }

    /// Nothing starts at or after this instant unless a later answer renews the lease.
    pub fn usable_until(&self) -> Nanos {
        if self.held.is_empty() {
            return Nanos::ZERO;
        }
        self.lease_end.saturating_sub(self.margin)
    }

    /// The lease's end on the holder's clock (`sent + ttl`): an answer received from then on
    /// does not continue it.
    pub fn lease_end(&self) -> Nanos {
        self.lease_end
    }

    /// The next instant after `now` at which [`rate_at`](LeaseHolder::rate_at) changes by
    /// itself (a partition starts counting, or the lease becomes unusable), if any.
    pub fn next_change(&self, now: Nanos) -> Option<Nanos> {
        let until = self.usable_until();
        if now >= until {
            return None;
        }
        let warm = self.held.iter().map(|&(_, from)| from).filter(|&from| from > now && from < until).min();
        Some(warm.map_or(until, |w| w.min(until)))
    }

    /// The partitions held (indices, in the pool's order of the last answer).
    pub fn partitions(&self) -> Vec<u32> {
        self.held.iter().map(|&(p, _)| p).collect()
    }

    /// The window the rates are per (zero before the first grant).
    pub fn window(&self) -> Nanos {
        self.window
    }

    /// The margin before a lease's end after which nothing starts.
    pub fn margin(&self) -> Nanos {
        self.margin
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const fn ms(n: u64) -> Nanos {
        Nanos::from_millis(n)
    }

    #[test]
    fn nothing_held_nothing_usable() {
        let h = LeaseHolder::new(ms(100));
        assert_eq!((h.rate_at(ms(5)), h.usable_until(), h.next_change(ms(5))), (0, Nanos::ZERO, None));
    }

    #[test]
    fn warm_up_then_deadline() {
        let mut h = LeaseHolder::new(ms(100));
        h.granted(ms(1000), ms(1020), &[3, 4], 50, ms(1000), ms(3000)).unwrap();
        assert_eq!(h.rate_at(ms(2019)), 0);
        assert_eq!(h.next_change(ms(1020)), Some(ms(2020)));
        assert_eq!(h.rate_at(ms(2020)), 50);
        assert_eq!(h.next_change(ms(2020)), Some(ms(3900)));
        assert_eq!(h.rate_at(ms(3899)), 50);
        assert_eq!(h.rate_at(ms(3900)), 0);
        assert_eq!(h.next_change(ms(3900)), None);
        assert_eq!(h.held_rate(), 50);
    }

    #[test]
    fn a_late_answer_breaks_the_holding_and_partitions_warm_up_again() {
        let mut h = LeaseHolder::new(ms(100));
        h.granted(ms(0), ms(0), &[1, 2], 50, ms(1000), ms(3000)).unwrap();
        // Answered exactly at the previous lease's end: the pool may have freed and regranted.
        h.granted(ms(2000), ms(3000), &[1, 2], 50, ms(1000), ms(3000)).unwrap();
        assert_eq!(h.rate_at(ms(3999)), 0);
        assert_eq!(h.rate_at(ms(4000)), 50);
        // In time: kept partitions count at once, a new one warms up.
        h.granted(ms(4500), ms(4600), &[2, 9], 50, ms(1000), ms(3000)).unwrap();
        assert_eq!(h.rate_at(ms(4600)), 25);
        assert_eq!(h.rate_at(ms(5600)), 50);
        assert_eq!(h.usable_until(), ms(7400));
    }

    #[test]
    fn an_empty_answer_or_a_loss_holds_nothing() {
        let mut h = LeaseHolder::new(ms(0));
        h.granted(ms(0), ms(0), &[0], 25, ms(1000), ms(3000)).unwrap();
        h.granted(ms(100), ms(100), &[], 0, ms(1000), ms(3000)).unwrap();
        assert_eq!((h.held_rate(), h.rate_at(ms(2000))), (0, 0));
        h.granted(ms(200), ms(200), &[0], 25, ms(1000), ms(3000)).unwrap();
        assert_eq!(h.rate_at(ms(1199)), 0, "after a gap it warms up again");
        h.lost();
        assert_eq!((h.partitions(), h.rate_at(ms(1500))), (Vec::new(), 0));
    }

    #[test]
    fn nonsense_answers_are_refused_and_change_nothing() {
        let mut h = LeaseHolder::new(ms(0));
        h.granted(ms(0), ms(0), &[0], 25, ms(1000), ms(3000)).unwrap();
        let before = h.clone();
        assert!(h.granted(ms(1), ms(1), &[0, 1], 25, ms(1000), ms(3000)).is_err());
        assert!(h.granted(ms(1), ms(1), &[0], 25, Nanos::ZERO, ms(3000)).is_err());
        assert!(h.granted(ms(1), ms(1), &[0], 0, ms(1000), ms(3000)).is_err());
        assert_eq!(h, before);
    }

    /// Two holders hand a partition over through a pool, each following its own clock: the
    /// first's last usable start and the second's first counted start are more than a window
    /// apart, whatever the delays (the pool acts between send and answer).
    #[test]
    fn a_handoff_never_shares_a_window() {
        for delay in [0, 1, 7, 250, 999] {
            let w = ms(1000);
            let mut a = LeaseHolder::new(ms(50));
            a.granted(ms(0), ms(delay), &[0], 25, w, ms(3000)).unwrap();
            let last_a = a.usable_until() - Nanos::new(1);
            assert_eq!(a.rate_at(last_a), if delay < 1000 { 25 } else { 0 });
            // The pool expires a's lease at its own time >= 3000 ms; b asks at 3000 + delay.
            let pool_expiry = ms(delay.min(2) + 3000);
            let mut b = LeaseHolder::new(ms(50));
            let sent = pool_expiry;
            b.granted(sent, sent + ms(delay), &[0], 25, w, ms(3000)).unwrap();
            let first_b = (0..10_000).map(ms).find(|&t| b.rate_at(t) > 0).unwrap();
            assert!(first_b > last_a + w, "delay {delay}: a's last {last_a:?}, b's first {first_b:?}");
        }
    }
}
