//! The test build only (feature `test-hooks`), with TEST_MODE on: a key's object whose storage fails, so the workerd tests see what a real
//! storage error does (the decision follows the policy's `failure`, the stored state stays as
//! it was, later decisions are exact).
//!
//! A request armed with `Tollgate-Test-Fault: storage-writes=N` (or `storage-reads=N`, either
//! with `,throw`) makes the next N writes (or reads) of its key's object fail, starting with
//! its own. The Worker forwards the header and the object arms it only with TEST_MODE on.
//! Every SQL statement of the object goes through `sql::Sql`, which asks the armed fault
//! first ([`fails`]); unarmed that is one look at a `None`. A production build has none of
//! this module.
//!
//! - writes: `INSERT`/`DELETE` statements; reads: `SELECT`. Creating the tables is neither.
//!   Arming read faults also makes the object forget what it holds in memory (as an object
//!   started again on failing storage), so its next request must read.
//! - `throw`: a failed statement also makes the object's `fetch` throw (the calling stub's
//!   fetch rejects) and forget its memory, as the runtime does when it resets a broken object.
//!   Without it the object answers its usual 500.

use std::cell::RefCell;

use serde::{Deserialize, Serialize};

use crate::object::Mem;

/// What the object's storage is armed to do (test switch on only).
#[derive(Copy, Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct StorageFault {
    /// How many more reads fail.
    pub reads: u32,
    /// How many more writes fail.
    pub writes: u32,
    /// Whether a failure also throws out of the object (and resets its memory).
    pub throw: bool,
    /// Whether a statement failed during the current request.
    #[serde(skip)]
    fired: bool,
}

impl StorageFault {
    /// From the header value: `storage-reads=N` or `storage-writes=N`, then `,throw` or not.
    pub fn parse(s: &str) -> Option<StorageFault> {
        let (what, throw) = match s.trim().split_once(',') {
            Some((what, "throw")) => (what, true),
            Some(_) => return None,
            None => (s.trim(), false),
        };
        let (kind, n) = what.split_once('=')?;
        let n: u32 = n.parse().ok()?;
        match kind {
            "storage-reads" => Some(StorageFault { reads: n, throw, ..StorageFault::default() }),
            "storage-writes" => Some(StorageFault { writes: n, throw, ..StorageFault::default() }),
            _ => None,
        }
    }

    /// Whether `query` fails now; counts it when it does.
    fn take(&mut self, query: &str) -> bool {
        let q = query.trim_start();
        let left = if q.starts_with("SELECT") {
            &mut self.reads
        } else if q.starts_with("INSERT") || q.starts_with("DELETE") {
            &mut self.writes
        } else {
            return false;
        };
        if *left == 0 {
            return false;
        }
        *left -= 1;
        self.fired = true;
        true
    }
}

/// The object's armed fault, if any.
pub type Armed = RefCell<Option<StorageFault>>;

/// Arms `fault` for this object (replacing what was armed).
pub fn arm(armed: &Armed, mem: &RefCell<Mem>, fault: StorageFault) {
    if fault.reads > 0 {
        mem.borrow_mut().clear();
    }
    *armed.borrow_mut() = Some(fault);
}

/// After a request: when a statement failed in `throw` mode, forgets the object's memory and
/// gives the error its `fetch` throws. Clears the request's record either way.
pub fn thrown(armed: &Armed, mem: &RefCell<Mem>) -> Option<worker::Error> {
    let mut armed = armed.borrow_mut();
    let fault = armed.as_mut()?;
    let throws = std::mem::take(&mut fault.fired) && fault.throw;
    if fault.reads == 0 && fault.writes == 0 {
        *armed = None;
    }
    throws.then(|| {
        mem.borrow_mut().clear();
        worker::Error::RustError("injected storage fault: the object is reset".to_string())
    })
}

/// Whether `query` fails now by the armed fault (and counts it when it does).
pub fn fails(armed: &Armed, query: &str) -> bool {
    armed.borrow_mut().as_mut().is_some_and(|fault| fault.take(query))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn header_values() {
        assert_eq!(StorageFault::parse("storage-writes=2"), Some(StorageFault { writes: 2, ..Default::default() }));
        assert_eq!(
            StorageFault::parse(" storage-reads=1,throw "),
            Some(StorageFault { reads: 1, throw: true, ..Default::default() })
        );
        for bad in ["storage-writes", "storage-writes=-1", "storage-writes=2,loud", "writes=2", "storage-reads=x"] {
            assert_eq!(StorageFault::parse(bad), None, "{bad}");
        }
    }

    #[test]
    fn counts_reads_and_writes_apart_and_spares_the_schema() {
        let mut f = StorageFault { reads: 1, writes: 2, ..Default::default() };
        assert!(!f.take("CREATE TABLE IF NOT EXISTS state (id INTEGER)"));
        assert!(f.take("SELECT bytes FROM state WHERE id = 0"));
        assert!(!f.take("SELECT bytes FROM state WHERE id = 0"));
        assert!(f.take("INSERT OR REPLACE INTO state (id, bytes, deadline) VALUES (0, ?, ?)"));
        assert!(f.take("DELETE FROM state"));
        assert!(!f.take("DELETE FROM state"));
        assert!(f.fired);
    }
}
