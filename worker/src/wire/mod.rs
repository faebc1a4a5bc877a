//! The protocols between the isolate and the Durable Objects: one key (`key_wire`), several keys
//! under leases (`lock_wire`), leased quota (`quota_wire`), capacity pools (`pool_wire`).

pub mod key_wire;
pub mod lock_wire;
pub mod pool_wire;
pub mod quota_wire;
