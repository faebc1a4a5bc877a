//! The store protocol without I/O: what to read, what to write if the store still holds what
//! was read, and what to do when it does not (decide again at once, back off, give up).
//!
//! Every store that is not this process's memory drives it: the [`CasStore`](crate::store::CasStore)
//! here, the npm package's Redis store (through the extras wasm module), and the Worker's
//! several-keys protocol, its calls to a busy Durable Object and its leased mode's waits. An edge only performs what a
//! step says (a read, a compare-and-swap, a pause) and feeds back what happened; the attempt
//! cap and the backoff schedule are said once, here. Time and randomness are arguments (`now`,
//! how long a swap took, a `jitter` drawn by the caller), so a run is deterministic given them.
//! An edge with an async runtime needs no loop of its own: [`drive`] runs an operation's
//! attempts under a [`Retry`] over the attempt, clock and pause the edge gives it.
//!
//! ```
//! use tollgate::store_protocol::{CasRun, Next, Retry, Step, Written};
//! use tollgate::policy::{Limit, Policy};
//! use tollgate::{Gcra, Nanos, Quota};
//!
//! use tollgate::AnyAlgorithm;
//! let gcra = AnyAlgorithm::Gcra(Gcra::new(Quota::per_second(2).unwrap()).unwrap());
//! let policy = Policy::new(vec![Limit::new("api", gcra).unwrap()]).unwrap();
//! let mut stored: Option<Vec<u8>> = None; // the store: one key
//! let mut run = CasRun::begin(Retry::cas(64));
//! let mut raw = vec![stored.clone()]; // Step::Read: the edge reads the key
//! let allowed = loop {
//!     match run.feed(&policy, raw, &mut |s| policy.check(s, Nanos::from_secs(1), 1).unwrap().allowed).unwrap() {
//!         Step::Done(allowed) => break allowed,
//!         Step::Write { expected, new } => {
//!             // The edge's compare-and-swap.
//!             let ok = stored.as_deref() == expected[0].as_deref();
//!             if ok { stored = new[0].as_ref().map(|(b, _)| b.clone()); }
//!             let outcome = if ok { Written::Swapped } else { Written::Conflict(vec![stored.clone()]) };
//!             match run.written(outcome, Nanos::ZERO, 0) {
//!                 Next::Done(allowed) => break allowed,
//!                 Next::Decide(observed) | Next::Backoff(_, observed) => raw = observed,
//!                 Next::GiveUp { .. } => unreachable!(),
//!             }
//!         }
//!     }
//! };
//! assert!(allowed && stored.is_some());
//! ```

use alloc::vec::Vec;

use crate::error::DecodeError;
use crate::policy::{Policy, PolicyState};
use crate::time::Nanos;

mod drive;
mod step;
mod swap;
pub use drive::{drive, wait_until, GaveUp, Tried};
pub use step::{cas_step, decode_states, CasStep};
pub use swap::{Act, After, Answer, SwapRun};

/// Lost races in a row a compare-and-swap store takes before answering contention.
pub const DEFAULT_MAX_ATTEMPTS: u32 = 64;

/// The longest pause of the adaptive schedule: several attempts still fit in a store's usual
/// timeout (500 ms).
pub const MAX_ADAPTIVE_PAUSE: Nanos = Nanos::from_millis(64);

/// How a store's driver waits between attempts.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum Schedule {
    /// Decide again at once after every lost attempt.
    Immediate,
    /// Retry at once after the first loss, then a random pause (full jitter) over a window
    /// that grows with how contended the store's swaps are and how long a swap takes, at most
    /// `2^attempt` ms and `max`: the writers that lost together learn the new bytes together,
    /// and retrying at once they would race again ([`Contention`] keeps the estimates).
    Adaptive {
        /// The longest pause.
        max: Nanos,
    },
    /// Pause `first`, doubling up to `max`, before each attempt after a busy answer.
    Doubling {
        /// The first pause.
        first: Nanos,
        /// The longest pause.
        max: Nanos,
    },
}

