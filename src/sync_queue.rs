//! Which keys a synced node pushes, and when, when its central store holds each key apart
//! (one store call per key, as a Durable Object per key does): oldest first, in rounds of at
//! most `batch` keys.
//!
//! A key is queued when the node counts a hit for it ([`SyncQueue::mark`]). A round
//! ([`SyncQueue::next_round`]) takes the oldest queued keys, up to `batch`, as soon as `batch`
//! keys are waiting, or once `every` has passed since the node's last round began. A key is in
//! at most one round at a time: one marked again while its round is out is queued when that
//! round ends ([`SyncQueue::finish`]), as is one whose push failed.
//!
//! **The bound.** A key the node counts a hit for at `t` is in a round that begins with the
//! first call of `next_round` at or after `t + every`, whatever the number of keys (if the
//! key's previous round is still out at `t`, from the end of that round instead). Why: every
//! round begins at most `every` after the last one, and a caller that calls `next_round`
//! after every [`mark`](SyncQueue::mark) of up to `batch` keys never leaves `batch` keys
//! waiting, so the round that is due takes every key waiting. Rounds may overlap (each takes
//! other keys), so how many keys a node pushes per interval grows with how many it marks; no
//! round ever holds more than `batch` keys.
//!
//! ```
//! use tollgate::sync_queue::SyncQueue;
//! use tollgate::Nanos;
//! let every = Nanos::from_millis(100);
//! let mut q = SyncQueue::new(every, 2);
//! let t = Nanos::from_secs(600);
//! q.mark("a");
//! assert_eq!(q.next_round(t), ["a".into()]); // the first round begins at once
//! q.mark("b");
//! assert!(q.next_round(t).is_empty()); // one key waiting, the interval not over
//! q.mark("c");
//! assert_eq!(q.next_round(t), ["b".into(), "c".into()]); // two waiting: a full round at once
//! q.mark("a"); // still out: queued when its round ends
//! q.finish("a", true);
//! assert_eq!(q.next_round(t + every), ["a".into()]);
//! ```

use alloc::boxed::Box;
use alloc::collections::VecDeque;
use alloc::vec::Vec;

use hashbrown::HashMap;

use crate::time::Nanos;

/// Where a key stands.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
enum Mark {
    /// Waiting in the queue.
    Queued,
    /// In a round that has not ended; `again`: marked since it began.
    Out { again: bool },
}

/// The keys a synced node has to push, oldest first (see the module's bound).
#[derive(Clone, Debug)]
pub struct SyncQueue {
    every: Nanos,
    batch: usize,
    queue: VecDeque<Box<str>>,
    marks: HashMap<Box<str>, Mark>,
    last_round: Option<Nanos>,
}

impl SyncQueue {
    /// A queue for a node that syncs every `every`, at most `batch` keys (at least 1) a round.
    pub fn new(every: Nanos, batch: usize) -> SyncQueue {
        SyncQueue { every, batch: batch.max(1), queue: VecDeque::new(), marks: HashMap::new(), last_round: None }
    }

    /// The most keys one round holds.
    pub fn batch(&self) -> usize {
        self.batch
    }

    /// `key` has something to push: queued at the back unless it waits already; if it is in a
    /// round, queued when that round ends.
    pub fn mark(&mut self, key: &str) {
        match self.marks.get_mut(key) {
            Some(Mark::Queued) => {}
            Some(Mark::Out { again }) => *again = true,
            None => {
                self.marks.insert(key.into(), Mark::Queued);
                self.queue.push_back(key.into());
            }
        }
    }

    /// The keys of the round to begin at `now`, oldest first: none unless `batch` keys wait
    /// or the interval since the last round began is over (or the clock went back).
    pub fn next_round(&mut self, now: Nanos) -> Vec<Box<str>> {
        let due = self.last_round.is_none_or(|last| now >= last + self.every || now < last);
        if self.queue.is_empty() || (!due && self.queue.len() < self.batch) {
            return Vec::new();
        }
        self.last_round = Some(now);
        let n = self.queue.len().min(self.batch);
        let keys: Vec<Box<str>> = self.queue.drain(..n).collect();
        for key in &keys {
            self.marks.insert(key.clone(), Mark::Out { again: false });
        }
        keys
    }

