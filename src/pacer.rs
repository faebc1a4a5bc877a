//! The other side of rate limiting: pacing work sent to a throttled service.
//!
//! Retrying rejected work blindly multiplies traffic (10,000 records take 30,000 sends in
//! `tests/pacing.rs`). A [`Pacer`] instead tells when each unit of work may start so that the
//! rate is never exceeded, smoothed at a finer grain than the service's window: for 100 ops/s,
//! release 20 every 200 ms rather than 100 at once.
//!
//! It is built from two exact sliding logs (the whole rate over the service's window, and the
//! share per grain): every closed interval of the service's window length holds at most
//! `rate` units, so the schedule is safe whatever window the service itself uses (fixed,
//! sliding, or a log that counts an entry exactly one window old). Like every algorithm here
//! it is pure: time is an argument, and the caller sleeps.
//!
//! The service's own answers push the schedule back: `Retry-After`, the draft-10 `RateLimit`
//! header and the legacy `X-RateLimit-*` headers ([`Pacer::observe_headers`]).

use crate::algorithm::Algorithm;
use crate::algorithms::{SlidingLog, SlidingLogState};
use crate::decide;
use crate::error::{CheckError, ConfigError};
use crate::quota::Quota;
use crate::time::Nanos;

/// Paces work to at most `rate` units per `window`, released in shares per `grain`.
///
/// ```
/// use tollgate::{pacer::Pacer, Nanos, Quota};
/// // 100 per second, released 20 every 200 ms.
/// let mut pacer = Pacer::new(Quota::per_second(100).unwrap(), Nanos::from_millis(200)).unwrap();
/// let t = Nanos::from_secs(1_000);
/// let starts: Vec<Nanos> = (0..41).map(|_| pacer.reserve(t, 1).unwrap()).collect();
/// assert_eq!(starts[19], t);                                           // the first 20 now
/// assert_eq!(starts[20], t + Nanos::from_millis(200) + Nanos::new(1)); // the next 20 a grain later
/// assert_eq!(starts[40], t + Nanos::from_millis(400) + Nanos::new(2));
/// ```
#[derive(Clone, Debug)]
pub struct Pacer {
    quota: Quota,
    grain: Nanos,
    whole: SlidingLog,
    share: SlidingLog,
    /// The states of `whole` and `share`, in that order (the pairs a unit is decided over).
    states: [Option<SlidingLogState>; 2],
    paused_until: Nanos,
    /// The latest start handed out: reservations are first come, first served, so each
    /// starts no earlier than the one before (and the logs then decide at exactly that time).
    last_start: Nanos,
}

/// What a service's answer asked of the pacer.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum Signal {
    /// Nothing: carry on.
    None,
    /// Wait until this instant before starting anything else.
    PauseUntil(Nanos),
}

impl Pacer {
    /// A pacer for `quota` (units per the service's window) releasing work every `grain`
    /// (at most the window; `rate * grain / window` units per release, at least 1).
    pub fn new(quota: Quota, grain: Nanos) -> Result<Pacer, ConfigError> {
        let window = quota.window();
        if grain == Nanos::ZERO || grain > window {
            return Err(ConfigError::BadRefillInterval { interval_ns: grain.as_nanos() });
        }
        let per_grain = (quota.limit() as u128 * grain.as_nanos() as u128 / window.as_nanos() as u128) as u64;
        let share = Quota::new(per_grain.max(1).min(quota.limit()), grain)?;
        Ok(Pacer {
            quota,
            grain,
            whole: SlidingLog::new(quota)?,
            share: SlidingLog::new(share)?,
            states: [None, None],
            paused_until: Nanos::ZERO,
            last_start: Nanos::ZERO,
        })
    }

    /// The rate being paced to.
    pub fn quota(&self) -> Quota {
        self.quota
    }

    /// Units released per grain.
    pub fn per_grain(&self) -> u64 {
        self.share.limit()
    }

    /// The largest cost one unit of work may have.
    pub fn max_cost(&self) -> u64 {
        self.share.capacity()
    }

