//! The clock a request is decided by: the runtime's in every production build; the test
//! build's hooks may give a request its own (worker/src/tests/clock.rs).

#[cfg(feature = "test-hooks")]
pub use crate::tests::clock::of_request as clock_of;

/// A production build reads no request's clock: its requests never carry one (`now` is
/// refused without the test switch).
#[cfg(not(feature = "test-hooks"))]
pub fn clock_of(_: Option<tollgate::Nanos>) -> crate::base::clock::RealClock {
    crate::base::clock::RealClock
}
