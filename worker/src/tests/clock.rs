//! A request's own clock: the instant in its body's `now` (`TEST_MODE` on), which the isolate
//! decides at and sends to the key's object so that it decides at it too. Without one, the
//! runtime's clock, as in every production build.

use tollgate::Nanos;

use crate::base::clock::{clock, Clock};

/// The clock of a request that may carry its own instant.
#[derive(Clone, Copy, Debug)]
pub struct RequestClock(Option<Nanos>);

impl Clock for RequestClock {
    fn now(&self) -> Nanos {
        self.0.unwrap_or_else(clock)
    }
    fn sent(&self) -> Option<Nanos> {
        self.0
    }
}

/// The clock of a request whose body gave `now` (parsed only with the test switch on).
pub fn of_request(now: Option<Nanos>) -> RequestClock {
    RequestClock(now)
}
