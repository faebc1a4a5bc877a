//! What the Rust benchmarks share: the key space and the key sequence of the workloads over
//! many keys (W2 in `throughput`, `resident` in `headline`), so both draw the same keys.

/// Distinct keys of the many-keys workloads.
pub const KEYS: u64 = 1_000_000;

/// `checks` keys: splitmix64 with a fixed seed, reduced to [`KEYS`] keys.
pub fn keys(checks: u64) -> Vec<u64> {
    let mut x: u64 = 0x005E_ED0F_7011_6A7E;
    (0..checks)
        .map(|_| {
            x = x.wrapping_add(0x9E37_79B9_7F4A_7C15);
            let mut z = x;
            z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
            z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
            (z ^ (z >> 31)) % KEYS
        })
        .collect()
}
