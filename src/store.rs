//! Where key states live, behind one atomic read-modify-write.
//!
//! The same decision code runs over every store: the in-memory map here, a Durable Object
//! (which is single-threaded per key, so its update is a plain load, decide, write), and any
//! store that only offers compare-and-swap on opaque bytes, such as Redis with a small
//! script. The pure policy runs inside [`Store::update`]; a compare-and-swap store re-runs it
//! when another writer got there first, which is safe because it is a pure function of the
//! states it is given (governor's lesson: one update method carries all the atomicity).

use alloc::boxed::Box;
use alloc::string::{String, ToString};
use alloc::vec::Vec;
use core::convert::Infallible;
use core::fmt;

use crate::error::DecodeError;
use crate::keyed::KeyMap;
use crate::policy::{Policy, PolicyState};
pub use crate::store_protocol::{cas_step, decode_states, CasStep};
use crate::store_protocol::{CasRun, Contention, Next, Retry, Step, Written, DEFAULT_MAX_ATTEMPTS};
use crate::time::Nanos;

/// An atomic read-modify-write of the states of a few keys.
pub trait Store {
    /// What can go wrong reaching the store.
    type Error: fmt::Debug + fmt::Display;

    /// Reads the states of `keys` (distinct; `None` for a fresh key), lets `f` change them in
    /// place, and writes back what changed, as one atomic step. `f` may run more than once
    /// (a compare-and-swap store re-runs it on conflict), so it must be a pure function of the
    /// states it is given; the result of its last run is returned.
    fn update<R>(
        &mut self,
        keys: &[&str],
        now: Nanos,
        f: &mut dyn FnMut(&mut [Option<PolicyState>]) -> R,
    ) -> Result<R, Self::Error>;

    /// Forgets `keys`.
    fn remove(&mut self, keys: &[&str]) -> Result<(), Self::Error>;
}

/// Key states in a hash map in this process (see [`crate::keyed`] for sweeping idle keys and
/// the key cap).
#[derive(Clone, Debug)]
pub struct MemoryStore {
    /// Every held key's state, always `Some` between updates: an update lends the slot itself
    /// to the policy (no move out and back), and removes the key when the policy left it `None`.
    keys: KeyMap<Box<str>, Option<PolicyState>>,
}

/// When a held slot decides like a fresh key (the map's sweep and pruning).
fn slot_expires_at(slot: &Option<PolicyState>) -> Nanos {
    slot.as_ref().map_or(Nanos::ZERO, PolicyState::expires_at)
}

impl Default for MemoryStore {
    fn default() -> MemoryStore {
        MemoryStore::new()
    }
}

impl MemoryStore {
    /// An empty store with no key cap.
    pub fn new() -> MemoryStore {
        MemoryStore { keys: KeyMap::new() }
    }

    /// Caps the number of keys held.
    pub fn with_max_keys(mut self, max_keys: usize) -> MemoryStore {
        self.keys.set_max_keys(Some(max_keys));
        self
    }

    /// How many keys hold state.
    pub fn len(&self) -> usize {
        self.keys.len()
    }

    /// Whether no key holds state.
    pub fn is_empty(&self) -> bool {
        self.keys.len() == 0
    }

    /// How many keys the cap has evicted.
    pub fn evictions(&self) -> u64 {
        self.keys.evictions()
    }

    /// Drops every key that is fresh at `now`; returns how many.
    pub fn prune(&mut self, now: Nanos) -> usize {
        self.keys.prune(now, slot_expires_at)
    }

    /// The stored state of `key`.
    pub fn get(&self, key: &str) -> Option<&PolicyState> {
        self.keys.get(key).and_then(Option::as_ref)
    }

    /// Replaces the stored state of `key` (state import).
    pub fn set(&mut self, key: &str, state: Option<PolicyState>) {
        match state {
            Some(s) => {
                self.keys.set(key.into(), Some(s));
            }
            None => {
                self.keys.remove(key);
            }
        }
    }

