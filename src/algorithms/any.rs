//! Choosing an algorithm at run time: by name, from a [`LimitSpec`].
//!
//! The JS package, the Worker and the playground receive configurations as data; this module
//! turns them into one of the algorithms and dispatches to it, with no algorithm logic of its
//! own.

use core::fmt;
use core::str::FromStr;

use alloc::string::ToString;

use crate::algorithm::Algorithm;
use crate::algorithms::{
    FirstHitState, FixedWindow, FixedWindowFirstHit, FixedWindowState, Gcra, GcraState, SlidingBuckets,
    SlidingBucketsState, SlidingLog, SlidingLogState, SlidingWindow, SlidingWindowState, TokenBucket, TokenBucketState,
};
use crate::calendar::Months;
use crate::decision::{Decision, Outcome};
use crate::error::{CheckError, ConfigError};
use crate::quota::Quota;
use crate::time::Nanos;

/// The algorithms, by name.
#[derive(Copy, Clone, Debug, PartialEq, Eq, Hash)]
pub enum Kind {
    /// [`FixedWindow`], `"fixed-window"`.
    FixedWindow,
    /// [`FixedWindowFirstHit`], `"fixed-window-first-hit"`.
    FixedWindowFirstHit,
    /// [`SlidingLog`], `"sliding-log"`.
    SlidingLog,
    /// [`SlidingWindow`], `"sliding-window"`.
    SlidingWindow,
    /// [`SlidingBuckets`], `"sliding-buckets"`.
    SlidingBuckets,
    /// [`TokenBucket`], `"token-bucket"`.
    TokenBucket,
    /// [`Gcra`], `"gcra"`.
    Gcra,
    /// [`Concurrency`](crate::algorithms::Concurrency), `"concurrency"` (feature `concurrency`).
    #[cfg(feature = "concurrency")]
    Concurrency,
}

impl Kind {
    /// Every algorithm, in the order the docs present them.
    pub const ALL: [Kind; 7] = [
        Kind::FixedWindow,
        Kind::FixedWindowFirstHit,
        Kind::SlidingLog,
        Kind::SlidingWindow,
        Kind::SlidingBuckets,
        Kind::TokenBucket,
        Kind::Gcra,
    ];

    /// The name, listed here once. Configurations (`crate::spec`) spell first-hit windows as
    /// `fixed-window` with `align: "first-hit"`; this name is the Rust API's and the state's.
    pub const fn name(self) -> &'static str {
        match self {
            Kind::FixedWindow => "fixed-window",
            Kind::FixedWindowFirstHit => "fixed-window-first-hit",
            Kind::SlidingLog => "sliding-log",
            Kind::SlidingWindow => "sliding-window",
            Kind::SlidingBuckets => "sliding-buckets",
            Kind::TokenBucket => "token-bucket",
            Kind::Gcra => "gcra",
            #[cfg(feature = "concurrency")]
            Kind::Concurrency => "concurrency",
        }
    }

    /// Whether counts of this algorithm can be added up across nodes (see [`crate::merge`]).
    pub fn is_mergeable(self) -> bool {
        matches!(self, Kind::FixedWindow | Kind::SlidingWindow | Kind::SlidingBuckets)
    }
}

impl FromStr for Kind {
    type Err = ConfigError;
    /// [`Kind::name`]: one name per algorithm (the names peers use, `moving-window`,
    /// `leaky-bucket`, are refused by the configurations with what to write: `crate::spec`).
    fn from_str(s: &str) -> Result<Kind, ConfigError> {
        #[cfg(feature = "concurrency")]
        if s == Kind::Concurrency.name() {
            return Ok(Kind::Concurrency);
        }
        Kind::ALL
            .into_iter()
            .find(|k| k.name() == s)
            .ok_or_else(|| ConfigError::UnknownAlgorithm { name: s.to_string() })
    }
}

