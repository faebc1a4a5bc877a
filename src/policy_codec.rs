//! A compact encoding of a policy's configuration: what a stored state was written under.
//!
//! A store keeps these bytes next to a key's state. When the configuration changes, the
//! bytes no longer match the running policy's, and [`decode_policy`] rebuilds the old policy
//! so that [`crate::reconfigure`] can carry the key's usage over to the new one.
//!
//! ```text
//! policy = 1  limits:varint  limit*
//!        | 2  block_duration:varint  limits:varint  limit*   (a policy with a penalty)
//!        | 3  block_duration:varint  escalation  limits:varint  limit*   (a penalty that escalates)
//! escalation = 1 (renew) | 2 cap:varint (double)
//! limit  = name_len:varint name  tag:u8  parameters
//! fixed window            1  limit  length  offset
//! fixed window first-hit  2  limit  window
//! sliding log             3  limit  window
//! sliding window          4  limit  length  offset
//! sliding buckets         5  limit  window  precision  offset
//! token bucket            6  capacity  refill_amount  interval
//! gcra                    7  emission_interval  burst
//! fixed window of months  8  limit  months  offset:zigzag   (offset signed, in ns)
//! ```
//!
//! The parameters are the algorithm's own (a token bucket's refill interval, not the quota
//! it was computed from), so every algorithm round-trips exactly, and two configurations that
//! decide alike encode alike. Decoding rebuilds each algorithm through its validating
//! constructor: corrupt bytes are a [`DecodeError`], never a panic.

use alloc::string::String;
use alloc::vec::Vec;

use crate::algorithm::Algorithm;
use crate::algorithms::{
    AnyAlgorithm, FixedWindow, FixedWindowFirstHit, Gcra, SlidingBuckets, SlidingLog, SlidingWindow, TokenBucket,
};
use crate::codec::{put, Reader};
use crate::error::DecodeError;
use crate::penalty::Escalation;
use crate::policy::{Limit, Policy, MAX_LIMITS};
use crate::quota::Quota;
use crate::time::Nanos;

/// The format version this build writes and reads.
pub const POLICY_FORMAT_VERSION: u8 = 1;
/// The version written for a policy with a penalty (`block_duration`), so that every other
/// policy keeps its version-1 bytes and stored states are not taken as reconfigured.
pub const POLICY_FORMAT_VERSION_PENALTY: u8 = 2;
/// The version written for a penalty that escalates (`continueExceeding`, `exponentialBackoff`).
pub const POLICY_FORMAT_VERSION_ESCALATION: u8 = 3;

/// The longest limit name (the rule of [`Limit::new`]).
const MAX_NAME_LEN: u64 = 64;

fn put_time(out: &mut Vec<u8>, t: Nanos) {
    put(out, t.as_nanos());
}

/// The bytes of `policy`'s configuration: equal for equal configurations.
///
/// ```
/// use tollgate::{AnyAlgorithm, Gcra, Quota};
/// use tollgate::policy::{Limit, Policy};
/// use tollgate::policy_codec::{decode_policy, encode_policy};
/// let gcra = AnyAlgorithm::Gcra(Gcra::new(Quota::per_second(10).unwrap()).unwrap());
/// let policy = Policy::new(vec![Limit::new("per-second", gcra).unwrap()]).unwrap();
/// let bytes = encode_policy(&policy);
/// assert_eq!(decode_policy(&bytes).unwrap(), policy);
/// ```
pub fn encode_policy(policy: &Policy) -> Vec<u8> {
    let mut out = Vec::with_capacity(16 * policy.limits().len() + 2);
    if policy.escalates() {
        out.push(POLICY_FORMAT_VERSION_ESCALATION);
        put_time(&mut out, policy.block_duration());
        match policy.escalation() {
            Escalation::Double { cap } => {
                out.push(2);
                put_time(&mut out, cap);
            }
            _ => out.push(1),
        }
    } else if policy.block_duration() > Nanos::ZERO {
        out.push(POLICY_FORMAT_VERSION_PENALTY);
        put_time(&mut out, policy.block_duration());
    } else {
        out.push(POLICY_FORMAT_VERSION);
    }
    put(&mut out, policy.limits().len() as u64);
    for limit in policy.limits() {
        put(&mut out, limit.name().len() as u64);
        out.extend_from_slice(limit.name().as_bytes());
        encode_algorithm(limit.algorithm(), &mut out);
    }
    out
}

