//! [`Limiter`]: a policy over a store, with the checks every entry point shares.

use core::fmt;

use crate::error::CheckError;
use crate::policy::{Policy, PolicyDecision};
use crate::store::{MemoryStore, Store};
use crate::time::Nanos;

/// The longest key, in bytes. Keys are ids, IP addresses and API keys; anything longer is
/// almost certainly a mistake (a whole header or body used as a key) and would bloat every
/// store.
pub const MAX_KEY_LEN: usize = 256;

/// The most keys one hit may name (`ip:...` and `user:...` is two). Every edge takes the same
/// count: the npm limiters, the Redis store and the Worker's `keys` (one Durable Object lock
/// per key, so the cost of a hit grows with it).
pub const MAX_KEYS_PER_HIT: usize = 16;

/// A key list that cannot be decided.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum KeyError {
    /// No key at all.
    NoKeys,
    /// More than [`MAX_KEYS_PER_HIT`] keys.
    TooManyKeys {
        /// How many were given.
        count: usize,
    },
    /// An empty key.
    Empty {
        /// Its position in the list.
        index: usize,
    },
    /// A key longer than [`MAX_KEY_LEN`] bytes.
    TooLong {
        /// Its position in the list.
        index: usize,
        /// Its length in bytes.
        len: usize,
    },
    /// The same key twice.
    Duplicate {
        /// The position of the second occurrence.
        index: usize,
    },
}

impl fmt::Display for KeyError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            KeyError::NoKeys => write!(f, "at least one key is needed"),
            KeyError::TooManyKeys { count } => {
                write!(f, "{count} keys given; at most {MAX_KEYS_PER_HIT} are allowed")
            }
            KeyError::Empty { index } => write!(f, "key {index} is empty"),
            KeyError::TooLong { index, len } => {
                write!(f, "key {index} is {len} bytes; at most {MAX_KEY_LEN} are allowed")
            }
            KeyError::Duplicate { index } => write!(f, "key {index} repeats an earlier key"),
        }
    }
}

impl core::error::Error for KeyError {}

impl KeyError {
    /// The error's code at every edge (docs/vocabulary.md): `missing_key` for an empty key,
    /// `key_too_long`, and `invalid_value` for a list that is empty, too long or repeats a key.
    pub fn code(&self) -> &'static str {
        match self {
            KeyError::Empty { .. } => "missing_key",
            KeyError::TooLong { .. } => "key_too_long",
            KeyError::NoKeys | KeyError::TooManyKeys { .. } | KeyError::Duplicate { .. } => "invalid_value",
        }
    }
}

/// Owned keys (as an edge receives them) as the `&str` slice [`validate_keys`] and the
/// multi-key calls take.
pub fn key_refs(keys: &[alloc::string::String]) -> alloc::vec::Vec<&str> {
    keys.iter().map(alloc::string::String::as_str).collect()
}

/// Checks a key list: 1 to [`MAX_KEYS_PER_HIT`] distinct keys of 1 to [`MAX_KEY_LEN`] bytes.
pub fn validate_keys(keys: &[&str]) -> Result<(), KeyError> {
    if keys.is_empty() {
        return Err(KeyError::NoKeys);
    }
    if keys.len() > MAX_KEYS_PER_HIT {
        return Err(KeyError::TooManyKeys { count: keys.len() });
    }
    for (index, key) in keys.iter().enumerate() {
        validate_key(key, index)?;
        if keys[..index].contains(key) {
            return Err(KeyError::Duplicate { index });
        }
    }
    Ok(())
}

/// Checks one key, `keys[index]` of a list: not empty, at most [`MAX_KEY_LEN`] bytes.
pub fn validate_key(key: &str, index: usize) -> Result<(), KeyError> {
    if key.is_empty() {
        return Err(KeyError::Empty { index });
    }
    if key.len() > MAX_KEY_LEN {
        return Err(KeyError::TooLong { index, len: key.len() });
    }
    Ok(())
}

/// Why a limiter call could not be decided.
#[derive(Debug)]
pub enum LimitError<E> {
    /// A bad cost (zero, or above what some limit can ever hold).
    Check(CheckError),
    /// A bad key list.
    Key(KeyError),
    /// The store failed.
    Store(E),
}

