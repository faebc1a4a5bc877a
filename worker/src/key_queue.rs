//! At most [`MAX_IN_FLIGHT`] requests of this isolate out to one key's Durable Object at a
//! time; the others wait here, in arrival order, before their policy's timeout starts. A
//! flood on one key then queues in the isolate rather than in the object, where a wait longer
//! than `timeoutMs` would look like a failed object and answer by `failure` (fail open would
//! admit the flood): a busy object is never taken for a failed one. Single-threaded, as an
//! isolate is; a waiter keeps a timer of its own pending (`flight::awake`).

use std::cell::RefCell;
use std::collections::{HashMap, VecDeque};
use std::future::Future;
use std::pin::Pin;
use std::rc::Rc;
use std::task::{Context, Poll, Waker};

/// Requests of one isolate out to one object at once: enough to keep the object busy (it
/// decides one after another), few enough that each waits there for a handful only.
pub const MAX_IN_FLIGHT: usize = 8;

/// A place in a key's queue: `granted` once it may go.
#[derive(Default)]
struct Ticket {
    granted: bool,
    waker: Option<Waker>,
}

#[derive(Default)]
struct Line {
    out: usize,
    waiting: VecDeque<Rc<RefCell<Ticket>>>,
}

thread_local! {
    static LINES: RefCell<HashMap<String, Line>> = RefCell::new(HashMap::new());
}

/// Leave to call the object; the next in line goes when it is dropped.
pub struct Permit(String);

impl Drop for Permit {
    fn drop(&mut self) {
        LINES.with(|lines| {
            let mut lines = lines.borrow_mut();
            let Some(line) = lines.get_mut(&self.0) else { return };
            match line.waiting.pop_front() {
                Some(next) => {
                    let mut t = next.borrow_mut();
                    t.granted = true;
                    if let Some(w) = t.waker.take() {
                        w.wake();
                    }
                }
                None => {
                    line.out -= 1;
                    if line.out == 0 {
                        lines.remove(&self.0);
                    }
                }
            }
        });
    }
}

/// Waits for leave to call the object named `name`.
pub async fn enter(name: &str) -> Permit {
    let ticket = LINES.with(|lines| {
        let mut lines = lines.borrow_mut();
        let line = lines.entry(name.to_string()).or_default();
        if line.out < MAX_IN_FLIGHT {
            line.out += 1;
            None
        } else {
            let t = Rc::new(RefCell::new(Ticket::default()));
            line.waiting.push_back(t.clone());
            Some(t)
        }
    });
    if let Some(ticket) = ticket {
        let mut waiting = Waiting { name: name.to_string(), ticket, done: false };
        crate::flight::awake(&mut waiting).await;
        waiting.done = true;
    }
    Permit(name.to_string())
}

/// A place in line. Dropped before its turn (the client went away), it leaves the line; dropped
/// at its turn without going, it passes the turn on.
struct Waiting {
    name: String,
    ticket: Rc<RefCell<Ticket>>,
    done: bool,
}

impl Future for &mut Waiting {
    type Output = ();

    fn poll(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<()> {
        let mut t = self.ticket.borrow_mut();
        if t.granted {
            Poll::Ready(())
        } else {
            t.waker = Some(cx.waker().clone());
            Poll::Pending
        }
    }
}

impl Drop for Waiting {
    fn drop(&mut self) {
        if self.done {
            return;
        }
        if self.ticket.borrow().granted {
            drop(Permit(self.name.clone()));
            return;
        }
        LINES.with(|lines| {
            if let Some(line) = lines.borrow_mut().get_mut(&self.name) {
                line.waiting.retain(|t| !Rc::ptr_eq(t, &self.ticket));
            }
        });
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use futures_util::FutureExt;

    #[test]
    fn the_ninth_waits_until_one_of_the_first_eight_is_done() {
        let mut permits: Vec<Permit> = (0..MAX_IN_FLIGHT).map(|_| enter("k").now_or_never().unwrap()).collect();
        let mut ninth = Box::pin(enter("k"));
        assert!(ninth.as_mut().now_or_never().is_none());
        assert!(enter("other").now_or_never().is_some(), "another key has its own line");
        let mut gone = Box::pin(enter("k"));
        assert!(gone.as_mut().now_or_never().is_none());
        drop(gone); // leaves the line
        permits.pop();
        let ninth = ninth.now_or_never().expect("its turn");
        drop(permits);
        drop(ninth);
        LINES.with(|l| assert!(l.borrow().is_empty()));
    }
}
