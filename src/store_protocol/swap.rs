//! The run of one compare-and-swap update as an edge drives it when it decides over bytes it
//! believes the store holds (a cache of the store's answers) and swaps them in with one call:
//! the core says after each decision whether to write, to confirm the cached bytes with a swap
//! that writes nothing, or that the decision is final; and after each answer of the store
//! whether the run is done, decides again (at once or after a pause) or gives up. The attempt
//! count, the backoff, the cap and when a decision over cached bytes is final are said here
//! once; the edge's loop sends what a step says and feeds back what the store answered.
//! [`CasRun`](super::CasRun) runs the same steps over the bytes it keeps.

use super::{Attempts, Contention, Retry, Wait};
use crate::time::Nanos;

/// What to do after a decision over the bytes believed to be in the store.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum Act {
    /// Nothing to write, and the bytes decided over are the store's (read from it, or cached
    /// and confirmed recently enough): the decision is final.
    Final,
    /// Swap the decision's bytes in if the store still holds the ones decided over.
    Write,
    /// Nothing to write, but the bytes decided over came from the cache and are not trusted:
    /// swap them for themselves, so the store confirms them or answers what it holds.
    Confirm,
}

/// What the store answered a swap.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum Answer {
    /// It held the expected bytes and wrote.
    Swapped,
    /// It held other bytes but applied the write's guard ([`crate::guard`]) over them: written,
    /// not a lost race.
    Guarded,
    /// It held other bytes (answered with them) and wrote nothing: a lost race.
    Conflict,
}

/// What follows the store's answer.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum After {
    /// The write (or the confirmation) landed: the run is over.
    Done,
    /// Decide again over the bytes the store answered with, after this pause (zero: at once).
    Decide(Nanos),
    /// Other writers won every attempt: contention, not an outage.
    GiveUp {
        /// How many attempts were made.
        attempts: u32,
    },
}

/// One update's steps under a [`Retry`]; the store's [`Contention`] estimates are the caller's
/// (kept across runs, shared by the runs of one store).
#[derive(Copy, Clone, Debug)]
pub struct SwapRun {
    attempts: Attempts,
    /// Whether the bytes of the next decision are the edge's cached ones (the first decision).
    from_cache: bool,
    /// Whether the cached bytes were confirmed recently enough for a decision over them that
    /// writes nothing to stand (the blocked-key cache, [`crate::blocked`]).
    trusted: bool,
    /// The run's swaps and pauses so far: the clock `give_up_after` bounds.
    elapsed: Nanos,
}

impl SwapRun {
    /// A run whose first decision is over the edge's cached bytes, `trusted` or not.
    pub fn begin(retry: Retry, trusted: bool) -> SwapRun {
        SwapRun { attempts: Attempts::new(retry, Nanos::ZERO), from_cache: true, trusted, elapsed: Nanos::ZERO }
    }

    /// A run whose first decision is over bytes read from the store.
    pub fn read(retry: Retry) -> SwapRun {
        SwapRun { from_cache: false, ..SwapRun::begin(retry, false) }
    }

    /// Which attempt this is (1 for the first).
    pub fn attempt(&self) -> u32 {
        self.attempts.attempt()
    }

    /// What follows a decision that `writes` (changed the bytes) or not.
    pub fn decided(&self, writes: bool) -> Act {
        if writes {
            Act::Write
        } else if self.from_cache && !self.trusted {
            Act::Confirm
        } else {
            Act::Final
        }
    }

    /// The store's `answer` to the last swap, which took `took`; `jitter` is a uniform random
    /// draw over `u32` for the pause, `contention` the store's estimates, which the answer
    /// updates.
    pub fn answered(&mut self, answer: Answer, took: Nanos, jitter: u32, contention: &mut Contention) -> After {
        let lost = answer == Answer::Conflict;
        contention.record(took, lost);
        if !lost {
            return After::Done;
        }
        self.from_cache = false;
        self.elapsed = self.elapsed.saturating_add(took);
        match self.attempts.lost(self.elapsed, jitter, contention) {
            Wait::Now => After::Decide(Nanos::ZERO),
            Wait::Pause(p) => {
                self.elapsed = self.elapsed.saturating_add(p);
                After::Decide(p)
            }
            Wait::GiveUp { attempts } => After::GiveUp { attempts },
        }
    }
}