    /// Every key with its state, in no particular order.
    pub fn iter(&self) -> impl Iterator<Item = (&str, &PolicyState)> {
        self.keys.iter().filter_map(|(k, v)| Some((&**k, v.as_ref()?)))
    }
}

impl Store for MemoryStore {
    type Error = Infallible;

    fn update<R>(
        &mut self,
        keys: &[&str],
        now: Nanos,
        f: &mut dyn FnMut(&mut [Option<PolicyState>]) -> R,
    ) -> Result<R, Infallible> {
        // One key (the common case): decide on its slot in place, no vectors and no moves.
        if let [key] = keys {
            if let Some(slot) = self.keys.get_mut(*key) {
                let result = f(core::slice::from_mut(slot));
                if slot.is_none() {
                    self.keys.remove(*key);
                }
                return Ok(result);
            }
            let mut one = [None];
            let result = f(&mut one);
            if let [Some(s)] = one {
                self.keys.insert((*key).into(), Some(s), now, slot_expires_at);
            }
            return Ok(result);
        }
        // Move the states out (no copy), decide, move them back.
        let mut states: Vec<Option<PolicyState>> =
            keys.iter().map(|k| self.keys.get_mut(*k).and_then(Option::take)).collect();
        let existed: Vec<bool> = states.iter().map(Option::is_some).collect();
        let result = f(&mut states);
        // Put back existing keys before inserting new ones: an insert may sweep the map, and
        // must not find a moved-out slot.
        let mut inserts = Vec::new();
        for ((key, state), existed) in keys.iter().zip(states).zip(existed) {
            match (state, existed) {
                (Some(s), true) => {
                    if let Some(slot) = self.keys.get_mut(*key) {
                        *slot = Some(s);
                    }
                }
                (None, true) => {
                    self.keys.remove(*key);
                }
                (Some(s), false) => inserts.push((*key, s)),
                (None, false) => {}
            }
        }
        for (key, s) in inserts {
            self.keys.insert(key.into(), Some(s), now, slot_expires_at);
        }
        Ok(result)
    }

    fn remove(&mut self, keys: &[&str]) -> Result<(), Infallible> {
        for k in keys {
            self.keys.remove(*k);
        }
        Ok(())
    }
}

/// A shared store that keeps each key's encoded state as opaque bytes and offers an atomic
/// compare-and-swap over several keys, e.g. Redis with a short script, or a database row with
/// a version check.
pub trait CasBackend {
    /// What can go wrong reaching the backend.
    type Error: fmt::Debug + fmt::Display;

    /// The current bytes of each key (`None`: absent).
    fn load(&mut self, keys: &[&str]) -> Result<Vec<Option<Vec<u8>>>, Self::Error>;

    /// Writes `new` (deleting where `None`, expiring each at `expires_at`) if and only if
    /// every key still holds `expected`; returns whether it did.
    fn compare_and_swap(
        &mut self,
        keys: &[&str],
        expected: &[Option<Vec<u8>>],
        new: &[Option<(Vec<u8>, Nanos)>],
    ) -> Result<bool, Self::Error>;

    /// Deletes `keys`.
    fn delete(&mut self, keys: &[&str]) -> Result<(), Self::Error>;

    /// Waits `pause` before the next attempt after lost races (the store protocol's backoff,
    /// [`crate::store_protocol`]). The core has no clock to sleep on: a backend that can
    /// sleep overrides this; by default it retries at once.
    fn pause(&mut self, pause: Nanos) {
        let _ = pause;
    }
}

/// Why an update over a [`CasBackend`] failed.
#[derive(Debug)]
pub enum CasError<E> {
    /// The backend failed.
    Backend(E),
    /// A key held bytes that are not valid state for this policy.
    Corrupt {
        /// Which key.
        key: String,
        /// What was wrong.
        error: DecodeError,
    },
    /// Other writers won every attempt.
    Contention {
        /// How many attempts were made.
        attempts: u32,
    },
}

