//! Quotas: "how many per how long", from values or from strings like `100/s` or `5000/1h`.
//!
//! A [`Quota`] is only the user's intent; each algorithm turns it into its own precomputed
//! configuration once (governor's lesson: compute quota values once, not per decision).

use alloc::string::ToString;
use core::fmt;
use core::str::FromStr;

use crate::error::ConfigError;
use crate::time::Nanos;

/// The largest limit, burst or cost: 2^53 - 1, so every JavaScript number that reaches the
/// core and comes back is exact.
pub const MAX_LIMIT: u64 = (1 << 53) - 1;

/// The longest window: 366 days. Yearly quotas fit; anything longer is almost certainly a
/// unit mistake (milliseconds read as seconds), and refusing it keeps all time arithmetic far
/// from overflow.
pub const MAX_WINDOW: Nanos = Nanos::from_secs(366 * 24 * 3600);

/// `limit` hits per `window`, with an optional `burst` for the algorithms that have one
/// (token bucket, GCRA). Validated on construction.
///
/// ```
/// use tollgate::{Quota, Nanos};
/// let q: Quota = "5000/1h".parse().unwrap();
/// assert_eq!(q.limit(), 5000);
/// assert_eq!(q.window(), Nanos::from_secs(3600));
/// let api = Quota::per_second(100).unwrap().with_burst(500).unwrap();
/// assert_eq!(api.burst(), 500);
/// assert!("ten/s".parse::<Quota>().is_err());
/// ```
#[derive(Copy, Clone, Debug, PartialEq, Eq, Hash)]
pub struct Quota {
    limit: u64,
    window: Nanos,
    burst: Option<u64>,
}

impl Quota {
    /// `limit` hits per `window`.
    pub fn new(limit: u64, window: Nanos) -> Result<Quota, ConfigError> {
        check_limit(limit)?;
        check_window(window)?;
        Ok(Quota { limit, window, burst: None })
    }
    /// `limit` hits per second.
    pub fn per_second(limit: u64) -> Result<Quota, ConfigError> {
        Quota::new(limit, Nanos::from_secs(1))
    }
    /// `limit` hits per minute.
    pub fn per_minute(limit: u64) -> Result<Quota, ConfigError> {
        Quota::new(limit, Nanos::from_secs(60))
    }
    /// `limit` hits per hour.
    pub fn per_hour(limit: u64) -> Result<Quota, ConfigError> {
        Quota::new(limit, Nanos::from_secs(3600))
    }
    /// `limit` hits per day.
    pub fn per_day(limit: u64) -> Result<Quota, ConfigError> {
        Quota::new(limit, Nanos::from_secs(86_400))
    }
    /// The same quota with the largest burst the algorithm may admit at one instant.
    pub fn with_burst(self, burst: u64) -> Result<Quota, ConfigError> {
        if burst == 0 {
            return Err(ConfigError::ZeroBurst);
        }
        if burst > MAX_LIMIT {
            return Err(ConfigError::BurstTooLarge { burst, max: MAX_LIMIT });
        }
        Ok(Quota { burst: Some(burst), ..self })
    }
    /// Hits per window.
    pub fn limit(&self) -> u64 {
        self.limit
    }
    /// The window length.
    pub fn window(&self) -> Nanos {
        self.window
    }
    /// The burst: as given, or the limit when none was given.
    pub fn burst(&self) -> u64 {
        self.burst.unwrap_or(self.limit)
    }
    /// Whether a burst was given explicitly.
    pub fn has_explicit_burst(&self) -> bool {
        self.burst.is_some()
    }
    /// The time one hit "costs" at the steady rate, `window / limit`, rounded up to a whole
    /// nanosecond. Rounding up can only make the limit stricter (by under 1 ns per hit); it is
    /// exact whenever `limit` divides the window, e.g. every rate up to 10^6/s with a window
    /// of whole seconds.
    pub fn emission_interval(&self) -> Result<Nanos, ConfigError> {
        let t = self.window.as_nanos().div_ceil(self.limit);
        if self.limit > self.window.as_nanos() {
            return Err(ConfigError::RateTooHigh { limit: self.limit, window_ns: self.window.as_nanos() });
        }
        Ok(Nanos::new(t))
    }
}

pub(crate) fn check_limit(limit: u64) -> Result<(), ConfigError> {
    if limit == 0 {
        return Err(ConfigError::ZeroLimit);
    }
    if limit > MAX_LIMIT {
        return Err(ConfigError::LimitTooLarge { limit, max: MAX_LIMIT });
    }
    Ok(())
}

