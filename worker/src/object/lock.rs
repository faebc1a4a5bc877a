//! A key's object under the several-keys protocol: its lease, and the lock, commit, release,
//! export and import requests (`lock_wire.rs`).
//!
//! While an isolate holds the lease, every other request to the key waits (checks, peeks,
//! refunds, resets, exports, imports, other locks), so that no hit is decided over state the
//! holder is about to replace. A waiting request wakes the moment the lease ends (or at its
//! expiry); once it has waited its share of the policy's timeout it answers busy and the
//! isolate asks again (contention, never taken for an outage). A lease lasts [`LEASE_MS`]: a
//! request finding it expired breaks it, so a crashed isolate never holds a key for longer. A
//! commit is refused only when its lease was broken (another request was served since); a
//! late commit that nobody overtook is the decision it would have been on time, and is written.

use std::cell::{Cell, RefCell};
use std::convert::Infallible;
use std::future::Future;
use std::pin::Pin;
use std::task::{Context, Poll, Waker};
use std::time::Duration;

use futures_util::future::select;

use super::sql::Sql;
use serde_json::json;
use tollgate::store_protocol::{drive, Retry, Tried};
use tollgate::{Nanos, PolicyState, Store};

use super::object_store::ObjectStore;
use super::storage::Mem;
use crate::base::clock::real_ms;
use crate::base::errors::ApiError;
use crate::base::log;
use crate::config::settings::PolicyConfig;
use crate::wire::lock_wire::{LockOp, LockReply, LockRequest, BUSY_CODE, BUSY_STATUS, LEASE_LOST_CODE};

/// How long a lease lasts without a commit or release. A holder takes one round trip per
/// other key and one to commit: far less, unless its isolate died.
pub const LEASE_MS: u64 = 2_000;

/// One isolate's hold on the key.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub struct Lease {
    pub token: u64,
    /// Real time (Unix ms) from which another request may break it.
    pub until_ms: u64,
}

/// The longest a request waits here for a lease to end before answering busy: half the
/// policy's timeout, so that the answer reaches the isolate before it gives up on the object.
pub fn wait_budget_ms(pc: &PolicyConfig) -> u64 {
    (pc.timeout_ms / 2).max(1)
}

/// The key's lease and the requests waiting for it to end.
#[derive(Default)]
pub struct Gate {
    lease: Cell<Option<Lease>>,
    /// Counts the lease's ends, so a waiter knows one happened since it looked.
    ends: Cell<u64>,
    waiters: RefCell<Vec<Waker>>,
}

impl Gate {
    /// Who holds the key, if anyone (expired or not).
    pub fn holder(&self) -> Option<Lease> {
        self.lease.get()
    }

    fn take(&self, lease: Lease) {
        self.lease.set(Some(lease));
    }

    /// Ends the lease and wakes every waiter.
    fn end(&self) {
        self.lease.set(None);
        self.ends.set(self.ends.get() + 1);
        for w in self.waiters.borrow_mut().drain(..) {
            w.wake();
        }
    }
}

/// Ready once the lease has ended since `seen`.
struct Ended<'a> {
    gate: &'a Gate,
    seen: u64,
}

impl Future for Ended<'_> {
    type Output = ();
    fn poll(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<()> {
        if self.gate.ends.get() != self.seen {
            return Poll::Ready(());
        }
        self.gate.waiters.borrow_mut().push(cx.waker().clone());
        Poll::Pending
    }
}

/// Waits until no live lease holds the key (breaking an expired one), or answers busy after
/// `budget_ms`: looked at again as the core's `Retry::waiting` says, each pause cut short when
/// the lease ends and never past its expiry.
pub async fn wait_free(gate: &Gate, budget_ms: u64) -> Result<(), ApiError> {
    let look = |_: u32| async move {
        let Some(lease) = gate.holder() else { return Ok::<_, Infallible>(Tried::Done(())) };
        let now = real_ms();
        if now >= lease.until_ms {
            log::warn("lease_broken", json!({ "expiredMsAgo": now - lease.until_ms }));
            gate.end();
            return Ok(Tried::Done(()));
        }
        Ok(Tried::Lost)
    };
    let pause = |p: Nanos| {
        let until_expiry = gate.holder().map_or(0, |l| l.until_ms.saturating_sub(real_ms()));
        let ms = p.as_nanos().div_ceil(1_000_000).min(until_expiry).max(1);
        let ended = Ended { gate, seen: gate.ends.get() };
        async move {
            select(ended, Box::pin(worker::Delay::from(Duration::from_millis(ms)))).await;
        }
    };
    let clock = || Nanos::from_millis(real_ms());
    match drive(Retry::waiting(Nanos::from_millis(budget_ms)), clock, look, pause).await {
        Ok(Ok(())) => Ok(()),
        Ok(Err(_)) => Err(ApiError::new(BUSY_STATUS, BUSY_CODE, "another request holds the key")),
        Err(never) => match never {},
    }
}

