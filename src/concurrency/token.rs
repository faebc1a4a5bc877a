//! The lease an edge hands its caller: opaque, a string that crosses a process (as a
//! reservation's token does, `crate::reserve`).
//!
//! ```text
//! token   = base64url(bytes), no padding
//! bytes   = 0x4c (version)  id:varint  policy:str  keys:varint  key:str*
//! str     = len:varint  utf8
//! ```

use alloc::string::String;
use alloc::vec::Vec;

use crate::codec::{put, Reader};
use crate::concurrency::LeaseError;
use crate::reserve::token::{base64url, from_base64url, put_names, take_names};

/// The version byte of the lease encoding this build writes and reads (`L`: no reservation
/// token starts with it, so one is never read as the other).
pub const LEASE_TOKEN_VERSION: u8 = 0x4c;


/// A lease: what releasing or renewing it needs.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct LeaseToken {
    /// The id drawn at acquisition (never 0), live in every key's concurrency limits until
    /// released or expired.
    pub id: u64,
    /// The policy's name where an edge decides by several (the Worker); empty otherwise.
    pub policy: String,
    /// The keys acquired on, all or nothing.
    pub keys: Vec<String>,
}

impl LeaseToken {
    /// The bytes of the lease.
    pub fn encode(&self) -> Vec<u8> {
        let mut out = Vec::with_capacity(16 + self.keys.iter().map(String::len).sum::<usize>());
        out.push(LEASE_TOKEN_VERSION);
        put(&mut out, self.id);
        put_names(&mut out, &self.policy, &self.keys);
        out
    }

    /// Reads bytes written by [`encode`](LeaseToken::encode).
    pub fn decode(bytes: &[u8]) -> Result<LeaseToken, LeaseError> {
        let bad = |_| LeaseError::InvalidLease("the bytes are not a lease");
        let mut r = Reader::new(bytes);
        if r.byte().map_err(bad)? != LEASE_TOKEN_VERSION {
            return Err(LeaseError::InvalidLease("not a lease of this version"));
        }
        let id = r.varint().map_err(bad)?;
        let (policy, keys) =
            take_names(&mut r).map_err(|why| LeaseError::InvalidLease(why.unwrap_or("the bytes are not a lease")))?;
        r.finish().map_err(bad)?;
        if id == 0 || keys.is_empty() {
            return Err(LeaseError::InvalidLease("no id or no key"));
        }
        Ok(LeaseToken { id, policy, keys })
    }

    /// The token: [`encode`](LeaseToken::encode) in base64url without padding.
    pub fn to_token(&self) -> String {
        base64url(&self.encode())
    }

    /// Reads a token written by [`to_token`](LeaseToken::to_token).
    pub fn from_token(token: &str) -> Result<LeaseToken, LeaseError> {
        let bytes = from_base64url(token).ok_or(LeaseError::InvalidLease("not base64url"))?;
        LeaseToken::decode(&bytes)
    }
}


#[cfg(test)]
mod tests {
    use super::*;
    use alloc::string::ToString;

    #[test]
    fn a_lease_round_trips_and_anything_else_is_refused() {
        let l = LeaseToken { id: u64::MAX, policy: "llm".to_string(), keys: alloc::vec!["k:é".to_string(), "b".to_string()] };
        let t = l.to_token();
        assert_eq!(LeaseToken::from_token(&t), Ok(l.clone()));
        for bad in ["", "A", "!!!!", &t[..t.len() - 1]] {
            assert!(LeaseToken::from_token(bad).is_err(), "{bad}");
        }
        let reservation = crate::reserve::Reservation { id: 7, estimate: 1, policy: "".to_string(), keys: alloc::vec!["a".to_string()] };
        assert!(LeaseToken::from_token(&reservation.to_token()).is_err());
        let zero = LeaseToken { id: 0, ..l };
        assert!(LeaseToken::decode(&zero.encode()).is_err());
    }
}