    /// `key`'s round ended: `pushed` or not. A key whose push failed, or marked since its
    /// round began, is queued at the back.
    pub fn finish(&mut self, key: &str, pushed: bool) {
        if let Some(Mark::Out { again }) = self.marks.get(key).copied() {
            if again || !pushed {
                self.marks.insert(key.into(), Mark::Queued);
                self.queue.push_back(key.into());
            } else {
                self.marks.remove(key);
            }
        }
    }

    /// Nothing of `key` is left to push (a reset). A round already out for it still ends with
    /// [`finish`](SyncQueue::finish).
    pub fn forget(&mut self, key: &str) {
        match self.marks.get_mut(key) {
            Some(Mark::Queued) => {
                self.marks.remove(key);
                self.queue.retain(|k| &**k != key);
            }
            Some(Mark::Out { again }) => *again = false,
            None => {}
        }
    }

    /// How many keys wait for a round.
    pub fn waiting(&self) -> usize {
        self.queue.len()
    }

    /// How many keys are in rounds that have not ended.
    pub fn out(&self) -> usize {
        self.marks.len() - self.queue.len()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use alloc::format;
    use alloc::string::String;

    fn ms(n: u64) -> Nanos {
        Nanos::from_secs(600) + Nanos::from_millis(n)
    }

    #[test]
    fn every_key_is_pushed_within_one_interval_whatever_their_number() {
        // 10,000 keys marked one by one, each followed by a call (as each request does):
        // rounds of 32 begin as the keys come, and the round due one interval after the last
        // key takes every key left.
        let mut q = SyncQueue::new(Nanos::from_millis(100), 32);
        let mut pushed: HashMap<String, u64> = HashMap::new();
        let mut rounds = 0;
        for i in 0..10_000u64 {
            let now = ms(i / 100); // 100 keys per ms
            q.mark(&format!("k{i}"));
            let round = q.next_round(now);
            assert!(round.len() <= 32);
            assert!(q.waiting() < 32);
            for k in round {
                pushed.insert(String::from(&*k), i / 100);
                q.finish(&k, true);
                rounds += 1;
            }
        }
        let round = q.next_round(ms(99 + 100));
        for k in round {
            pushed.insert(String::from(&*k), 199);
            q.finish(&k, true);
        }
        assert_eq!(pushed.len(), 10_000);
        assert_eq!((q.waiting(), q.out()), (0, 0));
        assert!(rounds >= 10_000 - 32);
        for i in 0..10_000u64 {
            assert!(pushed[&format!("k{i}")] <= i / 100 + 100, "k{i} waited more than one interval");
        }
    }

    #[test]
    fn oldest_first_and_one_round_per_key() {
        let mut q = SyncQueue::new(Nanos::from_millis(100), 3);
        for k in ["a", "b"] {
            q.mark(k);
        }
        assert_eq!(q.next_round(ms(0)), ["a".into(), "b".into()]);
        q.mark("a"); // out: not queued twice
        q.mark("c");
        q.mark("c");
        assert_eq!(q.waiting(), 1);
        assert!(q.next_round(ms(50)).is_empty());
        q.finish("a", true); // marked while out: queued behind c
        q.finish("b", false); // failed: queued again
        assert_eq!(q.next_round(ms(100)), ["c".into(), "a".into(), "b".into()]);
        for k in ["a", "b", "c"] {
            q.finish(k, true);
        }
        assert_eq!((q.waiting(), q.out()), (0, 0));
    }

    #[test]
    fn forget_drops_a_waiting_key_and_a_later_mark_of_one_out() {
        let mut q = SyncQueue::new(Nanos::from_millis(100), 8);
        q.mark("a");
        assert_eq!(q.next_round(ms(0)).len(), 1);
        q.mark("a");
        q.forget("a");
        q.mark("b");
        q.forget("b");
        q.finish("a", true);
        assert_eq!((q.waiting(), q.out()), (0, 0));
        assert!(q.next_round(ms(500)).is_empty());
    }

    #[test]
    fn a_clock_that_goes_back_makes_a_round_due() {
        let mut q = SyncQueue::new(Nanos::from_millis(100), 8);
        q.mark("a");
        q.next_round(ms(1000));
        q.finish("a", true);
        q.mark("a");
        assert_eq!(q.next_round(ms(10)).len(), 1);
    }
}
