//! Time on the Worker's side: the runtime's clock, Unix milliseconds (the runtime gives no
//! finer), and the [`Clock`] a request is decided by. Every decision takes its instant from a
//! `Clock`, never from the runtime directly, so a build may hand in another (the test build's
//! request clock, worker/src/tests/) without the decision path knowing which.

use tollgate::Nanos;

/// The real time, Unix ms.
pub fn real_ms() -> u64 {
    worker::Date::now().as_millis()
}

/// The runtime's clock in nanoseconds (millisecond resolution).
pub fn clock() -> Nanos {
    Nanos::from_millis(real_ms())
}

/// Where a request's instant comes from.
pub trait Clock {
    /// The instant to decide at.
    fn now(&self) -> Nanos;
    /// The instant a Durable Object is to decide at, when it is not the object's own clock
    /// (sent on the wire as `now`); `None`: the object reads its own.
    fn sent(&self) -> Option<Nanos>;
}

/// The runtime's clock: what every production request is decided by.
#[derive(Clone, Copy, Debug, Default)]
pub struct RealClock;

impl Clock for RealClock {
    fn now(&self) -> Nanos {
        clock()
    }
    fn sent(&self) -> Option<Nanos> {
        None
    }
}