fn encode_algorithm(a: &AnyAlgorithm, out: &mut Vec<u8>) {
    match a {
        AnyAlgorithm::FixedWindow(fw) if fw.alignment().calendar_months().is_some() => {
            let (months, offset) = fw.alignment().calendar_months().unwrap_or((1, 0));
            out.push(8);
            put(out, fw.limit());
            put(out, u64::from(months));
            put(out, ((offset << 1) ^ (offset >> 63)) as u64);
        }
        AnyAlgorithm::FixedWindow(fw) => {
            out.push(1);
            put(out, fw.limit());
            put_time(out, fw.alignment().length());
            put_time(out, fw.alignment().offset());
        }
        AnyAlgorithm::FixedWindowFirstHit(fh) => {
            out.push(2);
            put(out, fh.limit());
            put_time(out, fh.window());
        }
        AnyAlgorithm::SlidingLog(log) => {
            out.push(3);
            put(out, log.limit());
            put_time(out, log.window());
        }
        AnyAlgorithm::SlidingWindow(sw) => {
            out.push(4);
            put(out, sw.limit());
            put_time(out, sw.alignment().length());
            put_time(out, sw.alignment().offset());
        }
        AnyAlgorithm::SlidingBuckets(sb) => {
            out.push(5);
            put(out, sb.limit());
            put_time(out, sb.window());
            put_time(out, sb.precision());
            put_time(out, sb.alignment().offset());
        }
        AnyAlgorithm::TokenBucket(tb) => {
            out.push(6);
            put(out, tb.limit());
            put(out, tb.refill_amount());
            put_time(out, tb.interval());
        }
        AnyAlgorithm::Gcra(g) => {
            out.push(7);
            put_time(out, g.emission_interval());
            put(out, g.burst());
        }
        #[cfg(feature = "concurrency")]
        AnyAlgorithm::Concurrency(c) => {
            out.push(9);
            put(out, c.limit());
            put_time(out, c.lease_ttl());
        }
    }
}

/// Rebuilds the policy [`encode_policy`] wrote.
pub fn decode_policy(bytes: &[u8]) -> Result<Policy, DecodeError> {
    let mut r = Reader::new(bytes);
    let version = r.byte()?;
    let block_duration = match version {
        POLICY_FORMAT_VERSION => Nanos::ZERO,
        POLICY_FORMAT_VERSION_PENALTY | POLICY_FORMAT_VERSION_ESCALATION => match r.time()? {
            Nanos::ZERO => return Err(DecodeError::Invalid("a penalty of zero")),
            d => d,
        },
        _ => return Err(DecodeError::UnknownVersion(version)),
    };
    let escalation = match version {
        POLICY_FORMAT_VERSION_ESCALATION => match r.byte()? {
            1 => Escalation::Renew,
            2 => Escalation::Double { cap: r.time()? },
            _ => return Err(DecodeError::Invalid("escalation")),
        },
        _ => Escalation::None,
    };
    let n = r.len(MAX_LIMITS as u64)?;
    let mut limits = Vec::with_capacity(n);
    for _ in 0..n {
        let len = r.len(MAX_NAME_LEN)?;
        let name = String::from_utf8(r.take(len)?.to_vec()).map_err(|_| DecodeError::Invalid("limit name"))?;
        let algorithm = decode_algorithm(&mut r)?;
        limits.push(Limit::new(&name, algorithm).map_err(|_| DecodeError::Invalid("limit name"))?);
    }
    r.finish()?;
    let mut policy = Policy::new(limits).map_err(|_| DecodeError::Invalid("policy"))?.with_block_duration(block_duration);
    policy.penalty.escalation = escalation;
    Ok(policy)
}

