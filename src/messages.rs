//! The errors' messages (`ConfigError`, `CheckError`, `DecodeError`'s `Display`), spelled out
//! again from the errors' fields with [`Msg`] instead of `core::fmt`, so the wasm modules do
//! not carry the formatting machinery for them (they throw these texts). The `Display` impls
//! stay for native callers; the tests below hold the two texts equal for every variant.

use alloc::string::String;

use crate::limiter::{KeyError, MAX_KEYS_PER_HIT, MAX_KEY_LEN};
use crate::text::Msg;
use crate::{CheckError, ConfigError, DecodeError};

/// `ConfigError`'s `Display` text.
#[inline(never)]
pub fn config_message(e: &ConfigError) -> String {
    use ConfigError::*;
    let m = Msg::new;
    match e {
        ZeroLimit => m("limit must be at least 1"),
        LimitTooLarge { limit, max } => m("limit ").n(*limit).s(" is above the maximum ").n(*max),
        ZeroWindow => m("window must be longer than zero"),
        WindowTooLong { window_ms, max_ms } => {
            m("window of ").n(*window_ms).s(" ms is longer than the maximum ").n(*max_ms).s(" ms")
        }
        ZeroBurst => m("burst must be at least 1"),
        BurstTooLarge { burst, max } => m("burst ").n(*burst).s(" is above the maximum ").n(*max),
        RateTooHigh { limit, window_ns } => {
            m("rate too high: ").n(*limit).s(" hits in ").d(*window_ns).s(" is more than one per nanosecond")
        }
        BadRefillAmount { amount, capacity } => {
            m("refill amount ").n(*amount).s(" must be between 1 and the capacity ").n(*capacity)
        }
        BadRefillInterval { interval_ns } => m("refill interval of ").d(*interval_ns).s(" is out of range"),
        PrecisionNotDivisor { window_ns, precision_ns } => {
            m("precision ").d(*precision_ns).s(" must divide the window ").d(*window_ns).s(" exactly")
        }
        TooManyBuckets { buckets, max } => {
            m("window split into ").n(*buckets).s(" buckets; at most ").n(*max).s(" are allowed")
        }
        OffsetTooLarge { offset_ns, window_ns } => {
            m("offset ").d(*offset_ns).s(" must be shorter than the window ").d(*window_ns)
        }
        InvalidQuota { input, reason } => m("invalid quota ").q(input).s(": ").s(reason),
        UnknownAlgorithm { name } => {
            let mut msg = m("unknown algorithm ").q(name).s("; expected one of ");
            for (i, kind) in crate::Kind::ALL.iter().enumerate() {
                msg = msg.s(if i > 0 { ", " } else { "" }).s(kind.name());
            }
            msg
        }
        UnsupportedOption { algorithm, option } => {
            m("algorithm ").s(algorithm).s(" does not take the option ").q(option)
        }
        EmptyPolicy => m("a policy needs at least one limit"),
        TooManyLimits { count, max } => {
            m("a policy has ").n(*count as u64).s(" limits; at most ").n(*max as u64).s(" are allowed")
        }
        DuplicateLimitName { name } => m("two limits are named ").q(name),
        InvalidLimitName { name } => m("limit name ").q(name).s(" must be 1 to 64 characters of A-Z a-z 0-9 - _ . :"),
    }
    .0
}

/// `CheckError`'s `Display` text.
#[inline(never)]
pub fn check_message(e: &CheckError) -> String {
    match e {
        CheckError::ZeroCost => Msg::new("cost must be at least 1"),
        CheckError::CostExceedsCapacity { cost, capacity, .. } => {
            Msg::new("cost ").n(*cost).s(" can never fit: the capacity is ").n(*capacity)
        }
    }
    .0
}

/// `DecodeError`'s `Display` text.
#[inline(never)]
pub fn decode_message(e: &DecodeError) -> String {
    use DecodeError::*;
    let m = Msg::new;
    match e {
        Truncated => m("state bytes end too early"),
        UnknownVersion(v) => m("state format version ").n(*v as u64).s(" is not supported"),
        UnknownTag(t) => m("unknown algorithm tag ").n(*t as u64).s(" in state bytes"),
        AlgorithmMismatch { expected, found } => {
            m("stored state is for ").s(found).s(", but the limit is ").s(expected)
        }
        LimitCountMismatch { expected, found } => {
            m("stored state has ").n(*found as u64).s(" limits, but the policy has ").n(*expected as u64)
        }
        Overflow => m("integer in state bytes overflows 64 bits"),
        TrailingBytes => m("unexpected bytes after the state"),
        Invalid(why) => m("invalid state: ").s(why),
    }
    .0
}

