//! The guarded update's test vectors (tests/redis/guard-vectors.json), written by the core for
//! the Redis store's Lua (pkg-template/lib/stores/redis/redis-guard.js), which re-implements
//! `tollgate::guard::Guard::apply` in doubles: for states and batches of every algorithm that
//! has a guard, the bytes a writer decided over, the bytes it wrote and its guard, and bytes at
//! the key moved by deltas inside, at the edges of and outside the guard's range (and with
//! other fields moved), with what the core says a store writes there (`Guard::apply`) and how
//! far the expiry moved. tests/redis/guard-vectors.test.mjs runs the Lua over each on a real
//! redis-server. The test fails when the file is not what the core writes now;
//! `make contracts` (`TOLLGATE_CONTRACTS=write`) rewrites it.

use std::fmt::Write as _;
use std::path::PathBuf;

use tollgate::guard::{check_guarded, shift_fields, varints, Guard, EXPIRY_FIELD};
use tollgate::policy::{Policy, PolicyState};
use tollgate::{AnyAlgorithm, Gcra, Kind, LimitSpec, Nanos};

const PATH: &str = "tests/redis/guard-vectors.json";

/// A small PRNG (xorshift64*), so the vectors are the same on every run.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_f491_4f6c_dd1d)
    }
    fn below(&mut self, n: u64) -> u64 {
        self.next() % n.max(1)
    }
}

fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

/// The policies with guards: GCRA, both fixed windows, the sliding window counter.
fn policies() -> Vec<Policy> {
    let ms = 1_000_000;
    let gcra = |t: u64, burst: u64| Policy::single(AnyAlgorithm::Gcra(Gcra::from_parts(Nanos::new(t), burst).unwrap()));
    let spec = |kind, limit, window: u64| Policy::single(AnyAlgorithm::from_spec(&LimitSpec::new(kind, limit, Nanos::new(window))).unwrap());
    vec![
        gcra(10 * ms, 100),
        gcra(3, 7),
        spec(Kind::FixedWindow, 100, 60_000 * ms),
        spec(Kind::FixedWindowFirstHit, 10, 1_000 * ms),
        spec(Kind::SlidingWindow, 50, 10_000 * ms),
    ]
}

/// One vector: the Lua's inputs and what the core says it returns.
fn vector(out: &mut Vec<String>, expected: &[u8], written: &[u8], current: &[u8], guard: Option<Guard>) {
    let (text, result, moved) = match guard {
        None => (String::new(), None, 0),
        Some(g) => {
            let result = g.apply(expected, written, current);
            // The delta the store finds, when `current` is `expected` with the guard's fields moved.
            let delta = varints(expected).zip(varints(current)).and_then(|(e, c)| {
                let i = (0..e.len().min(c.len())).find(|i| g.fields & (1 << i) != 0)?;
                i64::try_from(c[i] as i128 - e[i] as i128).ok()
            });
            let moved = match (&result, delta) {
                (Some(_), Some(d)) if g.fields & (1 << EXPIRY_FIELD) != 0 => g.shift(d),
                _ => 0,
            };
            (format!("{} {} {} {}", g.fields, g.lo, g.hi, g.knee), result, moved)
        }
    };
    let result = result.map_or("null".to_string(), |r| format!("\"{}\"", hex(&r)));
    out.push(format!(
        "{{\"expected\":\"{}\",\"written\":\"{}\",\"current\":\"{}\",\"guard\":\"{text}\",\"out\":{result},\"moved\":{moved}}}",
        hex(expected),
        hex(written),
        hex(current)
    ));
}

/// Every vector: per policy, states reached from several base times (epoch times, times near
/// 2^63 ns, times whose low 28 bits are about to carry) by a few hits, then a batch of one or
/// two hits with its guard, and the bytes at the key moved by chosen deltas.
fn vectors() -> Vec<String> {
    let mut rng = Rng(0x9e37_79b9_7f4a_7c15);
    let mut out = Vec::new();
    let bases = [1_800_000_000_000_000_000u64, (1 << 62) + (1 << 61), (1 << 28) * 7_000_000_000 - 3];
    for policy in policies() {
        for &base in &bases {
            for warm in [1u64, 20] {
                let mut states = [None::<PolicyState>];
                let mut now = base;
                for _ in 0..warm {
                    now += rng.below(50_000_000);
                    policy.check(&mut states, Nanos::new(now), 1).unwrap();
                }
                let Some(expected) = states[0].as_ref().map(PolicyState::encode) else { continue };
                // The batch: one hit, or two whose guards join.
                let mut guard: Option<Guard> = None;
                for i in 0..1 + rng.below(2) {
                    now += rng.below(5_000_000);
                    let (d, g) = check_guarded(&policy, &mut states, Nanos::new(now), 1).unwrap();
                    guard = match (i, d.allowed) {
                        (_, false) => None,
                        (0, true) => g,
                        (_, true) => guard.and_then(|p| g.and_then(|g| p.then(&g))),
                    };
                }
                let written = states[0].as_ref().map(PolicyState::encode).unwrap();
                let Some(g) = guard else {
                    vector(&mut out, &expected, &written, &expected, None);
                    continue;
                };
                let inside = |r: &mut Rng| g.lo + (r.below((g.hi - g.lo) as u64 + 1) as i64);
                let carry = (1i64 << 28) - (varints(&expected).unwrap()[g.fields.trailing_zeros() as usize] % (1 << 28)) as i64;
                let deltas =
                    [0, g.lo, g.hi, g.knee, g.knee - 1, g.knee + 1, g.lo - 1, g.hi + 1, carry, carry - 1, inside(&mut rng), inside(&mut rng)];
                for delta in deltas {
                    if let Some(current) = shift_fields(&expected, g.fields, delta) {
                        vector(&mut out, &expected, &written, &current, Some(g));
                    }
                }
                // Another field moved (the first one the guard does not hold, past the version),
                // and bytes of another length: a plain conflict.
                let other = (1..8).find(|i| g.fields & (1 << i) == 0).unwrap();
                if let Some(current) = shift_fields(&expected, 1 << other, 1) {
                    vector(&mut out, &expected, &written, &current, Some(g));
                }
                vector(&mut out, &expected, &written, &[&expected[..], &[0]].concat(), Some(g));
            }
        }
    }
    out
}

fn file() -> String {
    let mut s = String::from(
        "{\"generatedBy\":\"generated by tests/guard_vectors.rs from the core (src/guard.rs); do not edit: `make contracts` rewrites it\",\n\"vectors\":[\n",
    );
    let v = vectors();
    for (i, line) in v.iter().enumerate() {
        writeln!(s, "{line}{}", if i + 1 < v.len() { "," } else { "" }).unwrap();
    }
    s.push_str("]}\n");
    s
}

#[test]
fn the_guard_vectors_are_current() {
    let path = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join(PATH);
    let want = file();
    if std::env::var("TOLLGATE_CONTRACTS").is_ok_and(|v| v == "write") {
        std::fs::write(&path, &want).unwrap();
        return;
    }
    let have = std::fs::read_to_string(&path).unwrap_or_default();
    assert!(have == want, "{PATH} is not what the core writes now: regenerate it with `make contracts`");
}

#[test]
fn the_vectors_hold_both_outcomes_for_every_policy() {
    let v = vectors();
    let applied = v.iter().filter(|l| !l.contains("\"out\":null")).count();
    let moved = v.iter().filter(|l| !l.ends_with("\"moved\":0}")).count();
    assert!(applied > 50 && v.len() - applied > 50 && moved > 10, "{applied} applied, {moved} moved the expiry, of {}", v.len());
}
