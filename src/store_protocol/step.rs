//! One round of a compare-and-swap update, without I/O: the pure step every compare-and-swap
//! store decides through ([`CasStore`](crate::store::CasStore), the extras wasm module's Redis
//! store), below both the store and the protocol's run.

use alloc::vec::Vec;

use crate::error::DecodeError;
use crate::policy::{Policy, PolicyState};
use crate::time::Nanos;

/// One round of a compare-and-swap update, without I/O: what `f` decided over the bytes a
/// store holds, the bytes after it, and whether they differ from what was read.
#[derive(Debug)]
pub struct CasStep<R> {
    /// What `f` returned (the decision).
    pub result: R,
    /// The bytes per key after the round, with their expiry (`None`: the key is fresh and is
    /// deleted).
    pub states: Vec<Option<(Vec<u8>, Nanos)>>,
    /// Whether `states` differ from the bytes read: only then is there something to swap in
    /// (a denial, or a state already as written, changes nothing).
    pub changed: bool,
}

/// The states of `raw` (one entry per key, `None`: absent), each decoded and validated against
/// `policy` (`Policy::decode_state`); a key whose bytes are not a state of `policy` is
/// `Err((its index, why))`.
pub fn decode_states<T: AsRef<[u8]>>(
    policy: &Policy,
    raw: &[Option<T>],
) -> Result<Vec<Option<PolicyState>>, (usize, DecodeError)> {
    let decode = |(i, b): (usize, &Option<T>)| {
        b.as_ref().map(|b| policy.decode_state(b.as_ref())).transpose().map_err(|e| (i, e))
    };
    raw.iter().enumerate().map(decode).collect()
}

/// Decodes and validates `raw` (one entry per key, `None`: absent) against `policy`, lets `f`
/// change the states, and encodes the result. The store drives the loop around it: when the
/// step [changed](CasStep::changed) the states, it swaps them in if the keys still hold `raw`,
/// and otherwise calls this again over the bytes it found there. Every compare-and-swap store
/// ([`CasStore`](crate::store::CasStore), the npm package's Redis store through the extras wasm module) decides
/// through this one step.
///
/// A key whose bytes are not a state of `policy` is `Err((its index, why))`; nothing is
/// decided then.
///
/// `f` is generic (a `dyn FnMut` is one too): each caller's closure is called directly, so a
/// wasm module with several callers (the npm package's limiter module) needs no function table.
pub fn cas_step<R, T: AsRef<[u8]>, F: FnMut(&mut [Option<PolicyState>]) -> R + ?Sized>(
    policy: &Policy,
    raw: &[Option<T>],
    f: &mut F,
) -> Result<CasStep<R>, (usize, DecodeError)> {
    let mut states = decode_states(policy, raw)?;
    let result = f(&mut states);
    let new: Vec<Option<(Vec<u8>, Nanos)>> =
        states.iter().map(|s| s.as_ref().map(|s| (s.encode(), s.expires_at()))).collect();
    let changed =
        raw.iter().zip(&new).any(|(old, new)| old.as_ref().map(AsRef::as_ref) != new.as_ref().map(|(b, _)| &b[..]));
    Ok(CasStep { result, states: new, changed })
}
