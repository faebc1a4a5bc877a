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
//! algorithm's bound over an interval `leaseTtl` longer for the others. The slice is a list of
//! grants, oldest first, each with its lease (one lease for all of them when the object says
//! the new lease `extends` to everything held, as the fixed windows' counters do); hits spend
//! the oldest first and give-backs come from the newest, as the object takes them back. What
//! an isolate does not give back (it crashed, or its slice lapsed unused) stays spent:
//! under-admission of at most a slice.

use std::cell::RefCell;
use std::collections::HashMap;

use tollgate::policy::PolicyDecision;
use tollgate::quota_lease::{local_decision, renewal_due, slice_want};
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

/// This isolate's slice of one key, on this isolate's clock.
#[derive(Default)]
struct Slice {
    /// The grants, oldest first: (units not spent, when the grant's lease lapses). Nothing is
    /// admitted from a grant once its lease lapsed; a spent grant stays until then (a refund
    /// goes back into the oldest live one).
    grants: Vec<(u64, Nanos)>,
    /// The figures of the last exchange: what the windows had left, the binding limit and
    /// when its window ends.
    left: u64,
    binding: usize,
    limit: u64,
    window_end: Nanos,
    /// Units asked for since the last exchange began (admitted or not).
    demand: u64,
    /// When the last exchange began (this isolate's clock).
    since: Nanos,
    /// The last exchange's lease ends where the end of a window cuts every lease short: no
    /// exchange before then would extend it.
    capped: bool,
    /// Denied here until then: the windows had too little left at the last exchange.
    spent_until: Nanos,
    /// The exchange out, if one is.
    flight: Option<Flight>,
}

impl Slice {
    fn lapse(&mut self, now: Nanos) {
        self.grants.retain(|&(_, until)| now < until);
    }

    /// The units of the live grants.
    fn units(&self) -> u64 {
        self.grants.iter().map(|g| g.0).sum()
    }

    /// When the last grant's lease lapses.
    fn until(&self) -> Nanos {
        self.grants.iter().map(|g| g.1).max().unwrap_or(Nanos::ZERO)
    }

    /// Spends `n` units (at most what the slice holds), oldest grant first.
    fn take(&mut self, mut n: u64) {
        for g in &mut self.grants {
            let k = n.min(g.0);
            (g.0, n) = (g.0 - k, n - k);
        }
    }

    /// Takes out `n` units (at most what the slice holds) to give back, newest grant first.
    fn give_back(&mut self, mut n: u64) -> u64 {
        let mut taken = 0;
        for g in self.grants.iter_mut().rev() {
            let k = n.min(g.0);
            (g.0, n, taken) = (g.0 - k, n - k, taken + k);
        }
        taken
    }

    fn decision(&self, allowed: bool, now: Nanos) -> PolicyDecision {
        let end = if self.window_end > now { self.window_end } else { now };
        local_decision(allowed, self.binding, self.limit, self.units().saturating_add(self.left), end, now)
    }

    /// The slice to ask for at `now` (the core's `slice_want`): for the rest of a lease the
    /// end of a window cut short, or for a whole `ttl`.
    fn want(&self, need: u64, ttl: Nanos, now: Nanos) -> u64 {
        let until = self.until();
        let span = if self.capped && until > now { until - now } else { ttl };
        slice_want(self.demand, now.saturating_sub(self.since), span, need)
    }
}

thread_local! {
    static SLICES: RefCell<HashMap<String, Slice>> = RefCell::new(HashMap::new());
    static HOLDER: String = format!("isolate-{:013x}", (worker::js_sys::Math::random() * 4.5e15) as u64);
}

fn with_slice<T>(name: &str, f: impl FnOnce(&mut Slice) -> T) -> T {
    SLICES.with(|slices| {
        let mut slices = slices.borrow_mut();
        if let Some(slice) = slices.get_mut(name) {
            return f(slice);
        }
        if slices.len() >= MAX_KEYS {
            let now = crate::base::clock::clock();
            slices.retain(|_, s| s.flight.is_some() || s.until() > now);
        }
        f(slices.entry(name.to_string()).or_default())
    })
}

