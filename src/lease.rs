//! Leased shares of a capacity (notes, section 4): uncoordinated workers share one capacity
//! by splitting it into partitions (500/s as 20 partitions of 25/s) and taking time-limited
//! exclusive leases on them. A worker's allowed rate is the sum of its partitions; when a
//! lease expires it must slow down, and a crashed worker's partitions come back after the TTL.
//!
//! [`LeasePool`] is the pool's state machine, pure like the rest of the core: the Worker keeps
//! one per pool in a Durable Object (which serializes requests), and a worker's [`Pacer`]
//! follows the rate it is granted.
//!
//! [`Pacer`]: crate::pacer::Pacer

use alloc::boxed::Box;
use alloc::string::ToString;
use alloc::vec::Vec;

use crate::error::{ConfigError, DecodeError};
use crate::quota::MAX_WINDOW;
use crate::time::Nanos;

/// The most partitions a pool may have.
pub const MAX_PARTITIONS: u32 = 1024;

/// The longest holder name, in bytes.
pub const MAX_HOLDER_LEN: usize = 128;

/// One partition's lease.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Lease {
    /// Who holds it.
    pub holder: Box<str>,
    /// When it lapses.
    pub expires_at: Nanos,
}

/// What a holder has after a grant or renewal.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Grant {
    /// The partitions held (indices).
    pub partitions: Vec<u32>,
    /// When they lapse unless renewed.
    pub expires_at: Nanos,
    /// The holder's allowed rate: partitions x the partition rate, units per `window`.
    pub rate: u64,
}

/// Why a lease request was refused.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum LeaseError {
    /// The holder name is empty or longer than [`MAX_HOLDER_LEN`].
    BadHolder,
    /// Zero partitions asked for.
    ZeroPartitions,
    /// A TTL of zero or longer than the longest window.
    BadTtl,
    /// Renewing or releasing a holder that holds nothing (its leases lapsed).
    NotHeld,
}

impl core::fmt::Display for LeaseError {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        match self {
            LeaseError::BadHolder => write!(f, "holder must be 1 to {MAX_HOLDER_LEN} bytes"),
            LeaseError::ZeroPartitions => write!(f, "ask for at least one partition"),
            LeaseError::BadTtl => write!(f, "ttl must be longer than zero and at most 366 days"),
            LeaseError::NotHeld => write!(f, "this holder holds no lease (it may have expired)"),
        }
    }
}

impl core::error::Error for LeaseError {}

/// A capacity of `partitions x partition_rate` units per `window`, leased by partition.
///
/// ```
/// use tollgate::lease::LeasePool;
/// use tollgate::Nanos;
/// // 500/s as 20 partitions of 25/s.
/// let mut pool = LeasePool::new(20, 25, Nanos::from_secs(1)).unwrap();
/// let t = Nanos::from_secs(1_000);
/// let a = pool.grant("worker-a", 12, Nanos::from_secs(15), t).unwrap();
/// let b = pool.grant("worker-b", 12, Nanos::from_secs(15), t).unwrap();
/// assert_eq!((a.rate, b.rate), (300, 200)); // b got the 8 that were left
/// // a crashes; after the TTL its partitions are free again.
/// let b = pool.grant("worker-b", 12, Nanos::from_secs(15), t + Nanos::from_secs(16)).unwrap();
/// assert_eq!(b.rate, 300);
/// ```
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct LeasePool {
    partition_rate: u64,
    window: Nanos,
    leases: Vec<Option<Lease>>,
}

impl LeasePool {
    /// A pool of `partitions` partitions of `partition_rate` units per `window` each.
    pub fn new(partitions: u32, partition_rate: u64, window: Nanos) -> Result<LeasePool, ConfigError> {
        if partitions == 0 || partitions > MAX_PARTITIONS {
            return Err(ConfigError::LimitTooLarge { limit: partitions as u64, max: MAX_PARTITIONS as u64 });
        }
        crate::quota::check_limit(partition_rate)?;
        crate::quota::check_window(window)?;
        Ok(LeasePool { partition_rate, window, leases: alloc::vec![None; partitions as usize] })
    }

    /// How many partitions the pool has.
    pub fn partitions(&self) -> u32 {
        self.leases.len() as u32
    }

    /// Units per window each partition carries.
    pub fn partition_rate(&self) -> u64 {
        self.partition_rate
    }

    /// The window the rates are per.
    pub fn window(&self) -> Nanos {
        self.window
    }

    /// Frees every lease that has lapsed at `now`; returns how many partitions came back.
    pub fn expire(&mut self, now: Nanos) -> usize {
        let mut freed = 0;
        for slot in self.leases.iter_mut() {
            if slot.as_ref().is_some_and(|l| l.expires_at <= now) {
                *slot = None;
                freed += 1;
            }
        }
        freed
    }

    /// The partitions `holder` holds at `now`.
    pub fn held_by(&self, holder: &str, now: Nanos) -> Vec<u32> {
        (0..self.partitions())
            .filter(|&i| self.leases[i as usize].as_ref().is_some_and(|l| &*l.holder == holder && l.expires_at > now))
            .collect()
    }

    /// Free partitions at `now`.
    pub fn free(&self, now: Nanos) -> u32 {
        self.leases.iter().filter(|l| l.as_ref().is_none_or(|l| l.expires_at <= now)).count() as u32
    }