    /// Changes the rate (e.g. as capacity leases come and go), keeping what was already
    /// scheduled: past starts still count against the new rate.
    pub fn set_rate(&mut self, quota: Quota) -> Result<(), ConfigError> {
        let mut next = Pacer::new(quota, self.grain.min(quota.window()))?;
        next.states = core::mem::take(&mut self.states);
        next.paused_until = self.paused_until;
        next.last_start = self.last_start;
        *self = next;
        Ok(())
    }

    /// When a unit of `cost` could start, at `now` or later, without reserving it.
    pub fn peek(&self, now: Nanos, cost: u64) -> Result<Nanos, CheckError> {
        let mut start = now.max(self.paused_until).max(self.last_start);
        // Each log's wait only grows the other's; two rounds reach the fixed point, a few
        // more make it certain.
        for _ in 0..8 {
            let (mut allowed, mut wait) = (true, Nanos::ZERO);
            let log = |i| if i == 0 { &self.whole } else { &self.share };
            decide::peek(log, &self.states[..], start, cost, |_, d| {
                allowed &= d.allowed;
                wait = wait.max(d.retry_after);
            })
            .map_err(|e| with_cost(e, cost))?;
            if allowed {
                return Ok(start);
            }
            start = start + wait;
        }
        Ok(start)
    }

    /// Reserves the earliest start for a unit of `cost` at `now` or later and returns it; the
    /// caller starts the work then (sleeping `start - now`).
    pub fn reserve(&mut self, now: Nanos, cost: u64) -> Result<Nanos, CheckError> {
        let start = self.peek(now, cost)?;
        let (whole, share) = (&self.whole, &self.share);
        let log = |i| if i == 0 { whole } else { share };
        decide::count(log, &mut self.states[..], start, cost, |_, d| {
            debug_assert!(d.allowed, "peek found a start both logs admit");
        })?;
        self.last_start = start;
        Ok(start)
    }

    /// Gives back a reservation that was not used (work cancelled before it started).
    pub fn cancel(&mut self, now: Nanos, cost: u64) {
        if let Some(s) = &self.states[0] {
            self.states[0] = self.whole.refund(s, now, cost);
        }
        if let Some(s) = &self.states[1] {
            self.states[1] = self.share.refund(s, now, cost);
        }
    }

    /// Nothing starts before `until`.
    pub fn pause_until(&mut self, until: Nanos) {
        self.paused_until = self.paused_until.max(until);
    }

    /// Reads a service's response headers (`(name, value)`, names in any case) at `now` and
    /// pushes the schedule back when they ask: `Retry-After` (seconds or an HTTP date); a
    /// draft-10 `RateLimit` member with `r=0` (until its `t`); `X-RateLimit-Remaining: 0`
    /// (until `X-RateLimit-Reset`, read as Unix seconds when above 10^9, else as seconds from
    /// now, the two conventions in use).
    pub fn observe_headers<'a>(&mut self, now: Nanos, headers: impl IntoIterator<Item = (&'a str, &'a str)>) -> Signal {
        let until = service_pause(now, headers);
        match until {
            Some(t) if t > now => {
                self.pause_until(t);
                Signal::PauseUntil(self.paused_until)
            }
            _ => Signal::None,
        }
    }
}

fn with_cost(e: CheckError, cost: u64) -> CheckError {
    match e {
        CheckError::CostExceedsCapacity { capacity, .. } => {
            CheckError::CostExceedsCapacity { cost, capacity, limit: 0 }
        }
        other => other,
    }
}

/// When a service's headers say to resume (`None`: they do not ask for a pause).
pub fn service_pause<'a>(now: Nanos, headers: impl IntoIterator<Item = (&'a str, &'a str)>) -> Option<Nanos> {
    let mut until: Option<Nanos> = None;
    let mut push = |t: Nanos| until = Some(until.map_or(t, |u| u.max(t)));
    let mut legacy_remaining = None;
    let mut legacy_reset = None;
    for (name, value) in headers {
        let value = value.trim();
        if name.eq_ignore_ascii_case("retry-after") {
            if let Some(t) = parse_retry_after(now, value) {
                push(t);
            }
        } else if name.eq_ignore_ascii_case("ratelimit") {
            for member in value.split(',') {
                let (mut r, mut t) = (None, None);
                for param in member.split(';').skip(1) {
                    match param.trim().split_once('=') {
                        Some(("r", v)) => r = v.trim().parse::<u64>().ok(),
                        Some(("t", v)) => t = v.trim().parse::<u64>().ok(),
                        _ => {}
                    }
                }
                if let (Some(0), Some(t)) = (r, t) {
                    push(now + Nanos::from_secs(t));
                }
            }
        } else if name.eq_ignore_ascii_case("x-ratelimit-remaining") {
            legacy_remaining = value.parse::<u64>().ok();
        } else if name.eq_ignore_ascii_case("x-ratelimit-reset") {
            legacy_reset = value.parse::<u64>().ok();
        }
    }
    if let (Some(0), Some(reset)) = (legacy_remaining, legacy_reset) {
        push(if reset > 1_000_000_000 { Nanos::from_secs(reset) } else { now + Nanos::from_secs(reset) });
    }
    until
}

