//! Leased shares of a capacity: uncoordinated workers share one capacity
//! by splitting it into partitions (500/s as 20 partitions of 25/s) and taking time-limited
//! exclusive leases on them. A worker's allowed rate is the sum of its partitions; when a
//! lease expires it must slow down, and a crashed worker's partitions come back after the TTL.
//!
//! [`LeasePool`] is the pool's state machine, pure like the rest of the core: the Worker keeps
//! one per pool in a Durable Object (which serializes requests), and a worker's [`Pacer`]
//! follows the rate it is granted.
//!
//! **Fair shares.** Leases are exclusive, so first come first served alone would let one
//! holder that asks for everything keep it for as long as it renews, and starve the others.
//! The pool therefore remembers each holder's last request (its *demand*, live while that
//! request's TTL runs) and never lets a holder keep or take more than its max-min fair share
//! of the partitions over the live demands: with 20 partitions and demands of 20, 12 and 1,
//! the shares are 10, 10 and 1. A holder above its share gives the excess back at its next
//! request (grant or renewal), and the others take it at theirs; while the demands fit, every
//! holder gets what it asks for, as before.
//!
//! [`Pacer`]: crate::pacer::Pacer

use alloc::boxed::Box;
use alloc::string::{String, ToString};
use alloc::vec::Vec;

use crate::error::{ConfigError, DecodeError};
use crate::quota::MAX_WINDOW;
use crate::time::Nanos;

/// The most partitions a pool may have.
pub const MAX_PARTITIONS: u32 = 1024;

/// The longest holder name, in bytes.
pub const MAX_HOLDER_LEN: usize = 128;

/// The most holders' demands a pool remembers for fair shares.
pub const MAX_DEMANDS: usize = 4 * MAX_PARTITIONS as usize;

/// The longest lease any pool's `maxTtl` may allow: a crashed holder's partitions stay taken
/// this long, so a day bounds how long a capacity can sit unused.
pub const MAX_TTL: Nanos = Nanos::from_secs(24 * 3600);

/// A pool's `maxTtl` when its configuration does not give one.
pub const DEFAULT_MAX_TTL: Nanos = Nanos::from_secs(5 * 60);

/// One partition's lease.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Lease {
    /// Who holds it.
    pub holder: Box<str>,
    /// When it lapses.
    pub expires_at: Nanos,
}

/// One holder's live leases ([`LeasePool::holdings`]); the Worker's pool status sends them as
/// they are (`serde`).
#[derive(Clone, Debug, PartialEq, Eq)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
pub struct Holding {
    /// Who holds them.
    pub holder: String,
    /// Its partitions, in order.
    pub partitions: Vec<u32>,
    /// When they lapse: the earliest of them (a holder's leases share one expiry).
    pub expires_at: Nanos,
}

/// What a holder has after a grant or renewal.
#[derive(Clone, Debug, PartialEq, Eq)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
pub struct Grant {
    /// The partitions held (indices).
    pub partitions: Vec<u32>,
    /// When they lapse unless renewed.
    pub expires_at: Nanos,
    /// The holder's allowed rate: partitions x the partition rate, units per `window`.
    #[cfg_attr(feature = "serde", serde(default))]
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
    /// Each holder's last request, for fair shares (see the module docs).
    demands: Vec<Demand>,
}

/// A live demand and its fair share (see [`LeasePool::shares`]).
#[derive(Clone, Debug, PartialEq, Eq)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
pub struct Share {
    /// Who asked.
    pub holder: String,
    /// How many partitions it asked for (at most the pool's).
    pub want: u32,
    /// The most it may hold while these demands are live.
    pub share: u32,
    /// When its demand lapses unless it asks again.
    pub until: Nanos,
}

/// Max-min fair shares of `partitions` for `wants`, in the same order.
///
/// Water-filling: the smallest wants are met in full while they fit under an equal split of
/// what is left; the others share the rest equally, and the partitions that do not split
/// evenly go one each to the first of them in `wants`' order (asking order).
fn water_fill(wants: &[u32], partitions: u32) -> Vec<u32> {
    let mut by_want: Vec<usize> = (0..wants.len()).collect();
    by_want.sort_by_key(|&i| wants[i]);
    let mut shares = alloc::vec![0; wants.len()];
    let mut left = partitions;
    let mut sharing = wants.len() as u32;
    let mut met = 0;
    for &i in &by_want {
        if wants[i] > left / sharing {
            break;
        }
        shares[i] = wants[i];
        left -= wants[i];
        sharing -= 1;
        met += 1;
    }
    if met < wants.len() {
        let level = left / sharing;
        let mut extra = left % sharing;
        let mut capped: Vec<usize> = by_want[met..].to_vec();
        capped.sort_unstable();
        for i in capped {
            shares[i] = level + u32::from(extra > 0);
            extra = extra.saturating_sub(1);
        }
    }
    shares
}

/// A holder's last request: `want` partitions, counted in fair shares until `until`.
#[derive(Clone, Debug, PartialEq, Eq)]
struct Demand {
    holder: Box<str>,
    want: u32,
    until: Nanos,
}

