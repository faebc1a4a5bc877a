//! The README's headline figures, in a harness a governor user can rerun and read
//! (`make bench-headline`; docs/benchmarks.md, "Headline figures").
//!
//! Every contestant runs the same loop: 10,000,000 checks, quota 1000/s with a burst of 100
//! (resident keys: 1000/h), medians of 5 runs (interleaved across the rows), the limiter's
//! state behind `black_box` so the compiler cannot fold the loop. tollgate takes time as an
//! argument (synthetic, +1 µs per check); governor's default limiters read their default clock
//! (`QuantaClock`) themselves, so tollgate is also measured reading the same clock, and
//! governor on a `FakeRelativeClock` (its slowest setup). Every row says whether the limiter is
//! thread-safe: governor's always are (an atomic state; a sharded, locked map), tollgate's
//! `Gcra` state and `KeyedLimiter` take `&mut` and are also measured in a `Mutex`.
//!
//! Workloads:
//! - `direct`: one state (tollgate `Gcra`, governor `RateLimiter::direct`), and the floor: a
//!   GCRA over one `u64` written inline.
//! - `keyed`: one hot key `"user:42"` through a keyed limiter (tollgate `KeyedLimiter<Gcra>`,
//!   governor `RateLimiter::keyed`, i.e. its default dashmap store), and the floor: the same
//!   inline GCRA over a `hashbrown::HashMap<String, u64>`; and the same key through the
//!   policy limiter (`Limiter::in_memory`, what `Policy::check` and `Policy::peek` cost with
//!   their keys' store): one limit checked, one limit peeked, two limits checked.
//! - `resident`: 1,000,000 `u64` keys drawn by a fixed-seed PRNG, quota 1000 per hour, time
//!   +100 ns per check, so that no key is fresh again during the run and every key stays in
//!   memory; per check and bytes per key (live heap bytes after the run, counted by this
//!   binary's allocator, divided by the keys held).
//!
//! `HEADLINE_KEY=<key>` replaces the hot key `"user:42"` (keys of other lengths compare
//! differently), `HEADLINE_WORKLOAD=direct|keyed|resident` times one workload's rows only,
//! `HEADLINE_ONLY=<row name>` runs one row (untimed) and `HEADLINE_CHECKS=<n>` sets the checks
//! per run: scripts/bench-instructions.sh runs each row under callgrind and prints the
//! instructions per check.

mod common;
use common::keys;

use std::alloc::{GlobalAlloc, Layout, System};
use std::hint::black_box;
use std::num::NonZeroU32;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Mutex, OnceLock};
use std::time::{Duration, Instant};

use governor::clock::{Clock, FakeRelativeClock, QuantaClock, Reference};
use governor::{Quota as GQuota, RateLimiter};
use tollgate::algorithms::GcraState;
use tollgate::limiter::Limiter;
use tollgate::policy::{Limit, Policy};
use tollgate::{Algorithm, AnyAlgorithm, Gcra, KeyedLimiter, Nanos, Quota};

/// Live heap bytes, for bytes per key.
struct Counting;
static LIVE: AtomicUsize = AtomicUsize::new(0);

unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, l: Layout) -> *mut u8 {
        LIVE.fetch_add(l.size(), Ordering::Relaxed);
        System.alloc(l)
    }
    unsafe fn dealloc(&self, p: *mut u8, l: Layout) {
        LIVE.fetch_sub(l.size(), Ordering::Relaxed);
        System.dealloc(p, l)
    }
    unsafe fn realloc(&self, p: *mut u8, l: Layout, new: usize) -> *mut u8 {
        LIVE.fetch_add(new, Ordering::Relaxed);
        LIVE.fetch_sub(l.size(), Ordering::Relaxed);
        System.realloc(p, l, new)
    }
}

#[global_allocator]
static ALLOCATOR: Counting = Counting;

const RUNS: usize = 5;
const START: Nanos = Nanos::from_secs(1_700_000_000);

fn quota() -> Quota {
    Quota::per_second(1000).unwrap().with_burst(100).unwrap()
}

fn governor_quota() -> GQuota {
    GQuota::per_second(NonZeroU32::new(1000).unwrap()).allow_burst(NonZeroU32::new(100).unwrap())
}

fn resident_quota() -> Quota {
    Quota::per_hour(1000).unwrap()
}

fn governor_resident_quota() -> GQuota {
    GQuota::per_hour(NonZeroU32::new(1000).unwrap())
}

