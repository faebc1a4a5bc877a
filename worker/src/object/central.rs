//! Sync mode (`syncRate` > 0): this object is the central store for its key. Isolates push the
//! counts they admitted per clock-aligned window (diffs); the object adds them up and answers
//! the merged counts (`push_diffs` then `get_counters`). It decides nothing:
//! the isolates decide from these counts with the core's `SyncedLimiter`.
//!
//! The counts are kept as the core's `CentralCounters` keeps them: per (limit, window start),
//! a sum and the latest expiry of any diff, dropped once expired.

use std::cell::RefCell;

use tollgate::sync::MergedCount;
use tollgate::Nanos;

use super::sql::Sql;
use super::storage::{load_central, save_central, storage_deadline, Mem};
use crate::base::errors::ApiError;
use crate::config::settings::PolicyConfig;
use crate::wire::key_wire::{DoReply, DoRequest};

/// The most diffs one push may carry (a key has a few windows per limit).
pub const MAX_DIFFS: usize = 1024;

/// Adds `r.diffs`, drops what expired at `now`, writes through, and answers the merged counts.
pub fn sync(
    mem: &RefCell<Mem>,
    sql: &Sql<'_>,
    pc: &PolicyConfig,
    r: &DoRequest,
    now: Nanos,
) -> Result<(DoReply, Option<u64>), ApiError> {
    if r.diffs.len() > MAX_DIFFS {
        return Err(ApiError::bad_request("invalid_body", format!("at most {MAX_DIFFS} diffs per push")));
    }
    let limits = pc.policy.limits().len();
    if let Some(d) = r.diffs.iter().find(|d| d.limit >= limits) {
        return Err(ApiError::bad_request(
            "invalid_body",
            format!("diff for limit {} of a policy of {limits}", d.limit),
        ));
    }
    let mut mem = mem.borrow_mut();
    load_central(&mut mem, sql)?;
    let Some(counts) = mem.central.as_mut() else {
        return Err(ApiError::internal("counts not loaded"));
    };
    let before = counts.clone();
    for d in &r.diffs {
        let (window_start, expires_at) = (d.window_start.as_nanos(), d.expires_at.as_nanos());
        let e = counts.entry((d.limit, window_start)).or_insert((0, expires_at));
        e.0 = e.0.saturating_add(d.delta);
        e.1 = e.1.max(expires_at);
    }
    counts.retain(|_, (_, expires)| *expires > now.as_nanos());
    let mut alarm = None;
    if *counts != before {
        let fresh_at = counts.values().map(|&(_, e)| e).max().map_or(now, Nanos::new);
        let deadline = storage_deadline(worker::Date::now().as_millis(), now, fresh_at, r.now.is_some());
        if let Err(e) = save_central(sql, counts, deadline) {
            mem.central = None;
            return Err(e);
        }
        alarm = (!counts.is_empty()).then_some(deadline);
    }
    let merged = counts
        .iter()
        .map(|(&(limit, start), &(count, _))| MergedCount {
            key: "".into(),
            limit,
            window_start: Nanos::new(start),
            count,
        })
        .collect();
    Ok((DoReply { now: now.as_nanos(), decision: None, merged, stored: None, state: None }, alarm))
}
