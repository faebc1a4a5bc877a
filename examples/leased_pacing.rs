//! Uncoordinated holders sharing one capacity through leases, in simulated time: a pool of
//! 500/s as 20 partitions of 25/s, three holders that each pace their
//! work to what they may count of their leases (`LeasePool` + `LeaseHolder` + `Pacer`, the
//! same core the Worker and the npm `LeasedPacer` run). a and b each want 12 partitions: a
//! gets 12 and b the 8 left, until their renewals at 5 s, when the pool caps both at their fair
//! share of 20 (10 each). c joins at 5 s wanting 12; at the next renewals (10 s) a and b give
//! back to 7 each and c takes 6, counting them a window later (the dips at 5 s and 10 s are
//! those warm-ups). Holder a loses the pool at 12 s (its renewals no longer arrive): it goes on
//! sending on its lease until 1 s before the lease's end (24 s), the pool frees its partitions
//! at 25 s, and b and c count them from 26 s.
//!
//! ```sh
//! cargo run --example leased_pacing
//! ```
//!
//! Every request takes 10 ms to reach the pool and 10 ms to come back. Holders renew every
//! third of the 15 s TTL; nothing starts later than 1 s before a lease's end; a new partition
//! counts one window (1 s) after its grant arrived. The table shows, per second, what each
//! holder held (partitions) and started (units); the last line checks every 1 s window of
//! starts, all holders together, against the capacity.

use tollgate::lease::LeasePool;
use tollgate::lease_holder::LeaseHolder;
use tollgate::pacer::Pacer;
use tollgate::{Nanos, Quota};

const TICK: Nanos = Nanos::from_millis(1);
const HOP: Nanos = Nanos::from_millis(10);
const TTL: Nanos = Nanos::from_secs(15);
const MARGIN: Nanos = Nanos::from_secs(1);
const COST: u64 = 5; // units per record
const SECONDS: u64 = 40;

struct Worker {
    name: &'static str,
    want: u32,
    joins: Nanos,
    /// From then on its requests never reach the pool (it still sends on what it holds).
    cut_off: Option<Nanos>,
    holder: LeaseHolder,
    pacer: Option<Pacer>,
    next_ask: Nanos,
    /// An answer on its way back: (sent, arrives, partitions, rate).
    answer: Option<(Nanos, Nanos, Vec<u32>, u64)>,
    starts: Vec<Nanos>,
    /// Partitions it may count, in the middle of each second.
    held: Vec<usize>,
}

impl Worker {
    fn new(name: &'static str, want: u32, joins: u64, cut_off: Option<u64>) -> Worker {
        Worker {
            name,
            want,
            joins: Nanos::from_secs(joins),
            cut_off: cut_off.map(Nanos::from_secs),
            holder: LeaseHolder::new(MARGIN),
            pacer: None,
            next_ask: Nanos::from_secs(joins),
            answer: None,
            starts: Vec::new(),
            held: Vec::new(),
        }
    }

    fn reaches_pool(&self, now: Nanos) -> bool {
        self.cut_off.is_none_or(|c| now < c)
    }
}

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let window = Nanos::from_secs(1);
    let mut pool = LeasePool::new(20, 25, window)?;
    let mut workers = [
        Worker::new("a", 12, 0, Some(12)), // cut off at 12 s: its last lease (10 s) ends at 25 s
        Worker::new("b", 12, 0, None),     // gets the 8 left, then 4 of a's
        Worker::new("c", 8, 5, None),      // arrives to a full pool, gets a's other 8
    ];
    let end = Nanos::from_secs(SECONDS);
    let mut now = Nanos::ZERO;
    while now < end {
        if now.as_nanos() % window.as_nanos() == window.as_nanos() / 2 {
            for w in workers.iter_mut() {
                w.held.push((w.holder.rate_at(now) / pool.partition_rate()) as usize);
            }
        }
        for w in workers.iter_mut().filter(|w| now >= w.joins) {
            if let Some((sent, arrives, partitions, rate)) = w.answer.take() {
                if arrives <= now {
                    w.holder.granted(sent, arrives, &partitions, rate, window, TTL)?;
                } else {
                    w.answer = Some((sent, arrives, partitions, rate));
                }
            }
            if now >= w.next_ask && w.reaches_pool(now) {
                // The pool acts when the request arrives; the answer travels back.
                let g = pool.grant(w.name, w.want, TTL, now + HOP)?;
                w.answer = Some((now, now + HOP + HOP, g.partitions, g.rate));
                w.next_ask = now + if g.rate > 0 { Nanos::from_secs(5) } else { Nanos::from_secs(1) };
            }
            // Start every record the pacer allows now, at the rate the lease lets count now.
            loop {
                let rate = w.holder.rate_at(now);
                if rate == 0 {
                    break;
                }
                let quota = Quota::new(rate, window)?;
                let pacer = match w.pacer.as_mut() {
                    Some(p) => {
                        if p.quota() != quota {
                            p.set_rate(quota)?;
                        }
                        p
                    }
                    None => w.pacer.insert(Pacer::new(quota, Nanos::from_millis(200))?),
                };
                if pacer.peek(now, COST)? > now {
                    break;
                }
                let start = pacer.reserve(now, COST)?;
                w.starts.push(start);
            }
        }
        now = now + TICK;
    }

    println!("each second: partitions counted (p, mid-second) and units started (pool: 500/s as 20 x 25/s, TTL 15 s)");
    println!("a is cut off from the pool at 12 s; c joins at 5 s\n");
    println!("{:>4}  {:>10}  {:>10}  {:>10}  {:>6}", "t(s)", "a", "b", "c", "total");
    for sec in 0..SECONDS {
        let from = Nanos::from_secs(sec);
        let to = Nanos::from_secs(sec + 1);
        let mut cells = Vec::new();
        let mut total = 0;
        for w in &workers {
            let units = w.starts.iter().filter(|&&s| s >= from && s < to).count() as u64 * COST;
            total += units;
            let held = w.held[sec as usize];
            cells.push(if from >= w.joins { format!("{held:>2}p {units:>4}") } else { "-".to_string() });
        }
        println!("{sec:>4}  {:>10}  {:>10}  {:>10}  {total:>6}", cells[0], cells[1], cells[2]);
    }
    // Every closed 1 s window of starts, all holders together.
    let mut all: Vec<Nanos> = workers.iter().flat_map(|w| w.starts.iter().copied()).collect();
    all.sort();
    let mut max = 0;
    let mut lo = 0;
    for hi in 0..all.len() {
        while all[hi] - all[lo] > window {
            lo += 1;
        }
        max = max.max((hi - lo + 1) as u64 * COST);
    }
    println!("\nmost units started in any 1 s window, all holders together: {max} (capacity 500)");
    assert!(max <= 500, "the holders together exceeded the capacity");
    Ok(())
}
