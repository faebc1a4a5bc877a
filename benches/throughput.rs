//! Throughput against governor, in the same run, on the two workloads of the core issue.
//!
//! - W1: one key, 10,000,000 checks, time +1 µs per check, quota 1000/s burst 100.
//! - W2: 1,000,000 keys chosen by a fixed-seed PRNG, 10,000,000 checks, same quota.
//!
//! governor reads a `FakeRelativeClock` advanced by 1 µs per check; tollgate takes the same
//! time as an argument. governor's limiters are thread-safe (an atomic state, a locked or
//! sharded map); tollgate's `KeyedLimiter` takes `&mut self`, so it is also measured behind a
//! `Mutex`, which is what a multi-threaded server would pay. Run with `make bench-core` (or `cargo bench --bench throughput`);
//! figures go to docs/benchmarks.md.

mod common;
use common::{keys, KEYS};

use std::hint::black_box;
use std::num::NonZeroU32;
use std::time::Duration;

use criterion::{criterion_group, criterion_main, BatchSize, Criterion, Throughput};
use governor::clock::FakeRelativeClock;
use governor::{Quota as GQuota, RateLimiter};
use tollgate::algorithm::check_slot;
use tollgate::policy::Policy;
use tollgate::{AnyAlgorithm, Gcra, KeyedLimiter, Limiter, Nanos, Quota, TokenBucket};

const CHECKS: u64 = 10_000_000;

fn quota() -> Quota {
    Quota::per_second(1000).unwrap().with_burst(100).unwrap()
}

fn governor_quota() -> GQuota {
    GQuota::per_second(NonZeroU32::new(1000).unwrap()).allow_burst(NonZeroU32::new(100).unwrap())
}

fn w1(c: &mut Criterion) {
    let mut g = c.benchmark_group("W1 one key");
    g.sample_size(10).throughput(Throughput::Elements(CHECKS)).measurement_time(Duration::from_secs(20));
    let start = Nanos::from_secs(1_700_000_000);

    g.bench_function("tollgate gcra (pure fn, one state)", |b| {
        let gcra = Gcra::new(quota()).unwrap();
        b.iter(|| {
            let mut state = None;
            let mut now = start;
            let mut allowed = 0u64;
            for _ in 0..CHECKS {
                now = now + Nanos::from_micros(1);
                allowed += check_slot(&gcra, &mut state, now, 1).unwrap().allowed as u64;
            }
            black_box(allowed)
        })
    });
    g.bench_function("tollgate token bucket (pure fn, one state)", |b| {
        let tb = TokenBucket::from_quota(quota()).unwrap();
        b.iter(|| {
            let mut state = None;
            let mut now = start;
            let mut allowed = 0u64;
            for _ in 0..CHECKS {
                now = now + Nanos::from_micros(1);
                allowed += check_slot(&tb, &mut state, now, 1).unwrap().allowed as u64;
            }
            black_box(allowed)
        })
    });
    g.bench_function("tollgate gcra keyed (string key)", |b| {
        b.iter_batched(
            || KeyedLimiter::new(Gcra::new(quota()).unwrap()),
            |mut limiter| {
                let mut now = start;
                let mut allowed = 0u64;
                for _ in 0..CHECKS {
                    now = now + Nanos::from_micros(1);
                    allowed += limiter.check("user:42", now, 1).unwrap().allowed as u64;
                }
                black_box(allowed)
            },
            BatchSize::PerIteration,
        )
    });
    g.bench_function("tollgate policy Limiter<MemoryStore> (one limit, string key)", |b| {
        b.iter_batched(
            || Limiter::in_memory(Policy::single(AnyAlgorithm::Gcra(Gcra::new(quota()).unwrap()))),
            |mut limiter| {
                let mut now = start;
                let mut allowed = 0u64;
                for _ in 0..CHECKS {
                    now = now + Nanos::from_micros(1);
                    allowed += limiter.check(&["user:42"], now, 1).unwrap().allowed as u64;
                }
                black_box(allowed)
            },
            BatchSize::PerIteration,
        )
    });
    g.bench_function("tollgate gcra keyed in a Mutex (string key)", |b| {
        b.iter_batched(
            || std::sync::Mutex::new(KeyedLimiter::new(Gcra::new(quota()).unwrap())),
            |limiter| {
                let mut now = start;
                let mut allowed = 0u64;
                for _ in 0..CHECKS {
                    now = now + Nanos::from_micros(1);
                    allowed += limiter.lock().unwrap().check("user:42", now, 1).unwrap().allowed as u64;
                }
                black_box(allowed)
            },
            BatchSize::PerIteration,
        )
    });
    g.bench_function("governor direct", |b| {
        b.iter_batched(
            || {
                let clock = FakeRelativeClock::default();
                (RateLimiter::direct_with_clock(governor_quota(), clock.clone()), clock)
            },
            |(limiter, clock)| {
                let mut allowed = 0u64;
                for _ in 0..CHECKS {
                    clock.advance(Duration::from_micros(1));
                    allowed += limiter.check().is_ok() as u64;
                }
                black_box(allowed)
            },
            BatchSize::PerIteration,
        )
    });
    g.bench_function("governor keyed (string key)", |b| {
        b.iter_batched(
            || {
                let clock = FakeRelativeClock::default();
                (RateLimiter::hashmap_with_clock(governor_quota(), clock.clone()), clock)
            },
            |(limiter, clock)| {
                let key: &'static str = "user:42";
                let mut allowed = 0u64;
                for _ in 0..CHECKS {
                    clock.advance(Duration::from_micros(1));
                    allowed += limiter.check_key(&key).is_ok() as u64;
                }
                black_box(allowed)
            },
            BatchSize::PerIteration,
        )
    });
    g.finish();
}