impl<E: fmt::Display> fmt::Display for LimitError<E> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            LimitError::Check(e) => e.fmt(f),
            LimitError::Key(e) => e.fmt(f),
            LimitError::Store(e) => e.fmt(f),
        }
    }
}

impl<E> From<CheckError> for LimitError<E> {
    fn from(e: CheckError) -> Self {
        LimitError::Check(e)
    }
}

impl<E> From<KeyError> for LimitError<E> {
    fn from(e: KeyError) -> Self {
        LimitError::Key(e)
    }
}

/// A policy applied to keys whose states live in a [`Store`].
///
/// Bad input (cost, keys) is refused before the store is touched, so it never changes state.
///
/// ```
/// use tollgate::{Limiter, Nanos};
/// use tollgate::policy::{Limit, Policy};
/// use tollgate::{AnyAlgorithm, FixedWindow};
/// let login = Policy::new(vec![
///     Limit::new("per-minute", AnyAlgorithm::FixedWindow(FixedWindow::new("5/m".parse().unwrap()))).unwrap(),
///     Limit::new("per-hour", AnyAlgorithm::FixedWindow(FixedWindow::new("20/h".parse().unwrap()))).unwrap(),
/// ]).unwrap();
/// let mut limiter = Limiter::in_memory(login);
/// let now = Nanos::from_secs(3_600);
/// for _ in 0..5 {
///     assert!(limiter.check(&["ip:1.2.3.4"], now, 1).unwrap().allowed);
/// }
/// let d = limiter.check(&["ip:1.2.3.4"], now, 1).unwrap();
/// assert_eq!(limiter.policy().limit_name(d.blocked_by().unwrap()), "per-minute");
/// assert!(limiter.check(&[""], now, 1).is_err());
/// ```
#[derive(Debug)]
pub struct Limiter<St: Store = MemoryStore> {
    policy: Policy,
    store: St,
}

impl Limiter<MemoryStore> {
    /// A limiter keeping states in this process.
    pub fn in_memory(policy: Policy) -> Limiter<MemoryStore> {
        Limiter { policy, store: MemoryStore::new() }
    }
}

impl<St: Store> Limiter<St> {
    /// A limiter over `store`.
    pub fn new(policy: Policy, store: St) -> Limiter<St> {
        Limiter { policy, store }
    }

    /// The policy.
    pub fn policy(&self) -> &Policy {
        &self.policy
    }

    /// The store.
    pub fn store(&self) -> &St {
        &self.store
    }

    /// The store, mutably (pruning, import).
    pub fn store_mut(&mut self) -> &mut St {
        &mut self.store
    }

    /// Decides a hit of `cost` at `now` for every key, all or nothing, counting it if admitted.
    pub fn check(&mut self, keys: &[&str], now: Nanos, cost: u64) -> Result<PolicyDecision, LimitError<St::Error>> {
        validate_keys(keys)?;
        self.policy.validate_cost(cost)?;
        let policy = &self.policy;
        let result = self.store.update(keys, now, &mut |states| policy.check_valid_cost(states, now, cost));
        Ok(result.map_err(LimitError::Store)??)
    }

    /// The decision `check` would make, changing nothing.
    pub fn peek(&mut self, keys: &[&str], now: Nanos, cost: u64) -> Result<PolicyDecision, LimitError<St::Error>> {
        validate_keys(keys)?;
        self.policy.validate_cost(cost)?;
        let policy = &self.policy;
        let result = self.store.update(keys, now, &mut |states| policy.peek_valid_cost(states, now, cost));
        Ok(result.map_err(LimitError::Store)??)
    }

    /// Gives back `cost` units to every limit of every key.
    pub fn refund(&mut self, keys: &[&str], now: Nanos, cost: u64) -> Result<(), LimitError<St::Error>> {
        validate_keys(keys)?;
        if cost == 0 {
            return Err(CheckError::ZeroCost.into());
        }
        let policy = &self.policy;
        self.store.update(keys, now, &mut |states| policy.refund(states, now, cost)).map_err(LimitError::Store)
    }

    /// Forgets `keys`.
    pub fn reset(&mut self, keys: &[&str]) -> Result<(), LimitError<St::Error>> {
        validate_keys(keys)?;
        self.store.remove(keys).map_err(LimitError::Store)
    }
}