    fn grant_of(&self, holder: &str, now: Nanos) -> Grant {
        let partitions = self.held_by(holder, now);
        let expires_at =
            partitions.first().and_then(|&i| self.leases[i as usize].as_ref()).map_or(now, |l| l.expires_at);
        let rate = self.partition_rate * partitions.len() as u64;
        Grant { partitions, expires_at, rate }
    }

    /// Gives `holder` up to `want` partitions in all until `now + ttl`: it keeps (and renews)
    /// what it holds, takes free partitions up to `want`, and returns extras beyond `want`.
    /// A grant of fewer than asked (even none) is not an error: it is all there is.
    pub fn grant(&mut self, holder: &str, want: u32, ttl: Nanos, now: Nanos) -> Result<Grant, LeaseError> {
        check_holder(holder)?;
        if want == 0 {
            return Err(LeaseError::ZeroPartitions);
        }
        if ttl == Nanos::ZERO || ttl > MAX_WINDOW {
            return Err(LeaseError::BadTtl);
        }
        self.expire(now);
        let expires_at = now + ttl;
        let mut held = 0;
        for slot in self.leases.iter_mut() {
            if let Some(l) = slot.as_mut().filter(|l| &*l.holder == holder) {
                if held < want {
                    l.expires_at = expires_at;
                    held += 1;
                } else {
                    *slot = None;
                }
            }
        }
        for slot in self.leases.iter_mut().filter(|s| s.is_none()) {
            if held == want {
                break;
            }
            *slot = Some(Lease { holder: holder.into(), expires_at });
            held += 1;
        }
        Ok(self.grant_of(holder, now))
    }

    /// Extends what `holder` holds until `now + ttl`.
    pub fn renew(&mut self, holder: &str, ttl: Nanos, now: Nanos) -> Result<Grant, LeaseError> {
        check_holder(holder)?;
        if ttl == Nanos::ZERO || ttl > MAX_WINDOW {
            return Err(LeaseError::BadTtl);
        }
        self.expire(now);
        let mut any = false;
        for l in self.leases.iter_mut().flatten().filter(|l| &*l.holder == holder) {
            l.expires_at = now + ttl;
            any = true;
        }
        if !any {
            return Err(LeaseError::NotHeld);
        }
        Ok(self.grant_of(holder, now))
    }

    /// Gives back everything `holder` holds; returns how many partitions.
    pub fn release(&mut self, holder: &str, now: Nanos) -> Result<u32, LeaseError> {
        check_holder(holder)?;
        self.expire(now);
        let mut released = 0;
        for slot in self.leases.iter_mut() {
            if slot.as_ref().is_some_and(|l| &*l.holder == holder) {
                *slot = None;
                released += 1;
            }
        }
        if released == 0 {
            return Err(LeaseError::NotHeld);
        }
        Ok(released)
    }

    /// Every live lease at `now` as (partition, lease).
    pub fn leases(&self, now: Nanos) -> impl Iterator<Item = (u32, &Lease)> {
        self.leases
            .iter()
            .enumerate()
            .filter_map(move |(i, l)| l.as_ref().filter(|l| l.expires_at > now).map(|l| (i as u32, l)))
    }

    /// When the next lease lapses (to set an alarm), if any is live.
    pub fn next_expiry(&self) -> Option<Nanos> {
        self.leases.iter().flatten().map(|l| l.expires_at).min()
    }

    /// Compact bytes of the pool's leases (for Durable Object storage).
    pub fn encode(&self) -> Vec<u8> {
        let mut out = alloc::vec![1u8];
        crate::codec::put(&mut out, self.leases.len() as u64);
        for slot in &self.leases {
            match slot {
                None => out.push(0),
                Some(l) => {
                    out.push(1);
                    crate::codec::put(&mut out, l.expires_at.as_nanos());
                    crate::codec::put(&mut out, l.holder.len() as u64);
                    out.extend_from_slice(l.holder.as_bytes());
                }
            }
        }
        out
    }

    /// Restores leases written by [`encode`](LeasePool::encode) into a pool of the same size.
    pub fn restore(&mut self, bytes: &[u8]) -> Result<(), DecodeError> {
        let mut r = crate::codec::Reader::new(bytes);
        let version = r.byte()?;
        if version != 1 {
            return Err(DecodeError::UnknownVersion(version));
        }
        let n = r.len(MAX_PARTITIONS as u64)?;
        if n != self.leases.len() {
            return Err(DecodeError::LimitCountMismatch { expected: self.leases.len(), found: n });
        }
        let mut leases = Vec::with_capacity(n);
        for _ in 0..n {
            leases.push(match r.byte()? {
                0 => None,
                1 => {
                    let expires_at = r.time()?;
                    let len = r.len(MAX_HOLDER_LEN as u64)?;
                    let holder =
                        core::str::from_utf8(r.take(len)?).map_err(|_| DecodeError::Invalid("holder is not UTF-8"))?;
                    Some(Lease { holder: holder.to_string().into_boxed_str(), expires_at })
                }
                _ => return Err(DecodeError::Invalid("lease slot tag")),
            });
        }
        r.finish()?;
        self.leases = leases;
        Ok(())
    }
}

fn check_holder(holder: &str) -> Result<(), LeaseError> {
    if holder.is_empty() || holder.len() > MAX_HOLDER_LEN {
        Err(LeaseError::BadHolder)
    } else {
        Ok(())
    }
}
