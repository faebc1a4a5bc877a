//! A compact, versioned encoding of one key's state, for Durable Object storage, Redis and
//! sync messages.
//!
//! ```text
//! policy state  = 1  expires_at:varint  slots:varint  slot*
//!               | 2  expires_at:varint  blocked_until:varint  slots:varint  slot*
//!               | 3  expires_at:varint  blocked_until:varint  slots:varint  slot*  open:varint  entry*
//!               | 4  expires_at:varint  blocked_until:varint  strikes:varint  slots:varint  slot*  open:varint  entry*
//! entry         = id estimate reserved_at until mark*  (one mark per slot; crate::reserve)
//! slot          = 0                                   (fresh)
//!               | tag:u8 fields                       (tag 1..=7, see below)
//! fixed window           1  start count
//! fixed window first-hit 2  start count
//! sliding log            3  n  at0 cost0 (dat cost)*  (dat > 0: time since the previous entry)
//! sliding window         4  start current previous
//! sliding buckets        5  newest n count*
//! token bucket           6  tokens anchor
//! gcra                   7  tat
//! concurrency            8  n  (id expires_at)*   (the leases, in the order taken)
//! ```
//!
//! Version 2 is written only for a key blocked by a penalty (crate::penalty), version 3
//! only for a key with open reservations (crate::reserve), and version 4 only for a key whose
//! block has doubled (`strikes`, crate::penalty's `exponentialBackoff`; its `open` may be
//! zero), so that every other state keeps its version-1 bytes (stored states and the
//! equivalence fixtures stay valid); all four versions are read.
//!
//! Every integer is an unsigned LEB128 varint (at most 10 bytes); times are nanoseconds since
//! the epoch. A GCRA key is typically 12 bytes. Decoding never panics: truncated, overlong,
//! out-of-order or trailing input is a [`DecodeError`], and
//! [`Policy::validate_state`](crate::policy::Policy::validate_state) then checks the state
//! against the configuration reading it (shape, and bounds that keep memory and admissions
//! in check).

use alloc::collections::VecDeque;
use alloc::vec::Vec;

use crate::algorithm::Algorithm;
use crate::algorithms::{
    AnyAlgorithm, AnyState, FirstHitState, FixedWindowState, GcraState, Kind, LogEntry, SlidingBucketsState,
    SlidingLogState, SlidingWindowState, TokenBucketState, MAX_BUCKETS, MAX_LOG_LIMIT,
};
use crate::error::DecodeError;
use crate::policy_state::{policy_state, Open, PolicyState, MAX_LIMITS, MAX_OPEN};
use crate::time::Nanos;

/// The format version this build writes for a state without a penalty block.
pub const FORMAT_VERSION: u8 = 1;
/// The format version of a state that carries a penalty block (`blocked_until`).
pub const FORMAT_VERSION_BLOCKED: u8 = 2;
/// The format version of a state with open reservations (and a penalty block, zero if none).
pub const FORMAT_VERSION_RESERVED: u8 = 3;
/// The format version of a state whose penalty block has taken strikes (and any reservations).
pub const FORMAT_VERSION_STRIKES: u8 = 4;

fn tag(kind: Kind) -> u8 {
    match kind {
        Kind::FixedWindow => 1,
        Kind::FixedWindowFirstHit => 2,
        Kind::SlidingLog => 3,
        Kind::SlidingWindow => 4,
        Kind::SlidingBuckets => 5,
        Kind::TokenBucket => 6,
        Kind::Gcra => 7,
        #[cfg(feature = "concurrency")]
        Kind::Concurrency => 8,
    }
}

pub(crate) fn put(out: &mut Vec<u8>, mut v: u64) {
    while v >= 0x80 {
        out.push((v as u8) | 0x80);
        v >>= 7;
    }
    out.push(v as u8);
}

/// Reads from a byte slice, never past its end.
pub(crate) struct Reader<'a> {
    bytes: &'a [u8],
}

impl<'a> Reader<'a> {
    pub(crate) fn new(bytes: &'a [u8]) -> Reader<'a> {
        Reader { bytes }
    }

    /// The next `n` bytes.
    pub(crate) fn take(&mut self, n: usize) -> Result<&'a [u8], DecodeError> {
        if self.bytes.len() < n {
            return Err(DecodeError::Truncated);
        }
        let (head, rest) = self.bytes.split_at(n);
        self.bytes = rest;
        Ok(head)
    }

    /// Succeeds only when every byte was read.
    pub(crate) fn finish(&self) -> Result<(), DecodeError> {
        if self.bytes.is_empty() {
            Ok(())
        } else {
            Err(DecodeError::TrailingBytes)
        }
    }

    pub(crate) fn byte(&mut self) -> Result<u8, DecodeError> {
        let (&b, rest) = self.bytes.split_first().ok_or(DecodeError::Truncated)?;
        self.bytes = rest;
        Ok(b)
    }

