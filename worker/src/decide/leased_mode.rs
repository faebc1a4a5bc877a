//! Leased mode (`leaseTtl` on a policy): the key's Durable Object stays the only authority
//! over the key's quota, but it grants this isolate slices of it (the core's `QuotaLedger`,
//! object/quota.rs); the isolate admits hits from its slice without calling the object and
//! gives back what it does not need.
//!
//! Per (policy, key), one exchange with the object is out at a time in an isolate: requests
//! that find the slice short wait for it (flight.rs) rather than each calling the object, so
//! a hot key costs each isolate about one object request per slice, whatever the number of
//! clients. A slice is sized by demand (the core's `slice_want`): twice the units the demand
//! since the last exchange would take, at its rate, over the span the slice can last; the
//! object caps it at an equal split of what the windows have left among the isolates holding
//! a lease. When the slice holds less than the demand since the last exchange, or its lease is
//! in its last quarter and a new one would last longer (the core's `renewal_due`), the next
//! admitted hit begins the next exchange in `waitUntil` (giving back what it holds beyond the
//! new demand). At a steady rate that is one object request per isolate per lease.
//!
//! The bound (tollgate::quota_lease): the object never grants more than a hit would be
//! admitted with, a grant lapses with its lease (at most `leaseTtl`, never past a fixed
//! window's end) and this isolate admits from a live grant only, with its lease measured from
//! before the request left: zero over-admission for clock-aligned fixed windows, the
//! algorithm's bound over an interval `leaseTtl` longer for the others. The slice itself (its
//! grants, what a hit does next, how an answer lands) is the core's `quota_lease::Slice`; this
//! file keeps one per key and makes the exchanges it asks for. What an isolate does not give
//! back (it crashed, or its slice lapsed unused) stays spent: under-admission of at most a
//! slice.

use std::cell::RefCell;
use std::collections::HashMap;

use tollgate::policy::PolicyDecision;
use tollgate::quota_lease::{Slice, SliceStep};
use tollgate::store_protocol::{drive, Retry, Tried};
use tollgate::Nanos;
use worker::{Context, Env};

use crate::base::errors::ApiError;
use crate::calls::do_client::{self, object_name};
use crate::calls::flight::{Flight, Landing};
use crate::config::settings::PolicyConfig;
use crate::respond::answer::{Failure, Outcome};
use crate::wire::key_wire::Op;
use crate::wire::quota_wire::{QuotaOp, QuotaReply, QuotaRequest};

/// The most keys whose slices an isolate remembers; beyond it, lapsed ones are forgotten.
const MAX_KEYS: usize = 4096;

/// This isolate's slice of one key, on this isolate's clock, and the exchange out, if one is.
#[derive(Default)]
struct Held {
    slice: Slice,
    flight: Option<Flight>,
}

thread_local! {
    static SLICES: RefCell<HashMap<String, Held>> = RefCell::new(HashMap::new());
    static HOLDER: String = format!("isolate-{:013x}", (worker::js_sys::Math::random() * 4.5e15) as u64);
}

fn with_slice<T>(name: &str, f: impl FnOnce(&mut Held) -> T) -> T {
    SLICES.with(|slices| {
        let mut slices = slices.borrow_mut();
        if let Some(slice) = slices.get_mut(name) {
            return f(slice);
        }
        if slices.len() >= MAX_KEYS {
            let now = crate::base::clock::clock();
            slices.retain(|_, s| s.flight.is_some() || s.slice.until() > now);
        }
        f(slices.entry(name.to_string()).or_default())
    })
}

/// What a request does next: the slice's step, or a wait for the exchange out.
enum Step {
    Slice(SliceStep),
    Wait(Flight),
}