/// The bytes as a state of `pc`'s policy (`None`: fresh), or `invalid_state`. The core's
/// `Policy::restore` reads them, as the npm limiter's import does: validated, its expiry
/// computed, and a penalty's block kept (it is part of the key's state).
pub fn state_of(pc: &PolicyConfig, bytes: Option<&[u8]>) -> Result<Option<PolicyState>, ApiError> {
    let Some(bytes) = bytes else { return Ok(None) };
    let bad = |e: tollgate::DecodeError| {
        ApiError::bad_request("invalid_state", format!("not a state of policy {:?}: {e}", pc.name)).with_field("state")
    };
    let state = PolicyState::decode(bytes).map_err(bad)?;
    pc.policy.restore(state).map_err(bad)
}

fn new_token() -> u64 {
    // 53 random bits: tokens only tell one isolate's lease from the next one's.
    (worker::js_sys::Math::random() * 9_007_199_254_740_992.0) as u64 + 1
}

/// The state as stored now, encoded (an update that changes nothing).
fn current(store: &mut ObjectStore<'_>, now: Nanos) -> Result<Option<Vec<u8>>, ApiError> {
    let key = store.key();
    store.update(&[key], now, &mut |states| states[0].as_ref().map(PolicyState::encode))
}

/// Replaces the state, written through when it differs; the real time it expires at, for
/// the alarm, when a state was stored.
fn write(store: &mut ObjectStore<'_>, state: Option<PolicyState>, now: Nanos) -> Result<Option<u64>, ApiError> {
    let key = store.key();
    store.update(&[key], now, &mut |states| states[0] = state.clone())?;
    Ok(store.alarm())
}

/// Runs `op` over the key's store: opened between two awaits, as it borrows the object's
/// memory while it lives.
fn in_store<T>(
    mem: &RefCell<Mem>,
    sql: &Sql<'_>,
    pc: &PolicyConfig,
    r: &LockRequest,
    op: impl FnOnce(&mut ObjectStore<'_>) -> Result<T, ApiError>,
) -> Result<T, ApiError> {
    op(&mut ObjectStore::new(&r.key, &mut mem.borrow_mut(), sql, pc, r.now.is_some()))
}

/// Serves one request of the protocol. Returns the reply and, when state was written, the
/// alarm time.
pub async fn serve(
    gate: &Gate,
    mem: &RefCell<Mem>,
    sql: &Sql<'_>,
    pc: &PolicyConfig,
    r: &LockRequest,
    now: Nanos,
) -> Result<(LockReply, Option<u64>), ApiError> {
    let reply = |token, state| LockReply { now: now.as_nanos(), token, state };
    match r.lock_op {
        LockOp::Lock => {
            wait_free(gate, wait_budget_ms(pc)).await?;
            let state = in_store(mem, sql, pc, r, |store| current(store, now))?;
            let token = new_token();
            gate.take(Lease { token, until_ms: real_ms() + LEASE_MS });
            Ok((reply(token, state), None))
        }
        LockOp::Commit => {
            if gate.holder().map(|l| l.token) != Some(r.token) {
                return Err(ApiError::new(BUSY_STATUS, LEASE_LOST_CODE, "the lease expired and was broken"));
            }
            let result = state_of(pc, r.state.as_deref())
                .and_then(|state| in_store(mem, sql, pc, r, |store| write(store, state, now)));
            gate.end();
            Ok((reply(r.token, None), result?))
        }
        LockOp::Release => {
            if gate.holder().map(|l| l.token) == Some(r.token) {
                gate.end();
            }
            Ok((reply(r.token, None), None))
        }
        LockOp::Export => {
            wait_free(gate, wait_budget_ms(pc)).await?;
            let state = in_store(mem, sql, pc, r, |store| current(store, now))?;
            Ok((reply(0, state), None))
        }
        LockOp::Import => {
            let state = state_of(pc, r.state.as_deref())?;
            wait_free(gate, wait_budget_ms(pc)).await?;
            let alarm = in_store(mem, sql, pc, r, |store| write(store, state, now))?;
            Ok((reply(0, None), alarm))
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::settings::parse_policy;

    /// A penalty's block is part of the key's state (src/penalty.rs): bytes read back as a
    /// state (a several-keys commit, an import) keep it, as the npm limiter's import does.
    #[test]
    fn a_state_read_back_keeps_its_penalty_block() {
        let pc =
            parse_policy("p", &json!({ "algorithm": "fixed-window", "quota": "1/s", "blockDuration": "1m" })).unwrap();
        let mut states = [None];
        let now = Nanos::from_secs(1_000);
        assert!(pc.policy.check(&mut states, now, 1).unwrap().allowed);
        assert!(pc.policy.check(&mut states, now, 1).unwrap().penalty);
        let blocked = states[0].clone().unwrap();
        assert_eq!(blocked.blocked_until(), now + Nanos::from_secs(60));
        let back = state_of(&pc, Some(&blocked.encode())).unwrap();
        assert_eq!(back, Some(blocked));
        let later = pc.policy.check(&mut [back], now + Nanos::from_secs(2), 1).unwrap();
        assert!(!later.allowed && later.penalty, "the block stands after the window reset");
    }
}