pub(crate) fn check_window(window: Nanos) -> Result<(), ConfigError> {
    if window == Nanos::ZERO {
        return Err(ConfigError::ZeroWindow);
    }
    if window > MAX_WINDOW {
        return Err(ConfigError::WindowTooLong {
            window_ms: window.as_millis_floor(),
            max_ms: MAX_WINDOW.as_millis_floor(),
        });
    }
    Ok(())
}

impl FromStr for Quota {
    type Err = ConfigError;

    /// `<limit>/<window>`, where the window is a [duration](parse_duration) whose number may be
    /// left out: `10/s`, `120/m`, `240/h`, `5000/1h`, `200/day`, `500/5s`.
    fn from_str(input: &str) -> Result<Quota, ConfigError> {
        let bad = |reason| ConfigError::InvalidQuota { input: input.to_string(), reason };
        let (count, window) = input.split_once('/').ok_or(bad("expected <limit>/<window>, e.g. 100/s"))?;
        let count = count.trim();
        if count.is_empty() || !count.bytes().all(|b| b.is_ascii_digit()) {
            return Err(bad("the limit must be a whole number"));
        }
        let limit: u64 = count.parse().map_err(|_| bad("the limit is too large"))?;
        let window = window.trim();
        let window = if window.as_bytes().first().is_some_and(u8::is_ascii_digit) {
            parse_duration(window)?
        } else {
            unit(window).ok_or_else(|| bad(unknown_unit(window)))?
        };
        Quota::new(limit, window)
    }
}

impl fmt::Display for Quota {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}/{}", self.limit, self.window)?;
        if let Some(b) = self.burst {
            write!(f, " burst {b}")?;
        }
        Ok(())
    }
}

/// Parses a duration: a whole number and a unit, `250ms`, `1s`, `90s`, `5m`, `1h`, `1d`, `1w`.
/// Units: `ns`, `us`, `ms`, `s`/`sec`/`second(s)`, `m`/`min`/`minute(s)`, `h`/`hr`/`hour(s)`,
/// `d`/`day(s)`, `w`/`week(s)`. A bare number is refused: its unit would be a guess.
///
/// ```
/// use tollgate::{quota::parse_duration, Nanos};
/// assert_eq!(parse_duration("90s").unwrap(), Nanos::from_secs(90));
/// assert_eq!(parse_duration("250ms").unwrap(), Nanos::from_millis(250));
/// assert!(parse_duration("90").is_err());
/// ```
pub fn parse_duration(input: &str) -> Result<Nanos, ConfigError> {
    let window = parse_duration_unchecked(input)?;
    check_window(window)?;
    Ok(window)
}

/// [`parse_duration`] without the window's range check: `"0s"` is a valid offset.
pub(crate) fn parse_duration_unchecked(input: &str) -> Result<Nanos, ConfigError> {
    let bad = |reason| ConfigError::InvalidQuota { input: input.to_string(), reason };
    let s = input.trim();
    let digits = s.bytes().take_while(u8::is_ascii_digit).count();
    if digits == 0 {
        return Err(bad("a duration starts with a whole number, e.g. 5s"));
    }
    // `split_at_checked`, not `s[..digits]`: the digits are ASCII, so the split is always on a
    // character boundary, but indexing would still link core's slice-error formatting (with
    // `char`'s Debug and Unicode tables, kilobytes of the wasm module) for a panic that cannot
    // happen.
    let (number, rest) = s.split_at_checked(digits).unwrap_or((s, ""));
    let n: u64 = number.parse().map_err(|_| bad("the number is too large"))?;
    let rest = rest.trim_start();
    if rest.is_empty() {
        return Err(bad("a duration needs a unit, e.g. ms, s, m, h, d"));
    }
    let per = unit(rest).ok_or_else(|| bad(unknown_unit(rest)))?;
    // Past u64 nanoseconds it is still a well-formed duration, only far too long: a range
    // error naming the maximum, as for any window above it.
    let too_long = || ConfigError::WindowTooLong {
        window_ms: u64::try_from(n as u128 * per.as_nanos() as u128 / 1_000_000).unwrap_or(u64::MAX),
        max_ms: MAX_WINDOW.as_millis_floor(),
    };
    Ok(Nanos::new(n.checked_mul(per.as_nanos()).ok_or_else(too_long)?))
}

