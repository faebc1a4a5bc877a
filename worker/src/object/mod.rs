//! The Durable Object: one per (policy, key), the single place that key's state lives and the
//! single clock that decides for it.
//!
//! State is loaded lazily on the first request after the object starts, kept in memory and
//! written through to the object's SQLite storage before the answer leaves (the runtime's
//! output gate holds the answer until the write is durable): the key's `ObjectStore`
//! (object_store.rs), over which the core's `Policy` decides through the `Store` trait. Every decision runs without an
//! `await` between reading and writing the in-memory state, so concurrent requests to one
//! key are decided one after another: 2000 concurrent hits on a limit of 100 admit exactly 100.
//! An alarm deletes the state once its longest window has passed.
//!
//! `pool` is the other class: one `CapacityPool` per capacity pool, holding its leases.

mod central;
mod exact;
pub mod lock;
mod object_store;
mod pool;
mod pool_storage;
mod quota;
mod sql;
mod storage;

use std::cell::RefCell;

use tollgate::Nanos;
use worker::{durable_object, DurableObject, Env, Method, Request, Response, Result, State};

use crate::base::clock::clock;
use crate::base::errors::ApiError;
use crate::config::env_config::config;
use crate::wire::key_wire::{DoReply, DoRequest, Fault, Op};
use crate::wire::lock_wire::{self, LockRequest};
use object_store::ObjectStore;

#[cfg(feature = "test-hooks")]
pub use crate::tests::storage_fault;
pub use pool::{lease_error, CapacityPool};
pub use storage::Mem;

#[durable_object]
pub struct KeyLimiter {
    state: State,
    env: Env,
    mem: RefCell<Mem>,
    /// What a test armed (the test build's storage faults; nothing in a production build).
    faults: sql::Faults,
    /// The several-keys protocol's lease on this key, while an isolate holds one (lock.rs).
    gate: lock::Gate,
}

impl KeyLimiter {
    async fn handle(&self, mut req: Request) -> std::result::Result<Response, ApiError> {
        let body = post_body(&mut req).await?;
        if body.starts_with(lock_wire::PREFIX) {
            return Ok(Response::from_json(&self.handle_lock(&body).await?)?);
        }
        if body.starts_with(crate::wire::quota_wire::PREFIX) {
            return Ok(Response::from_json(&self.handle_quota(&body).await?)?);
        }
        Ok(Response::from_json(&self.handle_do(&body).await?)?)
    }

    /// A request of the several-keys protocol, or an export or import (lock.rs).
    async fn handle_lock(&self, body: &[u8]) -> std::result::Result<lock_wire::LockReply, ApiError> {
        let r: LockRequest = request_of(body)?;
        let cfg = config(&self.env)?;
        let pc = policy_of(&cfg, &r.policy)?;
        let now = acting_now(r.now, &cfg)?;
        let storage = self.state.storage();
        let sql = sql::Sql::new(storage.sql(), &self.faults);
        let (reply, alarm) = lock::serve(&self.gate, &self.mem, &sql, pc, &r, now).await?;
        self.schedule(alarm).await?;
        Ok(reply)
    }

    /// An exchange of leased quota, or a peek at it (quota_wire.rs, quota.rs).
    async fn handle_quota(&self, body: &[u8]) -> std::result::Result<crate::wire::quota_wire::QuotaReply, ApiError> {
        let r: crate::wire::quota_wire::QuotaRequest = request_of(body)?;
        let cfg = config(&self.env)?;
        let pc = policy_of(&cfg, &r.policy)?;
        let now = acting_now(r.now, &cfg)?;
        if pc.mode() != crate::config::settings::Mode::Leased {
            return Err(ApiError::bad_request("invalid_body", format!("policy {:?} is not leased", pc.name)));
        }
        let sql = sql::Sql::new(self.state.storage().sql(), &self.faults);
        if r.quota_op == crate::wire::quota_wire::QuotaOp::Peek {
            return quota::peek(&self.mem, &sql, pc, &r, now);
        }
        let (reply, alarm) = quota::exchange(&self.mem, &sql, pc, &r, now)?;
        self.schedule(Some(alarm)).await?;
        Ok(reply)
    }

    /// A request deciding one key (wire.rs): it waits while another request holds the key.
    async fn handle_do(&self, body: &[u8]) -> std::result::Result<DoReply, ApiError> {
        let r: DoRequest = request_of(body)?;
        let cfg = config(&self.env)?;
        let pc = policy_of(&cfg, &r.policy)?;
        if let Some(fault) = r.fault {
            self.inject(fault, &cfg).await?;
        }
        let now = acting_now(r.now, &cfg)?;
        if r.op != Op::Inspect {
            lock::wait_free(&self.gate, lock::wait_budget_ms(pc)).await?;
        }
        let storage = self.state.storage();
        let sql = sql::Sql::new(storage.sql(), &self.faults);
        match r.op {
            Op::Check | Op::Peek | Op::Refund => {
                let (reply, alarm) = {
                    let mut mem = self.mem.borrow_mut();
                    let mut store = ObjectStore::new(&r.key, &mut mem, &sql, pc, r.now.is_some());
                    (exact::run(&mut store, pc, r.op, r.cost, now)?, store.alarm())
                };
                self.schedule(alarm).await?;
                Ok(reply)
            }
            Op::Sync => {
                let (reply, alarm) = central::sync(&self.mem, &sql, pc, &r, now)?;
                self.schedule(alarm).await?;
                Ok(reply)
            }
            Op::Inspect => {
                if !cfg.test_hooks() {
                    return Err(ApiError::not_found());
                }
                let rows = storage::stored_rows(&self.mem, &sql)?;
                let alarm = storage.get_alarm().await?;
                let counts = storage::stored_counts(&sql)?;
                let stored =
                    serde_json::json!({ "state": rows.0, "central": rows.1, "alarm": alarm, "counts": counts });
                Ok(DoReply {
                    now: now.as_nanos(),
                    decision: None,
                    merged: Vec::new(),
                    stored: Some(stored),
                    state: None,
                })
            }
            Op::Reset => {
                self.mem.borrow_mut().clear();
                storage.delete_alarm().await?;
                storage.delete_all().await?;
                Ok(DoReply { now: now.as_nanos(), decision: None, merged: Vec::new(), stored: None, state: None })
            }
        }
    }

