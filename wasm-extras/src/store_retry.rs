//! `StoreRetry` and `SwapRun`: the core's store protocol (`tollgate::store_protocol`) for the
//! Redis store's compare-and-swap. `StoreRetry` is one limiter's: its attempt cap and its
//! swaps' contention estimates, shared by its runs. A `SwapRun` is one update's steps
//! (`tollgate::store_protocol::SwapRun`): after each decision whether to write, confirm the
//! cached bytes or stop; after each answer of Redis whether the run is done, decides again
//! (and after which pause) or gives up. The JS loop only sends what a step says.

use alloc::rc::Rc;
use core::cell::Cell;
use tollgate::layout::{SWAP_CONFIRM, SWAP_CONTENDED, SWAP_DONE, SWAP_FINAL, SWAP_GUARDED, SWAP_SWAPPED, SWAP_WRITE};
use tollgate::store_protocol::{Act, After, Answer, Contention, Retry, SwapRun as CoreRun, DEFAULT_MAX_ATTEMPTS};
use tollgate::Nanos;
use wasm_bindgen::prelude::*;

#[wasm_bindgen]
pub struct StoreRetry {
    max_attempts: u32,
    contention: Rc<Cell<Contention>>,
}

#[wasm_bindgen]
impl StoreRetry {
    /// A compare-and-swap store's retry policy giving up after `max_attempts` lost races in a
    /// row (0: the core's default).
    #[wasm_bindgen(constructor)]
    pub fn new(max_attempts: u32) -> StoreRetry {
        let max = if max_attempts == 0 { DEFAULT_MAX_ATTEMPTS } else { max_attempts };
        StoreRetry { max_attempts: max, contention: Rc::new(Cell::new(Contention::default())) }
    }

    /// How many lost races in a row end in contention.
    #[wasm_bindgen(getter, js_name = maxAttempts)]
    pub fn max_attempts(&self) -> u32 {
        self.max_attempts
    }

    /// The run of one update whose first decision is over cached bytes, `trusted` (confirmed
    /// within the blocked-key cache's trust) or not.
    pub fn begin(&self, trusted: bool) -> SwapRun {
        SwapRun { run: CoreRun::begin(Retry::cas(self.max_attempts), trusted), contention: self.contention.clone() }
    }
}

/// One update's steps; free it when the run ends.
#[wasm_bindgen]
pub struct SwapRun {
    run: CoreRun,
    contention: Rc<Cell<Contention>>,
}

#[wasm_bindgen]
impl SwapRun {
    /// After a decision that `writes` or not: what to send (`tollgate::layout::SWAP_FINAL`,
    /// `SWAP_WRITE`, `SWAP_CONFIRM`).
    pub fn decided(&self, writes: bool) -> u32 {
        match self.run.decided(writes) {
            Act::Final => SWAP_FINAL,
            Act::Write => SWAP_WRITE,
            Act::Confirm => SWAP_CONFIRM,
        }
    }

    /// Redis's `answer` to the last swap (`SWAP_SWAPPED`, `SWAP_GUARDED` or `SWAP_OTHER_BYTES`:
    /// a lost race), which took `ms`; `jitter` a uniform draw in [0, 1). Answers `SWAP_DONE`
    /// when the run is done, `SWAP_CONTENDED` when it gives up, else the pause (ms, 0: none)
    /// before deciding again over the bytes Redis answered (`tollgate::layout`).
    pub fn answered(&mut self, answer: u32, ms: f64, jitter: f64) -> f64 {
        let answer = match answer {
            SWAP_SWAPPED => Answer::Swapped,
            SWAP_GUARDED => Answer::Guarded,
            _ => Answer::Conflict,
        };
        let took = Nanos::new((ms.max(0.0) * 1e6) as u64);
        let jitter = (jitter.clamp(0.0, 1.0) * 4_294_967_295.0) as u32;
        let mut contention = self.contention.get();
        let after = self.run.answered(answer, took, jitter, &mut contention);
        self.contention.set(contention);
        match after {
            After::Done => SWAP_DONE,
            After::GiveUp { .. } => SWAP_CONTENDED,
            After::Decide(p) => p.as_nanos() as f64 / 1e6,
        }
    }
}
