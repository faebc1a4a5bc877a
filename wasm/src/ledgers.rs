//! The open reservations of the in-memory limiter's keys, kept beside the compact key store
//! (which has no room for them) and attached to a key's whole state while the core reserves or
//! settles over it (reservations.rs).

use alloc::string::String;
use alloc::vec::Vec;
use hashbrown::HashMap;
use tollgate::policy::{Policy as CorePolicy, PolicyState};
use tollgate::reserve::Open;
use tollgate::Nanos;

/// The open reservations of every key that has any.
#[derive(Default)]
pub(crate) struct Ledgers {
    map: HashMap<String, Vec<Open>>,
}

impl Ledgers {
    pub(crate) fn take(&mut self, key: &str) -> Vec<Open> {
        self.map.remove(key).unwrap_or_default()
    }

    pub(crate) fn put(&mut self, key: &str, open: Vec<Open>) {
        if !open.is_empty() {
            self.map.insert(key.into(), open);
        }
    }

    /// The key was reset: its reservations can no longer be settled.
    pub(crate) fn forget(&mut self, key: &str) {
        self.map.remove(key);
    }

    /// Drops the reservations whose settling time has passed at `now`.
    pub(crate) fn prune(&mut self, now: Nanos) {
        self.map.retain(|_, l| {
            l.retain(|o| o.until() > now);
            !l.is_empty()
        });
    }

    /// `bytes` (a key's exported state, `None`: fresh) with the key's ledger in it.
    pub(crate) fn export(&self, policy: &CorePolicy, key: &str, bytes: Option<Vec<u8>>) -> Option<Vec<u8>> {
        let Some(open) = self.map.get(key) else { return bytes };
        let mut state = bytes.and_then(|b| PolicyState::decode(&b).ok());
        policy.attach_ledger(&mut state, open.clone());
        state.map(|s| s.encode())
    }

    /// Takes the ledger out of an imported `state`, which replaces the key's.
    pub(crate) fn import(&mut self, policy: &CorePolicy, key: &str, state: &mut Option<PolicyState>) {
        self.forget(key);
        let open = policy.detach_ledger(state);
        self.put(key, open);
    }
}
