//! Time as the algorithms see it: whole nanoseconds in a `u64`.
//!
//! Every algorithm takes `now` as an argument; nothing in this crate reads a clock. One type
//! serves for instants (nanoseconds since the Unix epoch) and for spans, as in governor.
//!
//! Why nanoseconds in a `u64`: a rate of 1,000,000 per second has an emission interval of
//! exactly 1,000 ns, so every rate up to a million per second is exact; and `u64::MAX`
//! nanoseconds after 1970 is in the year 2554, well past the 2100 we promise. The JavaScript
//! and HTTP edges speak milliseconds and convert with [`Nanos::from_millis`] and
//! [`Nanos::as_millis_ceil`]; rounding up there keeps `retryAfter` safe to wait for.

use core::fmt;
use core::ops::{Add, Sub};

/// Nanoseconds: an instant since the Unix epoch, or a span of time.
///
/// Arithmetic saturates instead of wrapping or panicking, so no input can crash a decision.
///
/// ```
/// use tollgate::Nanos;
/// let minute = Nanos::from_secs(60);
/// assert_eq!(minute.as_nanos(), 60_000_000_000);
/// assert_eq!(Nanos::new(1_500_000).as_millis_ceil(), 2);
/// assert_eq!(Nanos::MAX + minute, Nanos::MAX);
/// ```
#[derive(Copy, Clone, Default, PartialEq, Eq, PartialOrd, Ord, Hash)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize), serde(transparent))]
pub struct Nanos(u64);

/// The latest epoch time, in milliseconds, that an edge takes as a hit's `now`: the year 2500,
/// far inside `u64` nanoseconds. One bound for every edge (the npm package, the Worker's
/// `TEST_MODE` bodies), so the same `now` is taken or refused alike.
pub const MAX_EPOCH_MS: u64 = 16_725_225_600_000;

impl Nanos {
    /// Zero: the Unix epoch, or no time at all.
    pub const ZERO: Nanos = Nanos(0);
    /// The largest representable value (year 2554).
    pub const MAX: Nanos = Nanos(u64::MAX);