/// `Retry-After`: delta-seconds, or an IMF-fixdate (`Sun, 06 Nov 1994 08:49:37 GMT`).
pub fn parse_retry_after(now: Nanos, value: &str) -> Option<Nanos> {
    if let Ok(secs) = value.parse::<u64>() {
        return Some(now + Nanos::from_secs(secs));
    }
    parse_http_date(value)
}

/// Parses an IMF-fixdate to Unix time.
fn parse_http_date(s: &str) -> Option<Nanos> {
    // "Sun, 06 Nov 1994 08:49:37 GMT"
    let rest = s.split_once(", ")?.1;
    let mut parts = rest.split(' ');
    let day: u64 = parts.next()?.parse().ok()?;
    let month_name = parts.next()?;
    let month = ["Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"]
        .iter()
        .position(|m| *m == month_name)? as u64
        + 1;
    let year: i64 = parts.next()?.parse().ok()?;
    let mut hms = parts.next()?.split(':').map(|p| p.parse::<u64>().ok());
    let (h, m, sec) = (hms.next()??, hms.next()??, hms.next()??);
    if parts.next()? != "GMT" || !(1..=31).contains(&day) || h > 23 || m > 59 || sec > 60 || year < 1970 {
        return None;
    }
    // Days from civil (Howard Hinnant's algorithm).
    let (y, mo) = if month <= 2 { (year - 1, month + 9) } else { (year, month - 3) };
    let era = y.div_euclid(400);
    let yoe = (y - era * 400) as u64;
    let doy = (153 * mo + 2) / 5 + day - 1;
    let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    let days = era * 146_097 + doe as i64 - 719_468;
    let secs = u64::try_from(days).ok()? * 86_400 + h * 3600 + m * 60 + sec;
    Some(Nanos::from_secs(secs))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn http_dates_parse() {
        assert_eq!(parse_http_date("Sun, 06 Nov 1994 08:49:37 GMT"), Some(Nanos::from_secs(784_111_777)));
        assert_eq!(parse_http_date("Thu, 01 Jan 1970 00:00:00 GMT"), Some(Nanos::ZERO));
        assert_eq!(parse_http_date("Sun, 06 Nov 1994 08:49:37 PST"), None);
        assert_eq!(parse_http_date("garbage"), None);
    }

    #[test]
    fn every_header_convention_pushes_the_schedule_back() {
        let now = Nanos::from_secs(1_700_000_000);
        let pause = |h: &[(&str, &str)]| service_pause(now, h.iter().copied());
        assert_eq!(pause(&[("Retry-After", "7")]), Some(now + Nanos::from_secs(7)));
        assert_eq!(pause(&[("ratelimit", "\"a\";r=5;t=9, \"b\";r=0;t=30")]), Some(now + Nanos::from_secs(30)));
        assert_eq!(pause(&[("RateLimit", "\"a\";r=5;t=9")]), None);
        assert_eq!(
            pause(&[("X-RateLimit-Remaining", "0"), ("X-RateLimit-Reset", "1700000042")]),
            Some(Nanos::from_secs(1_700_000_042))
        );
        assert_eq!(
            pause(&[("x-ratelimit-remaining", "0"), ("x-ratelimit-reset", "12")]),
            Some(now + Nanos::from_secs(12))
        );
        assert_eq!(pause(&[("X-RateLimit-Remaining", "3"), ("X-RateLimit-Reset", "12")]), None);
    }
}