fn decode_algorithm(r: &mut Reader<'_>) -> Result<AnyAlgorithm, DecodeError> {
    let bad = |_| DecodeError::Invalid("algorithm parameters");
    let quota = |limit: u64, window: Nanos| Quota::new(limit, window).map_err(bad);
    Ok(match r.byte()? {
        1 => {
            let (limit, length, offset) = (r.varint()?, r.time()?, r.time()?);
            AnyAlgorithm::FixedWindow(FixedWindow::with_offset(quota(limit, length)?, offset).map_err(bad)?)
        }
        2 => {
            let (limit, window) = (r.varint()?, r.time()?);
            AnyAlgorithm::FixedWindowFirstHit(FixedWindowFirstHit::new(quota(limit, window)?))
        }
        3 => {
            let (limit, window) = (r.varint()?, r.time()?);
            AnyAlgorithm::SlidingLog(SlidingLog::new(quota(limit, window)?).map_err(bad)?)
        }
        4 => {
            let (limit, length, offset) = (r.varint()?, r.time()?, r.time()?);
            AnyAlgorithm::SlidingWindow(SlidingWindow::with_offset(quota(limit, length)?, offset).map_err(bad)?)
        }
        5 => {
            let (limit, window, precision, offset) = (r.varint()?, r.time()?, r.time()?, r.time()?);
            AnyAlgorithm::SlidingBuckets(
                SlidingBuckets::with_offset(quota(limit, window)?, precision, offset).map_err(bad)?,
            )
        }
        6 => {
            let (capacity, refill, interval) = (r.varint()?, r.varint()?, r.time()?);
            AnyAlgorithm::TokenBucket(TokenBucket::new(capacity, refill, interval).map_err(bad)?)
        }
        7 => {
            let (t, burst) = (r.time()?, r.varint()?);
            AnyAlgorithm::Gcra(Gcra::from_parts(t, burst).map_err(bad)?)
        }
        8 => {
            let (limit, months, zigzag) = (r.varint()?, r.varint()?, r.varint()?);
            let months = u32::try_from(months).map_err(|_| DecodeError::Invalid("algorithm parameters"))?;
            let offset = (zigzag >> 1) as i64 ^ -((zigzag & 1) as i64);
            AnyAlgorithm::FixedWindow(FixedWindow::calendar_months(limit, months, offset).map_err(bad)?)
        }
        #[cfg(feature = "concurrency")]
        9 => {
            let (limit, ttl) = (r.varint()?, r.time()?);
            AnyAlgorithm::Concurrency(crate::algorithms::Concurrency::new(limit, ttl).map_err(bad)?)
        }
        other => return Err(DecodeError::UnknownTag(other)),
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::algorithms::{Kind, LimitSpec};

    #[test]
    fn every_algorithm_round_trips() {
        let w = Nanos::from_secs(60);
        let specs = [
            LimitSpec { offset: Some(Nanos::from_secs(7)), ..LimitSpec::new(Kind::FixedWindow, 5, w) },
            LimitSpec::new(Kind::FixedWindowFirstHit, 5, w),
            LimitSpec::new(Kind::SlidingLog, 5, w),
            LimitSpec::new(Kind::SlidingWindow, 5, w),
            LimitSpec { precision: Some(Nanos::from_secs(10)), ..LimitSpec::new(Kind::SlidingBuckets, 5, w) },
            LimitSpec { burst: Some(9), refill_amount: Some(3), ..LimitSpec::new(Kind::TokenBucket, 7, w) },
            LimitSpec { burst: Some(4), ..LimitSpec::new(Kind::Gcra, 7, w) },
            LimitSpec {
                months: Some(crate::calendar::Months { count: 1, offset_ns: -7_200_000_000_000 }),
                ..LimitSpec::new(Kind::FixedWindow, 10_000, w)
            },
            LimitSpec {
                months: Some(crate::calendar::Months { count: 3, offset_ns: 3_600_000_000_000 }),
                ..LimitSpec::new(Kind::FixedWindow, 10_000, w)
            },
        ];
        let limits: Vec<Limit> = specs
            .iter()
            .enumerate()
            .map(|(i, s)| Limit::new(&alloc::format!("l{i}"), AnyAlgorithm::from_spec(s).unwrap()).unwrap())
            .collect();
        let policy = Policy::new(limits).unwrap();
        let penalized = policy.clone().with_block_duration(Nanos::from_secs(90));
        assert_eq!(encode_policy(&penalized)[0], POLICY_FORMAT_VERSION_PENALTY);
        assert_eq!(decode_policy(&encode_policy(&penalized)).unwrap(), penalized);
        let bytes = encode_policy(&policy);
        assert_eq!(bytes[0], POLICY_FORMAT_VERSION);
        assert_eq!(decode_policy(&bytes).unwrap(), policy);
        for cut in 0..bytes.len() {
            assert!(decode_policy(&bytes[..cut]).is_err(), "a truncated encoding is an error");
        }
        let mut longer = bytes.clone();
        longer.push(0);
        assert_eq!(decode_policy(&longer), Err(DecodeError::TrailingBytes));
    }

    #[test]
    fn invalid_parameters_are_errors() {
        // A GCRA with a zero emission interval.
        assert!(decode_policy(&[POLICY_FORMAT_VERSION, 1, 1, b'a', 7, 0, 1]).is_err());
        assert!(decode_policy(&[POLICY_FORMAT_VERSION, 0]).is_err(), "a policy has a limit");
        assert!(decode_policy(&[9]).is_err());
    }
}
