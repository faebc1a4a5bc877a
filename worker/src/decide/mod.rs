//! Deciding a hit: the lists and shadow mode (`controls`), then the policy's mode (exact in the
//! key's object, several keys under leases, synced in the isolate, leased quota).

pub mod controls;
pub mod exact;
pub mod hit;
pub mod leased_mode;
pub mod multi_key;
pub mod sync_mode;