/// The hot key of the `keyed` rows: `"user:42"`, or `HEADLINE_KEY`.
fn hot_key() -> &'static str {
    static KEY: OnceLock<&'static str> = OnceLock::new();
    KEY.get_or_init(|| std::env::var("HEADLINE_KEY").map_or("user:42", |k| Box::leak(k.into_boxed_str())))
}

/// The floor: GCRA over one `u64` theoretical arrival time, as plain code would write it
/// (emission interval `t`, tolerance `tau`, cost 1), answering the six numbers tollgate's
/// `Decision` answers: allowed, the limit (the burst), remaining, when the meter is empty
/// again, how long to wait, and when one more unit would be admitted.
#[inline(always)]
fn plain_gcra(tat: &mut u64, now: u64, t: u64, tau: u64, burst: u64) -> (bool, u64, u64, u64, u64, u64) {
    let at = (*tat).max(now);
    if now + tau >= at {
        *tat = at + t;
        (true, burst, (now + tau + t - *tat) / t, *tat, 0, tat.saturating_sub(now + tau))
    } else {
        let wait = at - tau - now;
        (false, burst, 0, at, wait, wait)
    }
}

/// One row: `setup` makes a fresh limiter, `run` does `checks` checks and returns how many
/// were admitted and how many keys the limiter holds.
struct Row {
    workload: &'static str,
    name: &'static str,
    setup: &'static str,
    thread_safe: bool,
    run: fn(u64, &[u64]) -> (u64, u64),
}

fn tollgate_gcra(checks: u64, _: &[u64]) -> (u64, u64) {
    let gcra = Gcra::new(quota()).unwrap();
    let mut state = GcraState { tat: Nanos::ZERO };
    let mut now = START;
    let mut allowed = 0;
    for _ in 0..checks {
        now = now + Nanos::from_micros(1);
        allowed += black_box(gcra.check_in_place(black_box(&mut state), now, 1).unwrap()).allowed as u64;
    }
    (allowed, 1)
}

fn tollgate_gcra_quanta(checks: u64, _: &[u64]) -> (u64, u64) {
    let gcra = Gcra::new(quota()).unwrap();
    let clock = QuantaClock::default();
    let origin = clock.now();
    let mut state = GcraState { tat: Nanos::ZERO };
    let mut allowed = 0;
    for _ in 0..checks {
        let now = START + Nanos::new(clock.now().duration_since(origin).as_u64());
        allowed += black_box(gcra.check_in_place(black_box(&mut state), now, 1).unwrap()).allowed as u64;
    }
    (allowed, 1)
}

fn tollgate_gcra_mutex(checks: u64, _: &[u64]) -> (u64, u64) {
    let gcra = Gcra::new(quota()).unwrap();
    let state = Mutex::new(GcraState { tat: Nanos::ZERO });
    let mut now = START;
    let mut allowed = 0;
    for _ in 0..checks {
        now = now + Nanos::from_micros(1);
        let mut s = black_box(&state).lock().unwrap();
        allowed += black_box(gcra.check_in_place(&mut s, now, 1).unwrap()).allowed as u64;
    }
    (allowed, 1)
}

fn tollgate_gcra_mutex_quanta(checks: u64, _: &[u64]) -> (u64, u64) {
    let gcra = Gcra::new(quota()).unwrap();
    let clock = QuantaClock::default();
    let origin = clock.now();
    let state = Mutex::new(GcraState { tat: Nanos::ZERO });
    let mut allowed = 0;
    for _ in 0..checks {
        let now = START + Nanos::new(clock.now().duration_since(origin).as_u64());
        let mut s = black_box(&state).lock().unwrap();
        allowed += black_box(gcra.check_in_place(&mut s, now, 1).unwrap()).allowed as u64;
    }
    (allowed, 1)
}

fn plain_u64(checks: u64, _: &[u64]) -> (u64, u64) {
    let (t, tau, burst) = (1_000_000, 99_000_000, 100);
    let mut tat = 0u64;
    let mut now = START.as_nanos();
    let mut allowed = 0;
    for _ in 0..checks {
        now += 1_000;
        allowed += black_box(plain_gcra(black_box(&mut tat), now, t, tau, burst)).0 as u64;
    }
    (allowed, 1)
}

fn governor_direct(checks: u64, _: &[u64]) -> (u64, u64) {
    let limiter = RateLimiter::direct(governor_quota());
    let mut allowed = 0;
    for _ in 0..checks {
        allowed += black_box(black_box(&limiter).check()).is_ok() as u64;
    }
    (allowed, 1)
}

fn governor_direct_fake(checks: u64, _: &[u64]) -> (u64, u64) {
    let clock = FakeRelativeClock::default();
    let limiter = RateLimiter::direct_with_clock(governor_quota(), clock.clone());
    let mut allowed = 0;
    for _ in 0..checks {
        clock.advance(Duration::from_micros(1));
        allowed += black_box(black_box(&limiter).check()).is_ok() as u64;
    }
    (allowed, 1)
}

