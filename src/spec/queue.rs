//! Waiting in line for a concurrency slot (`maxQueue`, `maxWait`, docs/concurrency.md
//! "Waiting in line"): the options of `acquire` and of the middlewares, and their domains.
//! Every edge reads them with these rules (the npm package through the generated contract).

use crate::algorithms::MAX_QUEUE;
use crate::time::Nanos;

use super::{duration, whole, Input, SpecError};

/// The options of waiting in line, as every edge spells them (the rows of [`super::typed::QUEUE`]).
pub const QUEUE_FIELDS: [&str; 2] = super::typed::names(&super::typed::QUEUE);

/// `maxQueue` when only `maxWait` is given: how many may wait for one key.
pub const DEFAULT_MAX_QUEUE: u64 = 1_000;

/// The longest `maxWait`, and the wait when only `maxQueue` is given: an hour.
pub const MAX_WAIT: Nanos = Nanos::from_secs(3_600);

/// What the options ask: join a line of at most `max_queue` waiters, for at most `max_wait`.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub struct QueueSpec {
    /// `maxQueue`: 0 (never wait) to [`MAX_QUEUE`]; [`DEFAULT_MAX_QUEUE`] when absent.
    pub max_queue: u64,
    /// `maxWait`: 0 to [`MAX_WAIT`] (ms or a duration); [`MAX_WAIT`] when absent.
    pub max_wait: Nanos,
}

/// `maxQueue` and `maxWait` of `input`: `None` when neither is given (no waiting: a denial
/// at once).
pub fn parse_queue<I: Input>(input: &I) -> Result<Option<QueueSpec>, SpecError> {
    let max_queue = whole(input, QUEUE_FIELDS[0], 0, MAX_QUEUE, "")?;
    let max_wait = duration(input, QUEUE_FIELDS[1], 0)?;
    if let Some(w) = max_wait.filter(|w| *w > MAX_WAIT) {
        let m = crate::text::Msg::new(QUEUE_FIELDS[1]).s(" is longer than the maximum ").n(MAX_WAIT.as_nanos() / 1_000_000).s(" ms, got ").n(w.as_nanos() / 1_000_000);
        return Err(SpecError::new(super::code::OUT_OF_RANGE, QUEUE_FIELDS[1], m));
    }
    if max_queue.is_none() && max_wait.is_none() {
        return Ok(None);
    }
    Ok(Some(QueueSpec { max_queue: max_queue.unwrap_or(DEFAULT_MAX_QUEUE), max_wait: max_wait.unwrap_or(MAX_WAIT) }))
}