/// The number of calendar months a window's text names (`month`, `1month`, `3 months`), or
/// `None` when it names no months. Months are not a duration (28 to 31 days): only a fixed
/// window on the clock takes them, through [`crate::spec`] or
/// [`FixedWindow::calendar_months`](crate::FixedWindow::calendar_months).
///
/// ```
/// use tollgate::quota::calendar_months;
/// assert_eq!((calendar_months("month"), calendar_months("3months"), calendar_months("1d")), (Some(1), Some(3), None));
/// ```
pub fn calendar_months(window: &str) -> Option<u32> {
    let s = window.trim();
    let digits = s.bytes().take_while(u8::is_ascii_digit).count();
    let (number, rest) = s.split_at_checked(digits).unwrap_or((s, ""));
    let rest = rest.trim_start();
    if !(rest.eq_ignore_ascii_case("month") || rest.eq_ignore_ascii_case("months")) {
        return None;
    }
    Some(if digits == 0 { 1 } else { number.parse().unwrap_or(u32::MAX) })
}

/// Why a unit was not found: months are named, anything else is unknown.
fn unknown_unit(s: &str) -> &'static str {
    if calendar_months(s).is_some() {
        "a month is a calendar window, not a duration: only a fixed window on the clock takes it"
    } else {
        "unknown time unit"
    }
}

fn unit(s: &str) -> Option<Nanos> {
    let s = s.trim();
    let lower = |u: &str| s.eq_ignore_ascii_case(u);
    let n = if lower("ns") {
        1
    } else if lower("us") || lower("µs") {
        1_000
    } else if lower("ms") {
        1_000_000
    } else if ["s", "sec", "secs", "second", "seconds"].iter().any(|u| lower(u)) {
        1_000_000_000
    } else if ["m", "min", "mins", "minute", "minutes"].iter().any(|u| lower(u)) {
        60_000_000_000
    } else if ["h", "hr", "hrs", "hour", "hours"].iter().any(|u| lower(u)) {
        3_600_000_000_000
    } else if ["d", "day", "days"].iter().any(|u| lower(u)) {
        86_400_000_000_000
    } else if ["w", "week", "weeks"].iter().any(|u| lower(u)) {
        604_800_000_000_000
    } else {
        return None;
    };
    Some(Nanos::new(n))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_quota_string_from_the_issue_parses() {
        let cases = [
            ("10/s", 10, 1),
            ("120/m", 120, 60),
            ("240/h", 240, 3600),
            ("5000/1h", 5000, 3600),
            ("200/day", 200, 86_400),
            ("500/5s", 500, 5),
        ];
        for (s, limit, secs) in cases {
            let q: Quota = s.parse().unwrap();
            assert_eq!((q.limit(), q.window()), (limit, Nanos::from_secs(secs)), "{s}");
        }
    }

    #[test]
    fn invalid_quota_strings_say_why() {
        for s in ["", "10", "/s", "x/s", "10/", "10/parsec", "0/s", "-1/s", "1.5/s", "10/0s", "10/400d"] {
            let err = s.parse::<Quota>().unwrap_err();
            assert!(!err.to_string().is_empty(), "{s}");
        }
        assert_eq!("0/s".parse::<Quota>().unwrap_err(), ConfigError::ZeroLimit);
        assert!(matches!("10/400d".parse::<Quota>(), Err(ConfigError::WindowTooLong { .. })));
    }

    /// A duration past what u64 nanoseconds hold is a window above the maximum (a range
    /// error naming it), not a malformed string.
    #[test]
    fn durations_past_u64_nanoseconds_are_too_long_not_malformed() {
        let max_ms = MAX_WINDOW.as_millis_floor();
        assert_eq!(
            parse_duration("9007199254740991ms"),
            Err(ConfigError::WindowTooLong { window_ms: 9_007_199_254_740_991, max_ms })
        );
        assert_eq!(
            parse_duration("1000000000d"),
            Err(ConfigError::WindowTooLong { window_ms: 86_400_000_000_000_000, max_ms })
        );
        assert_eq!(
            parse_duration("99999999999999999999w"),
            Err(ConfigError::InvalidQuota { input: "99999999999999999999w".into(), reason: "the number is too large" })
        );
        assert_eq!(
            parse_duration("18446744073709551615ns"),
            Err(ConfigError::WindowTooLong { window_ms: 18_446_744_073_709, max_ms })
        );
    }

    #[test]
    fn emission_interval_is_exact_up_to_a_million_per_second() {
        assert_eq!(Quota::per_second(1_000_000).unwrap().emission_interval().unwrap(), Nanos::new(1_000));
        assert_eq!(Quota::per_second(1000).unwrap().emission_interval().unwrap(), Nanos::from_micros(1000));
        // 3 per second does not divide: rounded up, never down.
        assert_eq!(Quota::per_second(3).unwrap().emission_interval().unwrap(), Nanos::new(333_333_334));
        assert!(Quota::new(10, Nanos::new(5)).unwrap().emission_interval().is_err());
    }
}
