//! Waiting in the isolate for work another request of the same isolate is doing: a
//! [`Flight`] is done once (by its [`Landing`], even when the request doing the work is
//! dropped), and every request waiting on it then goes on. Single-threaded, as an isolate is.

use std::cell::RefCell;
use std::future::Future;
use std::pin::Pin;
use std::rc::Rc;
use std::task::{Context, Poll, Waker};
use std::time::Duration;

use futures_util::future::{select, Either};

/// How often a waiter's own timer fires (see [`awake`]).
const POLL_MS: u64 = 20;

/// Awaits `fut`, work another request does, with a timer of this request's own always
/// pending: workerd cancels a request whose only pending work is another request's ("your
/// Worker's code had hung"), and a wake-up from another request's context may reach this one
/// only at its next event. So `fut` is polled at the latest every [`POLL_MS`].
pub async fn awake<F: Future + Unpin>(mut fut: F) -> F::Output {
    loop {
        let timer = worker::Delay::from(Duration::from_millis(POLL_MS));
        match select(&mut fut, timer).await {
            Either::Left((out, _)) => return out,
            Either::Right(_) => {}
        }
    }
}

#[derive(Default)]
struct State {
    done: bool,
    /// Whether the work failed (its waiters answer as it did rather than try again).
    failed: bool,
    wakers: Vec<Waker>,
}

/// Work under way; clone it to wait for it.
#[derive(Clone, Default)]
pub struct Flight(Rc<RefCell<State>>);

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

    /// Waits until it lands; `true` if the work succeeded. In a request, through [`awake`].
    pub fn wait(&self) -> impl Future<Output = bool> + Unpin {
        Wait(self.clone())
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
        let wakers = {
            let mut s = self.flight.0.borrow_mut();
            s.done = true;
            s.failed = !self.ok;
            std::mem::take(&mut s.wakers)
        };
        for w in wakers {
            w.wake();
        }
    }
}

struct Wait(Flight);

impl Future for Wait {
    type Output = bool;

    fn poll(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<bool> {
        let mut s = self.0 .0.borrow_mut();
        if s.done {
            Poll::Ready(!s.failed)
        } else {
            s.wakers.push(cx.waker().clone());
            Poll::Pending
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use futures_util::FutureExt;

    #[test]
    fn waiters_go_on_when_it_lands_and_learn_whether_it_failed() {
        let (flight, mut landing) = Flight::start();
        let mut w = Box::pin(flight.wait());
        assert!(w.as_mut().now_or_never().is_none());
        landing.succeeded();
        drop(landing);
        assert_eq!(w.now_or_never(), Some(true));
        let (flight, landing) = Flight::start();
        drop(landing);
        assert_eq!(flight.wait().now_or_never(), Some(false));
    }
}
