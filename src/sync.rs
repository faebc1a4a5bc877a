//! Eventually consistent cluster counting, gateway style.
//!
//! Each node keeps window counters for the keys it sees in local memory and decides from the
//! last merged value plus its own hits not yet merged. Every `sync_rate` it pushes its
//! per-window diffs to a central store, which adds them atomically, and reads back the merged
//! counts for the keys it has seen.
//!
//! - [`SyncRate::Synchronous`] (`sync_rate = 0`): every hit goes to the central store; the
//!   node layer does that by deciding in the store, not with this type.
//! - [`SyncRate::Every`] (`sync_rate > 0`): periodic sync; short is tighter, long is less
//!   load on the store. Between syncs, every node may admit up to the whole remaining quota,
//!   so the cluster can over-admit by up to `(nodes - 1) x` what one node admits per sync.
//! - [`SyncRate::LocalOnly`] (`sync_rate < 0`): no sync at all.
//!
//! Only window counters merge ([`crate::merge`]); a policy with any other algorithm is refused.
//!
//! This module is the protocol, pure and clock-free like the rest: the Worker and the Redis
//! store do the I/O, and [`CentralCounters`] is the reference central store used by tests.

use alloc::boxed::Box;
use alloc::vec::Vec;

use hashbrown::HashMap;

use crate::algorithm::Algorithm;
use crate::error::ConfigError;
use crate::limiter::{validate_keys, LimitError};
use crate::merge::WindowCount;
use crate::policy::{Policy, PolicyDecision, PolicyState};
use crate::time::Nanos;

/// How often a node syncs.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum SyncRate {
    /// Every hit goes to the central store (exact).
    Synchronous,
    /// Push diffs and pull merged counts at most this often.
    Every(Nanos),
    /// Never sync: each node limits on its own.
    LocalOnly,
}

impl SyncRate {
    /// The gateway convention: 0 synchronous, > 0 every that many milliseconds, < 0 local.
    pub fn from_millis(ms: i64) -> SyncRate {
        match ms {
            0 => SyncRate::Synchronous,
            ms if ms > 0 => SyncRate::Every(Nanos::from_millis(ms as u64)),
            _ => SyncRate::LocalOnly,
        }
    }
}

/// A node's count change for one window of one limit of one key. With the `serde` feature
/// it is sent to the key's own place (a store of that key alone), so its namespace and key
/// are left out and read back empty: the receiver knows them.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
pub struct Diff {
    /// The namespace (a configuration); namespaces never mix.
    #[cfg_attr(feature = "serde", serde(skip))]
    pub namespace: Box<str>,
    /// The key.
    #[cfg_attr(feature = "serde", serde(skip))]
    pub key: Box<str>,
    /// Index of the limit in the policy.
    pub limit: usize,
    /// Start of the window.
    pub window_start: Nanos,
    /// Length of the window.
    pub window_size: Nanos,
    /// Units to add.
    pub delta: u64,
    /// When this window stops mattering to any decision (so the central store can drop it).
    pub expires_at: Nanos,
}

/// A merged count the central store holds. With the `serde` feature, its key is left out
/// and read back empty, as a [`Diff`]'s.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
pub struct MergedCount {
    /// The key.
    #[cfg_attr(feature = "serde", serde(skip))]
    pub key: Box<str>,
    /// Index of the limit in the policy.
    pub limit: usize,
    /// Start of the window.
    pub window_start: Nanos,
    /// The cluster-wide count.
    pub count: u64,
}

/// Counts by window start. A decision reads only a few windows (two for a sliding window, the
/// buckets of one window for sliding buckets), so a small vector in no particular order does
/// the job of a map, and keeps the wasm module small (no B-tree code).
#[derive(Clone, Debug, Default)]
struct Windows(Vec<(Nanos, u64)>);

impl Windows {
    fn add(&mut self, start: Nanos, delta: u64) {
        match self.0.iter_mut().find(|(s, _)| *s == start) {
            Some(e) => e.1 = e.1.saturating_add(delta),
            None => self.0.push((start, delta)),
        }
    }

    fn set(&mut self, start: Nanos, count: u64) {
        match self.0.iter_mut().find(|(s, _)| *s == start) {
            Some(e) => e.1 = count,
            None => self.0.push((start, count)),
        }
    }
}

/// Counts of one limit of one key, by window start: merged (from the central store), in
/// flight (pushed, not yet read back) and pending (not yet pushed).
#[derive(Clone, Debug, Default)]
struct Counts {
    merged: Windows,
    inflight: Windows,
    pending: Windows,
}

