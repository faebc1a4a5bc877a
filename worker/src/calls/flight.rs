//! Waiting in the isolate for work another request of the same isolate is doing: a
//! [`Flight`] lands once (by its [`Landing`], even when the request doing the work is
//! dropped), and every request waiting on it then goes on. Single-threaded, as an isolate is.
//!
//! A waiter is never woken by the request doing the work: in workerd a request's I/O
//! belongs to the request that began it, and a waiter polled from another request's
//! context would start its timers and calls there (and hang when that request ends; the
//! runtime cancels it as "hung"). So a waiter looks again on timers of its own ([`wait_for`]).

use std::cell::Cell;
use std::rc::Rc;
use std::time::Duration;

use tollgate::store_protocol::{wait_until, Retry};
use tollgate::Nanos;

/// Looks at `ready` until it answers, pausing on this request's own timers in between, as the
/// core's `Retry::IN_ISOLATE` says (it never gives up: the work waited for has its own timeout).
pub async fn wait_for<T>(ready: impl FnMut() -> Option<T>) -> T {
    let pause = |p: Nanos| worker::Delay::from(Duration::from_nanos(p.as_nanos()));
    wait_until(Retry::IN_ISOLATE, ready, pause).await
}

/// Work under way; clone it to wait for it. `None` while under way, then whether it succeeded.
#[derive(Clone, Default)]
pub struct Flight(Rc<Cell<Option<bool>>>);

/// Lands its flight when dropped: as failed unless [`Landing::succeeded`] said otherwise.
pub struct Landing {
    flight: Flight,
    ok: bool,
}

impl Flight {
    /// A flight under way, and what lands it.
    pub fn start() -> (Flight, Landing) {
        let flight = Flight::default();
        (flight.clone(), Landing { flight, ok: false })
    }

    /// `None` while under way; then `Some(true)` if the work succeeded.
    pub fn landed(&self) -> Option<bool> {
        self.0.get()
    }

    /// Waits until it lands; `true` if the work succeeded.
    pub async fn wait(&self) -> bool {
        wait_for(|| self.landed()).await
    }
}

impl Landing {
    /// The work succeeded.
    pub fn succeeded(&mut self) {
        self.ok = true;
    }
}

impl Drop for Landing {
    fn drop(&mut self) {
        self.flight.0.set(Some(self.ok));
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_flight_lands_once_and_says_whether_it_failed() {
        let (flight, mut landing) = Flight::start();
        assert_eq!(flight.landed(), None);
        landing.succeeded();
        drop(landing);
        assert_eq!(flight.landed(), Some(true));
        let (flight, landing) = Flight::start();
        drop(landing);
        assert_eq!(flight.landed(), Some(false));
    }
}