/// The attempt cap and backoff of one store: the only retry policy the edges use.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub struct Retry {
    /// Attempts before giving up (at least 1).
    pub max_attempts: u32,
    /// How long all attempts may take before giving up (`None`: no bound but the count).
    pub give_up_after: Option<Nanos>,
    /// The pauses between attempts.
    pub schedule: Schedule,
}

impl Retry {
    /// A compare-and-swap store's: `max_attempts` lost races (at least 1), the adaptive pause.
    pub const fn cas(max_attempts: u32) -> Retry {
        Retry {
            max_attempts: if max_attempts == 0 { 1 } else { max_attempts },
            give_up_after: None,
            schedule: Schedule::Adaptive { max: MAX_ADAPTIVE_PAUSE },
        }
    }

    /// A Durable Object's several-keys protocol: up to 8 rounds, each from the start at once
    /// (a round is only redone when its leases grew too old before it could commit).
    pub const LOCK_ROUNDS: Retry = Retry { max_attempts: 8, give_up_after: None, schedule: Schedule::Immediate };

    /// A key's Durable Object that answers busy (another request holds its lease): asked again
    /// after 1 ms, doubling to 32 ms, for up to 10 s.
    pub const BUSY_OBJECT: Retry = Retry {
        max_attempts: u32::MAX,
        give_up_after: Some(Nanos::from_secs(10)),
        schedule: Schedule::Doubling { first: Nanos::from_millis(1), max: Nanos::from_millis(32) },
    };

    /// A holder of leased quota whose slice is short of a hit
    /// ([`quota_lease`](crate::quota_lease)): it decides again after each exchange it made or
    /// waited for (another request's that left too little), at once, four decisions in all;
    /// the last one that finds the slice short denies the hit.
    pub const SLICE_WAITS: Retry = Retry { max_attempts: 4, give_up_after: None, schedule: Schedule::Immediate };

    /// A request waiting in its isolate for work another request of the same isolate is doing
    /// (an exchange in flight, its turn at a key): it looks again after 1 ms, doubling to
    /// 16 ms, for as long as the work takes (the work has its own timeout).
    pub const IN_ISOLATE: Retry = Retry {
        max_attempts: u32::MAX,
        give_up_after: None,
        schedule: Schedule::Doubling { first: Nanos::from_millis(1), max: Nanos::from_millis(16) },
    };

    /// A key's Durable Object waiting for another request's lease to end before it serves:
    /// looked at again after 1 ms, doubling to 64 ms (the object wakes sooner when the lease
    /// ends or expires), for up to `budget`; then it answers busy.
    pub const fn waiting(budget: Nanos) -> Retry {
        Retry {
            max_attempts: u32::MAX,
            give_up_after: Some(budget),
            schedule: Schedule::Doubling { first: Nanos::from_millis(1), max: Nanos::from_millis(64) },
        }
    }
}

/// What a store's swaps have seen lately (moving averages, the newest weighing 1/16): the
/// share of swaps that lost and how long a swap takes. Kept per store across runs; it sizes
/// the adaptive pause (about one attempt per writer per win, the randomised share that loses
/// least).
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub struct Contention {
    /// Lost swaps per swap, in 1/65536.
    loss: u32,
    /// Nanoseconds a swap takes.
    swap_ns: u64,
}

impl Default for Contention {
    fn default() -> Contention {
        Contention { loss: 0, swap_ns: 1_000_000 }
    }
}

const ONE: i64 = 1 << 16;

impl Contention {
    /// Records one swap: how long it took and whether it lost.
    pub fn record(&mut self, took: Nanos, lost: bool) {
        let took = took.as_nanos().min(i64::MAX as u64 / 2) as i64;
        let swap = self.swap_ns as i64;
        self.swap_ns = (swap + (took - swap) / 16).max(0) as u64;
        let loss = i64::from(self.loss);
        self.loss = (loss + ((if lost { ONE } else { 0 }) - loss) / 16).clamp(0, ONE) as u32;
    }