impl Counts {
    /// Every window's total, oldest first.
    fn total(&self) -> Vec<WindowCount> {
        let mut sum = self.merged.clone();
        for (start, c) in self.inflight.0.iter().chain(&self.pending.0) {
            sum.add(*start, *c);
        }
        // Insertion sort: a handful of windows, and no generic sort code in the wasm module.
        for i in 1..sum.0.len() {
            let mut j = i;
            while j > 0 && sum.0[j - 1].0 > sum.0[j].0 {
                sum.0.swap(j - 1, j);
                j -= 1;
            }
        }
        sum.0.into_iter().map(|(start, count)| WindowCount { start, count }).collect()
    }

    fn drop_before(&mut self, oldest: Nanos) {
        for m in [&mut self.merged, &mut self.inflight, &mut self.pending] {
            m.0.retain(|(start, _)| *start >= oldest);
        }
    }

    fn is_empty(&self) -> bool {
        self.merged.0.is_empty() && self.inflight.0.is_empty() && self.pending.0.is_empty()
    }
}

fn add(map: &mut Windows, start: Nanos, delta: u64) {
    map.add(start, delta);
}

/// A node's view of a policy counted across a cluster.
///
/// ```
/// use tollgate::{AnyAlgorithm, Nanos, Policy, SlidingWindow};
/// use tollgate::sync::{CentralCounters, SyncRate, SyncedLimiter};
/// let policy = Policy::single(AnyAlgorithm::SlidingWindow(SlidingWindow::new("10/m".parse().unwrap())));
/// let mut central = CentralCounters::default();
/// let mut a = SyncedLimiter::new("api", policy.clone(), SyncRate::Every(Nanos::from_millis(100))).unwrap();
/// let mut b = SyncedLimiter::new("api", policy, SyncRate::Every(Nanos::from_millis(100))).unwrap();
/// let now = Nanos::from_secs(600);
/// for _ in 0..6 { assert!(a.check(&["k"], now, 1).unwrap().allowed); }
/// central.push_diffs(&a.take_diffs(now));
/// b.apply_merged(&central.counters("api", &["k"], now), now);
/// assert_eq!(b.rate("k", 0, now), 6.0); // b now knows what a admitted
/// ```
#[derive(Clone, Debug)]
pub struct SyncedLimiter {
    namespace: Box<str>,
    policy: Policy,
    rate: SyncRate,
    keys: HashMap<Box<str>, Vec<Counts>>,
    last_sync: Option<Nanos>,
}

impl SyncedLimiter {
    /// A node of `namespace` limiting by `policy`, which must be mergeable.
    pub fn new(namespace: &str, policy: Policy, rate: SyncRate) -> Result<SyncedLimiter, ConfigError> {
        if let Some(l) = policy.limits().iter().find(|l| !l.algorithm().kind().is_mergeable()) {
            return Err(ConfigError::UnsupportedOption { algorithm: l.algorithm().name(), option: "sync" });
        }
        Ok(SyncedLimiter { namespace: namespace.into(), policy, rate, keys: HashMap::new(), last_sync: None })
    }

    /// The policy.
    pub fn policy(&self) -> &Policy {
        &self.policy
    }

    /// The sync rate.
    pub fn sync_rate(&self) -> SyncRate {
        self.rate
    }

    /// Whether a periodic sync is due at `now`.
    pub fn sync_due(&self, now: Nanos) -> bool {
        match self.rate {
            SyncRate::Every(every) => self.last_sync.is_none_or(|last| now >= last + every || now < last),
            SyncRate::Synchronous => true,
            SyncRate::LocalOnly => false,
        }
    }

    /// When the window of limit `limit` starting at `start` no longer matters (a diff's
    /// `expires_at`); `None` for a limit the policy does not have.
    pub fn window_expires_at(&self, limit: usize, start: Nanos) -> Option<Nanos> {
        Some(window_end(self.policy.limits().get(limit)?.algorithm(), start))
    }

    /// The oldest window start limit `j` still reads at `now`.
    fn oldest_start(&self, j: usize, now: Nanos) -> Nanos {
        let a = self.policy.limits()[j].algorithm();
        let (g, span) = (a.granularity().unwrap_or(Nanos::ZERO), a.span().unwrap_or(1));
        let start = now.saturating_sub(g.saturating_mul(span));
        start.saturating_sub(Nanos::new(start.as_nanos() % g.as_nanos().max(1)))
    }