/// Decides a hit (`Op::Check`) from this isolate's slice, exchanging with the key's object
/// when the slice is short. `Op::Peek` answers what such a hit would get and changes
/// nothing: from the slice when it holds `cost`, otherwise from what the key's object could
/// still grant plus the slice ([`peek`]).
pub async fn decide(
    env: &Env,
    ctx: &Context,
    pc: &PolicyConfig,
    key: &str,
    cost: u64,
    now: Nanos,
    sent: Option<Nanos>,
    op: Op,
) -> Result<Outcome, ApiError> {
    pc.policy.validate_cost(cost).map_err(|e| ApiError::bad_request("invalid_cost", e.to_string()))?;
    let name = object_name(&pc.name, key);
    let name = name.as_str();
    let ttl = Nanos::from_millis(pc.lease_ms);
    // Each decision after the first follows an exchange this request made or waited for; the
    // core's `Retry::SLICE_WAITS` says how many, and the last one denies a hit it finds short.
    let attempt = |n: u32| async move {
        let last = n >= Retry::SLICE_WAITS.max_attempts;
        let step = with_slice(name, |s| match s.slice.step(op == Op::Peek, cost, now, ttl, n == 1, last) {
            SliceStep::Exchange { .. } if s.flight.is_some() => Step::Wait(s.flight.clone().unwrap()),
            step => Step::Slice(step),
        });
        // (`Exchange` is begun below before anything else runs in this isolate.)
        let answer = match step {
            Step::Slice(SliceStep::Answer(d)) => {
                if d.allowed && op == Op::Check {
                    renew_if_due(env, ctx, pc, name, key, now, sent);
                }
                Outcome::Estimated(d, now)
            }
            Step::Wait(flight) => {
                if flight.wait().await {
                    return Ok::<_, ApiError>(Tried::Lost);
                }
                Outcome::Unmade(Failure::Error, now)
            }
            Step::Slice(SliceStep::Peek { units }) => match peek(env, pc, name, key, units, cost, now, sent).await {
                Ok(d) => Outcome::Estimated(d, now),
                Err((why, _)) => Outcome::Unmade(why, now),
            },
            Step::Slice(SliceStep::Exchange { need, want }) => {
                let begun = begin(name, 0, now);
                match exchange(env, pc, name, key, begun, need, want, now, sent).await {
                    Ok(()) => return Ok(Tried::Lost),
                    Err((why, _)) => Outcome::Unmade(why, now),
                }
            }
        };
        Ok(Tried::Done(answer))
    };
    let pause = |_: Nanos| async {};
    match drive(Retry::SLICE_WAITS, || now, attempt, pause).await? {
        Ok(answer) => Ok(answer),
        // The last decision answers whatever it finds: it never asks for another.
        Err(_) => Ok(Outcome::Unmade(Failure::Error, now)),
    }
}

/// Begins the next exchange in `waitUntil` when the core's `renewal_due` says so (and no
/// exchange is out): what the slice holds beyond the new demand goes back.
fn renew_if_due(env: &Env, ctx: &Context, pc: &PolicyConfig, name: &str, key: &str, now: Nanos, sent: Option<Nanos>) {
    let ttl = Nanos::from_millis(pc.lease_ms);
    let due = with_slice(name, |s| if s.flight.is_some() { None } else { s.slice.renewal(now, ttl) });
    if let Some((give_back, want)) = due {
        let begun = begin(name, give_back, now);
        let (env, pc, name, key) = (env.clone(), pc.clone(), name.to_string(), key.to_string());
        ctx.wait_until(async move {
            if let Err((_, e)) = exchange(&env, &pc, &name, &key, begun, 0, want, now, sent).await {
                worker::console_warn!("leased quota renewal failed: {e}");
            }
        });
    }
}

/// An exchange begun: its flight is the key's (others wait for it) and the units it gives
/// back are out of the slice, so they are never admitted here again.
struct Begun {
    landing: Landing,
    give_back: u64,
}

fn begin(name: &str, give_back: u64, now: Nanos) -> Begun {
    let (flight, landing) = Flight::start();
    let give_back = with_slice(name, |s| {
        s.flight = Some(flight);
        s.slice.begin(give_back, now)
    });
    Begun { landing, give_back }
}

/// One exchange with the key's object: gives back what `begun` took out of the slice, asks
/// for `need` and up to `want`, and lands the answer in the slice (`Slice::landed`).
#[allow(clippy::too_many_arguments)]
async fn exchange(
    env: &Env,
    pc: &PolicyConfig,
    name: &str,
    key: &str,
    begun: Begun,
    need: u64,
    want: u64,
    now: Nanos,
    sent: Option<Nanos>,
) -> Result<(), (Failure, String)> {
    let Begun { mut landing, give_back } = begun;
    let req = QuotaRequest {
        quota_op: QuotaOp::Exchange,
        policy: pc.name.clone(),
        key: key.to_string(),
        holder: HOLDER.with(String::clone),
        give_back,
        need,
        want,
        now: sent.map(Nanos::as_nanos),
    };
    let result = call(env, name, &req, pc.timeout_ms).await;
    with_slice(name, |s| {
        s.flight = None;
        if let Ok(r) = &result {
            s.slice.landed(&r.grant(), Nanos::new(r.now), need, now, Nanos::from_millis(pc.lease_ms));
        }
    });
    if result.is_ok() {
        landing.succeeded();
    }
    result.map(|_| ())
}