    /// The adaptive window before `attempt` (1: after the first loss in a row).
    fn window(&self, attempt: u32, max: Nanos) -> u64 {
        if attempt < 2 {
            return 0;
        }
        // With n writers racing for each win, about (n - 1) / n of the swaps lose.
        // Writers in 1/65536, at most 64; a swap's time is capped at 2^40 ns (18 minutes), so
        // their product fits.
        let writers_x = (ONE * ONE / (ONE - i64::from(self.loss)).max(ONE / 64)) as u64;
        let by_rate = (self.swap_ns.min(1 << 40) * writers_x) >> 16;
        let by_attempt = 1_000_000u64.checked_shl(attempt.min(40)).unwrap_or(u64::MAX);
        by_rate.min(by_attempt).min(max.as_nanos())
    }
}

/// What a driver does after an attempt that did not finish.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum Wait {
    /// Try again at once.
    Now,
    /// Pause this long, then try again.
    Pause(Nanos),
    /// Stop: the store answered every attempt, but others kept winning (or it stayed busy).
    GiveUp {
        /// How many attempts were made.
        attempts: u32,
    },
}

/// The attempts of one operation under a [`Retry`]: counts them and says what follows a lost
/// one.
#[derive(Copy, Clone, Debug)]
pub struct Attempts {
    retry: Retry,
    attempt: u32,
    started: Nanos,
}

impl Attempts {
    /// The first attempt of an operation that starts at `now` (the clock `give_up_after`
    /// is measured on).
    pub fn new(retry: Retry, now: Nanos) -> Attempts {
        Attempts { retry, attempt: 1, started: now }
    }

    /// Which attempt this is (1 for the first).
    pub fn attempt(&self) -> u32 {
        self.attempt
    }

    /// The current attempt did not finish (a lost race, a busy answer) at `now`: what the
    /// driver does next. `jitter` is a uniform random draw over `u32` (the caller's
    /// randomness), `contention` the store's estimates (the adaptive schedule's input).
    pub fn lost(&mut self, now: Nanos, jitter: u32, contention: &Contention) -> Wait {
        let wait = self.retry.after_loss(self.attempt, now.saturating_sub(self.started), jitter, contention);
        if !matches!(wait, Wait::GiveUp { .. }) {
            self.attempt += 1;
        }
        wait
    }
}

impl Retry {
    /// What follows losing attempt `attempt` (1 for the first) of an operation that has run
    /// for `elapsed`: give up at the attempt cap or past `give_up_after`, else try again, at
    /// once or after the schedule's pause. `jitter` is a uniform random draw over `u32`,
    /// `contention` the store's estimates. A pure function of its arguments: a driver that
    /// keeps its own attempt counter (a loop variable) asks this.
    pub fn after_loss(&self, attempt: u32, elapsed: Nanos, jitter: u32, contention: &Contention) -> Wait {
        let over_time = self.give_up_after.is_some_and(|d| elapsed >= d);
        if attempt >= self.max_attempts.max(1) || over_time {
            return Wait::GiveUp { attempts: attempt };
        }
        let pause = match self.schedule {
            Schedule::Immediate => 0,
            Schedule::Adaptive { max } => {
                // The window is at most `max`, here capped at 2^31 ns (2 s), so the product fits.
                (contention.window(attempt, max).min(1 << 31) * u64::from(jitter)) >> 32
            }
            Schedule::Doubling { first, max } => {
                first.saturating_mul(1 << attempt.saturating_sub(1).min(62)).min(max).as_nanos()
            }
        };
        if pause == 0 {
            Wait::Now
        } else {
            Wait::Pause(Nanos::new(pause))
        }
    }
}

/// What a [`CasRun`] asks of its store.
#[derive(Debug)]
pub enum Step<'a, R> {
    /// Write `new` (per key: bytes and expiry, `None`: delete) if and only if every key still
    /// holds `expected`, then report with [`CasRun::written`].
    Write {
        /// The bytes the decision was made over.
        expected: &'a [Option<Vec<u8>>],
        /// The bytes after it.
        new: &'a [Option<(Vec<u8>, Nanos)>],
    },
    /// Nothing to write (a denial, or a state already as written): the decision is final.
    Done(R),
}

