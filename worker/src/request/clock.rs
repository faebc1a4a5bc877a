//! The clock a request is decided by: the runtime's in every production build; the test
//! build's hooks may give a request its own (worker/src/tests/clock.rs), from its `now`.

use serde_json::Value;
use tollgate::Nanos;

use crate::base::errors::ApiError;

#[cfg(feature = "test-hooks")]
pub use crate::tests::clock::{of_request as clock_of, requested};

/// A production build reads no request's clock: its requests never carry one (`now` is
/// refused: [`requested`]).
#[cfg(not(feature = "test-hooks"))]
pub fn clock_of(_: Option<Nanos>) -> crate::base::clock::RealClock {
    crate::base::clock::RealClock
}

/// The instant a body field or query value `now` asks to be decided at: in a production
/// build none, and a request that gives one is refused (`test_mode_disabled`).
#[cfg(not(feature = "test-hooks"))]
pub fn requested(v: Option<&Value>, _switch: bool) -> Result<Option<Nanos>, ApiError> {
    match v {
        None => Ok(None),
        Some(_) => Err(refused()),
    }
}

/// A request's `now` without the test switch.
pub fn refused() -> ApiError {
    ApiError::bad_request(
        "test_mode_disabled",
        "now may only be given when the TEST_MODE var is on; the Durable Object's clock decides",
    )
}

/// `now` from a query string (`?now=1800000000000`), for GET and DELETE: [`requested`].
pub fn query_now(query: Option<&str>, switch: bool) -> Result<Option<Nanos>, ApiError> {
    let value = query
        .unwrap_or("")
        .split('&')
        .filter_map(|pair| pair.split_once('=').or(Some((pair, ""))))
        .find(|(k, _)| *k == "now")
        .map(|(_, v)| v.parse::<u64>().map_or_else(|_| Value::String(v.to_string()), Value::from));
    requested(value.as_ref(), switch)
}