impl<E: fmt::Display> fmt::Display for CasError<E> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            CasError::Backend(e) => write!(f, "store error: {e}"),
            CasError::Corrupt { key, error } => write!(f, "stored state of key {key:?} is invalid: {error}"),
            CasError::Contention { attempts } => {
                write!(f, "gave up after {attempts} attempts: other writers kept changing the key")
            }
        }
    }
}

/// A [`Store`] over a [`CasBackend`]: a driver of the core's store protocol
/// ([`CasRun`]): load, decide, compare-and-swap, and decide again on conflict, pausing and
/// giving up as the protocol says.
#[derive(Debug)]
pub struct CasStore<B> {
    backend: B,
    policy: Policy,
    retry: Retry,
    contention: Contention,
    /// The xorshift state the backoff's jitter is drawn from.
    seed: u64,
}

impl<B: CasBackend> CasStore<B> {
    /// A store over `backend` holding states of `policy` (used to validate what it reads).
    /// Gives up after [`DEFAULT_MAX_ATTEMPTS`] lost races in a row.
    pub fn new(backend: B, policy: Policy) -> CasStore<B> {
        let retry = Retry::cas(DEFAULT_MAX_ATTEMPTS);
        CasStore { backend, policy, retry, contention: Contention::default(), seed: 0x9e37_79b9_7f4a_7c15 }
    }

    /// Changes how many lost races in a row end in [`CasError::Contention`].
    pub fn with_max_attempts(mut self, attempts: u32) -> CasStore<B> {
        self.retry.max_attempts = attempts.max(1);
        self
    }

    /// Changes the whole retry policy (attempt cap and backoff schedule).
    pub fn with_retry(mut self, retry: Retry) -> CasStore<B> {
        self.retry = Retry { max_attempts: retry.max_attempts.max(1), ..retry };
        self
    }

    fn jitter(&mut self) -> u32 {
        self.seed ^= self.seed << 13;
        self.seed ^= self.seed >> 7;
        self.seed ^= self.seed << 17;
        (self.seed >> 32) as u32
    }

    /// The backend.
    pub fn backend(&mut self) -> &mut B {
        &mut self.backend
    }
}

impl<B: CasBackend> Store for CasStore<B> {
    type Error = CasError<B::Error>;

    fn update<R>(
        &mut self,
        keys: &[&str],
        _now: Nanos,
        f: &mut dyn FnMut(&mut [Option<PolicyState>]) -> R,
    ) -> Result<R, Self::Error> {
        let mut run = CasRun::with_contention(self.retry, self.contention);
        let mut raw = self.backend.load(keys).map_err(CasError::Backend)?;
        loop {
            let swapped = match run
                .feed(&self.policy, raw, f)
                .map_err(|(i, error)| CasError::Corrupt { key: keys[i].to_string(), error })?
            {
                Step::Done(result) => return Ok(result),
                Step::Write { expected, new } => {
                    self.backend.compare_and_swap(keys, expected, new).map_err(CasError::Backend)?
                }
            };
            let outcome = if swapped {
                Written::Swapped
            } else {
                Written::Conflict(self.backend.load(keys).map_err(CasError::Backend)?)
            };
            let jitter = self.jitter();
            let next = run.written(outcome, Nanos::ZERO, jitter);
            self.contention = run.contention();
            raw = match next {
                Next::Done(result) => return Ok(result),
                Next::Decide(observed) => observed,
                Next::Backoff(pause, observed) => {
                    self.backend.pause(pause);
                    observed
                }
                Next::GiveUp { attempts, .. } => return Err(CasError::Contention { attempts }),
            };
        }
    }

    fn remove(&mut self, keys: &[&str]) -> Result<(), Self::Error> {
        self.backend.delete(keys).map_err(CasError::Backend)
    }
}
