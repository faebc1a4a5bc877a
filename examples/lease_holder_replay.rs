//! Replays a lease holder's life through the core's `LeaseHolder`: what the pool answered and
//! when, and the instants to ask it about. tests/equivalence/lease-holder.test.mjs records a
//! `LeasedPacer` (the npm package) talking to the Worker's capacity pool over HTTP and checks
//! that it decided, at every instant, what this native replay of the same grants decides.
//!
//! Input, one command a line (times in whole epoch ms):
//!   new <margin_ms>
//!   granted <sent> <received> <rate> <window_ms> <ttl_ms> <p1,p2,...|->
//!   lost
//!   query <at>
//! Output, one line per query: `rate_at held_rate usable_until lease_end window_ms partitions`
//! (times as ms with their fraction, partitions joined by `,`, `-` for none).
//!
//!     cargo run --release --example lease_holder_replay < events.txt
use std::io::{BufRead, Write};

use tollgate::lease_holder::LeaseHolder;
use tollgate::Nanos;

fn ms(t: Nanos) -> String {
    let n = t.as_nanos();
    if n % 1_000_000 == 0 {
        (n / 1_000_000).to_string()
    } else {
        format!("{}.{:06}", n / 1_000_000, n % 1_000_000)
    }
}

fn main() {
    let mut holder = LeaseHolder::new(Nanos::ZERO);
    let out = std::io::stdout();
    let mut out = std::io::BufWriter::new(out.lock());
    for line in std::io::stdin().lock().lines() {
        let line = line.expect("stdin");
        let f: Vec<&str> = line.split_whitespace().collect();
        let num = |i: usize| -> u64 { f[i].parse().unwrap_or_else(|_| panic!("bad number in {line:?}")) };
        match f.first().copied() {
            Some("new") => holder = LeaseHolder::new(Nanos::from_millis(num(1))),
            Some("granted") => {
                let partitions: Vec<u32> =
                    if f[6] == "-" { Vec::new() } else { f[6].split(',').map(|p| p.parse().unwrap()).collect() };
                let (sent, received) = (Nanos::from_millis(num(1)), Nanos::from_millis(num(2)));
                let (window, ttl) = (Nanos::from_millis(num(4)), Nanos::from_millis(num(5)));
                holder.granted(sent, received, &partitions, num(3), window, ttl).expect("a lease");
            }
            Some("lost") => holder.lost(),
            Some("query") => {
                let at = Nanos::from_millis(num(1));
                let p: Vec<String> = holder.partitions().iter().map(u32::to_string).collect();
                writeln!(
                    out,
                    "{} {} {} {} {} {}",
                    holder.rate_at(at),
                    holder.held_rate(),
                    ms(holder.usable_until()),
                    ms(holder.lease_end()),
                    ms(holder.window()),
                    if p.is_empty() { "-".to_string() } else { p.join(",") }
                )
                .unwrap();
            }
            _ => panic!("unknown command {line:?}"),
        }
    }
}