fn tollgate_keyed(checks: u64, _: &[u64]) -> (u64, u64) {
    let key = hot_key();
    let mut limiter = KeyedLimiter::new(Gcra::new(quota()).unwrap());
    // The clock advances as the floor's does (a plain add of 1 µs), so both rows pay the same
    // for the harness's time.
    let mut now = START.as_nanos();
    let mut allowed = 0;
    for _ in 0..checks {
        now += 1_000;
        allowed += black_box(black_box(&mut limiter).check(black_box(key), Nanos::new(now), 1).unwrap()).allowed as u64;
    }
    (allowed, limiter.len() as u64)
}

fn tollgate_keyed_mutex(checks: u64, _: &[u64]) -> (u64, u64) {
    let key = hot_key();
    let limiter = Mutex::new(KeyedLimiter::new(Gcra::new(quota()).unwrap()));
    let mut now = START;
    let mut allowed = 0;
    for _ in 0..checks {
        now = now + Nanos::from_micros(1);
        allowed += black_box(black_box(&limiter).lock().unwrap().check(black_box(key), now, 1).unwrap()).allowed as u64;
    }
    let held = limiter.lock().unwrap().len() as u64;
    (allowed, held)
}

fn tollgate_keyed_mutex_quanta(checks: u64, _: &[u64]) -> (u64, u64) {
    let key = hot_key();
    let limiter = Mutex::new(KeyedLimiter::new(Gcra::new(quota()).unwrap()));
    let clock = QuantaClock::default();
    let origin = clock.now();
    let mut allowed = 0;
    for _ in 0..checks {
        let now = START + Nanos::new(clock.now().duration_since(origin).as_u64());
        allowed += black_box(black_box(&limiter).lock().unwrap().check(black_box(key), now, 1).unwrap()).allowed as u64;
    }
    let held = limiter.lock().unwrap().len() as u64;
    (allowed, held)
}

/// The policy limiter over one key: `limits` checked (or, with `peek`, peeked) per call.
fn tollgate_policy(checks: u64, limits: Vec<Limit>, peek: bool) -> (u64, u64) {
    let key = hot_key();
    let mut limiter = Limiter::in_memory(Policy::new(limits).unwrap());
    let mut now = START;
    let mut allowed = 0;
    for _ in 0..checks {
        now = now + Nanos::from_micros(1);
        let limiter = black_box(&mut limiter);
        let d = if peek { limiter.peek(&[black_box(key)], now, 1) } else { limiter.check(&[black_box(key)], now, 1) };
        allowed += black_box(d.unwrap()).allowed as u64;
    }
    (allowed, limiter.store().len() as u64)
}

fn gcra_limit(name: &str, quota: Quota) -> Limit {
    Limit::new(name, AnyAlgorithm::Gcra(Gcra::new(quota).unwrap())).unwrap()
}

fn tollgate_policy_one(checks: u64, _: &[u64]) -> (u64, u64) {
    tollgate_policy(checks, vec![gcra_limit("default", quota())], false)
}

fn tollgate_policy_one_peek(checks: u64, _: &[u64]) -> (u64, u64) {
    tollgate_policy(checks, vec![gcra_limit("default", quota())], true)
}

fn tollgate_policy_two(checks: u64, _: &[u64]) -> (u64, u64) {
    tollgate_policy(
        checks,
        vec![gcra_limit("second", quota()), gcra_limit("minute", Quota::per_minute(120_000).unwrap())],
        false,
    )
}

fn hashbrown_string(checks: u64, _: &[u64]) -> (u64, u64) {
    let key = hot_key();
    // The quota at run time, as tollgate's limiter takes it (not constants to fold).
    let (t, tau, burst) = black_box((1_000_000, 99_000_000, 100));
    let mut map: hashbrown::HashMap<String, u64> = hashbrown::HashMap::new();
    let mut now = START.as_nanos();
    let mut allowed = 0;
    for _ in 0..checks {
        now += 1_000;
        let key: &str = black_box(key);
        let tat = match black_box(&mut map).get_mut(key) {
            Some(tat) => tat,
            None => map.entry(key.to_owned()).or_insert(0),
        };
        allowed += black_box(plain_gcra(tat, now, t, tau, burst)).0 as u64;
    }
    (allowed, map.len() as u64)
}

