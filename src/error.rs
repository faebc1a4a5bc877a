//! Errors: bad configuration, a hit that can never fit, and state bytes that do not decode.
//!
//! Every error names what was wrong and with which value, because the JS and HTTP layers pass
//! these messages straight to users. None of them is ever a panic.

use core::fmt;

use crate::Nanos;

/// A configuration that cannot make a working limit: caught when the limit is built, so a
/// decision never meets it.
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
#[allow(missing_docs)] // the fields are named for what they hold
pub enum ConfigError {
    /// The limit (hits per window) must be at least 1.
    ZeroLimit,
    /// The limit is above [`crate::quota::MAX_LIMIT`] (or the algorithm's own cap).
    LimitTooLarge { limit: u64, max: u64 },
    /// The window must be longer than zero.
    ZeroWindow,
    /// The window is longer than [`crate::quota::MAX_WINDOW`].
    WindowTooLong { window_ms: u64, max_ms: u64 },
    /// The burst must be at least 1.
    ZeroBurst,
    /// The burst is above [`crate::quota::MAX_LIMIT`].
    BurstTooLarge { burst: u64, max: u64 },
    /// More hits per window than whole nanoseconds in it: the rate is above 10^9 per second.
    RateTooHigh { limit: u64, window_ns: u64 },
    /// A token bucket's refill amount must be between 1 and its capacity.
    BadRefillAmount { amount: u64, capacity: u64 },
    /// The refill interval must be longer than zero and at most the longest window.
    BadRefillInterval { interval_ns: u64 },
    /// The precision (sub-bucket length) must divide the window exactly.
    PrecisionNotDivisor { window_ns: u64, precision_ns: u64 },
    /// The window would have more sub-buckets than [`crate::algorithms::MAX_BUCKETS`].
    TooManyBuckets { buckets: u64, max: u64 },
    /// The clock-alignment offset must be shorter than the window.
    OffsetTooLarge { offset_ns: u64, window_ns: u64 },
    /// A quota or duration string that does not parse; the message says why.
    InvalidQuota { input: alloc::string::String, reason: &'static str },
    /// An algorithm name this crate does not know.
    UnknownAlgorithm { name: alloc::string::String },
    /// An option that this algorithm does not take (e.g. `burst` for a fixed window).
    UnsupportedOption { algorithm: &'static str, option: &'static str },
    /// A policy needs at least one limit.
    EmptyPolicy,
    /// A policy has more than [`crate::policy::MAX_LIMITS`] limits.
    TooManyLimits { count: usize, max: usize },
    /// Two limits of one policy share a name.
    DuplicateLimitName { name: alloc::string::String },
    /// A limit name must be 1 to 64 characters of `A-Z a-z 0-9 - _ . :` (it appears in headers).
    InvalidLimitName { name: alloc::string::String },
}

impl fmt::Display for ConfigError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        use ConfigError::*;
        match self {
            ZeroLimit => write!(f, "limit must be at least 1"),
            LimitTooLarge { limit, max } => write!(f, "limit {limit} is above the maximum {max}"),
            ZeroWindow => write!(f, "window must be longer than zero"),
            WindowTooLong { window_ms, max_ms } => {
                write!(f, "window of {window_ms} ms is longer than the maximum {max_ms} ms")
            }
            ZeroBurst => write!(f, "burst must be at least 1"),
            BurstTooLarge { burst, max } => write!(f, "burst {burst} is above the maximum {max}"),
            RateTooHigh { limit, window_ns } => {
                write!(f, "rate too high: {limit} hits in {} is more than one per nanosecond", Nanos::new(*window_ns))
            }
            BadRefillAmount { amount, capacity } => {
                write!(f, "refill amount {amount} must be between 1 and the capacity {capacity}")
            }
            BadRefillInterval { interval_ns } => {
                write!(f, "refill interval of {} is out of range", Nanos::new(*interval_ns))
            }
            PrecisionNotDivisor { window_ns, precision_ns } => {
                write!(
                    f,
                    "precision {} must divide the window {} exactly",
                    Nanos::new(*precision_ns),
                    Nanos::new(*window_ns)
                )
            }
            TooManyBuckets { buckets, max } => {
                write!(f, "window split into {buckets} buckets; at most {max} are allowed")
            }
            OffsetTooLarge { offset_ns, window_ns } => {
                write!(
                    f,
                    "offset {} must be shorter than the window {}",
                    Nanos::new(*offset_ns),
                    Nanos::new(*window_ns)
                )
            }
            InvalidQuota { input, reason } => write!(f, "invalid quota \"{input}\": {reason}"),
            UnknownAlgorithm { name } => {
                write!(f, "unknown algorithm \"{name}\"; expected one of ")?;
                for (i, kind) in crate::Kind::ALL.iter().enumerate() {
                    write!(f, "{}{}", if i > 0 { ", " } else { "" }, kind.name())?;
                }
                Ok(())
            }
            UnsupportedOption { algorithm, option } => {
                write!(f, "algorithm {algorithm} does not take the option \"{option}\"")
            }
            EmptyPolicy => write!(f, "a policy needs at least one limit"),
            TooManyLimits { count, max } => {
                write!(f, "a policy has {count} limits; at most {max} are allowed")
            }
            DuplicateLimitName { name } => write!(f, "two limits are named \"{name}\""),
            InvalidLimitName { name } => {
                write!(f, "limit name \"{name}\" must be 1 to 64 characters of A-Z a-z 0-9 - _ . :")
            }
        }
    }
}