    /// The key's state as the policy sees it: merged plus unsynced counts.
    fn state_of(&self, key: &str, now: Nanos) -> Option<PolicyState> {
        let counts = self.keys.get(key)?;
        let mut state = self.policy.fresh_state();
        for (j, (limit, c)) in self.policy.limits().iter().zip(counts).enumerate() {
            state.slots[j] = limit.algorithm().state_from_counts(&c.total(), now).flatten();
        }
        state.expires_at = self.policy.expiry(&state);
        state.slots.iter().any(Option::is_some).then_some(state)
    }

    /// Decides a hit from the merged counts plus this node's unsynced hits, all or nothing,
    /// and records an admitted hit as pending diffs.
    pub fn check(
        &mut self,
        keys: &[&str],
        now: Nanos,
        cost: u64,
    ) -> Result<PolicyDecision, LimitError<core::convert::Infallible>> {
        validate_keys(keys)?;
        self.policy.validate_cost(cost)?;
        let mut states: Vec<Option<PolicyState>> = keys.iter().map(|k| self.state_of(k, now)).collect();
        let before = states.clone();
        let decision = self.policy.check(&mut states, now, cost)?;
        if decision.allowed {
            for ((key, old), new) in keys.iter().zip(&before).zip(&states) {
                self.record(key, old.as_ref(), new.as_ref(), now);
            }
        }
        Ok(decision)
    }

    /// The decision [`check`](SyncedLimiter::check) would make from what this node knows,
    /// changing nothing.
    pub fn peek(
        &self,
        keys: &[&str],
        now: Nanos,
        cost: u64,
    ) -> Result<PolicyDecision, LimitError<core::convert::Infallible>> {
        validate_keys(keys)?;
        self.policy.validate_cost(cost)?;
        let states: Vec<Option<PolicyState>> = keys.iter().map(|k| self.state_of(k, now)).collect();
        Ok(self.policy.peek(&states, now, cost)?)
    }

    /// Adds to pending whatever `new` counts beyond `old`, window by window.
    fn record(&mut self, key: &str, old: Option<&PolicyState>, new: Option<&PolicyState>, now: Nanos) {
        let n = self.policy.limits().len();
        let mut diffs: Vec<(usize, Nanos, u64)> = Vec::new();
        for (j, limit) in self.policy.limits().iter().enumerate() {
            let counts = |s: Option<&PolicyState>| {
                s.and_then(|s| s.slots[j].as_ref()).and_then(|s| limit.algorithm().window_counts(s)).unwrap_or_default()
            };
            let (before, after) = (counts(old), counts(new));
            for c in after {
                let was = before.iter().find(|b| b.start == c.start).map_or(0, |b| b.count);
                if c.count > was {
                    diffs.push((j, c.start, c.count - was));
                }
            }
        }
        let entry = self.keys.entry_ref(key).or_insert_with(|| alloc::vec![Counts::default(); n]);
        for (j, start, delta) in diffs {
            add(&mut entry[j].pending, start, delta);
        }
        self.forget_old(key, now);
    }

    fn forget_old(&mut self, key: &str, now: Nanos) {
        let oldest: Vec<Nanos> = (0..self.policy.limits().len()).map(|j| self.oldest_start(j, now)).collect();
        if let Some(counts) = self.keys.get_mut(key) {
            for (c, oldest) in counts.iter_mut().zip(oldest) {
                c.drop_before(oldest);
            }
            if counts.iter().all(Counts::is_empty) {
                self.keys.remove(key);
            }
        }
    }

    /// Counts `value` units for `key` in limit `limit` unconditionally (the gateway's
    /// `increment`) and returns the limit's sliding rate after it; `None` if there is no such
    /// limit.
    pub fn increment(&mut self, key: &str, limit: usize, now: Nanos, value: u64) -> Option<f64> {
        let start = self.policy.limits().get(limit)?.algorithm().window_start(now)?;
        let n = self.policy.limits().len();
        let entry = self.keys.entry_ref(key).or_insert_with(|| alloc::vec![Counts::default(); n]);
        add(&mut entry[limit].pending, start, value);
        Some(self.rate(key, limit, now))
    }

    /// The sliding rate of limit `limit` for `key` at `now`, merged plus unsynced (the
    /// gateway's `sliding_window`): `current + previous * weight` for a sliding window, the
    /// count for a fixed window, the sum of the buckets in the window for sliding buckets.
    pub fn rate(&self, key: &str, limit: usize, now: Nanos) -> f64 {
        match (self.keys.get(key).and_then(|c| c.get(limit)), self.policy.limits().get(limit)) {
            (Some(counts), Some(l)) => l.algorithm().rate_from_counts(&counts.total(), now),
            _ => 0.0,
        }
    }