/// The field a [`KeyError`] is about, as every edge names it: `key` when one key was given
/// (`single`), else the list's element (`keys[2]`), or `keys` for the list as a whole.
pub fn key_field(e: &KeyError, single: bool) -> String {
    match e {
        KeyError::Empty { index } | KeyError::TooLong { index, .. } | KeyError::Duplicate { index } => {
            if single {
                String::from("key")
            } else {
                Msg::new("keys[").n(*index as u64).s("]").0
            }
        }
        KeyError::NoKeys | KeyError::TooManyKeys { .. } => String::from("keys"),
    }
}

/// A [`KeyError`]'s message at every edge, naming [`key_field`]: it reads naturally for one key
/// ("key must not be empty") and for a list ("keys[2] repeats an earlier key").
#[inline(never)]
pub fn key_message(e: &KeyError, single: bool) -> String {
    let name = || Msg::new(&key_field(e, single));
    match e {
        KeyError::NoKeys => Msg::new("keys must hold at least one key"),
        KeyError::TooManyKeys { count } => {
            Msg::new("keys holds ").n(*count as u64).s(" keys; at most ").n(MAX_KEYS_PER_HIT as u64).s(" are allowed")
        }
        KeyError::Empty { .. } => name().s(" must not be empty"),
        KeyError::TooLong { len, .. } => {
            name().s(" is ").n(*len as u64).s(" bytes long; at most ").n(MAX_KEY_LEN as u64).s(" are allowed")
        }
        KeyError::Duplicate { .. } => name().s(" repeats an earlier key"),
    }
    .0
}

#[cfg(test)]
mod tests {
    use super::*;
    use alloc::string::ToString;
    use alloc::vec;

    /// Every variant, with values that show each field: the wasm text is the core's text.
    #[test]
    fn same_text_as_the_cores_display() {
        use ConfigError::*;
        let s = String::from;
        let config = vec![
            ZeroLimit,
            LimitTooLarge { limit: 12, max: 34 },
            ZeroWindow,
            WindowTooLong { window_ms: 5, max_ms: 6 },
            ZeroBurst,
            BurstTooLarge { burst: 7, max: 8 },
            RateTooHigh { limit: 9, window_ns: 10 },
            RateTooHigh { limit: 9, window_ns: 2_000_000 },
            BadRefillAmount { amount: 11, capacity: 12 },
            BadRefillInterval { interval_ns: 13 },
            PrecisionNotDivisor { window_ns: 14, precision_ns: 15 },
            PrecisionNotDivisor { window_ns: 1_000_000_000, precision_ns: 300_000_000 },
            BadRefillInterval { interval_ns: 0 },
            OffsetTooLarge { offset_ns: 7_200_000_000_000, window_ns: 3_000 },
            TooManyBuckets { buckets: 16, max: 17 },
            OffsetTooLarge { offset_ns: 18, window_ns: 19 },
            InvalidQuota { input: s("1/x"), reason: "bad unit" },
            UnknownAlgorithm { name: s("leaky") },
            UnsupportedOption { algorithm: "gcra", option: "precision" },
            EmptyPolicy,
            TooManyLimits { count: 20, max: 21 },
            DuplicateLimitName { name: s("a") },
            InvalidLimitName { name: s("a b") },
        ];
        for e in &config {
            assert_eq!(config_message(e), e.to_string());
        }
        for e in [CheckError::ZeroCost, CheckError::CostExceedsCapacity { cost: 3, capacity: 2, limit: 1 }] {
            assert_eq!(check_message(&e), e.to_string());
        }
        use DecodeError::*;
        for e in [
            Truncated,
            UnknownVersion(200),
            UnknownTag(9),
            AlgorithmMismatch { expected: "gcra", found: "token-bucket" },
            LimitCountMismatch { expected: 2, found: 3 },
            Overflow,
            TrailingBytes,
            Invalid("why"),
        ] {
            assert_eq!(decode_message(&e), e.to_string());
        }
    }

    /// A key error's code, field and message, for one key and for a list.
    #[test]
    fn key_errors_name_the_key_as_it_was_given() {
        let cases = [
            (KeyError::Empty { index: 0 }, true, "missing_key", "key", "key must not be empty"),
            (KeyError::Empty { index: 1 }, false, "missing_key", "keys[1]", "keys[1] must not be empty"),
            (
                KeyError::TooLong { index: 0, len: 300 },
                true,
                "key_too_long",
                "key",
                "key is 300 bytes long; at most 256 are allowed",
            ),
            (KeyError::Duplicate { index: 2 }, false, "invalid_value", "keys[2]", "keys[2] repeats an earlier key"),
            (KeyError::NoKeys, false, "invalid_value", "keys", "keys must hold at least one key"),
            (
                KeyError::TooManyKeys { count: 17 },
                false,
                "invalid_value",
                "keys",
                "keys holds 17 keys; at most 16 are allowed",
            ),
        ];
        for (e, single, code, field, message) in cases {
            assert_eq!(
                (e.code(), key_field(&e, single).as_str(), key_message(&e, single).as_str()),
                (code, field, message)
            );
        }
    }
}
