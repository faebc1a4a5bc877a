//! A request's own clock: the instant in its body's `now` (`TEST_MODE` on), which the isolate
//! decides at and sends to the key's object so that it decides at it too. Without one, the
//! runtime's clock, as in every production build.

use serde_json::Value;
use tollgate::Nanos;

use crate::base::clock::{clock, Clock};
use crate::base::errors::ApiError;
use tollgate::time::MAX_EPOCH_MS;
use crate::request::clock::refused;

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

/// A body field's or query value's `now` (epoch ms), taken only with the test switch on.
pub fn requested(v: Option<&Value>, switch: bool) -> Result<Option<Nanos>, ApiError> {
    match v {
        None => Ok(None),
        Some(_) if !switch => Err(refused()),
        Some(n) => n.as_f64().and_then(Nanos::from_epoch_ms).map(Some).ok_or_else(|| {
            let m = format!("now must be epoch milliseconds between 0 and {MAX_EPOCH_MS}, got {n}");
            ApiError::bad_request("invalid_now", m).with_field("now")
        }),
    }
}
