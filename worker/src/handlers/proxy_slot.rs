//! A proxied request's concurrency slot (proxy mode over a policy with a concurrency limit):
//! held by a lease from before the origin is asked until the origin's answer is over, its body
//! passed through to the client to the end, broken, or cancelled by a client gone away, or
//! the origin never answered. The slot is held by a guard whose drop (wherever the request's
//! handling ends) lets a task kept alive by `ctx.waitUntil` release the lease at the keys'
//! objects; a release that fails leaves the slot to the lease's expiry (`leaseTtl`).

use std::pin::Pin;
use std::task::{Context as TaskContext, Poll};

use futures_util::Stream;
use tollgate::concurrency::LeaseToken;
use worker::js_sys::{Function, Promise};
use worker::wasm_bindgen::JsValue;
use worker::wasm_bindgen_futures::JsFuture;
use worker::{ByteStream, Context, Env};

use crate::base::clock::RealClock;
use crate::config::env_config::config;
use crate::decide::multi_key::Round;
use crate::handlers::concurrency_api::release_lease;

/// Holds a slot: dropping it (once) starts the lease's release.
pub struct Slot(Option<Function>);

impl Drop for Slot {
    fn drop(&mut self) {
        if let Some(resolve) = self.0.take() {
            let _ = resolve.call0(&JsValue::NULL);
        }
    }
}

/// Takes over `lease`: the returned guard's drop releases it, in a task `ctx` keeps alive.
pub fn hold(env: &Env, ctx: &Context, lease: LeaseToken) -> Slot {
    let mut resolve = None;
    let dropped = JsFuture::from(Promise::new(&mut |r, _| resolve = Some(r)));
    let env = env.clone();
    ctx.wait_until(async move {
        let _ = dropped.await;
        let released = match config(&env) {
            Ok(cfg) => match cfg.policies.get(&lease.policy) {
                Some(pc) => release_lease(&env, pc, &lease, &RealClock).await.map(|r| matches!(r, Round::Decided(..))),
                None => Ok(false),
            },
            Err(e) => Err(e),
        };
        if !matches!(released, Ok(true)) {
            let why = released.err().map(|e| e.code).unwrap_or("unavailable");
            crate::base::log::warn("proxy_release_failed", serde_json::json!({ "policy": lease.policy, "code": why }));
        }
    });
    Slot(resolve)
}

/// The origin's body as the client reads it, holding `slot` until it is dropped: read to the
/// end or broken (the runtime's stream drops it then) or cancelled.
pub struct HeldBody {
    pub body: ByteStream,
    pub slot: Slot,
}

impl Stream for HeldBody {
    type Item = worker::Result<Vec<u8>>;

    fn poll_next(mut self: Pin<&mut Self>, cx: &mut TaskContext<'_>) -> Poll<Option<Self::Item>> {
        Pin::new(&mut self.body).poll_next(cx)
    }
}