impl core::error::Error for ConfigError {}

/// Why a hit could not be decided at all. A hit that is merely over the limit *right now* is
/// not an error: it is a [`crate::Decision`] with `allowed == false`.
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
#[allow(missing_docs)] // the fields are named for what they hold
pub enum CheckError {
    /// A cost of zero; costs are positive weights.
    ZeroCost,
    /// The cost is above what the limit can ever hold, so waiting would never help
    /// (governor's `InsufficientCapacity`). `limit` is the index of the limit in its policy.
    CostExceedsCapacity { cost: u64, capacity: u64, limit: usize },
}

impl fmt::Display for CheckError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            CheckError::ZeroCost => write!(f, "cost must be at least 1"),
            CheckError::CostExceedsCapacity { cost, capacity, .. } => {
                write!(f, "cost {cost} can never fit: the capacity is {capacity}")
            }
        }
    }
}

impl core::error::Error for CheckError {}

/// State bytes that are not a valid encoding (corrupt, truncated, from a newer version, or
/// written for a different algorithm).
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
#[allow(missing_docs)] // the fields are named for what they hold
pub enum DecodeError {
    /// The input ended in the middle of a value.
    Truncated,
    /// The format version byte is not one this build reads.
    UnknownVersion(u8),
    /// An algorithm tag that does not exist.
    UnknownTag(u8),
    /// The state is for another algorithm than the limit it is read for (the configuration
    /// changed under stored state).
    AlgorithmMismatch { expected: &'static str, found: &'static str },
    /// The state has a different number of limits than the policy reading it.
    LimitCountMismatch { expected: usize, found: usize },
    /// A variable-length integer that overflows 64 bits.
    Overflow,
    /// Bytes left over after the state.
    TrailingBytes,
    /// A value that no valid state can hold (e.g. more log entries than twice the limit).
    Invalid(&'static str),
}

impl fmt::Display for DecodeError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        use DecodeError::*;
        match self {
            Truncated => write!(f, "state bytes end too early"),
            UnknownVersion(v) => write!(f, "state format version {v} is not supported"),
            UnknownTag(t) => write!(f, "unknown algorithm tag {t} in state bytes"),
            AlgorithmMismatch { expected, found } => {
                write!(f, "stored state is for {found}, but the limit is {expected}")
            }
            LimitCountMismatch { expected, found } => {
                write!(f, "stored state has {found} limits, but the policy has {expected}")
            }
            Overflow => write!(f, "integer in state bytes overflows 64 bits"),
            TrailingBytes => write!(f, "unexpected bytes after the state"),
            Invalid(why) => write!(f, "invalid state: {why}"),
        }
    }
}

impl core::error::Error for DecodeError {}
