//! Error messages built from text and whole numbers without `core::fmt`: `format!` pulls the
//! formatting machinery (and for floats, Rust's float printing) into the wasm module, which
//! was kilobytes of it (docs/benchmarks.md, wasm size). Used by both wasm modules.

use alloc::string::String;

/// A message being built: `Msg::new("limit ").n(5).s(" is above ...")`. Every step is
/// `#[inline(never)]`: these are cold error paths, and inlined at the limiter's opt-level 3
/// each chain grew the module more than `format!` did.
pub struct Msg(pub String);

impl Msg {
    #[inline(never)]
    pub fn new(text: &str) -> Msg {
        Msg(String::from(text))
    }

    /// Appends text.
    #[inline(never)]
    pub fn s(mut self, text: &str) -> Msg {
        self.0.push_str(text);
        self
    }

    /// Appends text in double quotes.
    #[inline(never)]
    pub fn q(mut self, text: &str) -> Msg {
        self.0.push('"');
        self.0.push_str(text);
        self.0.push('"');
        self
    }

    /// Appends a whole number in decimal.
    #[inline(never)]
    pub fn n(mut self, n: u64) -> Msg {
        push_u64(&mut self.0, n);
        self
    }

    /// Appends a duration of `ns` nanoseconds as the core's `Nanos` displays it (`300ms`,
    /// `1s`): the units users write, not raw nanoseconds.
    #[inline(never)]
    pub fn d(mut self, ns: u64) -> Msg {
        let (n, unit) = tollgate::Nanos::new(ns).in_whole_unit();
        push_u64(&mut self.0, n);
        self.0.push_str(unit);
        self
    }
}

/// Appends `n` in decimal.
#[inline(never)]
pub fn push_u64(out: &mut String, mut n: u64) {
    let mut digits = [0u8; 20];
    let mut i = digits.len();
    loop {
        i -= 1;
        digits[i] = b'0' + (n % 10) as u8;
        n /= 10;
        if n == 0 {
            break;
        }
    }
    for &d in &digits[i..] {
        out.push(d as char);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn numbers_and_text() {
        for n in [0u64, 7, 10, 1_000_000, u64::MAX] {
            assert_eq!(Msg::new("").n(n).0, alloc::format!("{n}"));
        }
        assert_eq!(Msg::new("a ").q("b").s(" c").0, "a \"b\" c");
        for ns in [0u64, 1, 1_500, 3_000, 250_000_000, 60_000_000_000, u64::MAX] {
            assert_eq!(Msg::new("").d(ns).0, alloc::format!("{}", tollgate::Nanos::new(ns)));
        }
    }
}