fn governor_keyed(checks: u64, _: &[u64]) -> (u64, u64) {
    let limiter = RateLimiter::keyed(governor_quota());
    let key: &'static str = hot_key();
    let mut allowed = 0;
    for _ in 0..checks {
        allowed += black_box(black_box(&limiter).check_key(black_box(&key))).is_ok() as u64;
    }
    (allowed, limiter.len() as u64)
}

fn resident_tollgate(checks: u64, keys: &[u64]) -> (u64, u64) {
    let base = LIVE.load(Ordering::Relaxed);
    let mut limiter = KeyedLimiter::<_, u64>::with_key_type(Gcra::new(resident_quota()).unwrap());
    let mut now = START;
    let mut allowed = 0;
    for &k in &keys[..checks as usize] {
        now = now + Nanos::new(100);
        allowed += black_box(black_box(&mut limiter).check(&k, now, 1).unwrap()).allowed as u64;
    }
    HELD.store(LIVE.load(Ordering::Relaxed) - base, Ordering::Relaxed);
    (allowed, limiter.len() as u64)
}

fn resident_hashbrown(checks: u64, keys: &[u64]) -> (u64, u64) {
    let base = LIVE.load(Ordering::Relaxed);
    let gcra = Gcra::new(resident_quota()).unwrap();
    // The quota as a value known at run time, as tollgate's limiter holds it: as constants, the
    // compiler turns this floor's division for `remaining` (on every check here: every hit
    // is admitted) into a multiplication no limiter configured at run time gets.
    let (t, burst) = black_box((gcra.emission_interval().as_nanos(), gcra.burst()));
    let tau = t * (burst - 1);
    let mut map: hashbrown::HashMap<u64, u64> = hashbrown::HashMap::new();
    let mut now = START.as_nanos();
    let mut allowed = 0;
    for &k in &keys[..checks as usize] {
        now += 100;
        allowed += black_box(plain_gcra(black_box(&mut map).entry(k).or_insert(0), now, t, tau, burst)).0 as u64;
    }
    HELD.store(LIVE.load(Ordering::Relaxed) - base, Ordering::Relaxed);
    (allowed, map.len() as u64)
}

fn resident_governor(checks: u64, keys: &[u64]) -> (u64, u64) {
    let base = LIVE.load(Ordering::Relaxed);
    let limiter = RateLimiter::keyed(governor_resident_quota());
    let mut allowed = 0;
    for k in &keys[..checks as usize] {
        allowed += black_box(black_box(&limiter).check_key(k)).is_ok() as u64;
    }
    HELD.store(LIVE.load(Ordering::Relaxed) - base, Ordering::Relaxed);
    (allowed, limiter.len() as u64)
}

const ROWS: &[Row] = &[
    Row {
        workload: "direct",
        name: "plain GCRA on one u64",
        setup: "synthetic time",
        thread_safe: false,
        run: plain_u64,
    },
    Row { workload: "direct", name: "tollgate Gcra", setup: "synthetic time", thread_safe: false, run: tollgate_gcra },
    Row {
        workload: "direct",
        name: "tollgate Gcra + QuantaClock",
        setup: "reads governor's default clock",
        thread_safe: false,
        run: tollgate_gcra_quanta,
    },
    Row {
        workload: "direct",
        name: "tollgate Gcra in a Mutex",
        setup: "synthetic time",
        thread_safe: true,
        run: tollgate_gcra_mutex,
    },
    Row {
        workload: "direct",
        name: "tollgate Gcra in a Mutex + QuantaClock",
        setup: "reads governor's default clock",
        thread_safe: true,
        run: tollgate_gcra_mutex_quanta,
    },
    Row {
        workload: "direct",
        name: "governor direct",
        setup: "default: QuantaClock",
        thread_safe: true,
        run: governor_direct,
    },
    Row {
        workload: "direct",
        name: "governor direct + FakeRelativeClock",
        setup: "fake clock, +1 µs",
        thread_safe: true,
        run: governor_direct_fake,
    },
    Row {
        workload: "keyed",
        name: "hashbrown<String> + plain GCRA",
        setup: "synthetic time",
        thread_safe: false,
        run: hashbrown_string,
    },
    Row {
        workload: "keyed",
        name: "tollgate KeyedLimiter<Gcra>",
        setup: "synthetic time",
        thread_safe: false,
        run: tollgate_keyed,
    },
    Row {
        workload: "keyed",
        name: "tollgate KeyedLimiter<Gcra> in a Mutex",
        setup: "synthetic time",
        thread_safe: true,
        run: tollgate_keyed_mutex,
    },
    Row {
        workload: "keyed",
        name: "tollgate KeyedLimiter<Gcra> in a Mutex + QuantaClock",
        setup: "reads governor's default clock",
        thread_safe: true,
        run: tollgate_keyed_mutex_quanta,
    },
    Row {
        workload: "keyed",
        name: "tollgate Limiter, a Policy of one limit",
        setup: "synthetic time",
        thread_safe: false,
        run: tollgate_policy_one,
    },
    Row {
        workload: "keyed",
        name: "tollgate Limiter, a Policy of one limit, peek",
        setup: "synthetic time",
        thread_safe: false,
        run: tollgate_policy_one_peek,
    },
    Row {
        workload: "keyed",
        name: "tollgate Limiter, a Policy of two limits",
        setup: "synthetic time",
        thread_safe: false,
        run: tollgate_policy_two,
    },
    Row {
        workload: "keyed",
        name: "governor keyed (dashmap)",
        setup: "default: DashMap, QuantaClock",
        thread_safe: true,
        run: governor_keyed,
    },
    Row {
        workload: "resident",
        name: "hashbrown<u64, u64> + plain GCRA",
        setup: "synthetic time",
        thread_safe: false,
        run: resident_hashbrown,
    },
    Row {
        workload: "resident",
        name: "tollgate KeyedLimiter<Gcra, u64>",
        setup: "synthetic time",
        thread_safe: false,
        run: resident_tollgate,
    },
    Row {
        workload: "resident",
        name: "governor keyed (dashmap), u64",
        setup: "default: DashMap, QuantaClock",
        thread_safe: true,
        run: resident_governor,
    },
];

