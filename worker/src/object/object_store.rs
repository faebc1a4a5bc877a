//! The object's one key behind the core's [`Store`] trait: exact mode's checks, peeks and
//! refunds (exact.rs) and the several-keys protocol's reads and writes (lock.rs) are each one
//! `Store::update` over it, as the in-memory `MemoryStore` and the compare-and-swap stores
//! decide in the core.
//!
//! The key's `PolicyState` lives in the object's memory (`Mem::exact`). The first update after
//! the object starts loads it from SQLite, converting a state written under another
//! configuration (storage.rs); an update that changes it writes it through before returning,
//! so the answer never leaves ahead of the durable state (a denial, a peek or an unchanged
//! state writes nothing). No `await` happens inside an update, so the single-threaded object
//! is its own lock: the update is a plain load, decide, write, and `f` runs once.

use std::slice;

use serde_json::json;
use tollgate::{Nanos, PolicyState, Store};

use super::sql::Sql;
use super::storage::{ensure_schema, load_exact, save_exact, storage_deadline, Loaded, Mem};
use crate::base::errors::ApiError;
use crate::base::log;
use crate::config::settings::PolicyConfig;

/// The state of the one key an object holds, for one request.
pub struct ObjectStore<'a> {
    key: &'a str,
    mem: &'a mut Mem,
    sql: &'a Sql<'a>,
    pc: &'a PolicyConfig,
    /// Whether `now` is the request's test clock rather than the real one (the grace before
    /// the stored row may be deleted differs).
    test_clock: bool,
    alarm: Option<u64>,
}

impl<'a> ObjectStore<'a> {
    /// The store of `key` under `pc`'s policy, over the object's memory and storage.
    pub fn new(key: &'a str, mem: &'a mut Mem, sql: &'a Sql<'a>, pc: &'a PolicyConfig, test_clock: bool) -> Self {
        ObjectStore { key, mem, sql, pc, test_clock, alarm: None }
    }

    /// The key this object holds.
    pub fn key(&self) -> &'a str {
        self.key
    }

    /// When an update of this request stored a state: the real time (Unix ms) from which the
    /// row may be deleted, for the object's alarm.
    pub fn alarm(&self) -> Option<u64> {
        self.alarm
    }

    /// The key's state, loaded from storage on first use.
    fn load(&mut self, now: Nanos) -> Result<&mut Option<PolicyState>, ApiError> {
        match load_exact(self.mem, self.sql, &self.pc.policy, now)? {
            Some(Loaded::Converted) => log::info("state_converted", json!({ "policy": self.pc.name })),
            Some(Loaded::Dropped(why)) => log::warn("state_dropped", json!({ "policy": self.pc.name, "reason": why })),
            Some(Loaded::AsStored) | None => {}
        }
        self.mem.exact.as_mut().ok_or_else(|| ApiError::internal("state not loaded"))
    }

    /// Writes the state in memory through, decided at `now`.
    fn write(&mut self, now: Nanos) -> Result<(), ApiError> {
        let state = self.mem.exact.as_ref().and_then(Option::as_ref);
        let expires = state.map_or(now, PolicyState::expires_at);
        let stored = state.is_some();
        let deadline = storage_deadline(worker::Date::now().as_millis(), now, expires, self.test_clock);
        if let Err(e) = save_exact(self.mem, self.sql, &self.pc.policy, deadline) {
            // Memory is ahead of storage: forget it so the next request reloads what is durable.
            self.mem.exact = None;
            return Err(e);
        }
        if stored {
            self.alarm = Some(deadline);
        }
        Ok(())
    }
}

/// Refuses an update that is not of exactly the object's own key: the object holds no other
/// key's state, so deciding one here would be a silent wrong answer.
fn only_own_key(own: &str, keys: &[&str]) -> Result<(), ApiError> {
    match keys {
        [key] if *key == own => Ok(()),
        _ => Err(ApiError::internal(format!(
            "a key's object holds that one key only, and was asked to update {} other or several keys",
            keys.len()
        ))),
    }
}

impl Store for ObjectStore<'_> {
    type Error = ApiError;

    fn update<R>(
        &mut self,
        keys: &[&str],
        now: Nanos,
        f: &mut dyn FnMut(&mut [Option<PolicyState>]) -> R,
    ) -> Result<R, ApiError> {
        only_own_key(self.key, keys)?;
        let state = self.load(now)?;
        let before = state.clone();
        let result = f(slice::from_mut(state));
        if *state != before {
            self.write(now)?;
        }
        Ok(result)
    }

    fn remove(&mut self, keys: &[&str]) -> Result<(), ApiError> {
        only_own_key(self.key, keys)?;
        ensure_schema(self.mem, self.sql)?;
        self.mem.exact = Some(None);
        save_exact(self.mem, self.sql, &self.pc.policy, 0).inspect_err(|_| self.mem.exact = None)
    }
}

#[cfg(test)]
mod tests {
    use super::only_own_key;

    #[test]
    fn an_object_updates_its_own_key_only() {
        assert!(only_own_key("user:1", &["user:1"]).is_ok());
        for keys in [&["user:2"][..], &["user:1", "user:2"], &["user:1", "user:1"], &[]] {
            let e = only_own_key("user:1", keys).unwrap_err();
            assert_eq!(e.status, 500, "{keys:?}");
            assert!(!e.message.contains("user:"), "the message names no key");
        }
    }
}
