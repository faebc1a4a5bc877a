//! The bottom layer: what every other layer may use and which uses nothing of the crate: errors,
//! logs, the clock.

pub mod clock;
pub mod errors;
pub mod http;
pub mod log;
