//! tollgate's `ShardedLimiter` against governor's keyed limiter (`RateLimiter::keyed`, its
//! default DashMap store), many threads on one limiter (`make bench-threads`;
//! docs/benchmarks.md, "Threads").
//!
//! Each row: `T` threads (1, 2 and as many as the machine runs at once) share one limiter and
//! split the iterations between them; criterion's time per iteration is wall time per check of
//! all threads together, so checks per second = 1 / that. Both contenders read the same clock
//! on every check (governor's default `QuantaClock`; tollgate is handed its reading as `now`),
//! GCRA, `u64` keys. Workloads:
//! - `hot`: every thread on one key (quota 1000/s, burst 100: mostly denials, as a hot key is);
//! - `1M keys`: the keys of `common::keys` (1,000,000 distinct), each thread from its own
//!   offset, quota 1000/h so that every key stays held; the first pass inserts them.
mod common;

use std::hint::black_box;
use std::num::NonZeroU32;
use std::sync::Barrier;
use std::time::{Duration, Instant};

use criterion::{criterion_group, criterion_main, BenchmarkId, Criterion};
use governor::clock::{Clock, QuantaClock, Reference};
use governor::{Quota as GQuota, RateLimiter};
use tollgate::sharded::ShardedLimiter;
use tollgate::{Gcra, Nanos, Quota};

const START: Nanos = Nanos::from_secs(1_700_000_000);

fn thread_counts() -> Vec<usize> {
    let n = std::thread::available_parallelism().map_or(2, |n| n.get());
    let mut t = vec![1, 2, n];
    t.dedup();
    t
}

/// Runs `per_thread(thread, checks)` on `threads` threads started together; the wall time.
fn timed(threads: usize, iters: u64, per_thread: &(dyn Fn(usize, u64) + Sync)) -> Duration {
    let start = Barrier::new(threads + 1);
    std::thread::scope(|s| {
        let handles: Vec<_> = (0..threads)
            .map(|t| {
                let start = &start;
                let checks = iters / threads as u64 + u64::from((t as u64) < iters % threads as u64);
                s.spawn(move || {
                    start.wait();
                    per_thread(t, checks);
                })
            })
            .collect();
        start.wait();
        let began = Instant::now();
        for h in handles {
            h.join().unwrap();
        }
        began.elapsed()
    })
}

fn workload(c: &mut Criterion, name: &str, keys: &[u64], tollgate_quota: Quota, governor_quota: GQuota) {
    let mut group = c.benchmark_group(format!("threads/{name}"));
    group.sample_size(10).warm_up_time(Duration::from_secs(1)).measurement_time(Duration::from_secs(3));
    let clock = QuantaClock::default();
    let origin = clock.now();
    for threads in thread_counts() {
        let sharded: ShardedLimiter<Gcra, u64> = ShardedLimiter::with_key_type(Gcra::new(tollgate_quota).unwrap());
        group.bench_function(BenchmarkId::new("tollgate ShardedLimiter", threads), |b| {
            b.iter_custom(|iters| {
                timed(threads, iters, &|t, checks| {
                    let offset = t * keys.len() / threads;
                    for i in 0..checks as usize {
                        let now = START + Nanos::new(clock.now().duration_since(origin).as_u64());
                        let key = keys[(offset + i) % keys.len()];
                        black_box(sharded.check(&key, now, 1).map(|d| d.allowed).unwrap_or(false));
                    }
                })
            })
        });
        let governor = RateLimiter::<u64, _, _>::keyed(governor_quota);
        group.bench_function(BenchmarkId::new("governor keyed (DashMap)", threads), |b| {
            b.iter_custom(|iters| {
                timed(threads, iters, &|t, checks| {
                    let offset = t * keys.len() / threads;
                    for i in 0..checks as usize {
                        let key = keys[(offset + i) % keys.len()];
                        black_box(governor.check_key(&key).is_ok());
                    }
                })
            })
        });
    }
    group.finish();
}

fn hot(c: &mut Criterion) {
    let q = Quota::per_second(1000).unwrap().with_burst(100).unwrap();
    let g = GQuota::per_second(NonZeroU32::new(1000).unwrap()).allow_burst(NonZeroU32::new(100).unwrap());
    workload(c, "hot", &[42], q, g);
}

fn many(c: &mut Criterion) {
    let keys = common::keys(common::KEYS);
    let q = Quota::per_hour(1000).unwrap();
    let g = GQuota::per_hour(NonZeroU32::new(1000).unwrap());
    workload(c, "1M keys", &keys, q, g);
}

criterion_group!(benches, hot, many);
criterion_main!(benches);
