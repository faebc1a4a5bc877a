//! The policy states of the keys whose states a record cannot hold (several limits; the
//! sliding log's and sliding buckets' variable-size states), by index: the record's one word
//! (key_store.rs, policy_states.rs).

use alloc::vec::Vec;
use tollgate::policy::PolicyState;

/// The policy states of the keys a record cannot hold itself, by index. A taken state leaves
/// `None` until it is put back; a freed index is reused.
#[derive(Default)]
pub(crate) struct Slab {
    states: Vec<Option<PolicyState>>,
    free: Vec<u32>,
}

impl Slab {
    pub(crate) fn put(&mut self, s: PolicyState) -> u64 {
        match self.free.pop() {
            Some(i) => {
                self.states[i as usize] = Some(s);
                i as u64
            }
            None => {
                self.states.push(Some(s));
                (self.states.len() - 1) as u64
            }
        }
    }

    pub(crate) fn free(&mut self, i: u64) {
        if let Some(slot) = self.states.get_mut(i as usize) {
            *slot = None;
            self.free.push(i as u32);
        }
    }

    pub(crate) fn get(&self, i: u64) -> Option<&PolicyState> {
        self.states.get(i as usize).and_then(Option::as_ref)
    }

    pub(crate) fn slot(&mut self, i: u64) -> Option<&mut Option<PolicyState>> {
        self.states.get_mut(i as usize)
    }
}
