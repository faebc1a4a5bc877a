//! Messages built from text and whole numbers without `core::fmt`.
//!
//! The wasm modules link no `core::fmt` (its machinery, and for floats Rust's float printing,
//! cost them kilobytes), yet the spec parser's errors (`crate::spec`) must read the same in
//! every edge. So the parser, and the wasm layer's own errors, build their text with [`Msg`].

use alloc::string::String;

/// A message being built: `Msg::new("limit ").n(5).s(" is above ...")`. Every step is
/// `#[inline(never)]`: these are cold error paths, and inlined into hot callers each chain
/// grows a module more than `format!` would.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Msg(pub String);

impl Msg {
    /// Starts with `text`.
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

    /// Appends a duration of `ns` nanoseconds as a quota string writes it (`300ms`, `1s`):
    /// the units users write, never raw nanoseconds.
    #[inline(never)]
    pub fn d(mut self, ns: u64) -> Msg {
        let (n, unit) = crate::Nanos::new(ns).in_whole_unit();
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
            assert_eq!(Msg::new("").d(ns).0, alloc::format!("{}", crate::Nanos::new(ns)));
        }
    }
}
