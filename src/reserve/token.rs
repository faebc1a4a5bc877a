//! The reservation an edge hands its caller: opaque, a string that crosses a process.
//!
//! ```text
//! token   = base64url(bytes), no padding
//! bytes   = 1 (version)  id:varint  estimate:varint  policy:str  keys:varint  key:str*
//! str     = len:varint  utf8
//! ```

use alloc::string::String;
use alloc::vec::Vec;

use crate::codec::{put, Reader};
use crate::reserve::SettleError;

/// The version byte of the reservation encoding this build writes and reads.
pub const TOKEN_VERSION: u8 = 1;

/// The most keys a reservation names (a policy's keys per hit).
const MAX_KEYS: u64 = 16;
/// The longest key or policy name a reservation holds, in bytes.
const MAX_STR: u64 = 1024;

/// A reservation: what settling needs besides the actual cost.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Reservation {
    /// The id drawn at reservation, open in every key's ledger until settled.
    pub id: u64,
    /// The units charged.
    pub estimate: u64,
    /// The policy's name where an edge decides by several (the Worker); empty otherwise.
    pub policy: String,
    /// The keys reserved on, all or nothing.
    pub keys: Vec<String>,
}

impl Reservation {
    /// The bytes of the reservation.
    pub fn encode(&self) -> Vec<u8> {
        let mut out = Vec::with_capacity(24 + self.keys.iter().map(String::len).sum::<usize>());
        out.push(TOKEN_VERSION);
        put(&mut out, self.id);
        put(&mut out, self.estimate);
        put_names(&mut out, &self.policy, &self.keys);
        out
    }

    /// Reads bytes written by [`encode`](Reservation::encode).
    pub fn decode(bytes: &[u8]) -> Result<Reservation, SettleError> {
        let bad = |_| SettleError::InvalidReservation("the bytes are not a reservation");
        let mut r = Reader::new(bytes);
        if r.byte().map_err(bad)? != TOKEN_VERSION {
            return Err(SettleError::InvalidReservation("unknown version"));
        }
        let id = r.varint().map_err(bad)?;
        let estimate = r.varint().map_err(bad)?;
        let (policy, keys) = take_names(&mut r).map_err(|why| SettleError::InvalidReservation(why.unwrap_or(NOT)))?;
        r.finish().map_err(bad)?;
        if estimate == 0 || keys.is_empty() {
            return Err(SettleError::InvalidReservation("no estimate or no key"));
        }
        Ok(Reservation { id, estimate, policy, keys })
    }

    /// The token: [`encode`](Reservation::encode) in base64url without padding.
    pub fn to_token(&self) -> String {
        base64url(&self.encode())
    }

    /// Reads a token written by [`to_token`](Reservation::to_token).
    pub fn from_token(token: &str) -> Result<Reservation, SettleError> {
        let bytes = from_base64url(token).ok_or(SettleError::InvalidReservation("not base64url"))?;
        Reservation::decode(&bytes)
    }
}

const NOT: &str = "the bytes are not a reservation";

fn put_str(out: &mut Vec<u8>, s: &str) {
    put(out, s.len() as u64);
    out.extend_from_slice(s.as_bytes());
}

/// The names every token ends with (a reservation's, a lease's): `policy:str keys:varint
/// key:str*`.
pub(crate) fn put_names(out: &mut Vec<u8>, policy: &str, keys: &[String]) {
    put_str(out, policy);
    put(out, keys.len() as u64);
    for k in keys {
        put_str(out, k);
    }
}

/// Reads what [`put_names`] wrote: `Err(None)` for bytes that are not names, `Err(Some(why))`
/// for a name that is not UTF-8.
pub(crate) fn take_names(r: &mut Reader<'_>) -> Result<(String, Vec<String>), Option<&'static str>> {
    let policy = take_str(r)?;
    let n = r.len(MAX_KEYS).map_err(|_| None)?;
    let mut keys = Vec::with_capacity(n);
    for _ in 0..n {
        keys.push(take_str(r)?);
    }
    Ok((policy, keys))
}

fn take_str(r: &mut Reader<'_>) -> Result<String, Option<&'static str>> {
    let n = r.len(MAX_STR).map_err(|_| None)?;
    let bytes = r.take(n).map_err(|_| None)?;
    core::str::from_utf8(bytes).map(String::from).map_err(|_| Some("a key is not UTF-8"))
}

const ALPHABET: &[u8; 64] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_";

pub(crate) fn base64url(bytes: &[u8]) -> String {
    let mut out = String::with_capacity(bytes.len().div_ceil(3) * 4);
    for chunk in bytes.chunks(3) {
        let n = chunk.iter().enumerate().fold(0u32, |n, (i, &b)| n | (b as u32) << (16 - 8 * i));
        for i in 0..=chunk.len() {
            out.push(ALPHABET[(n >> (18 - 6 * i) & 63) as usize] as char);
        }
    }
    out
}

pub(crate) fn from_base64url(s: &str) -> Option<Vec<u8>> {
    if s.len() % 4 == 1 || s.len() > 4 * 1024 {
        return None;
    }
    let mut out = Vec::with_capacity(s.len() * 3 / 4);
    for chunk in s.as_bytes().chunks(4) {
        let mut n = 0u32;
        for (i, &c) in chunk.iter().enumerate() {
            let v = ALPHABET.iter().position(|&a| a == c)? as u32;
            n |= v << (18 - 6 * i);
        }
        for i in 0..chunk.len() - 1 {
            out.push((n >> (16 - 8 * i)) as u8);
        }
    }
    // Only the canonical encoding: re-encoding gives the same text.
    (base64url(&out) == s).then_some(out)
}

#[cfg(test)]
mod tests {
    use super::*;
    use alloc::string::ToString;

    #[test]
    fn a_token_round_trips_and_anything_else_is_refused() {
        let r = Reservation {
            id: u64::MAX,
            estimate: 800,
            policy: "llm".to_string(),
            keys: alloc::vec!["k:é".to_string(), "b".to_string()],
        };
        let t = r.to_token();
        assert!(t.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'-' || b == b'_'));
        assert_eq!(Reservation::from_token(&t), Ok(r.clone()));
        for bad in ["", "A", "!!!!", &t[..t.len() - 1]] {
            assert!(Reservation::from_token(bad).is_err(), "{bad}");
        }
        let mut bytes = r.encode();
        bytes.push(0);
        assert!(Reservation::decode(&bytes).is_err());
    }
}
