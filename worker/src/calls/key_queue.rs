//! At most [`MAX_IN_FLIGHT`] requests of this isolate out to one key's Durable Object at a
//! time; the others wait here, in arrival order, before their policy's timeout starts. A
//! flood on one key then queues in the isolate rather than in the object, where a wait longer
//! than `timeoutMs` would look like a failed object and answer by `failure` (fail open would
//! admit the flood): a busy object is never taken for a failed one. Single-threaded, as an
//! isolate is; a waiter looks at its place on timers of its own (`flight::wait_for`).

use std::cell::{Cell, RefCell};
use std::collections::{HashMap, VecDeque};
use std::rc::Rc;

/// Requests of one isolate out to one object at once: enough to keep the object busy (it
/// decides one after another), few enough that each waits there for a handful only.
pub const MAX_IN_FLIGHT: usize = 8;

#[derive(Default)]
struct Line {
    out: usize,
    /// Places in line; a place's cell turns true when it may go.
    waiting: VecDeque<Rc<Cell<bool>>>,
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
                Some(next) => next.set(true),
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

/// A place in line. Dropped before its turn (the client went away), it leaves the line;
/// dropped at its turn without going, it passes the turn on.
pub struct Waiting {
    name: String,
    turn: Rc<Cell<bool>>,
    gone: bool,
}

impl Waiting {
    /// Its turn has come: the permit.
    pub fn ready(&mut self) -> Option<Permit> {
        if !self.turn.get() {
            return None;
        }
        self.gone = true;
        Some(Permit(self.name.clone()))
    }
}

impl Drop for Waiting {
    fn drop(&mut self) {
        if self.gone {
            return;
        }
        if self.turn.get() {
            drop(Permit(self.name.clone()));
            return;
        }
        LINES.with(|lines| {
            if let Some(line) = lines.borrow_mut().get_mut(&self.name) {
                line.waiting.retain(|t| !Rc::ptr_eq(t, &self.turn));
            }
        });
    }
}

/// Leave to call the object named `name` now, or a place in its line.
pub fn join(name: &str) -> Result<Permit, Waiting> {
    LINES.with(|lines| {
        let mut lines = lines.borrow_mut();
        let line = lines.entry(name.to_string()).or_default();
        if line.out < MAX_IN_FLIGHT {
            line.out += 1;
            Ok(Permit(name.to_string()))
        } else {
            let turn = Rc::new(Cell::new(false));
            line.waiting.push_back(turn.clone());
            Err(Waiting { name: name.to_string(), turn, gone: false })
        }
    })
}

/// Waits for leave to call the object named `name`.
pub async fn enter(name: &str) -> Permit {
    match join(name) {
        Ok(permit) => permit,
        Err(mut waiting) => crate::calls::flight::wait_for(|| waiting.ready()).await,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_ninth_waits_until_one_of_the_first_eight_is_done() {
        let mut permits: Vec<Permit> = (0..MAX_IN_FLIGHT).map(|_| join("k").ok().unwrap()).collect();
        let mut ninth = join("k").err().unwrap();
        assert!(ninth.ready().is_none());
        assert!(join("other").is_ok(), "another key has its own line");
        let gone = join("k").err().unwrap();
        drop(gone); // leaves the line
        permits.pop();
        let ninth = ninth.ready().expect("its turn");
        drop(permits);
        drop(ninth);
        LINES.with(|l| assert!(l.borrow().get("k").is_none()));
    }
}