fn w2(c: &mut Criterion) {
    let keys = keys(CHECKS);
    let mut g = c.benchmark_group("W2 1M keys");
    g.sample_size(10).throughput(Throughput::Elements(CHECKS)).measurement_time(Duration::from_secs(40));
    let start = Nanos::from_secs(1_700_000_000);

    g.bench_function("tollgate gcra keyed (u64 keys)", |b| {
        b.iter_batched(
            || KeyedLimiter::<Gcra, u64>::with_key_type(Gcra::new(quota()).unwrap()),
            |mut limiter| {
                let mut now = start;
                let mut allowed = 0u64;
                for k in &keys {
                    now = now + Nanos::from_micros(1);
                    allowed += limiter.check(k, now, 1).unwrap().allowed as u64;
                }
                black_box((allowed, limiter.len()))
            },
            BatchSize::PerIteration,
        )
    });
    g.bench_function("tollgate token bucket keyed (u64 keys)", |b| {
        b.iter_batched(
            || KeyedLimiter::<TokenBucket, u64>::with_key_type(TokenBucket::from_quota(quota()).unwrap()),
            |mut limiter| {
                let mut now = start;
                let mut allowed = 0u64;
                for k in &keys {
                    now = now + Nanos::from_micros(1);
                    allowed += limiter.check(k, now, 1).unwrap().allowed as u64;
                }
                black_box((allowed, limiter.len()))
            },
            BatchSize::PerIteration,
        )
    });
    let names: Vec<String> = (0..KEYS).map(|k| format!("user:{k}")).collect();
    g.bench_function("tollgate policy Limiter<MemoryStore> (one limit, string keys)", |b| {
        b.iter_batched(
            || Limiter::in_memory(Policy::single(AnyAlgorithm::Gcra(Gcra::new(quota()).unwrap()))),
            |mut limiter| {
                let mut now = start;
                let mut allowed = 0u64;
                for &k in &keys {
                    now = now + Nanos::from_micros(1);
                    allowed += limiter.check(&[names[k as usize].as_str()], now, 1).unwrap().allowed as u64;
                }
                black_box((allowed, limiter.store().len()))
            },
            BatchSize::PerIteration,
        )
    });
    g.bench_function("tollgate gcra keyed in a Mutex (u64 keys)", |b| {
        b.iter_batched(
            || std::sync::Mutex::new(KeyedLimiter::<Gcra, u64>::with_key_type(Gcra::new(quota()).unwrap())),
            |limiter| {
                let mut now = start;
                let mut allowed = 0u64;
                for k in &keys {
                    now = now + Nanos::from_micros(1);
                    allowed += limiter.lock().unwrap().check(k, now, 1).unwrap().allowed as u64;
                }
                black_box(allowed)
            },
            BatchSize::PerIteration,
        )
    });
    g.bench_function("governor keyed hashmap (u64 keys)", |b| {
        b.iter_batched(
            || {
                let clock = FakeRelativeClock::default();
                (RateLimiter::hashmap_with_clock(governor_quota(), clock.clone()), clock)
            },
            |(limiter, clock)| {
                let mut allowed = 0u64;
                for k in &keys {
                    clock.advance(Duration::from_micros(1));
                    allowed += limiter.check_key(k).is_ok() as u64;
                }
                black_box(allowed)
            },
            BatchSize::PerIteration,
        )
    });
    g.bench_function("governor keyed dashmap (u64 keys)", |b| {
        b.iter_batched(
            || {
                let clock = FakeRelativeClock::default();
                (RateLimiter::dashmap_with_clock(governor_quota(), clock.clone()), clock)
            },
            |(limiter, clock)| {
                let mut allowed = 0u64;
                for k in &keys {
                    clock.advance(Duration::from_micros(1));
                    allowed += limiter.check_key(k).is_ok() as u64;
                }
                black_box(allowed)
            },
            BatchSize::PerIteration,
        )
    });
    g.finish();
}

criterion_group!(benches, w1, w2);
criterion_main!(benches);