    pub(crate) fn varint(&mut self) -> Result<u64, DecodeError> {
        let mut v: u64 = 0;
        for shift in (0..64).step_by(7) {
            let b = self.byte()?;
            let bits = (b & 0x7f) as u64;
            if shift == 63 && bits > 1 {
                return Err(DecodeError::Overflow);
            }
            v |= bits << shift;
            if b & 0x80 == 0 {
                return Ok(v);
            }
        }
        Err(DecodeError::Overflow)
    }

    pub(crate) fn time(&mut self) -> Result<Nanos, DecodeError> {
        self.varint().map(Nanos::new)
    }

    /// A length that cannot exceed `max` (so a corrupt length never allocates much).
    pub(crate) fn len(&mut self, max: u64) -> Result<usize, DecodeError> {
        let n = self.varint()?;
        if n > max {
            return Err(DecodeError::Invalid("length above the largest a state can have"));
        }
        Ok(n as usize)
    }
}

/// Appends the encoding of one algorithm state (tag and fields).
pub fn encode_state(state: &AnyState, out: &mut Vec<u8>) {
    match state {
        // A concurrency state with waiters in line is tag 9 (its tickets follow the leases);
        // without, tag 8 as before.
        #[cfg(feature = "concurrency")]
        AnyState::Concurrency(s) if !s.queue.is_empty() => out.push(9),
        _ => out.push(tag(state.kind())),
    }
    match state {
        AnyState::FixedWindow(s) => {
            put(out, s.start.as_nanos());
            put(out, s.count);
        }
        AnyState::FixedWindowFirstHit(s) => {
            put(out, s.start.as_nanos());
            put(out, s.count);
        }
        AnyState::SlidingLog(s) => {
            put(out, s.entries.len() as u64);
            let mut previous = Nanos::ZERO;
            for e in &s.entries {
                put(out, (e.at - previous).as_nanos());
                put(out, e.cost);
                previous = e.at;
            }
        }
        AnyState::SlidingWindow(s) => {
            put(out, s.start.as_nanos());
            put(out, s.current);
            put(out, s.previous);
        }
        AnyState::SlidingBuckets(s) => {
            put(out, s.newest);
            put(out, s.counts.len() as u64);
            for &c in &s.counts {
                put(out, c);
            }
        }
        AnyState::TokenBucket(s) => {
            put(out, s.tokens);
            put(out, s.anchor.as_nanos());
        }
        AnyState::Gcra(s) => put(out, s.tat.as_nanos()),
        #[cfg(feature = "concurrency")]
        AnyState::Concurrency(s) => {
            put(out, s.leases.len() as u64);
            for l in &s.leases {
                put(out, l.id);
                put(out, l.expires_at.as_nanos());
            }
            if !s.queue.is_empty() {
                put(out, s.queue.len() as u64);
                for t in &s.queue {
                    put(out, t.id);
                    put(out, t.alive_until.as_nanos());
                    put(out, t.deadline.as_nanos());
                }
            }
        }
    }
}

fn decode_state_from(r: &mut Reader<'_>, tag_byte: u8) -> Result<AnyState, DecodeError> {
    Ok(match tag_byte {
        1 => AnyState::FixedWindow(FixedWindowState { start: r.time()?, count: r.varint()? }),
        2 => AnyState::FixedWindowFirstHit(FirstHitState { start: r.time()?, count: r.varint()? }),
        3 => {
            let n = r.len(MAX_LOG_LIMIT)?;
            let mut entries = VecDeque::with_capacity(n);
            let mut at = Nanos::ZERO;
            for i in 0..n {
                let delta = r.varint()?;
                if i > 0 && delta == 0 {
                    return Err(DecodeError::Invalid("sliding log entries out of order"));
                }
                at = Nanos::new(at.as_nanos().checked_add(delta).ok_or(DecodeError::Overflow)?);
                let cost = r.varint()?;
                if cost == 0 {
                    return Err(DecodeError::Invalid("sliding log entry of cost 0"));
                }
                entries.push_back(LogEntry { at, cost });
            }
            AnyState::SlidingLog(SlidingLogState::from_entries(entries))
        }
        4 => AnyState::SlidingWindow(SlidingWindowState {
            start: r.time()?,
            current: r.varint()?,
            previous: r.varint()?,
        }),
        5 => {
            let newest = r.varint()?;
            let n = r.len(MAX_BUCKETS)?;
            if n as u64 > newest.saturating_add(1) || n == 0 {
                return Err(DecodeError::Invalid("bucket counts do not fit their index"));
            }
            let mut counts = VecDeque::with_capacity(n);
            for _ in 0..n {
                counts.push_back(r.varint()?);
            }
            AnyState::SlidingBuckets(SlidingBucketsState { newest, counts })
        }
        6 => AnyState::TokenBucket(TokenBucketState { tokens: r.varint()?, anchor: r.time()? }),
        7 => AnyState::Gcra(GcraState { tat: r.time()? }),
        #[cfg(feature = "concurrency")]
        8 | 9 => {
            use crate::algorithms::{ConcurrencyState, HeldLease, Ticket, MAX_CONCURRENCY, MAX_QUEUE};
            let n = r.len(MAX_CONCURRENCY)?;
            let mut leases = Vec::with_capacity(n);
            for _ in 0..n {
                leases.push(HeldLease { id: r.varint()?, expires_at: r.time()? });
            }
            let mut queue = Vec::new();
            if tag_byte == 9 {
                let m = r.len(MAX_QUEUE)?;
                if m == 0 {
                    return Err(DecodeError::Invalid("an empty line is written as tag 8"));
                }
                queue.reserve(m);
                for _ in 0..m {
                    queue.push(Ticket { id: r.varint()?, alive_until: r.time()?, deadline: r.time()? });
                }
            }
            AnyState::Concurrency(ConcurrencyState { leases, queue })
        }
        other => return Err(DecodeError::UnknownTag(other)),
    })
}