/// A peek the slice cannot answer: the ledger's figures at the key's object (read there,
/// nothing granted or written) plus `units`, this isolate's live slice (no more than the
/// object's record of it holds). A hit of `cost` would be admitted if they add up to it.
#[allow(clippy::too_many_arguments)]
async fn peek(
    env: &Env,
    pc: &PolicyConfig,
    name: &str,
    key: &str,
    units: u64,
    cost: u64,
    now: Nanos,
    sent: Option<Nanos>,
) -> Result<PolicyDecision, (Failure, String)> {
    let req = QuotaRequest {
        quota_op: QuotaOp::Peek,
        policy: pc.name.clone(),
        key: key.to_string(),
        holder: HOLDER.with(String::clone),
        give_back: 0,
        need: 0,
        want: 0,
        now: sent.map(Nanos::as_nanos),
    };
    let r = call(env, name, &req, pc.timeout_ms).await?;
    Ok(Slice::peeked(&r.grant(), Nanos::new(r.now), units, cost, now))
}

async fn call(env: &Env, name: &str, req: &QuotaRequest, timeout_ms: u64) -> Result<QuotaReply, (Failure, String)> {
    let body = serde_json::to_string(req).map_err(|e| (Failure::Error, e.to_string()))?;
    let (status, text) = do_client::exchange_key_patiently(env, name, &body, timeout_ms).await?;
    if status != 200 {
        return Err((Failure::Error, format!("status {status}: {text}")));
    }
    serde_json::from_str(&text).map_err(|e| (Failure::Error, format!("bad reply: {e}")))
}

/// Gives `cost` units of `key` back to this isolate's slice while a lease is live (they were
/// granted to it), into its oldest live grant; answers what a hit of cost 1 would get now.
pub fn refund(pc: &PolicyConfig, key: &str, cost: u64, now: Nanos) -> Result<Outcome, ApiError> {
    pc.policy
        .validate_cost(cost)
        .map_err(|e| ApiError::bad_request("invalid_cost", e.to_string()).with_field("cost"))?;
    let d = with_slice(&object_name(&pc.name, key), |s| s.slice.refund(cost, now));
    Ok(Outcome::Estimated(d, now))
}

/// Forgets this isolate's slice of `key` (a reset; the object forgets its ledger).
pub fn forget(pc: &PolicyConfig, key: &str) {
    SLICES.with(|slices| slices.borrow_mut().remove(&object_name(&pc.name, key)));
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use crate::config::settings::parse_policy;

    #[test]
    fn lease_ttl_chooses_leased_mode_for_every_algorithm() {
        let p = parse_policy("p", &json!({ "algorithm": "fixed-window", "quota": "100/s", "leaseTtl": "1s" })).unwrap();
        assert_eq!((p.lease_ms, p.description["leaseTtl"].as_u64()), (1000, Some(1000)));
        let p = parse_policy("p", &json!({ "algorithm": "fixed-window", "quota": "100/s" })).unwrap();
        assert_eq!((p.lease_ms, p.description.get("leaseTtl")), (0, None));
        for leased in [
            json!({ "algorithm": "sliding-window", "quota": "100/s", "leaseTtl": 500 }),
            json!({ "algorithm": "sliding-log", "quota": "100/s", "leaseTtl": 500 }),
            json!({ "algorithm": "sliding-buckets", "quota": "100/s", "precision": "100ms", "leaseTtl": 500 }),
            json!({ "algorithm": "token-bucket", "quota": "100/s", "leaseTtl": 500 }),
            json!({ "algorithm": "gcra", "quota": "100/s", "leaseTtl": 500 }),
            json!({ "algorithm": "fixed-window", "align": "first-hit", "quota": "100/s", "leaseTtl": 500 }),
        ] {
            assert_eq!(parse_policy("p", &leased).unwrap().lease_ms, 500, "{leased}");
        }
        let e = parse_policy(
            "p",
            &json!({ "algorithm": "fixed-window", "quota": "100/s", "leaseTtl": 500, "syncRate": 100 }),
        )
        .unwrap_err();
        assert_eq!((e.code, e.field.as_str()), ("conflicting_fields", "leaseTtl"));
        let e = parse_policy(
            "p",
            &json!({ "algorithm": "gcra", "quota": "100/s", "leaseTtl": 500, "blockDuration": "1s" }),
        )
        .unwrap_err();
        assert_eq!((e.code, e.field.as_str()), ("conflicting_fields", "blockDuration"));
        let e =
            parse_policy("p", &json!({ "algorithm": "fixed-window", "quota": "100/s", "leaseTtl": "2h" })).unwrap_err();
        assert_eq!((e.code, e.field.as_str()), ("out_of_range", "leaseTtl"));
        let e =
            parse_policy("p", &json!({ "algorithm": "fixed-window", "quota": "100/s", "leaseTtl": 0 })).unwrap_err();
        assert_eq!(e.field, "leaseTtl");
    }
}
