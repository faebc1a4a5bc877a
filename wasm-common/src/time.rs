//! Time and costs at the JavaScript edge: epoch milliseconds (fractions allowed) in, the
//! core's nanoseconds inside, milliseconds rounded up out (waiting `retryAfter` ms is enough).

use tollgate::quota::MAX_LIMIT;
use tollgate::Nanos;
use wasm_bindgen::JsValue;

use crate::errors::number_error;

/// The latest `now` accepted: the core's bound for every edge (the year 2500 in epoch ms). The
/// error message spells it out (no float formatting in the module, see docs/benchmarks.md).
const MAX_NOW_MS: f64 = tollgate::time::MAX_EPOCH_MS as f64;
const _: () = assert!(tollgate::time::MAX_EPOCH_MS == 16_725_225_600_000);

#[inline]
pub fn now_from_ms(ms: f64) -> Result<Nanos, JsValue> {
    if !now_in_range(ms) {
        let err = number_error("now must be epoch milliseconds between 0 and 16725225600000, got ", ms);
        return Err(crate::errors::with_code(err, "invalid_now", "now"));
    }
    Ok(nanos_of_valid_ms(ms))
}

/// Whether `ms` is a `now` this layer accepts (false for NaN).
#[inline(always)]
pub fn now_in_range(ms: f64) -> bool {
    (0.0..=MAX_NOW_MS).contains(&ms)
}

/// `now_from_ms` of a time already checked with `now_in_range`: the core's conversion, which
/// the Worker's bodies go through too.
#[inline(always)]
pub fn nanos_of_valid_ms(ms: f64) -> Nanos {
    Nanos::from_epoch_ms_in_range(ms)
}

/// `x as f64`, through the signed conversion whenever `x` fits it (always, for a limit or a
/// count): the same number, and one machine instruction where wasm's unsigned conversion is
/// several (see `nanos_of_valid_ms`). For the per-request hot path only (module size).
#[inline(always)]
pub fn num(x: u64) -> f64 {
    if x <= i64::MAX as u64 {
        x as i64 as f64
    } else {
        x as f64
    }
}

/// `x.fract() == 0.0`, false for NaN and the infinities (`fract` is std's, and a release module
/// links no std; see module.rs). Every finite `f64` of magnitude at least 2^53 is whole; below
/// that the conversion to `i64` is exact for whole numbers only.
#[inline(always)]
pub fn is_whole(x: f64) -> bool {
    x.is_finite() && (x.abs() >= 9_007_199_254_740_992.0 || x == x as i64 as f64)
}

// The message below spells MAX_LIMIT out (no number formatting in the module).
const _: () = assert!(MAX_LIMIT == 9_007_199_254_740_991);

/// Whether `cost` is one `cost_from` accepts.
#[inline(always)]
pub fn cost_in_range(cost: f64) -> bool {
    (1.0..=MAX_LIMIT as f64).contains(&cost) && is_whole(cost)
}

#[inline]
pub fn cost_from(cost: f64) -> Result<u64, JsValue> {
    if !cost_in_range(cost) {
        let err = number_error("cost must be a whole number from 1 to 9007199254740991, got ", cost);
        return Err(crate::errors::with_code(err, "invalid_cost", "cost"));
    }
    Ok(cost as u64)
}

/// `t.as_millis_ceil()` as a number. On wasm32 a u64 division by a constant becomes a call to
/// the 128-bit `__multi3`, a large share of a one-key check in `limitBatch`; here
/// the quotient is estimated in f64 (off by at most one: its relative error is below 2^-51
/// and the quotient below 2^45) and corrected with native 64-bit multiplies. Same result.
#[inline(always)]
pub fn ms_ceil(t: Nanos) -> f64 {
    const MS: u64 = 1_000_000;
    let t = t.as_nanos();
    let mut q = (t as f64 * 1e-6) as u64;
    // `q * MS` may exceed `t` by up to one MS: compare without wrapping.
    if q.wrapping_mul(MS) > t || q.checked_mul(MS).is_none() {
        q -= 1;
    } else if t - q * MS >= MS {
        q += 1;
    }
    let rem = t - q * MS;
    (q + (rem > 0) as u64) as f64
}

/// `ms_ceil` for the per-request hot path (`Out::write_one`): below 2^63 (every time
/// but the saturated ones) in signed integers, whose conversions to and from f64 are one
/// machine instruction each (see `nanos_of_valid_ms`). The same result; only there, as the
/// second path costs module size in every caller.
#[inline(always)]
pub fn ms_ceil_hot(t: Nanos) -> f64 {
    const MS: i64 = 1_000_000;
    let Ok(t) = i64::try_from(t.as_nanos()) else {
        return ms_ceil(t);
    };
    let mut q = (t as f64 * 1e-6) as i64;
    // `q * MS` is within one MS of `t` either way: wrapping arithmetic gives the exact
    // remainder even where the product itself passes `i64::MAX`.
    let mut rem = t.wrapping_sub(q.wrapping_mul(MS));
    if rem < 0 {
        q -= 1;
        rem += MS;
    } else if rem >= MS {
        q += 1;
        rem -= MS;
    }
    (q + (rem > 0) as i64) as f64
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every quotient/remainder edge, near zero, today's epoch and `u64::MAX`.
    #[test]
    fn ms_ceil_is_as_millis_ceil() {
        let mut ts = alloc::vec::Vec::new();
        for base in [0u64, 1_700_000_000_000_000_000, u64::MAX - 3_000_000, 1 << 53, 1 << 63] {
            for q in 0..3u64 {
                for r in [0u64, 1, 499_999, 500_000, 999_999] {
                    ts.push(base / 1_000_000 * 1_000_000 + q * 1_000_000 + r);
                }
            }
        }
        ts.push(u64::MAX);
        for t in [i64::MAX as u64 - 1, i64::MAX as u64, i64::MAX as u64 + 1] {
            for d in 0..2_000_001u64 {
                ts.push(t.wrapping_sub(d));
            }
        }
        for t in ts {
            assert_eq!(ms_ceil(Nanos::new(t)), Nanos::new(t).as_millis_ceil() as f64, "{t}");
            assert_eq!(ms_ceil_hot(Nanos::new(t)), Nanos::new(t).as_millis_ceil() as f64, "{t}");
        }
    }

    #[test]
    fn is_whole_is_fract_zero() {
        let edges = [
            0.0,
            -0.0,
            0.5,
            1.0,
            1.5,
            2.0,
            1e15 + 0.5,
            4_503_599_627_370_495.5,
            9_007_199_254_740_991.0,
            9_007_199_254_740_992.0,
            1e19,
            1.7e12 + 0.25,
            f64::MIN_POSITIVE,
            f64::MAX,
        ];
        for x in edges {
            for v in [x, -x] {
                assert_eq!(is_whole(v), v.fract() == 0.0, "{v}");
            }
        }
        for v in [f64::NAN, f64::INFINITY, f64::NEG_INFINITY] {
            assert!(!is_whole(v), "{v}");
        }
    }

    #[test]
    fn num_is_as_f64() {
        for x in [0, 1, 1 << 53, (1 << 53) + 1, i64::MAX as u64, i64::MAX as u64 + 1, u64::MAX] {
            assert_eq!(num(x), x as f64, "{x}");
        }
    }
}
