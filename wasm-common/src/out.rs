//! Decisions cross the boundary as numbers in a buffer inside wasm memory that JavaScript
//! reads through a `Float64Array` view: no object is allocated per call on either side.
//!
//! Layout: the core's `tollgate::layout` (`DECISION_SUMMARY`, then `pairs` records of
//! `DECISION_PAIR`), which `pkg-template/lib/limiter/decision.js` reads through the generated
//! `contract.generated.js`; `nextUnitAfter` is for the headers' `t`, ms rounded up. A decision of one key under
//! one limit without a penalty (`write_one`) writes only the summary, `pairs` (1) and the
//! pair's `nextUnitAfter`: the rest of its pair repeats the summary, which `decision.js` reads
//! once for both.

use alloc::vec;
use alloc::vec::Vec;
use tollgate::layout::{DECISION_PAIR, DECISION_SUMMARY, DENIED_BY_PENALTY};
use tollgate::limiter::MAX_KEYS_PER_HIT;
use tollgate::policy::{PolicyDecision, MAX_LIMITS};
use tollgate::Decision;

use crate::time::{ms_ceil, ms_ceil_hot, num};

pub const HEADER: usize = DECISION_SUMMARY.len();
pub const PAIR: usize = DECISION_PAIR.len();
pub const LEN: usize = HEADER + PAIR * MAX_KEYS_PER_HIT * MAX_LIMITS;

pub struct Out {
    pub buf: Vec<f64>,
}

impl Out {
    #[inline]
    pub fn new() -> Out {
        Out { buf: vec![0.0; LEN] }
    }

    #[inline]
    pub fn ptr(&self) -> u32 {
        self.buf.as_ptr() as u32
    }

    #[inline(always)]
    fn put(buf: &mut [f64], d: &Decision) {
        buf[0] = d.allowed as u8 as f64;
        buf[1] = d.limit as f64;
        buf[2] = d.remaining as f64;
        buf[3] = ms_ceil(d.reset_at);
        buf[4] = ms_ceil(d.retry_after);
    }

    #[inline(always)]
    fn put_pair(buf: &mut [f64], d: &Decision) {
        Out::put(buf, d);
        buf[5] = ms_ceil(d.next_unit_after);
    }

    /// One key, one limit: the summary is the only pair. Only what `decision.js` reads of
    /// such a decision is written (`readOne`: the summary, the count of pairs and the pair's
    /// `nextUnitAfter`; the pair's other numbers are the summary's, and its key and limit
    /// indices are 0); every decision with several pairs or a penalty goes through `write`.
    /// Inline, for the per-request hot path (`Limiter::decide_record`), with the conversions
    /// of `time.rs` that take the signed path (the same numbers).
    #[inline(always)]
    pub fn write_one(&mut self, d: &Decision) {
        let b = &mut self.buf[..HEADER + PAIR];
        b[0] = d.allowed as u8 as f64;
        b[1] = num(d.limit);
        b[2] = num(d.remaining);
        b[3] = ms_ceil_hot(d.reset_at);
        b[4] = ms_ceil_hot(d.retry_after);
        b[7] = 1.0;
        b[HEADER + 7] = ms_ceil_hot(d.next_unit_after);
    }

    #[inline]
    pub fn write(&mut self, pd: &PolicyDecision) {
        let b = &mut self.buf;
        Out::put(&mut b[..5], &pd.decision);
        // Denied by a penalty's block (decision.js reads it as `penalty: true`).
        b[0] = if pd.penalty { DENIED_BY_PENALTY } else { pd.allowed as u8 as f64 };
        b[5] = pd.binding.key as f64;
        b[6] = pd.binding.limit as f64;
        b[7] = pd.limits.len() as f64;
        for (i, l) in pd.limits.iter().enumerate() {
            let r = &mut b[HEADER + i * PAIR..HEADER + (i + 1) * PAIR];
            r[0] = l.at.key as f64;
            r[1] = l.at.limit as f64;
            Out::put_pair(&mut r[2..], &l.decision);
        }
    }
}