impl fmt::Display for Kind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// A limit described as data: what the JS options object and the Worker's JSON carry.
///
/// ```
/// use tollgate::{AnyAlgorithm, Algorithm, Kind, LimitSpec, Nanos};
/// let spec = LimitSpec { burst: Some(500), ..LimitSpec::new(Kind::TokenBucket, 100, Nanos::from_secs(1)) };
/// let stripe = AnyAlgorithm::from_spec(&spec).unwrap();
/// assert_eq!(stripe.limit(), 500);
/// let bad = LimitSpec { burst: Some(5), ..LimitSpec::new(Kind::FixedWindow, 100, Nanos::from_secs(1)) };
/// assert!(AnyAlgorithm::from_spec(&bad).is_err()); // a fixed window has no burst
/// ```
#[derive(Copy, Clone, Debug, PartialEq, Eq, Hash)]
pub struct LimitSpec {
    /// Which algorithm.
    pub algorithm: Kind,
    /// Hits per window.
    pub limit: u64,
    /// The window.
    pub window: Nanos,
    /// Largest burst (token bucket capacity, GCRA burst); defaults to `limit`.
    pub burst: Option<u64>,
    /// Tokens added per refill (token bucket); defaults to 1.
    pub refill_amount: Option<u64>,
    /// Sub-bucket length (sliding buckets); required there.
    pub precision: Option<Nanos>,
    /// Boundary offset for clock-aligned windows; defaults to 0.
    pub offset: Option<Nanos>,
    /// A window of calendar months instead of `window` (a clock-aligned fixed window only;
    /// `window` then holds the longest such window, and `offset` stays `None`).
    pub months: Option<Months>,
}

impl LimitSpec {
    /// `limit` per `window` with `algorithm` and no options.
    pub fn new(algorithm: Kind, limit: u64, window: Nanos) -> LimitSpec {
        LimitSpec {
            algorithm,
            limit,
            window,
            burst: None,
            refill_amount: None,
            precision: None,
            offset: None,
            months: None,
        }
    }

    fn refuse(&self, option: &'static str, given: bool) -> Result<(), ConfigError> {
        if given {
            Err(ConfigError::UnsupportedOption { algorithm: self.algorithm.name(), option })
        } else {
            Ok(())
        }
    }
}

/// Any algorithm, chosen at run time.
#[derive(Copy, Clone, Debug, PartialEq, Eq, Hash)]
#[allow(missing_docs)]
pub enum AnyAlgorithm {
    FixedWindow(FixedWindow),
    FixedWindowFirstHit(FixedWindowFirstHit),
    SlidingLog(SlidingLog),
    SlidingWindow(SlidingWindow),
    SlidingBuckets(SlidingBuckets),
    TokenBucket(TokenBucket),
    Gcra(Gcra),
    #[cfg(feature = "concurrency")]
    Concurrency(crate::algorithms::Concurrency),
}

/// The state of any algorithm; its variant always matches the algorithm's.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
#[allow(missing_docs)]
pub enum AnyState {
    FixedWindow(FixedWindowState),
    FixedWindowFirstHit(FirstHitState),
    SlidingLog(SlidingLogState),
    SlidingWindow(SlidingWindowState),
    SlidingBuckets(SlidingBucketsState),
    TokenBucket(TokenBucketState),
    Gcra(GcraState),
    #[cfg(feature = "concurrency")]
    Concurrency(crate::algorithms::ConcurrencyState),
}

impl AnyState {
    /// Which algorithm this state belongs to.
    pub fn kind(&self) -> Kind {
        match self {
            AnyState::FixedWindow(_) => Kind::FixedWindow,
            AnyState::FixedWindowFirstHit(_) => Kind::FixedWindowFirstHit,
            AnyState::SlidingLog(_) => Kind::SlidingLog,
            AnyState::SlidingWindow(_) => Kind::SlidingWindow,
            AnyState::SlidingBuckets(_) => Kind::SlidingBuckets,
            AnyState::TokenBucket(_) => Kind::TokenBucket,
            AnyState::Gcra(_) => Kind::Gcra,
            #[cfg(feature = "concurrency")]
            AnyState::Concurrency(_) => Kind::Concurrency,
        }
    }
}

