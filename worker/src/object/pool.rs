//! The capacity pool's Durable Object: one per pool (`id_from_name(pool)`), the single place
//! the pool's leases live and the single clock that grants and expires them.
//!
//! The core's `LeasePool` is loaded lazily, changed and written through (its encoded bytes,
//! synchronous SQL API) with no `await` in between, so concurrent requests from any number
//! of holders are applied one at a time: no partition is ever leased to two holders at once,
//! so the granted rates never add up to more than the capacity. An alarm at the next expiry
//! frees lapsed leases and deletes the storage once the pool is empty; requests expire
//! lapsed leases themselves too, so correctness never depends on when the alarm runs.

use std::cell::RefCell;

use tollgate::lease::LeaseError;
use tollgate::Nanos;
use worker::{durable_object, DurableObject, Env, Request, Response, Result, State};

use super::pool_storage::{self, alarm_now, PoolMem};
use super::{acting_now, answer, js_sys_date, post_body, request_of};
use crate::base::clock::real_ms;
use crate::base::errors::ApiError;
use crate::config::env_config::config;
use crate::wire::pool_wire::{PoolOp, PoolReply, PoolRequest};

#[durable_object]
pub struct CapacityPool {
    state: State,
    env: Env,
    mem: RefCell<PoolMem>,
}

/// A core lease error as the API answers it.
pub fn lease_error(e: LeaseError) -> ApiError {
    let code = match e {
        LeaseError::BadHolder => "invalid_holder",
        LeaseError::ZeroPartitions => "invalid_partitions",
        LeaseError::BadTtl => "invalid_ttl",
        LeaseError::NotHeld => return ApiError::new(404, "lease_not_held", e.to_string()),
    };
    ApiError::bad_request(code, e.to_string())
}

impl CapacityPool {
    async fn handle(&self, mut req: Request) -> std::result::Result<PoolReply, ApiError> {
        let r: PoolRequest = request_of(&post_body(&mut req).await?)?;
        let cfg = config(&self.env)?;
        if !cfg.pools.contains_key(&r.pool) {
            return Err(ApiError::new(404, "unknown_pool", format!("no pool named {:?}", r.pool)));
        }
        let now = acting_now(r.now, &cfg)?;
        let real = real_ms();
        let storage = self.state.storage();
        let sql = storage.sql();
        if r.op == PoolOp::Inspect {
            if !cfg.test_hooks() {
                return Err(ApiError::not_found());
            }
            let rows = pool_storage::stored_rows(&mut self.mem.borrow_mut(), &sql)?;
            let alarm = storage.get_alarm().await?;
            let stored = serde_json::json!({ "rows": rows, "alarm": alarm });
            return Ok(PoolReply { now: now.as_nanos(), stored: Some(stored), ..PoolReply::default() });
        }
        // From here to the write, no await: requests are applied one at a time.
        let (reply, deadline) = {
            let mut mem = self.mem.borrow_mut();
            let loaded = pool_storage::load(&mut mem, &sql, &cfg, Some(&r.pool))?
                .ok_or_else(|| ApiError::internal("pool not loaded"))?;
            let pool = &mut loaded.pool;
            let ttl = Nanos::new(r.ttl);
            let mut reply = PoolReply { now: now.as_nanos(), ..PoolReply::default() };
            let write = match r.op {
                PoolOp::Grant => {
                    reply.grant = Some(pool.grant(&r.holder, r.partitions, ttl, now).map_err(lease_error)?);
                    true
                }
                PoolOp::Renew => {
                    reply.grant = Some(pool.renew(&r.holder, ttl, now).map_err(lease_error)?);
                    true
                }
                PoolOp::Release => {
                    reply.released = Some(pool.release(&r.holder, now).map_err(lease_error)?);
                    true
                }
                PoolOp::Status => {
                    reply.holders = pool.holdings(now);
                    reply.demands = pool.shares(now);
                    false
                }
                PoolOp::Inspect => false,
            };
            reply.free = pool.free(now);
            let deadline = if write {
                match pool_storage::save(&sql, loaded, real, now, r.now.is_some()) {
                    Ok(d) => d,
                    Err(e) => {
                        // Memory is ahead of storage: forget it so the next request reloads
                        // what is durable.
                        mem.loaded = None;
                        return Err(e);
                    }
                }
            } else {
                None
            };
            (reply, deadline)
        };
        self.schedule(deadline).await?;
        Ok(reply)
    }

    /// Makes sure an alarm fires by `at` (real ms), the next expiry after a write. A later
    /// alarm is moved earlier; an earlier one stays (when it finds nothing lapsed it moves
    /// itself to the next expiry), so renewals, which only push expiries later, cost no
    /// alarm writes.
    async fn schedule(&self, at: Option<u64>) -> Result<()> {
        let Some(at) = at else { return Ok(()) };
        let needed = {
            let mut mem = self.mem.borrow_mut();
            let needed = mem.alarm_at.is_none_or(|a| at < a);
            if needed {
                mem.alarm_at = Some(at);
            }
            needed
        };
        if needed {
            self.state.storage().set_alarm(worker::ScheduledTime::new(js_sys_date(at))).await?;
        }
        Ok(())
    }
}

impl DurableObject for CapacityPool {
    fn new(state: State, env: Env) -> Self {
        CapacityPool { state, env, mem: RefCell::new(PoolMem::default()) }
    }

    async fn fetch(&self, req: Request) -> Result<Response> {
        answer(self.handle(req).await.and_then(|reply| Ok(Response::from_json(&reply)?)), "pool_object_error")
    }

    /// Frees the leases that lapsed, writes the pool through and sets the alarm at the next
    /// expiry; deletes everything once no lease is left (or the pool is no longer
    /// configured). After a write on a test clock it expires at that test instant and sets
    /// no new alarm: it cannot know a test's time, and the next write sets one again.
    async fn alarm(&self) -> Result<Response> {
        let cfg = match config(&self.env) {
            Ok(cfg) => cfg,
            Err(e) => {
                // Never drop leases because of a broken configuration: keep them for a fixed one.
                crate::base::log::error("pool_alarm_failed", serde_json::json!({ "message": e.to_string() }));
                return Response::ok("config error");
            }
        };
        let storage = self.state.storage();
        let sql = storage.sql();
        let real = real_ms();
        let (next, test_clock) = {
            let mut mem = self.mem.borrow_mut();
            mem.alarm_at = None;
            let loaded =
                pool_storage::load(&mut mem, &sql, &cfg, None).map_err(|e| worker::Error::RustError(e.message))?;
            match loaded {
                Some(loaded) => {
                    let test_clock = loaded.sent.is_some();
                    let now = alarm_now(real, loaded.sent);
                    loaded.pool.expire(now);
                    let next = pool_storage::save(&sql, loaded, real, now, test_clock)
                        .map_err(|e| worker::Error::RustError(e.message))?;
                    (next, test_clock)
                }
                None => (None, false),
            }
        };
        match next {
            Some(_) if test_clock => {}
            Some(at) => {
                self.mem.borrow_mut().alarm_at = Some(at);
                storage.set_alarm(worker::ScheduledTime::new(js_sys_date(at))).await?;
            }
            None => {
                self.mem.borrow_mut().clear();
                storage.delete_all().await?;
            }
        }
        Response::ok("ok")
    }
}
