//! The keys whose states a record cannot hold (several limits; the sliding log's and sliding
//! buckets' variable-size states): each key's core `PolicyState` in a slab, the record's one
//! word its index; and, for every policy, the compact store as the core's `Store`
//! ([`PolicyStore`]): keys' states moved out as policy states and back, so that the core's
//! `Policy` decides over them (several keys all or nothing, several limits), as over the
//! core's `MemoryStore`.

use alloc::vec::Vec;
use tollgate::policy::{Policy, PolicyState};
use tollgate::{DecodeError, Nanos, Store};

use crate::key_store::CompactKeyed;
use crate::record_words::put;

/// The compact store holding `policy`'s keys, as the core's [`Store`]: an update moves the
/// keys' states out (taken from the slab, or converted from a record's words), lets the
/// decision change them, and puts them back, inserting new keys after the core's sweeping and
/// eviction rules. `f` runs once: nothing else writes to the store meanwhile.
pub(crate) struct PolicyStore<'a> {
    pub(crate) keys: &'a mut CompactKeyed,
    pub(crate) policy: &'a Policy,
}

impl Store for PolicyStore<'_> {
    /// A record whose words are not a state of the policy (never, for records this store
    /// wrote).
    type Error = DecodeError;

    fn update<R>(
        &mut self,
        keys: &[&str],
        now: Nanos,
        f: &mut dyn FnMut(&mut [Option<PolicyState>]) -> R,
    ) -> Result<R, DecodeError> {
        let mut states: Vec<Option<PolicyState>> = Vec::with_capacity(keys.len());
        for k in keys {
            match self.keys.take(self.policy, k) {
                Ok(s) => states.push(s),
                Err(e) => {
                    self.keys.put_states(&keys[..states.len()], states, now);
                    return Err(e);
                }
            }
        }
        let r = f(&mut states);
        self.keys.put_states(keys, states, now);
        Ok(r)
    }

    fn remove(&mut self, keys: &[&str]) -> Result<(), DecodeError> {
        for k in keys {
            self.keys.reset(k);
        }
        Ok(())
    }
}

impl CompactKeyed {
    /// Moves `key`'s state out as a policy state (`None`: fresh). From the slab it is taken,
    /// leaving a placeholder until `put_states`; from words it is converted.
    pub(crate) fn take(&mut self, policy: &Policy, key: &str) -> Result<Option<PolicyState>, DecodeError> {
        let offset = self.find(key);
        self.take_at(policy, offset)
    }

    /// `take` of the key whose record is at `offset` (`None`: no record, fresh).
    fn take_at(&mut self, policy: &Policy, offset: Option<u32>) -> Result<Option<PolicyState>, DecodeError> {
        if self.slab.is_none() {
            return self.words_state(policy, offset);
        }
        let i = offset.map(|o| self.index_at(o));
        Ok(match (i, self.slab.as_mut()) {
            (Some(i), Some(slab)) => slab.slot(i).and_then(Option::take),
            _ => None,
        })
    }

    /// Gives back `cost` units to one key (the core policy's refund of its state), in place:
    /// a state that becomes fresh takes its record with it.
    pub(crate) fn refund_one(&mut self, policy: &Policy, key: &str, now: Nanos, cost: u64) -> Result<(), DecodeError> {
        let Some(offset) = self.find(key) else {
            return Ok(()); // a fresh key has nothing to give back
        };
        let mut state = self.take_at(policy, Some(offset))?;
        policy.refund(core::slice::from_mut(&mut state), now, cost);
        self.put_at(offset, state);
        self.compact();
        Ok(())
    }

    /// Runs `f` on the slab state of one key in place (a fresh key's is `None`, kept if `f`
    /// makes it a state): one lookup, nothing moved. `None` when the records hold words.
    pub(crate) fn on_slab_state<R>(
        &mut self,
        key: &str,
        now: Nanos,
        f: impl FnOnce(&mut Option<PolicyState>) -> R,
    ) -> Option<R> {
        self.slab.as_ref()?;
        let i = self.find(key).map(|o| self.index_at(o));
        let slab = self.slab.as_mut()?;
        if let Some(slot) = i.and_then(|i| slab.slot(i)) {
            return Some(f(slot));
        }
        let mut fresh = None;
        let r = f(&mut fresh);
        if let Some(s) = fresh {
            self.insert_state(key, s, Some(now));
        }
        Some(r)
    }

    /// Puts back the states `take` gave for `keys`, changed or not: existing keys first (an
    /// insert may sweep, and must not find a placeholder), then new keys, inserted after the
    /// sweeping and eviction rules.
    pub(crate) fn put_states(&mut self, keys: &[&str], states: Vec<Option<PolicyState>>, now: Nanos) {
        let mut new = Vec::new();
        for (key, state) in keys.iter().zip(states) {
            match self.find(key) {
                Some(o) => self.put_at(o, state),
                None => new.extend(state.map(|s| (*key, s))),
            }
        }
        self.compact();
        for (key, s) in new {
            self.insert_state(key, s, Some(now));
        }
    }

    /// Replaces `key`'s state (state import; no sweeping or eviction, as in the core).
    pub(crate) fn set(&mut self, key: &str, state: Option<PolicyState>) {
        match (self.find(key), state) {
            (Some(o), state) => {
                self.put_at(o, state);
                self.compact();
            }
            (None, Some(s)) => self.insert_state(key, s, None),
            (None, None) => {}
        }
    }

    /// `key`'s state, encoded (export; `None`: fresh).
    pub(crate) fn export(&self, policy: &Policy, key: &str) -> Result<Option<Vec<u8>>, DecodeError> {
        let offset = self.find(key);
        match &self.slab {
            Some(slab) => Ok(offset.and_then(|o| slab.get(self.index_at(o))).map(PolicyState::encode)),
            None => Ok(self.words_state(policy, offset)?.as_ref().map(PolicyState::encode)),
        }
    }

    /// The policy state of the record at `offset` when records hold words (`None`: fresh).
    fn words_state(&self, policy: &Policy, offset: Option<u32>) -> Result<Option<PolicyState>, DecodeError> {
        policy.state_from_slots(alloc::vec![offset.map(|o| self.state_at(o))])
    }

    /// Writes a state into an existing record, or removes the record for a fresh one.
    fn put_at(&mut self, offset: u32, state: Option<PolicyState>) {
        let i = self.index_at(offset);
        match (state, self.slab.as_mut()) {
            (Some(s), Some(slab)) => {
                if let Some(slot) = slab.slot(i) {
                    *slot = Some(s);
                }
            }
            (Some(s), None) => match only_slot(s) {
                Some(one) => self.set_at(offset, &one),
                None => self.remove(offset),
            },
            (None, _) => self.remove(offset),
        }
    }

    /// A new record for `key` holding `s`: its slab index, or its one slot's words (no record
    /// when that slot is fresh); inserted as `insert` does with `now`.
    fn insert_state(&mut self, key: &str, s: PolicyState, now: Option<Nanos>) {
        if let Some(slab) = self.slab.as_mut() {
            let i = slab.put(s);
            let o = self.insert(key, now);
            put(self.record_mut(o).1, 0, i);
        } else if let Some(one) = only_slot(s) {
            let o = self.insert(key, now);
            self.set_at(o, &one);
        }
    }
}

/// The one slot of a one-limit policy's state (`None`: fresh).
fn only_slot(s: PolicyState) -> Option<tollgate::AnyState> {
    s.into_slots().into_iter().next().flatten()
}