fn median(mut v: Vec<f64>) -> f64 {
    v.sort_by(|a, b| a.partial_cmp(b).unwrap());
    v[v.len() / 2]
}

fn main() {
    if std::env::args().any(|a| a == "--list-rows") {
        for row in ROWS {
            println!("{}\t{}", row.workload, row.name);
        }
        return;
    }
    let only = std::env::var("HEADLINE_ONLY").ok();
    let checks: u64 = std::env::var("HEADLINE_CHECKS").ok().and_then(|c| c.parse().ok()).unwrap_or(10_000_000);
    if let Some(only) = only {
        let row = ROWS.iter().find(|r| r.name == only).unwrap_or_else(|| panic!("no row named {only:?}"));
        let resident_keys = if row.workload == "resident" { keys(checks) } else { Vec::new() };
        black_box((row.run)(checks, &resident_keys));
        return;
    }
    let workload = std::env::var("HEADLINE_WORKLOAD").ok();
    let resident_keys = keys(checks);
    println!("| workload | implementation | setup | thread-safe | median ns/check | vs the floor | bytes/key |");
    println!("|---|---|---|---|---:|---:|---:|");
    let rows: Vec<&Row> = ROWS.iter().filter(|r| workload.as_deref().is_none_or(|w| w == r.workload)).collect();
    // The runs are interleaved (run 1 of every row, then run 2 of every row, ...), so that a
    // change in the machine's load falls on every row alike rather than on one row's five runs.
    let mut times = vec![Vec::with_capacity(RUNS); rows.len()];
    let mut bytes = vec![0.0; rows.len()];
    for _ in 0..RUNS {
        for (i, row) in rows.iter().enumerate() {
            let started = Instant::now();
            let (allowed, held) = measure(row, checks, &resident_keys, &mut bytes[i]);
            times[i].push(started.elapsed().as_nanos() as f64 / checks as f64);
            black_box(allowed);
            black_box(held);
        }
    }
    let mut floor = 0.0;
    for ((row, times), bytes) in rows.iter().zip(times).zip(bytes) {
        let ns = median(times);
        if row.name.starts_with("plain") || row.name.starts_with("hashbrown") {
            floor = ns;
        }
        let per_key = if row.workload == "resident" { format!("{bytes:.1}") } else { "".into() };
        println!(
            "| {} | {} | {} | {} | {:.2} | {:.2}x | {} |",
            row.workload,
            row.name,
            row.setup,
            if row.thread_safe { "yes" } else { "no" },
            ns,
            ns / floor,
            per_key
        );
    }
}

/// Runs the row once; for the resident workload, also the heap bytes its limiter held at the
/// end of the run (recorded by the row's own function before it drops the limiter) per key.
fn measure(row: &Row, checks: u64, keys: &[u64], bytes: &mut f64) -> (u64, u64) {
    let r = (row.run)(checks, keys);
    if row.workload == "resident" {
        *bytes = HELD.load(Ordering::Relaxed) as f64 / r.1.max(1) as f64;
    }
    r
}

/// Heap bytes a resident row's limiter held at the end of its run.
static HELD: AtomicUsize = AtomicUsize::new(0);