impl AnyAlgorithm {
    /// Builds and validates the algorithm a spec describes. Options an algorithm does not
    /// take are refused rather than silently ignored.
    pub fn from_spec(spec: &LimitSpec) -> Result<AnyAlgorithm, ConfigError> {
        #[cfg(feature = "concurrency")]
        if spec.algorithm == Kind::Concurrency {
            spec.refuse("burst", spec.burst.is_some())?;
            spec.refuse("refillAmount", spec.refill_amount.is_some())?;
            spec.refuse("precision", spec.precision.is_some())?;
            spec.refuse("offset", spec.offset.is_some())?;
            spec.refuse("window", spec.months.is_some())?;
            return Ok(AnyAlgorithm::Concurrency(crate::algorithms::Concurrency::new(spec.limit, spec.window)?));
        }
        let mut quota = Quota::new(spec.limit, spec.window)?;
        let offset = spec.offset.unwrap_or(Nanos::ZERO);
        let k = spec.algorithm;
        if !matches!(k, Kind::TokenBucket | Kind::Gcra) {
            spec.refuse("burst", spec.burst.is_some())?;
        }
        if k != Kind::TokenBucket {
            spec.refuse("refillAmount", spec.refill_amount.is_some())?;
        }
        if k != Kind::SlidingBuckets {
            spec.refuse("precision", spec.precision.is_some())?;
        }
        if !matches!(k, Kind::FixedWindow | Kind::SlidingWindow | Kind::SlidingBuckets) {
            spec.refuse("offset", spec.offset.is_some())?;
        }
        if let Some(burst) = spec.burst {
            quota = quota.with_burst(burst)?;
        }
        if let Some(m) = spec.months {
            spec.refuse("window", k != Kind::FixedWindow)?;
            spec.refuse("offset", spec.offset.is_some())?;
            return Ok(AnyAlgorithm::FixedWindow(FixedWindow::calendar_months(spec.limit, m.count, m.offset_ns)?));
        }
        Ok(match k {
            Kind::FixedWindow => AnyAlgorithm::FixedWindow(FixedWindow::with_offset(quota, offset)?),
            Kind::FixedWindowFirstHit => AnyAlgorithm::FixedWindowFirstHit(FixedWindowFirstHit::new(quota)),
            Kind::SlidingLog => AnyAlgorithm::SlidingLog(SlidingLog::new(quota)?),
            Kind::SlidingWindow => AnyAlgorithm::SlidingWindow(SlidingWindow::with_offset(quota, offset)?),
            Kind::SlidingBuckets => {
                let precision = spec
                    .precision
                    .ok_or(ConfigError::PrecisionNotDivisor { window_ns: spec.window.as_nanos(), precision_ns: 0 })?;
                AnyAlgorithm::SlidingBuckets(SlidingBuckets::with_offset(quota, precision, offset)?)
            }
            Kind::TokenBucket => {
                AnyAlgorithm::TokenBucket(TokenBucket::from_quota_in_steps(quota, spec.refill_amount.unwrap_or(1))?)
            }
            Kind::Gcra => AnyAlgorithm::Gcra(Gcra::new(quota)?),
            // `window` is the lease's time to live.
            #[cfg(feature = "concurrency")]
            Kind::Concurrency => {
                AnyAlgorithm::Concurrency(crate::algorithms::Concurrency::new(spec.limit, spec.window)?)
            }
        })
    }

    /// The units a hit of `cost` takes from this limit: `cost`, or one slot for a
    /// concurrency limit (whatever the cost).
    #[inline]
    pub fn units(&self, cost: u64) -> u64 {
        #[cfg(feature = "concurrency")]
        if let AnyAlgorithm::Concurrency(_) = self {
            return 1;
        }
        cost
    }

    /// Which algorithm this is.
    pub fn kind(&self) -> Kind {
        match self {
            AnyAlgorithm::FixedWindow(_) => Kind::FixedWindow,
            AnyAlgorithm::FixedWindowFirstHit(_) => Kind::FixedWindowFirstHit,
            AnyAlgorithm::SlidingLog(_) => Kind::SlidingLog,
            AnyAlgorithm::SlidingWindow(_) => Kind::SlidingWindow,
            AnyAlgorithm::SlidingBuckets(_) => Kind::SlidingBuckets,
            AnyAlgorithm::TokenBucket(_) => Kind::TokenBucket,
            AnyAlgorithm::Gcra(_) => Kind::Gcra,
            #[cfg(feature = "concurrency")]
            AnyAlgorithm::Concurrency(_) => Kind::Concurrency,
        }
    }
}