    /// Arms a storage fault, or fails this request (the test build with TEST_MODE on only).
    #[cfg(feature = "test-hooks")]
    async fn inject(&self, fault: Fault, cfg: &crate::config::settings::Config) -> std::result::Result<(), ApiError> {
        crate::tests::fault::inject(fault, cfg, &self.faults, &self.mem).await
    }

    /// A production build has no fault to inject (`Fault` has no value).
    #[cfg(not(feature = "test-hooks"))]
    async fn inject(&self, fault: Fault, _: &crate::config::settings::Config) -> std::result::Result<(), ApiError> {
        match fault {}
    }

    /// Makes sure an alarm is set after a write. `alarm` is the real time (ms) the state just
    /// written stops mattering. Only the first write of an object's life sets the alarm; when
    /// it fires before the state's current deadline (the state was extended since), the alarm
    /// handler moves it there. So an idle key costs one alarm, a busy key one per window.
    async fn schedule(&self, alarm: Option<u64>) -> Result<()> {
        let Some(at) = alarm else { return Ok(()) };
        let needed = {
            let mut mem = self.mem.borrow_mut();
            let needed = mem.alarm_at.is_none();
            if needed {
                mem.alarm_at = Some(at);
            }
            needed
        };
        if needed {
            let date = js_sys_date(at);
            self.state.storage().set_alarm(worker::ScheduledTime::new(date)).await?;
        }
        Ok(())
    }
}

pub(crate) fn js_sys_date(ms: u64) -> worker::js_sys::Date {
    worker::js_sys::Date::new(&worker::wasm_bindgen::JsValue::from_f64(ms as f64))
}

/// The body of a request from an isolate, which only posts.
pub(crate) async fn post_body(req: &mut Request) -> std::result::Result<Vec<u8>, ApiError> {
    if req.method() != Method::Post {
        return Err(ApiError::method_not_allowed(req.method().as_ref(), "POST"));
    }
    Ok(req.bytes().await?)
}

/// The instant an object acts at: the one its caller sent (`Clock::sent`, ns), taken only by
/// a build with the test hooks on (else `test_mode_disabled`), or the runtime's clock.
pub(crate) fn acting_now(sent: Option<u64>, cfg: &crate::config::settings::Config) -> std::result::Result<Nanos, ApiError> {
    match sent {
        Some(_) if !cfg.test_hooks() => Err(crate::request::clock::refused()),
        Some(ns) => Ok(Nanos::new(ns)),
        None => Ok(clock()),
    }
}

/// An object's answer: the response, or the error as JSON, logged as `event` when the
/// failure is the object's own (5xx).
pub(crate) fn answer(result: std::result::Result<Response, ApiError>, event: &str) -> Result<Response> {
    result.or_else(|e| {
        if e.status >= 500 {
            crate::base::log::error(
                event,
                serde_json::json!({ "status": e.status, "code": e.code, "message": e.message }),
            );
        }
        Ok(e.to_response())
    })
}

/// A request from an isolate (wire.rs, lock_wire.rs), parsed.
pub(crate) fn request_of<T: serde::de::DeserializeOwned>(body: &[u8]) -> std::result::Result<T, ApiError> {
    serde_json::from_slice(body)
        .map_err(|e| ApiError::bad_request("invalid_body", format!("bad Durable Object request: {e}")))
}

/// The policy a request from an isolate names (the isolate checked it; a configuration changed
/// in between is the only way it is missing).
fn policy_of<'c>(
    cfg: &'c crate::config::settings::Config,
    name: &str,
) -> std::result::Result<&'c crate::config::settings::PolicyConfig, ApiError> {
    cfg.policies.get(name).ok_or_else(|| ApiError::bad_request("unknown_policy", format!("no policy named {name:?}")))
}

impl DurableObject for KeyLimiter {
    fn new(state: State, env: Env) -> Self {
        KeyLimiter {
            state,
            env,
            mem: RefCell::new(Mem::default()),
            faults: Default::default(),
            gate: lock::Gate::default(),
        }
    }

    async fn fetch(&self, req: Request) -> Result<Response> {
        let result = self.handle(req).await;
        #[cfg(feature = "test-hooks")]
        if let Some(thrown) = storage_fault::thrown(&self.faults, &self.mem) {
            return Err(thrown);
        }
        answer(result, "object_error")
    }

    async fn alarm(&self) -> Result<Response> {
        let storage = self.state.storage();
        let real_now = worker::Date::now().as_millis();
        self.mem.borrow_mut().alarm_at = None;
        let deadline = storage::deadline(&self.mem, &sql::Sql::new(storage.sql(), &self.faults))?;
        match deadline {
            Some(d) if d > real_now => {
                self.mem.borrow_mut().alarm_at = Some(d);
                storage.set_alarm(worker::ScheduledTime::new(js_sys_date(d))).await?;
            }
            _ => {
                // Everything this object holds decides like a fresh key now: drop it all.
                self.mem.borrow_mut().clear();
                storage.delete_all().await?;
            }
        }
        Response::ok("ok")
    }
}