/// What a request does next.
enum Step {
    Answer(PolicyDecision),
    Wait(Flight),
    Exchange {
        give_back: u64,
        need: u64,
        want: u64,
    },
    /// A peek the slice (`units`, live) cannot answer: the key's object says what is left.
    Peek {
        units: u64,
    },
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
        let step = with_slice(name, |s| {
            s.lapse(now);
            if op == Op::Peek {
                return if s.units() >= cost {
                    Step::Answer(s.decision(true, now))
                } else {
                    Step::Peek { units: s.units() }
                };
            }
            if n == 1 {
                s.demand = s.demand.saturating_add(cost);
            }
            if s.units() >= cost {
                s.take(cost);
                return Step::Answer(s.decision(true, now));
            }
            if s.spent_until > now || last {
                return Step::Answer(s.decision(false, now));
            }
            if let Some(f) = &s.flight {
                return Step::Wait(f.clone());
            }
            Step::Exchange { give_back: 0, need: cost - s.units(), want: s.want(cost, ttl, now) }
        });
        // (`Exchange` is begun below before anything else runs in this isolate.)
        let answer = match step {
            Step::Answer(d) => {
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
            Step::Peek { units } => match peek(env, pc, name, key, units, cost, now, sent).await {
                Ok(d) => Outcome::Estimated(d, now),
                Err((why, _)) => Outcome::Unmade(why, now),
            },
            Step::Exchange { give_back, need, want } => {
                let begun = begin(name, give_back, now);
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
    let due = with_slice(name, |s| {
        let lease_left = s.until().saturating_sub(now);
        if s.flight.is_some() || !renewal_due(s.units(), s.demand, lease_left, ttl, s.capped) {
            return None;
        }
        let want = s.want(0, ttl, now);
        Some((s.units().saturating_sub(want), want))
    });
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
        s.demand = 0;
        s.since = now;
        s.give_back(give_back)
    });
    Begun { landing, give_back }
}

/// One exchange with the key's object: gives back what `begun` took out of the slice, asks
/// for `need` and up to `want`, and applies the answer. The lease is measured from `now`,
/// before the request left; it is the new grant's, or every grant's when the object says it
/// `extends`. The slice keeps no more than the object's record of this isolate holds: units
/// the object already counts as spent (their lease lapsed there before the request arrived)
/// are dropped, oldest first, rather than carried on.
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
            // Object times turned into this isolate's: as long after `now` as after the object's.
            let here = |t: u64| now + Nanos::new(t.saturating_sub(r.now));
            s.lapse(now);
            let until = here(r.expires_at);
            s.capped = r.expires_at < r.now.saturating_add(pc.lease_ms.saturating_mul(1_000_000));
            if r.extends {
                s.grants.iter_mut().for_each(|g| g.1 = until);
            }
            if r.granted > 0 {
                s.grants.push((r.granted, until));
            }
            let excess = s.units().saturating_sub(r.held);
            s.take(excess);
            if s.grants.len() > tollgate::quota_lease::MAX_TRANCHES {
                // Spent grants go first; none the object still counts for this isolate.
                let spent = s.grants.iter().take_while(|g| g.0 == 0).count();
                s.grants.drain(..spent.min(s.grants.len() - tollgate::quota_lease::MAX_TRANCHES));
            }
            s.window_end = here(r.window_end);
            (s.left, s.binding, s.limit) = (r.left, r.binding, r.limit);
            s.spent_until = if r.granted < need {
                let recheck = now + Nanos::from_millis(pc.lease_ms.div_ceil(4));
                recheck.min(s.window_end)
            } else {
                Nanos::ZERO
            };
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
    let remaining = r.left.saturating_add(units.min(r.held));
    let end = now + Nanos::new(r.window_end.saturating_sub(r.now));
    Ok(local_decision(remaining >= cost, r.binding, r.limit, remaining, end, now))
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
    let d = with_slice(&object_name(&pc.name, key), |s| {
        s.lapse(now);
        if let Some(oldest) = s.grants.first_mut() {
            oldest.0 = oldest.0.saturating_add(cost);
        }
        s.decision(s.units() >= 1, now)
    });
    Ok(Outcome::Estimated(d, now))
}

/// Forgets this isolate's slice of `key` (a reset; the object forgets its ledger).
pub fn forget(pc: &PolicyConfig, key: &str) {
    SLICES.with(|slices| slices.borrow_mut().remove(&object_name(&pc.name, key)));
}

#[cfg(test)]
mod tests {
    use serde_json::json;
    use tollgate::Nanos;

    use super::Slice;
    use crate::config::settings::parse_policy;

    #[test]
    fn a_slice_spends_its_oldest_grant_first_and_gives_back_from_its_newest() {
        let (a, b) = (Nanos::from_millis(100), Nanos::from_millis(200));
        let mut s = Slice { grants: vec![(3, a), (4, b)], ..Slice::default() };
        s.take(2);
        assert_eq!((s.grants.clone(), s.units(), s.until()), (vec![(1, a), (4, b)], 5, b));
        assert_eq!(s.give_back(3), 3);
        assert_eq!(s.grants, vec![(1, a), (1, b)]);
        // A spent grant stays until its lease lapses; then only the later one is left.
        s.take(1);
        s.lapse(a);
        assert_eq!(s.grants, vec![(1, b)]);
        assert_eq!(s.give_back(5), 1);
        s.lapse(b);
        assert_eq!((s.units(), s.until()), (0, Nanos::ZERO));
    }

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