    /// From whole nanoseconds.
    #[inline]
    pub const fn new(nanos: u64) -> Nanos {
        Nanos(nanos)
    }
    /// From microseconds, saturating.
    pub const fn from_micros(micros: u64) -> Nanos {
        Nanos(micros.saturating_mul(1_000))
    }
    /// From milliseconds, saturating.
    pub const fn from_millis(millis: u64) -> Nanos {
        Nanos(millis.saturating_mul(1_000_000))
    }
    /// Epoch milliseconds as every edge takes a hit's `now` (fractions allowed, to the nearest
    /// nanosecond, halves up), or `None` outside `0..=MAX_EPOCH_MS` and for NaN.
    ///
    /// ```
    /// use tollgate::{time::MAX_EPOCH_MS, Nanos};
    /// assert_eq!(Nanos::from_epoch_ms(1_700_000_000_000.25), Some(Nanos::new(1_700_000_000_000_250_000)));
    /// assert_eq!(Nanos::from_epoch_ms(-1.0), None);
    /// assert_eq!(Nanos::from_epoch_ms(MAX_EPOCH_MS as f64 + 1.0), None);
    /// ```
    #[inline]
    pub fn from_epoch_ms(ms: f64) -> Option<Nanos> {
        if !(0.0..=MAX_EPOCH_MS as f64).contains(&ms) {
            return None;
        }
        Some(Nanos::from_epoch_ms_in_range(ms))
    }
    /// [`Nanos::from_epoch_ms`] of a time the caller has already checked to be in
    /// `0..=MAX_EPOCH_MS` (the wasm modules' per-request path checks once, before deciding).
    #[inline(always)]
    pub fn from_epoch_ms_in_range(ms: f64) -> Nanos {
        // Whole milliseconds exactly (`ms * 1e6` as one f64 would lose ~256 ns at today's
        // epoch), then the fraction to the nearest nanosecond, halves up (`f64::round` is std's,
        // and in wasm a libm call). Each `as i64` truncates; signed rather than unsigned because
        // the values are far below 2^63, and wasm engines turn the signed conversions into one
        // machine instruction each where the unsigned ones take branches and shifts.
        let whole = ms as i64;
        let frac = (ms - whole as f64) * 1e6;
        let f = frac as i64;
        let rounded = f + (frac - f as f64 >= 0.5) as i64;
        Nanos(whole as u64 * 1_000_000 + rounded as u64)
    }
    /// From seconds, saturating.
    pub const fn from_secs(secs: u64) -> Nanos {
        Nanos(secs.saturating_mul(1_000_000_000))
    }
    /// Whole nanoseconds.
    #[inline]
    pub const fn as_nanos(self) -> u64 {
        self.0
    }
    /// Milliseconds, rounded down (for instants in the past, like a window start).
    pub const fn as_millis_floor(self) -> u64 {
        self.0 / 1_000_000
    }
    /// Milliseconds, rounded up: waiting this long is always enough.
    #[inline]
    pub const fn as_millis_ceil(self) -> u64 {
        self.0.div_ceil(1_000_000)
    }
    /// Milliseconds with their fraction: the whole milliseconds exactly, then the nanoseconds
    /// past them, so an exclusive end stays exclusive at an edge that counts in ms.
    pub fn as_millis_f64(self) -> f64 {
        (self.0 / 1_000_000) as f64 + (self.0 % 1_000_000) as f64 / 1e6
    }
    /// Seconds, rounded up (HTTP `Retry-After`, the `t` of the `RateLimit` header).
    pub const fn as_secs_ceil(self) -> u64 {
        self.0.div_ceil(1_000_000_000)
    }
    /// `self + other`, stopping at [`Nanos::MAX`].
    #[inline]
    pub const fn saturating_add(self, other: Nanos) -> Nanos {
        Nanos(self.0.saturating_add(other.0))
    }
    /// `self - other`, stopping at zero.
    #[inline]
    pub const fn saturating_sub(self, other: Nanos) -> Nanos {
        Nanos(self.0.saturating_sub(other.0))
    }
    /// `self * n`, stopping at [`Nanos::MAX`].
    ///
    /// A product whose factors have 64 or more leading zero bits between them cannot
    /// overflow and skips the overflow check: on wasm32, `u64::saturating_mul` is a call to
    /// the 128-bit `__multi3`, a large share of a GCRA check in the npm package
    /// (docs/benchmarks.md, "Where a W1 check's time goes"). Same result either way.
    #[inline]
    pub const fn saturating_mul(self, n: u64) -> Nanos {
        if self.0.leading_zeros() + n.leading_zeros() >= 64 {
            Nanos(self.0 * n)
        } else {
            Nanos(self.0.saturating_mul(n))
        }
    }
    /// The current time from the system clock (only with `std`). Algorithms never call this;
    /// it is a convenience for callers.
    #[cfg(feature = "std")]
    pub fn now() -> Nanos {
        let since = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).unwrap_or_default();
        Nanos::from(since)
    }
}

impl Add for Nanos {
    type Output = Nanos;
    #[inline]
    fn add(self, rhs: Nanos) -> Nanos {
        self.saturating_add(rhs)
    }
}

impl Sub for Nanos {
    type Output = Nanos;
    #[inline]
    fn sub(self, rhs: Nanos) -> Nanos {
        self.saturating_sub(rhs)
    }
}

impl From<core::time::Duration> for Nanos {
    fn from(d: core::time::Duration) -> Nanos {
        Nanos(u64::try_from(d.as_nanos()).unwrap_or(u64::MAX))
    }
}

impl From<Nanos> for core::time::Duration {
    fn from(n: Nanos) -> core::time::Duration {
        core::time::Duration::from_nanos(n.0)
    }
}

impl fmt::Debug for Nanos {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}ns", self.0)
    }
}

impl Nanos {
    /// The duration as a whole number of the largest unit that holds it exactly, the way
    /// quota strings write it: `(250, "ms")`, `(60, "s")`, `(1500, "us")`. `Display` prints
    /// it; the wasm layer, which builds its messages without `core::fmt`, spells the same.
    ///
    /// ```
    /// use tollgate::Nanos;
    /// assert_eq!(Nanos::from_millis(300).in_whole_unit(), (300, "ms"));
    /// assert_eq!(Nanos::from_secs(60).in_whole_unit(), (60, "s"));
    /// assert_eq!(Nanos::new(1_500).in_whole_unit(), (1_500, "ns"));
    /// assert_eq!(Nanos::from_secs(60).to_string(), "60s");
    /// ```
    pub const fn in_whole_unit(self) -> (u64, &'static str) {
        let n = self.0;
        if n % 1_000_000_000 == 0 {
            (n / 1_000_000_000, "s")
        } else if n % 1_000_000 == 0 {
            (n / 1_000_000, "ms")
        } else if n % 1_000 == 0 {
            (n / 1_000, "us")
        } else {
            (n, "ns")
        }
    }
}

