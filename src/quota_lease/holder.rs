//! A holder's side of the sizing (module docs of [`crate::quota_lease`]): how big a slice to
//! ask for and when to begin the next exchange, from the demand it saw since its last one.
//! Pure, as the ledger is: the holder passes its counts and its clock's spans.

use crate::time::Nanos;

/// The shortest span a demand is measured over, as a share of the span a slice lasts: a
/// burst right after an exchange asks for at most `2 × 16` times its units.
const SHORTEST_SHARE: u64 = 16;

/// The `want` of a holder's next exchange: twice the units its demand would take over `span`
/// (how long the new slice can last: the lease's `ttl`, or what is left of a lease the end of
/// a window cuts short) at the rate it ran since its last exchange began (`demand` units over
/// `elapsed`, measured over at least a sixteenth of `span`), and never less than twice the
/// demand itself; at least `need` and 1.
///
/// At a steady rate the slice then lasts its span with half of it to spare, and
/// [`renewal_due`] begins the next exchange when that half is reached: one exchange per
/// lease, whatever the rate. A demand measured over longer than the span (a key idle since
/// its last exchange, a window about to end) asks for twice itself.
///
/// ```
/// use tollgate::quota_lease::slice_want;
/// use tollgate::Nanos;
/// let ms = Nanos::from_millis;
/// // 300 units over the last 500 ms, for a lease of 1 s: 2 × 600.
/// assert_eq!(slice_want(300, ms(500), ms(1000), 1), 1200);
/// // The same demand with 100 ms of the window left: twice the demand itself.
/// assert_eq!(slice_want(300, ms(500), ms(100), 1), 600);
/// // A burst just after an exchange is measured over a sixteenth of the span.
/// assert_eq!(slice_want(10, Nanos::ZERO, ms(1000), 1), 320);
/// assert_eq!(slice_want(0, ms(500), ms(1000), 5), 5);
/// ```
pub fn slice_want(demand: u64, elapsed: Nanos, span: Nanos, need: u64) -> u64 {
    let over = elapsed.as_nanos().max(span.as_nanos() / SHORTEST_SHARE).max(1);
    let span = span.as_nanos().max(over);
    let by_rate = u128::from(demand) * 2 * u128::from(span) / u128::from(over);
    u64::try_from(by_rate).unwrap_or(u64::MAX).max(need).max(1)
}

/// Whether a holder that just admitted a hit begins its next exchange (without waiting for
/// it): its slice (`units`) holds less than the demand since its last exchange began (at the
/// same rate it runs out sooner than it took to spend that), or its lease has less than a
/// quarter of `ttl` left (`lease_left`) and a new lease would last longer: `capped` says the
/// lease already ends where any lease granted before then would (the end of a fixed window),
/// so renewing it early would only cost an exchange.
///
/// ```
/// use tollgate::quota_lease::renewal_due;
/// use tollgate::Nanos;
/// let (ttl, ms) = (Nanos::from_millis(1000), Nanos::from_millis);
/// assert!(!renewal_due(600, 500, ms(600), ttl, false));
/// assert!(renewal_due(400, 500, ms(600), ttl, false));
/// assert!(renewal_due(600, 500, ms(200), ttl, false));
/// // Cut short by the end of the window: the last quarter does not call for a renewal.
/// assert!(!renewal_due(600, 500, ms(200), ttl, true));
/// ```
pub fn renewal_due(units: u64, demand: u64, lease_left: Nanos, ttl: Nanos, capped: bool) -> bool {
    let low = units < demand;
    let late = !capped && lease_left.as_nanos().saturating_mul(4) < ttl.as_nanos();
    low || late
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_steady_demand_asks_for_twice_its_rate_over_the_span() {
        let ms = Nanos::from_millis;
        // 750 units per second: a lease of 1 s asks for 1,500 after any span of measure.
        for elapsed in [100, 200, 500, 1000] {
            assert_eq!(slice_want(750 * elapsed / 1000, ms(elapsed), ms(1000), 1), 1500, "{elapsed}");
        }
        // Measured over 2 s, for a lease of 1 s: twice the demand itself, as over 1 s.
        assert_eq!(slice_want(1500, ms(2000), ms(1000), 1), 3000);
        // Idle for a long time: a hit asks for twice itself.
        assert_eq!(slice_want(1, Nanos::from_secs(3600), ms(1000), 1), 2);
        assert_eq!(slice_want(3, Nanos::from_secs(3600), ms(1000), 7), 7);
        assert_eq!(slice_want(0, Nanos::ZERO, Nanos::ZERO, 0), 1);
        assert_eq!(slice_want(u64::MAX, Nanos::ZERO, Nanos::from_secs(3600), 1), u64::MAX);
    }

    #[test]
    fn a_slice_of_twice_the_demand_is_renewed_when_half_of_it_is_spent() {
        let ttl = Nanos::from_millis(1000);
        let want = slice_want(300, Nanos::from_millis(500), ttl, 1);
        // After the exchange the demand counts from zero: spending half keeps the slice.
        let spent = want / 2;
        assert!(!renewal_due(want - spent, spent, ttl, ttl, false));
        assert!(renewal_due(want - spent - 1, spent + 1, ttl, ttl, false));
    }
}
