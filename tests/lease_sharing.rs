//! Holders sharing one pool through leases, in simulated time, under everything a network
//! and a fleet do to them: random delays each way (the pool acts in between), lost requests
//! and lost answers, holders that crash, close, or come back. Each holder paces to what its
//! `LeaseHolder` lets it count. Whatever happens, the units started in any closed window of
//! the pool's length, all holders together, never exceed the pool's capacity.
//!
//! The two rules this depends on (a lease measured from its request's send; a new partition
//! counted one window after its answer) are each necessary: without either, these runs
//! exceed the capacity.

use tollgate::lease::LeasePool;
use tollgate::lease_holder::LeaseHolder;
use tollgate::pacer::Pacer;
use tollgate::{Nanos, Quota};

const TICK: u64 = 2; // ms
const WINDOW: Nanos = Nanos::from_secs(1);
const PARTITIONS: u32 = 8;
const PARTITION_RATE: u64 = 5;
const CAPACITY: u64 = PARTITIONS as u64 * PARTITION_RATE;
const TTL: Nanos = Nanos::from_millis(1500);
const MARGIN: Nanos = Nanos::from_millis(150);

/// xorshift64*: a seeded generator, so a failure names a seed that replays it.
struct Rng(u64);
impl Rng {
    fn below(&mut self, n: u64) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        (self.0.wrapping_mul(0x2545_f491_4f6c_dd1d) >> 11) % n
    }
    fn chance(&mut self, percent: u64) -> bool {
        self.below(100) < percent
    }
}

enum Msg {
    /// A grant arriving at the pool: (holder, sent, answer's delay back, answer lost).
    Grant(usize, Nanos, Nanos, bool),
    Release(usize),
}

struct Holder {
    name: String,
    want: u32,
    lease: LeaseHolder,
    pacer: Option<Pacer>,
    /// Stopped (crashed or closed) until this instant.
    down_until: Nanos,
    next_ask: Nanos,
    waiting: bool,
    /// Answers on their way back: (arrives, sent, partitions, rate).
    answers: Vec<(Nanos, Nanos, Vec<u32>, u64)>,
}

/// One run; returns the most units started in any window and how many were started.
fn run(seed: u64) -> (u64, usize) {
    let mut rng = Rng(seed.wrapping_mul(0x9e37_79b9_7f4a_7c15) | 1);
    let mut pool = LeasePool::new(PARTITIONS, PARTITION_RATE, WINDOW).unwrap();
    let mut holders: Vec<Holder> = (0..4)
        .map(|i| Holder {
            name: format!("h{i}"),
            want: if i % 2 == 0 { PARTITIONS } else { 1 + rng.below(PARTITIONS as u64) as u32 },
            lease: LeaseHolder::new(MARGIN),
            pacer: None,
            down_until: Nanos::ZERO,
            next_ask: Nanos::from_millis(rng.below(500)),
            waiting: false,
            answers: Vec::new(),
        })
        .collect();
    let mut in_flight: Vec<(Nanos, Msg)> = Vec::new();
    let mut starts: Vec<Nanos> = Vec::new();
    let end = Nanos::from_secs(30);
    let mut now = Nanos::from_secs(1);
    while now < end {
        // The pool acts on what reaches it now, in order.
        in_flight.sort_by_key(|(at, _)| *at);
        while in_flight.first().is_some_and(|(at, _)| *at <= now) {
            let (_, msg) = in_flight.remove(0);
            match msg {
                Msg::Grant(i, sent, back, lost) => {
                    let h = &holders[i];
                    let g = pool.grant(&h.name, h.want, TTL, now).unwrap();
                    if !lost {
                        holders[i].answers.push((now + back, sent, g.partitions, g.rate));
                    } else {
                        holders[i].waiting = false; // it times out and asks again
                    }
                }
                Msg::Release(i) => {
                    let _ = pool.release(&holders[i].name, now);
                }
            }
        }
        for (i, h) in holders.iter_mut().enumerate() {
            if now < h.down_until {
                continue;
            }
            // Answers that arrive now.
            let (due, later): (Vec<_>, Vec<_>) = h.answers.drain(..).partition(|a| a.0 <= now);
            h.answers = later;
            for (arrives, sent, partitions, rate) in due {
                h.lease.granted(sent, arrives, &partitions, rate, WINDOW, TTL).unwrap();
                h.waiting = false;
            }
            // A crash (forgets everything, comes back later) or a close (releases first).
            if rng.chance(1) && rng.chance(10) {
                let close = rng.chance(50);
                if close {
                    let at = now + Nanos::from_millis(rng.below(100));
                    in_flight.push((at, Msg::Release(i)));
                }
                h.lease = LeaseHolder::new(MARGIN);
                h.pacer = None;
                h.answers.clear();
                h.waiting = false;
                h.down_until = now + Nanos::from_millis(500 + rng.below(4000));
                h.next_ask = h.down_until;
                continue;
            }
            // Ask (grant keeps, renews and grows) every third of the TTL, or 200 ms when empty.
            if now >= h.next_ask && !h.waiting {
                let there = Nanos::from_millis(rng.below(400));
                let back = Nanos::from_millis(rng.below(400));
                if !rng.chance(10) {
                    in_flight.push((now + there, Msg::Grant(i, now, back, rng.chance(10))));
                }
                h.waiting = true;
                h.next_ask =
                    now + if h.lease.held_rate() > 0 { Nanos::from_millis(500) } else { Nanos::from_millis(200) };
            }
            if h.waiting && now >= h.next_ask + TTL {
                h.waiting = false; // no answer for long: ask again
            }
            // Start what the lease lets count now, never at or after its usable end.
            loop {
                let rate = h.lease.rate_at(now);
                if rate == 0 {
                    break;
                }
                let quota = Quota::new(rate, WINDOW).unwrap();
                let pacer = match h.pacer.as_mut() {
                    Some(p) => {
                        if p.quota() != quota {
                            p.set_rate(quota).unwrap();
                        }
                        p
                    }
                    None => h.pacer.insert(Pacer::new(quota, Nanos::from_millis(200)).unwrap()),
                };
                if pacer.peek(now, 1).unwrap() > now || now >= h.lease.usable_until() {
                    break;
                }
                starts.push(pacer.reserve(now, 1).unwrap());
            }
        }
        now = now + Nanos::from_millis(TICK);
    }
    starts.sort();
    let (mut max, mut lo) = (0, 0);
    for hi in 0..starts.len() {
        while starts[hi] - starts[lo] > WINDOW {
            lo += 1;
        }
        max = max.max((hi - lo + 1) as u64);
    }
    (max, starts.len())
}