    /// Gives back `cost` units of `key` in each limit's current window (a hit that turned out
    /// not to count), never below zero: first from what this node has not pushed yet (given
    /// back for good: it is never pushed), then from what is in flight and from the merged
    /// count (given back in this node's view until the next merge replaces it with the
    /// central count, which still holds them).
    pub fn refund(&mut self, key: &str, now: Nanos, cost: u64) {
        let Some(counts) = self.keys.get_mut(key) else { return };
        for (limit, c) in self.policy.limits().iter().zip(counts.iter_mut()) {
            let Some(start) = limit.algorithm().window_start(now) else { continue };
            let mut left = cost;
            for windows in [&mut c.pending, &mut c.inflight, &mut c.merged] {
                if let Some(entry) = windows.0.iter_mut().find(|(s, _)| *s == start) {
                    let taken = entry.1.min(left);
                    entry.1 -= taken;
                    left -= taken;
                }
                // A window emptied is no window: nothing to push for it.
                windows.0.retain(|&(_, count)| count > 0);
            }
        }
    }

    /// Takes this node's pending diffs to push (they stay counted, as in flight, until
    /// [`apply_merged`](SyncedLimiter::apply_merged) or [`restore`](SyncedLimiter::restore)).
    pub fn take_diffs(&mut self, now: Nanos) -> Vec<Diff> {
        self.last_sync = Some(now);
        let mut out = Vec::new();
        for (key, counts) in self.keys.iter_mut() {
            take_pending(&self.namespace, &self.policy, key, counts, &mut out);
        }
        out
    }

    /// [`take_diffs`](SyncedLimiter::take_diffs) for `keys` only, so that a node can sync its
    /// keys in batches or one store call per key (a Durable Object per key): pair it with
    /// [`apply_merged_for`](SyncedLimiter::apply_merged_for) or
    /// [`restore_for`](SyncedLimiter::restore_for) for the same keys.
    ///
    /// ```
    /// use tollgate::{AnyAlgorithm, FixedWindow, Nanos, Policy};
    /// use tollgate::sync::{CentralCounters, SyncRate, SyncedLimiter};
    /// let policy = Policy::single(AnyAlgorithm::FixedWindow(FixedWindow::new("10/m".parse().unwrap())));
    /// let mut node = SyncedLimiter::new("api", policy, SyncRate::Every(Nanos::from_millis(100))).unwrap();
    /// let now = Nanos::from_secs(600);
    /// node.check(&["a"], now, 1).unwrap();
    /// node.check(&["b"], now, 1).unwrap();
    /// let diffs = node.take_diffs_for(&["a"], now);
    /// assert_eq!(diffs.len(), 1);
    /// let mut central = CentralCounters::default();
    /// central.push_diffs(&diffs);
    /// node.apply_merged_for(&["a"], &central.counters("api", &["a"], now), now);
    /// assert_eq!(node.take_diffs(now).len(), 1); // b's hit is still pending
    /// ```
    pub fn take_diffs_for(&mut self, keys: &[&str], now: Nanos) -> Vec<Diff> {
        self.last_sync = Some(now);
        let mut out = Vec::new();
        for key in keys {
            if let Some((key, counts)) = self.keys.get_key_value_mut(*key) {
                take_pending(&self.namespace, &self.policy, key, counts, &mut out);
            }
        }
        out
    }

    /// Puts in-flight diffs back to pending (the push failed).
    pub fn restore(&mut self) {
        for counts in self.keys.values_mut() {
            for c in counts.iter_mut() {
                for (start, delta) in core::mem::take(&mut c.inflight).0 {
                    add(&mut c.pending, start, delta);
                }
            }
        }
    }

    /// [`restore`](SyncedLimiter::restore) for `keys` only (their push failed).
    pub fn restore_for(&mut self, keys: &[&str]) {
        for key in keys {
            if let Some(counts) = self.keys.get_mut(*key) {
                for c in counts.iter_mut() {
                    for (start, delta) in core::mem::take(&mut c.inflight).0 {
                        add(&mut c.pending, start, delta);
                    }
                }
            }
        }
    }