impl LeasePool {
    /// A pool of `partitions` partitions of `partition_rate` units per `window` each.
    pub fn new(partitions: u32, partition_rate: u64, window: Nanos) -> Result<LeasePool, ConfigError> {
        if partitions == 0 || partitions > MAX_PARTITIONS {
            return Err(ConfigError::LimitTooLarge { limit: partitions as u64, max: MAX_PARTITIONS as u64 });
        }
        crate::quota::check_limit(partition_rate)?;
        crate::quota::check_window(window)?;
        Ok(LeasePool { partition_rate, window, leases: alloc::vec![None; partitions as usize], demands: Vec::new() })
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

    /// Frees every lease that has lapsed at `now` (and forgets lapsed demands); returns how
    /// many partitions came back.
    pub fn expire(&mut self, now: Nanos) -> usize {
        self.demands.retain(|d| d.until > now);
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

    /// The most partitions `holder` may hold: its max-min fair share of the partitions over
    /// the live demands (its own included), which is what it asked for when all demands fit.
    ///
    /// Water-filling: the smallest demands are met in full while they fit under an equal split
    /// of what is left; the others share the rest equally, and the partitions that do not
    /// split evenly go one each to the holders that asked first. The shares add up to at most
    /// the pool, so each holder can reach its share once the others are down to theirs.
    pub fn fair_share(&self, holder: &str) -> u32 {
        let Some(own) = self.demands.iter().position(|d| &*d.holder == holder) else {
            return 0;
        };
        let wants: Vec<u32> = self.demands.iter().map(|d| d.want).collect();
        water_fill(&wants, self.partitions())[own]
    }

    /// Every live demand at `now` with its fair share among the live ones, in asking order:
    /// what a status page shows (a holder may hold less than its share until it asks again,
    /// or more until its next request gives the excess back).
    pub fn shares(&self, now: Nanos) -> Vec<Share> {
        let live: Vec<&Demand> = self.demands.iter().filter(|d| d.until > now).collect();
        let wants: Vec<u32> = live.iter().map(|d| d.want).collect();
        let shares = water_fill(&wants, self.partitions());
        live.iter()
            .zip(shares)
            .map(|(d, share)| Share { holder: d.holder.to_string(), want: d.want, share, until: d.until })
            .collect()
    }

    /// Records `holder`'s request of `want` partitions, live until `until`. At most
    /// [`MAX_DEMANDS`] are kept: a new holder beyond that replaces the one lapsing soonest.
    fn demand(&mut self, holder: &str, want: u32, until: Nanos) {
        let want = want.min(self.partitions());
        if let Some(d) = self.demands.iter_mut().find(|d| &*d.holder == holder) {
            d.want = want;
            d.until = until;
            return;
        }
        let new = Demand { holder: holder.into(), want, until };
        if self.demands.len() < MAX_DEMANDS {
            self.demands.push(new);
        } else if let Some(soonest) = self.demands.iter_mut().min_by_key(|d| d.until) {
            *soonest = new;
        }
    }

    /// Gives `holder` up to `want` partitions in all until `now + ttl`: it keeps (and renews)
    /// what it holds, takes free partitions up to `want`, and returns extras beyond `want`,
    /// or beyond its fair share while other holders' demands do not all fit (module docs).
    /// A grant of fewer than asked (even none) is not an error: it is all there is.
    ///
    /// ```
    /// use tollgate::lease::LeasePool;
    /// use tollgate::Nanos;
    /// let mut pool = LeasePool::new(20, 25, Nanos::from_secs(1)).unwrap();
    /// let (ttl, t) = (Nanos::from_secs(15), Nanos::from_secs(1_000));
    /// // A greedy holder takes everything while it is alone.
    /// assert_eq!(pool.grant("greedy", 20, ttl, t).unwrap().partitions.len(), 20);
    /// // Another asks for 12: nothing is free yet, but its demand is on record.
    /// assert_eq!(pool.grant("polite", 12, ttl, t).unwrap().partitions.len(), 0);
    /// // At its next request the greedy one keeps its fair share, 10 of 20, and the polite one
    /// // takes the 10 given back at its own next request.
    /// let s = Nanos::from_secs(5);
    /// assert_eq!(pool.grant("greedy", 20, ttl, t + s).unwrap().partitions.len(), 10);
    /// assert_eq!(pool.grant("polite", 12, ttl, t + s).unwrap().partitions.len(), 10);
    /// ```
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
        self.demand(holder, want, now + demand_life(ttl));
        let want = self.fair_share(holder);
        let held = self.keep(holder, want, expires_at);
        let free = self.leases.iter_mut().filter(|s| s.is_none());
        for slot in free.take(want.saturating_sub(held) as usize) {
            *slot = Some(Lease { holder: holder.into(), expires_at });
        }
        Ok(self.grant_of(holder, now))
    }

    /// Extends what `holder` holds until `now + ttl`, up to its fair share (its demand is
    /// what it last asked for, or what it holds if it has no live demand).
    pub fn renew(&mut self, holder: &str, ttl: Nanos, now: Nanos) -> Result<Grant, LeaseError> {
        check_holder(holder)?;
        if ttl == Nanos::ZERO || ttl > MAX_WINDOW {
            return Err(LeaseError::BadTtl);
        }
        self.expire(now);
        let held = self.leases.iter().flatten().filter(|l| &*l.holder == holder).count() as u32;
        if held == 0 {
            return Err(LeaseError::NotHeld);
        }
        let want = self.demands.iter().find(|d| &*d.holder == holder).map_or(held, |d| d.want);
        self.demand(holder, want, now + demand_life(ttl));
        self.keep(holder, self.fair_share(holder), now + ttl);
        Ok(self.grant_of(holder, now))
    }

    /// Renews up to `n` of `holder`'s partitions (the first in partition order) until
    /// `expires_at` and frees the rest of them; returns how many it kept.
    fn keep(&mut self, holder: &str, n: u32, expires_at: Nanos) -> u32 {
        let mut kept = 0;
        for slot in self.leases.iter_mut() {
            if let Some(l) = slot.as_mut().filter(|l| &*l.holder == holder) {
                if kept < n {
                    l.expires_at = expires_at;
                    kept += 1;
                } else {
                    *slot = None;
                }
            }
        }
        kept
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
        // Gone: its demand no longer holds anyone else's share down.
        self.demands.retain(|d| &*d.holder != holder);
        Ok(released)
    }

    /// Every live lease at `now` as (partition, lease).
    pub fn leases(&self, now: Nanos) -> impl Iterator<Item = (u32, &Lease)> {
        self.leases
            .iter()
            .enumerate()
            .filter_map(move |(i, l)| l.as_ref().filter(|l| l.expires_at > now).map(|l| (i as u32, l)))
    }

    /// The live leases at `now` by holder, in partition order of each holder's first lease.
    pub fn holdings(&self, now: Nanos) -> Vec<Holding> {
        let mut out: Vec<Holding> = Vec::new();
        for (i, lease) in self.leases(now) {
            match out.iter_mut().find(|h| *h.holder == *lease.holder) {
                Some(h) => {
                    h.partitions.push(i);
                    h.expires_at = h.expires_at.min(lease.expires_at);
                }
                None => out.push(Holding {
                    holder: lease.holder.to_string(),
                    partitions: Vec::from([i]),
                    expires_at: lease.expires_at,
                }),
            }
        }
        out
    }

    /// When the next lease lapses (to set an alarm), if any is live.
    pub fn next_expiry(&self) -> Option<Nanos> {
        self.leases.iter().flatten().map(|l| l.expires_at).min()
    }

    /// Compact bytes of the pool's leases and demands (for Durable Object storage). Version
    /// 2; version 1 (leases only, before fair shares) is still read.
    pub fn encode(&self) -> Vec<u8> {
        let mut out = alloc::vec![2u8];
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
        crate::codec::put(&mut out, self.demands.len() as u64);
        for d in &self.demands {
            crate::codec::put(&mut out, d.want as u64);
            crate::codec::put(&mut out, d.until.as_nanos());
            crate::codec::put(&mut out, d.holder.len() as u64);
            out.extend_from_slice(d.holder.as_bytes());
        }
        out
    }

    /// Restores leases written by [`encode`](LeasePool::encode) into a pool of the same size.
    pub fn restore(&mut self, bytes: &[u8]) -> Result<(), DecodeError> {
        let mut r = crate::codec::Reader::new(bytes);
        let version = r.byte()?;
        if version != 1 && version != 2 {
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
                    Some(Lease { holder: read_holder(&mut r)?, expires_at })
                }
                _ => return Err(DecodeError::Invalid("lease slot tag")),
            });
        }
        let mut demands = Vec::new();
        if version == 2 {
            let count = r.len(MAX_DEMANDS as u64)?;
            for _ in 0..count {
                let want = r.len(MAX_PARTITIONS as u64)? as u32;
                let until = r.time()?;
                demands.push(Demand { holder: read_holder(&mut r)?, want, until });
            }
        }
        r.finish()?;
        self.leases = leases;
        self.demands = demands;
        Ok(())
    }
}

/// How long a request counts as demand: half its TTL. A holder that renews in time asks more
/// often than that (`LeasedPacer` asks every third of the TTL, and every third or sooner while
/// it holds nothing), and one that crashed stops holding the others' shares down after half a
/// TTL rather than a whole one (the capacity its share leaves idle meanwhile is the price of
/// fairness without a heartbeat).
fn demand_life(ttl: Nanos) -> Nanos {
    Nanos::new(ttl.as_nanos() / 2)
}

fn read_holder(r: &mut crate::codec::Reader<'_>) -> Result<Box<str>, DecodeError> {
    let len = r.len(MAX_HOLDER_LEN as u64)?;
    let holder = core::str::from_utf8(r.take(len)?).map_err(|_| DecodeError::Invalid("holder is not UTF-8"))?;
    Ok(holder.to_string().into_boxed_str())
}

fn check_holder(holder: &str) -> Result<(), LeaseError> {
    if holder.is_empty() || holder.len() > MAX_HOLDER_LEN {
        Err(LeaseError::BadHolder)
    } else {
        Ok(())
    }
}