/// What the store answered a [`Step::Write`].
#[derive(Debug)]
pub enum Written {
    /// It wrote.
    Swapped,
    /// It held other bytes (these, per key) and wrote nothing.
    Conflict(Vec<Option<Vec<u8>>>),
}

/// What follows a write's answer.
#[derive(Debug)]
pub enum Next<R> {
    /// The write landed: the decision.
    Done(R),
    /// Decide again at once over the bytes the store holds ([`CasRun::feed`] them).
    Decide(Vec<Option<Vec<u8>>>),
    /// Pause this long, then decide again over these bytes.
    Backoff(Nanos, Vec<Option<Vec<u8>>>),
    /// Other writers won every attempt: give up (contention, not an outage), with the bytes
    /// the store held last.
    GiveUp {
        /// How many attempts were made.
        attempts: u32,
        /// The bytes the store answered the last attempt with.
        observed: Vec<Option<Vec<u8>>>,
    },
}

/// One compare-and-swap update of a few keys, as a state machine: the edge reads the keys and
/// [feeds](CasRun::feed) their bytes; the core decides and says what to write (or that the
/// decision stands); the edge swaps and reports what [was written](CasRun::written); the core
/// says whether to decide again (at once or after a pause) or give up.
#[derive(Debug)]
pub struct CasRun<R> {
    run: SwapRun,
    contention: Contention,
    expected: Vec<Option<Vec<u8>>>,
    pending: Option<CasStep<R>>,
}

impl<R> CasRun<R> {
    /// A run under `retry`; its first step is a read of the keys.
    pub fn begin(retry: Retry) -> CasRun<R> {
        CasRun::with_contention(retry, Contention::default())
    }

    /// A run whose adaptive pauses follow the store's estimates `contention` (see
    /// [`CasRun::contention`] to keep them for the next run).
    pub fn with_contention(retry: Retry, contention: Contention) -> CasRun<R> {
        CasRun { run: SwapRun::read(retry), contention, expected: Vec::new(), pending: None }
    }

    /// The store's estimates after this run's swaps.
    pub fn contention(&self) -> Contention {
        self.contention
    }

    /// Decides over `raw` (one entry per key, `None`: absent) with `f` (a pure function of
    /// the states: it may run once per attempt). A key whose bytes are not a state of
    /// `policy` is `Err((its index, why))`.
    pub fn feed(
        &mut self,
        policy: &Policy,
        raw: Vec<Option<Vec<u8>>>,
        f: &mut dyn FnMut(&mut [Option<PolicyState>]) -> R,
    ) -> Result<Step<'_, R>, (usize, DecodeError)> {
        let step = cas_step(policy, &raw, f)?;
        self.expected = raw;
        if self.run.decided(step.changed) != Act::Write {
            return Ok(Step::Done(step.result));
        }
        let step = self.pending.insert(step);
        Ok(Step::Write { expected: &self.expected, new: &step.states })
    }

    /// The store's answer to the last [`Step::Write`], which took `took`; `jitter` is a
    /// uniform random draw over `u32` for the pause. Called without a pending write (the
    /// edge's mistake), it gives up after this attempt.
    pub fn written(&mut self, outcome: Written, took: Nanos, jitter: u32) -> Next<R> {
        let answer = if matches!(outcome, Written::Swapped) { Answer::Swapped } else { Answer::Conflict };
        let after = self.run.answered(answer, took, jitter, &mut self.contention);
        match (outcome, self.pending.take(), after) {
            (Written::Swapped, Some(step), _) => Next::Done(step.result),
            (Written::Swapped, None, _) => {
                Next::GiveUp { attempts: self.run.attempt(), observed: core::mem::take(&mut self.expected) }
            }
            (Written::Conflict(observed), _, After::Decide(p)) if p == Nanos::ZERO => Next::Decide(observed),
            (Written::Conflict(observed), _, After::Decide(p)) => Next::Backoff(p, observed),
            (Written::Conflict(observed), _, After::GiveUp { attempts }) => Next::GiveUp { attempts, observed },
            // Never: a conflict is a lost race, which is not done.
            (Written::Conflict(observed), _, After::Done) => Next::Decide(observed),
        }
    }
}