    /// [`apply_merged`](SyncedLimiter::apply_merged) for `keys` only: replaces their merged
    /// counts with `merged` (counts of other keys in it are ignored) and drops their in-flight
    /// diffs, keeping what they counted since as pending. With no merged counts and nothing
    /// pending, the keys are forgotten.
    pub fn apply_merged_for(&mut self, keys: &[&str], merged: &[MergedCount], now: Nanos) {
        let n = self.policy.limits().len();
        for key in keys {
            if let Some(counts) = self.keys.get_mut(*key) {
                for c in counts.iter_mut() {
                    c.merged.0.clear();
                    c.inflight.0.clear();
                }
            }
        }
        for m in merged.iter().filter(|m| m.limit < n && keys.contains(&&*m.key)) {
            let entry = self.keys.entry_ref(&*m.key).or_insert_with(|| alloc::vec![Counts::default(); n]);
            entry[m.limit].merged.set(m.window_start, m.count);
        }
        for key in keys {
            self.forget_old(key, now);
        }
    }

    /// Replaces the merged counts with what the central store returned (which includes every
    /// diff taken before the read), keeping hits made since as pending.
    pub fn apply_merged(&mut self, merged: &[MergedCount], now: Nanos) {
        let n = self.policy.limits().len();
        for counts in self.keys.values_mut() {
            for c in counts.iter_mut() {
                c.merged.0.clear();
                c.inflight.0.clear();
            }
        }
        for m in merged.iter().filter(|m| m.limit < n) {
            let entry = self.keys.entry_ref(&*m.key).or_insert_with(|| alloc::vec![Counts::default(); n]);
            entry[m.limit].merged.set(m.window_start, m.count);
        }
        let keys: Vec<Box<str>> = self.keys.keys().cloned().collect();
        for k in keys {
            self.forget_old(&k, now);
        }
    }

    /// The keys this node holds counts for (the keys to read back).
    pub fn keys(&self) -> impl Iterator<Item = &str> {
        self.keys.keys().map(|k| &**k)
    }
}

/// When the window of `algorithm` starting at `start` no longer matters: the windows it reads
/// and one more have passed.
fn window_end(algorithm: &crate::AnyAlgorithm, start: Nanos) -> Nanos {
    let g = algorithm.granularity().unwrap_or(Nanos::ZERO);
    start + g.saturating_mul(algorithm.span().unwrap_or(1) + 1)
}

/// Moves one key's pending counts to in flight, appending them to `out` as diffs.
fn take_pending(namespace: &str, policy: &Policy, key: &str, counts: &mut [Counts], out: &mut Vec<Diff>) {
    for (j, c) in counts.iter_mut().enumerate() {
        let algorithm = policy.limits()[j].algorithm();
        let g = algorithm.granularity().unwrap_or(Nanos::ZERO);
        for (start, delta) in core::mem::take(&mut c.pending).0 {
            add(&mut c.inflight, start, delta);
            out.push(Diff {
                namespace: namespace.into(),
                key: key.into(),
                limit: j,
                window_start: start,
                window_size: g,
                delta,
                expires_at: window_end(algorithm, start),
            });
        }
    }
}

/// Where a central count lives: (namespace, key, limit, window start).
type CountKey = (Box<str>, Box<str>, usize, Nanos);

/// The reference central store: adds diffs, answers merged counts.
#[derive(Clone, Debug, Default)]
pub struct CentralCounters {
    /// The count and when it stops mattering, by where it lives.
    counts: HashMap<CountKey, (u64, Nanos)>,
}

impl CentralCounters {
    /// Adds every diff (the atomic step of a real store).
    pub fn push_diffs(&mut self, diffs: &[Diff]) {
        for d in diffs {
            let e = self
                .counts
                .entry((d.namespace.clone(), d.key.clone(), d.limit, d.window_start))
                .or_insert((0, d.expires_at));
            e.0 = e.0.saturating_add(d.delta);
            e.1 = e.1.max(d.expires_at);
        }
    }

    /// The merged counts of `keys` in `namespace` that still matter at `now`.
    pub fn counters(&self, namespace: &str, keys: &[&str], now: Nanos) -> Vec<MergedCount> {
        self.counts
            .iter()
            .filter(|((ns, key, _, _), (_, expires))| &**ns == namespace && keys.contains(&&**key) && *expires > now)
            .map(|((_, key, limit, start), (count, _))| MergedCount {
                key: key.clone(),
                limit: *limit,
                window_start: *start,
                count: *count,
            })
            .collect()
    }

    /// One window's merged count (the gateway's `get_window`).
    pub fn window(&self, namespace: &str, key: &str, limit: usize, window_start: Nanos) -> u64 {
        self.counts.get(&(namespace.into(), key.into(), limit, window_start)).map_or(0, |c| c.0)
    }

    /// Drops windows that no longer matter.
    pub fn prune(&mut self, now: Nanos) {
        self.counts.retain(|_, (_, expires)| *expires > now);
    }
}
