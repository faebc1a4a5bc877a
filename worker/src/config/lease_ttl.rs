//! `leaseTtl`, the option that puts a policy in leased mode (decide/leased_mode.rs).

use tollgate::spec::{code, duration, SpecError, MAX_SYNC_MS};
use tollgate::text::Msg;
use tollgate::{Nanos, Policy};

use crate::config::spec_input::Json;

/// The policy option that chooses leased mode: the longest lease of a slice.
pub const LEASE_FIELD: &str = "leaseTtl";

/// `leaseTtl`: a duration (1 ms to an hour), absent when the policy is not leased. Leased
/// mode takes every algorithm (the bound per algorithm is the core's), no `syncRate` and no
/// `blockDuration`.
pub fn lease_ms(input: &Json, policy: &Policy, sync_ms: i64) -> Result<u64, SpecError> {
    let Some(ttl) = duration(input, LEASE_FIELD, 1)? else { return Ok(0) };
    if ttl > Nanos::from_millis(MAX_SYNC_MS as u64) {
        let m = Msg::new(&format!("{LEASE_FIELD} is longer than the maximum {MAX_SYNC_MS} ms"));
        return Err(SpecError::new(code::OUT_OF_RANGE, LEASE_FIELD, m));
    }
    if sync_ms != 0 {
        let m = Msg::new(&format!(
            "{LEASE_FIELD} (leased mode) and syncRate = {sync_ms} (synced mode) are two modes: choose one"
        ));
        return Err(SpecError::new(code::CONFLICTING_FIELDS, LEASE_FIELD, m));
    }
    if policy.block_duration() > Nanos::ZERO {
        let m = Msg::new("blockDuration needs the key's Durable Object to decide every hit, not leased mode");
        return Err(SpecError::new(code::CONFLICTING_FIELDS, "blockDuration", m));
    }
    Ok(ttl.as_millis_ceil())
}