/// Decodes one algorithm state written by [`encode_state`].
pub fn decode_state(bytes: &[u8]) -> Result<AnyState, DecodeError> {
    let mut r = Reader { bytes };
    let t = r.byte()?;
    let state = decode_state_from(&mut r, t)?;
    if !r.bytes.is_empty() {
        return Err(DecodeError::TrailingBytes);
    }
    Ok(state)
}

impl PolicyState {
    /// The versioned encoding of this key's state.
    ///
    /// ```
    /// use tollgate::{AnyAlgorithm, Gcra, Nanos, Quota};
    /// use tollgate::policy::{Policy, PolicyState};
    /// let policy = Policy::single(AnyAlgorithm::Gcra(Gcra::new(Quota::per_second(10).unwrap()).unwrap()));
    /// let mut states = [None];
    /// policy.check(&mut states, Nanos::from_secs(1_700_000_000), 1).unwrap();
    /// let bytes = states[0].as_ref().unwrap().encode();
    /// assert!(bytes.len() <= 24);
    /// let back = PolicyState::decode(&bytes).unwrap();
    /// policy.validate_state(&back).unwrap();
    /// assert_eq!(Some(back), states[0]);
    /// assert!(PolicyState::decode(&bytes[..bytes.len() - 1]).is_err());
    /// ```
    pub fn encode(&self) -> Vec<u8> {
        let mut out = Vec::with_capacity(16);
        let struck = self.strikes > 0;
        let reserved = !self.open.is_empty() || struck;
        let blocked = self.blocked_until > Nanos::ZERO || reserved;
        out.push(if struck {
            FORMAT_VERSION_STRIKES
        } else if reserved {
            FORMAT_VERSION_RESERVED
        } else if blocked {
            FORMAT_VERSION_BLOCKED
        } else {
            FORMAT_VERSION
        });
        put(&mut out, self.expires_at.as_nanos());
        if blocked {
            put(&mut out, self.blocked_until.as_nanos());
        }
        if struck {
            put(&mut out, u64::from(self.strikes));
        }
        put(&mut out, self.slots.len() as u64);
        for slot in &self.slots {
            match slot {
                None => out.push(0),
                Some(s) => encode_state(s, &mut out),
            }
        }
        if reserved {
            put(&mut out, self.open.len() as u64);
            for o in &self.open {
                for v in [o.id, o.estimate, o.reserved_at.as_nanos(), o.until.as_nanos()] {
                    put(&mut out, v);
                }
                for m in &o.marks {
                    put(&mut out, m.as_nanos());
                }
            }
        }
        out
    }

