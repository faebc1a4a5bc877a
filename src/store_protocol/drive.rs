//! The loop of an operation retried under a [`Retry`], once for every edge: an edge gives
//! what one attempt does, how to read its clock and how to pause; when to attempt again, how
//! long to pause and when to give up are the core's. The Worker's calls to a busy Durable
//! Object, its several-keys rounds, a key's wait for its lease, a leased hit's decisions
//! around the exchanges of its slice and its waits in the isolate run through it.

use core::convert::Infallible;
use core::future::Future;

use super::{Attempts, Contention, Retry, Wait};
use crate::time::Nanos;

/// What one attempt came to.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum Tried<T> {
    /// It finished with this.
    Done(T),
    /// It did not finish (a lost race, a busy answer, a round gone stale): the retry policy
    /// says what follows.
    Lost,
}

/// Every attempt was lost: the operation gave up (contention, not an outage).
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub struct GaveUp {
    /// How many attempts were made.
    pub attempts: u32,
}

/// Runs `attempt` (given its number, 1 for the first) until it finishes, fails or `retry`
/// gives up: after a lost attempt, again at once or after `pause` of the schedule's length (a
/// pause never outlasts the time `retry` has left). `clock` is the clock `give_up_after` is
/// measured on. The schedule's pauses draw no randomness: an adaptive schedule's pauses are
/// a compare-and-swap store's, which [`CasRun`](super::CasRun) drives.
///
/// ```
/// use core::future::Future;
/// use core::task::{Context, Poll, Waker};
/// use tollgate::store_protocol::{drive, GaveUp, Retry, Tried};
/// use tollgate::Nanos;
/// // Lost twice, then done: three attempts, at once (`LOCK_ROUNDS` pauses never).
/// let attempt = |n: u32| async move { Ok::<_, ()>(if n < 3 { Tried::Lost } else { Tried::Done(n) }) };
/// let mut run = core::pin::pin!(drive(Retry::LOCK_ROUNDS, || Nanos::ZERO, attempt, |_| async {}));
/// let mut cx = Context::from_waker(Waker::noop());
/// assert_eq!(run.as_mut().poll(&mut cx), Poll::Ready(Ok(Ok(3))));
/// // Always lost: `LOCK_ROUNDS` gives up after 8.
/// let lost = |_: u32| async { Ok::<Tried<()>, ()>(Tried::Lost) };
/// let mut run = core::pin::pin!(drive(Retry::LOCK_ROUNDS, || Nanos::ZERO, lost, |_| async {}));
/// assert_eq!(run.as_mut().poll(&mut cx), Poll::Ready(Ok(Err(GaveUp { attempts: 8 }))));
/// ```
pub async fn drive<T, E, A, AF, P, PF>(
    retry: Retry,
    mut clock: impl FnMut() -> Nanos,
    mut attempt: A,
    mut pause: P,
) -> Result<Result<T, GaveUp>, E>
where
    A: FnMut(u32) -> AF,
    AF: Future<Output = Result<Tried<T>, E>>,
    P: FnMut(Nanos) -> PF,
    PF: Future<Output = ()>,
{
    let started = clock();
    let mut attempts = Attempts::new(retry, started);
    loop {
        if let Tried::Done(t) = attempt(attempts.attempt()).await? {
            return Ok(Ok(t));
        }
        let now = clock();
        match attempts.lost(now, 0, &Contention::default()) {
            Wait::Now => {}
            Wait::Pause(p) => {
                let left = retry.give_up_after.map(|d| d.saturating_sub(now.saturating_sub(started)));
                pause(left.map_or(p, |l| p.min(l))).await
            }
            Wait::GiveUp { attempts } => return Ok(Err(GaveUp { attempts })),
        }
    }
}

/// Looks at `ready` until it answers, pausing between looks as `retry`'s schedule says: a wait
/// for work that keeps its own timeout (an exchange in flight in the isolate, a place in a
/// key's line), so it never gives up; when `retry`'s attempts run out its schedule starts
/// over. The edge gives only the look and the pause.
///
/// ```
/// use core::future::Future;
/// use core::task::{Context, Poll, Waker};
/// use tollgate::store_protocol::{wait_until, Retry};
/// // Not ready for the first ten looks, past `SLICE_WAITS`' four attempts: it looks on.
/// let mut looks = 0;
/// let ready = || { looks += 1; (looks > 10).then_some(looks) };
/// let mut wait = core::pin::pin!(wait_until(Retry::SLICE_WAITS, ready, |_| async {}));
/// assert_eq!(wait.as_mut().poll(&mut Context::from_waker(Waker::noop())), Poll::Ready(11));
/// ```
pub async fn wait_until<T, P, PF>(retry: Retry, mut ready: impl FnMut() -> Option<T>, mut pause: P) -> T
where
    P: FnMut(Nanos) -> PF,
    PF: Future<Output = ()>,
{
    loop {
        let look = |_: u32| core::future::ready(Ok::<_, Infallible>(ready().map_or(Tried::Lost, Tried::Done)));
        match drive(retry, || Nanos::ZERO, look, &mut pause).await {
            Ok(Ok(t)) => return t,
            Ok(Err(GaveUp { .. })) => {}
            Err(never) => match never {},
        }
    }
}