#[test]
fn uncoordinated_holders_never_exceed_the_capacity_in_any_window() {
    let mut busiest = 0;
    let mut total = 0;
    for seed in 0..24 {
        let (max, n) = run(seed);
        assert!(max <= CAPACITY, "seed {seed}: {max} units in one window > capacity {CAPACITY}");
        busiest = busiest.max(max);
        total += n;
    }
    // The runs used the capacity: a test that starts nothing would pass for nothing.
    assert_eq!(busiest, CAPACITY, "no run ever reached the capacity");
    // Holders are down a lot (each crashes every ~2 s here) and warm up after each grant:
    // about a sixth of the capacity is used (16.5% of it with fair shares, which move
    // partitions between holders more often and keep a crashed holder's share idle for half
    // a TTL; first come first served would give about 22.7%, one greedy holder taking most
    // of it).
    let offered = 24 * 29 * CAPACITY as usize;
    assert!(total > offered / 7, "only {total} of {offered} units started in 24 runs of 29 s");
}

#[test]
fn a_pool_s_live_leases_are_grouped_by_holder() {
    let mut pool = LeasePool::new(6, 25, Nanos::from_secs(1)).unwrap();
    let t = Nanos::from_secs(100);
    pool.grant("a", 2, Nanos::from_secs(10), t).unwrap();
    pool.grant("b", 3, Nanos::from_secs(5), t).unwrap();
    pool.grant("a", 3, Nanos::from_secs(10), t + Nanos::from_secs(1)).unwrap();
    let h = pool.holdings(t + Nanos::from_secs(2));
    assert_eq!(
        h.iter().map(|h| (h.holder.as_str(), h.partitions.clone())).collect::<Vec<_>>(),
        [("a", vec![0, 1, 5]), ("b", vec![2, 3, 4])]
    );
    assert_eq!((h[0].expires_at, h[1].expires_at), (t + Nanos::from_secs(11), t + Nanos::from_secs(5)));
    assert_eq!(pool.holdings(t + Nanos::from_secs(5)).iter().map(|h| h.holder.as_str()).collect::<Vec<_>>(), ["a"]);
}