    /// Reads bytes written by [`encode`](PolicyState::encode).
    pub fn decode(bytes: &[u8]) -> Result<PolicyState, DecodeError> {
        let mut r = Reader { bytes };
        let version = r.byte()?;
        if !(FORMAT_VERSION..=FORMAT_VERSION_STRIKES).contains(&version) {
            return Err(DecodeError::UnknownVersion(version));
        }
        let expires_at = r.time()?;
        // A block past the state's expiry ends with it: stores drop the key at its expiry.
        let blocked_until = if version >= FORMAT_VERSION_BLOCKED { r.time()?.min(expires_at) } else { Nanos::ZERO };
        let strikes = if version == FORMAT_VERSION_STRIKES {
            match r.len(u64::from(u32::MAX))? {
                0 => return Err(DecodeError::Invalid("a state of strikes without a strike")),
                n => n as u32,
            }
        } else {
            0
        };
        let n = r.len(MAX_LIMITS as u64)?;
        let mut slots = Vec::with_capacity(n);
        for _ in 0..n {
            let t = r.byte()?;
            slots.push(if t == 0 { None } else { Some(decode_state_from(&mut r, t)?) });
        }
        let mut open = Vec::new();
        if version >= FORMAT_VERSION_RESERVED {
            let k = r.len(MAX_OPEN as u64)?;
            if k == 0 && version == FORMAT_VERSION_RESERVED {
                return Err(DecodeError::Invalid("a reserved state without a reservation"));
            }
            for _ in 0..k {
                let (id, estimate, reserved_at) = (r.varint()?, r.varint()?, r.time()?);
                // A reservation open past the state's expiry closes with it.
                let until = r.time()?.min(expires_at);
                let marks = (0..n).map(|_| r.time()).collect::<Result<Vec<_>, _>>()?;
                open.push(Open { id, estimate, reserved_at, until, marks });
            }
        }
        if !r.bytes.is_empty() {
            return Err(DecodeError::TrailingBytes);
        }
        let mut state = policy_state(slots, expires_at);
        state.blocked_until = blocked_until;
        state.strikes = strikes;
        state.open = open;
        Ok(state)
    }
}

/// Checks one decoded state against its algorithm: same algorithm, and within the bounds
/// that keep memory and admissions in check (a log no longer than twice the limit, since a
/// settlement's debt adds one entry of at most one limit to a full log; no more tokens than
/// the capacity, no more buckets than the window has).
pub fn validate_state(algorithm: &AnyAlgorithm, state: &AnyState) -> Result<(), DecodeError> {
    if algorithm.kind() != state.kind() {
        return Err(DecodeError::AlgorithmMismatch { expected: algorithm.kind().name(), found: state.kind().name() });
    }
    match (algorithm, state) {
        (AnyAlgorithm::SlidingLog(a), AnyState::SlidingLog(s)) if s.entries.len() as u64 > 2 * a.limit() => {
            Err(DecodeError::Invalid("more log entries than twice the limit"))
        }
        (AnyAlgorithm::SlidingBuckets(a), AnyState::SlidingBuckets(s)) if s.counts.len() as u64 > a.bucket_count() => {
            Err(DecodeError::Invalid("more buckets than the window has"))
        }
        (AnyAlgorithm::TokenBucket(a), AnyState::TokenBucket(s)) if s.tokens > a.limit() => {
            Err(DecodeError::Invalid("more tokens than the capacity"))
        }
        #[cfg(feature = "concurrency")]
        (AnyAlgorithm::Concurrency(a), AnyState::Concurrency(s)) if s.leases.len() as u64 > a.limit() => {
            Err(DecodeError::Invalid("more leases than the concurrency limit"))
        }
        _ => Ok(()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn varints_round_trip_at_the_edges() {
        for v in [0, 1, 127, 128, 16_383, 16_384, u32::MAX as u64, u64::MAX - 1, u64::MAX] {
            let mut out = Vec::new();
            put(&mut out, v);
            assert_eq!(Reader { bytes: &out }.varint(), Ok(v));
        }
    }

    #[test]
    fn overlong_varints_are_errors() {
        assert_eq!(Reader { bytes: &[0xff; 11] }.varint(), Err(DecodeError::Overflow));
        assert_eq!(
            Reader { bytes: &[0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x02] }.varint(),
            Err(DecodeError::Overflow)
        );
        assert_eq!(Reader { bytes: &[0x80] }.varint(), Err(DecodeError::Truncated));
    }

    #[test]
    fn a_blocked_state_round_trips_and_an_unblocked_one_keeps_version_1() {
        use crate::algorithms::GcraState;
        let mut state =
            policy_state(alloc::vec![Some(AnyState::Gcra(GcraState { tat: Nanos::new(5) }))], Nanos::new(9));
        assert_eq!(state.encode()[0], FORMAT_VERSION);
        assert_eq!(PolicyState::decode(&state.encode()), Ok(state.clone()));
        state.blocked_until = Nanos::new(8);
        let bytes = state.encode();
        assert_eq!(bytes[0], FORMAT_VERSION_BLOCKED);
        assert_eq!(PolicyState::decode(&bytes), Ok(state.clone()));
        for cut in 0..bytes.len() {
            assert!(PolicyState::decode(&bytes[..cut]).is_err());
        }
        state.blocked_until = Nanos::new(10); // after the state's expiry: it ends with the state
        assert_eq!(PolicyState::decode(&state.encode()).unwrap().blocked_until, Nanos::new(9));
    }

    #[test]
    fn a_huge_length_is_refused_before_allocating() {
        let mut bytes = alloc::vec![FORMAT_VERSION, 0, 1, 3];
        put(&mut bytes, u64::MAX);
        assert!(PolicyState::decode(&bytes).is_err());
    }
}