impl fmt::Display for Nanos {
    /// Human units, exact, as quota strings write them: `250ms`, `60s`, `1500us`.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let (n, unit) = self.in_whole_unit();
        write!(f, "{n}{unit}")
    }
}

#[cfg(test)]
mod saturating_mul_tests {
    use super::Nanos;

    /// The shortcut for small factors gives `u64::saturating_mul`'s answer, at and around
    /// the edges where it stops applying.
    #[test]
    fn same_as_u64_saturating_mul() {
        let edges =
            [0, 1, 2, 3, 999, 1_000_000, u32::MAX as u64, 1 << 32, (1 << 32) + 1, 1 << 63, u64::MAX - 1, u64::MAX];
        let mut values = values_around(&edges);
        values.sort_unstable();
        for &a in &values {
            for &b in &values {
                assert_eq!(Nanos(a).saturating_mul(b).0, a.saturating_mul(b), "{a} * {b}");
            }
        }
    }

    /// Every edge, its neighbours, and every power of two with its neighbours.
    fn values_around(edges: &[u64]) -> alloc::vec::Vec<u64> {
        let mut v = alloc::vec::Vec::new();
        for &e in edges {
            v.extend([e.wrapping_sub(1), e, e.wrapping_add(1)]);
        }
        for k in 0..64 {
            let p = 1u64 << k;
            v.extend([p - 1, p, p + 1]);
        }
        v
    }
}

#[cfg(test)]
mod epoch_ms_tests {
    use super::{Nanos, MAX_EPOCH_MS};
    use alloc::vec;

    /// What the conversion must give: the whole milliseconds times 1e6 plus the fraction in
    /// nanoseconds rounded half up (`f64::round`), computed apart.
    fn reference(ms: f64) -> u64 {
        let whole = ms as u64;
        whole * 1_000_000 + ((ms - whole as f64) * 1e6).round() as u64
    }

    #[test]
    fn from_epoch_ms_is_exact_across_the_range() {
        let max = MAX_EPOCH_MS as f64;
        let mut ms = 0.0f64;
        let mut all = vec![0.0, 0.5, 1.0, 1_700_000_000_000.0, 1_700_000_000_000.25, 1_700_000_000_000.001, max];
        while ms < max {
            all.push(ms);
            ms = ms * 1.7 + 0.123_456_789;
        }
        for ms in all {
            assert_eq!(Nanos::from_epoch_ms(ms), Some(Nanos::new(reference(ms))), "{ms}");
        }
        for ms in [-0.5, -1.0, f64::NAN, f64::INFINITY, max + 1.0] {
            assert_eq!(Nanos::from_epoch_ms(ms), None, "{ms}");
        }
    }

    /// Milliseconds with their fraction keep an instant's whole milliseconds exact.
    #[test]
    fn as_millis_f64_keeps_the_whole_ms_exact() {
        assert_eq!(Nanos::new(1_700_000_000_123_000_000).as_millis_f64(), 1_700_000_000_123.0);
        assert_eq!(Nanos::new(1_700_000_000_123_500_000).as_millis_f64(), 1_700_000_000_123.5);
        assert_eq!(Nanos::new(u64::MAX).as_millis_f64().floor(), (u64::MAX / 1_000_000) as f64);
        assert_eq!(Nanos::new(2_500_000).as_millis_f64(), 2.5);
        assert_eq!(Nanos::ZERO.as_millis_f64(), 0.0);
    }

    /// Near halves of a nanosecond, where rounding half up and half to even differ.
    #[test]
    fn from_epoch_ms_rounds_halves_up() {
        let mut x = 0.0f64;
        while x < 1_000.0 {
            assert_eq!(Nanos::from_epoch_ms(x), Some(Nanos::new(reference(x))), "{x}");
            x += 0.000_123_456_7;
        }
        for x in [0.0000005, 0.0000015, 0.0000025, 0.9999995, 123.4565] {
            assert_eq!(Nanos::from_epoch_ms(x), Some(Nanos::new(reference(x))), "{x}");
        }
    }
}