/// Calls `$body` with `$a` bound to the concrete algorithm and `$s` to its state (or `None`
/// when the state is absent or, impossibly, of another algorithm), wrapping a produced state
/// back into [`AnyState`] with `$wrap`.
macro_rules! dispatch {
    ($self:expr, $state:expr, |$a:ident, $s:ident, $wrap:ident| $body:expr) => {
        match $self {
            AnyAlgorithm::FixedWindow($a) => {
                let $s = match $state {
                    Some(AnyState::FixedWindow(s)) => Some(s),
                    _ => None,
                };
                let $wrap = AnyState::FixedWindow;
                $body
            }
            AnyAlgorithm::FixedWindowFirstHit($a) => {
                let $s = match $state {
                    Some(AnyState::FixedWindowFirstHit(s)) => Some(s),
                    _ => None,
                };
                let $wrap = AnyState::FixedWindowFirstHit;
                $body
            }
            AnyAlgorithm::SlidingLog($a) => {
                let $s = match $state {
                    Some(AnyState::SlidingLog(s)) => Some(s),
                    _ => None,
                };
                let $wrap = AnyState::SlidingLog;
                $body
            }
            AnyAlgorithm::SlidingWindow($a) => {
                let $s = match $state {
                    Some(AnyState::SlidingWindow(s)) => Some(s),
                    _ => None,
                };
                let $wrap = AnyState::SlidingWindow;
                $body
            }
            AnyAlgorithm::SlidingBuckets($a) => {
                let $s = match $state {
                    Some(AnyState::SlidingBuckets(s)) => Some(s),
                    _ => None,
                };
                let $wrap = AnyState::SlidingBuckets;
                $body
            }
            AnyAlgorithm::TokenBucket($a) => {
                let $s = match $state {
                    Some(AnyState::TokenBucket(s)) => Some(s),
                    _ => None,
                };
                let $wrap = AnyState::TokenBucket;
                $body
            }
            AnyAlgorithm::Gcra($a) => {
                let $s = match $state {
                    Some(AnyState::Gcra(s)) => Some(s),
                    _ => None,
                };
                let $wrap = AnyState::Gcra;
                $body
            }
            #[cfg(feature = "concurrency")]
            AnyAlgorithm::Concurrency($a) => {
                let $s = match $state {
                    Some(AnyState::Concurrency(s)) => Some(s),
                    _ => None,
                };
                let $wrap = AnyState::Concurrency;
                $body
            }
        }
    };
}

/// Same as [`dispatch!`] for methods that take no state.
macro_rules! each {
    ($self:expr, |$a:ident| $body:expr) => {
        match $self {
            AnyAlgorithm::FixedWindow($a) => $body,
            AnyAlgorithm::FixedWindowFirstHit($a) => $body,
            AnyAlgorithm::SlidingLog($a) => $body,
            AnyAlgorithm::SlidingWindow($a) => $body,
            AnyAlgorithm::SlidingBuckets($a) => $body,
            AnyAlgorithm::TokenBucket($a) => $body,
            AnyAlgorithm::Gcra($a) => $body,
            #[cfg(feature = "concurrency")]
            AnyAlgorithm::Concurrency($a) => $body,
        }
    };
}

impl Algorithm for AnyAlgorithm {
    type State = AnyState;

    fn name(&self) -> &'static str {
        self.kind().name()
    }

    fn limit(&self) -> u64 {
        each!(self, |a| a.limit())
    }

    fn capacity(&self) -> u64 {
        each!(self, |a| a.capacity())
    }

    fn advertised_quota(&self) -> (u64, Nanos) {
        each!(self, |a| a.advertised_quota())
    }

    fn longest_window(&self) -> Nanos {
        each!(self, |a| a.longest_window())
    }

    fn check(&self, state: Option<&AnyState>, now: Nanos, cost: u64) -> Result<Outcome<AnyState>, CheckError> {
        dispatch!(self, state, |a, s, wrap| {
            let out = a.check(s, now, cost)?;
            Ok(Outcome { decision: out.decision, state: out.state.map(wrap) })
        })
    }

    fn peek(&self, state: Option<&AnyState>, now: Nanos, cost: u64) -> Result<Decision, CheckError> {
        dispatch!(self, state, |a, s, _wrap| a.peek(s, now, cost))
    }

    fn check_in_place(&self, state: &mut AnyState, now: Nanos, cost: u64) -> Result<Decision, CheckError> {
        // The sliding log is the one state worth not copying: hand it over in place.
        if let (AnyAlgorithm::SlidingLog(log), AnyState::SlidingLog(s)) = (self, &mut *state) {
            return log.check_in_place(s, now, cost);
        }
        let outcome = self.check(Some(state), now, cost)?;
        if let Some(new) = outcome.state {
            *state = new;
        }
        Ok(outcome.decision)
    }

    fn refund(&self, state: &AnyState, now: Nanos, cost: u64) -> Option<AnyState> {
        dispatch!(self, Some(state), |a, s, wrap| s.and_then(|s| a.refund(s, now, cost)).map(wrap))
    }

    fn fresh_at(&self, state: &AnyState) -> Nanos {
        dispatch!(self, Some(state), |a, s, _wrap| s.map_or(Nanos::ZERO, |s| a.fresh_at(s)))
    }
}
