//! Faults a workerd test makes a key's Durable Object fail with: the `Tollgate-Test-Fault`
//! header an API request carries, and the object answering it (TEST_MODE on only).

use std::cell::RefCell;

use serde::{Deserialize, Serialize};
use worker::Request;

use super::storage_fault::{self, Armed, StorageFault};
use crate::base::errors::ApiError;
use crate::config::settings::Config;
use crate::object::Mem;

/// The header a test sets to make the Durable Object fail.
pub const FAULT_HEADER: &str = "Tollgate-Test-Fault";

/// How long an injected `timeout` fault keeps the caller waiting (beyond any test timeout).
const FAULT_DELAY: std::time::Duration = std::time::Duration::from_millis(3_000);

/// A fault the Durable Object injects (`wire::DoRequest::fault`).
#[derive(Copy, Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Fault {
    /// Answer 500.
    Error,
    /// Answer only after a long delay (longer than any policy's timeout in the tests).
    Timeout,
    /// Fail the object's next storage reads or writes (`storage_fault.rs`).
    Storage(StorageFault),
}

impl Fault {
    /// From the `Tollgate-Test-Fault` header value.
    pub fn parse(s: &str) -> Option<Fault> {
        match s.trim() {
            "error" => Some(Fault::Error),
            "timeout" => Some(Fault::Timeout),
            other => StorageFault::parse(other).map(Fault::Storage),
        }
    }
}

/// The injected fault an API request asks for, when the test hooks are on.
pub fn of_request(cfg: &Config, req: &Request) -> Option<Fault> {
    if !cfg.test_hooks() {
        return None;
    }
    req.headers().get(FAULT_HEADER).ok().flatten().and_then(|v| Fault::parse(&v))
}

/// Arms a storage fault in the object, or fails its request (after a delay, for `timeout`).
pub async fn inject(fault: Fault, cfg: &Config, armed: &Armed, mem: &RefCell<Mem>) -> Result<(), ApiError> {
    if !cfg.test_hooks() {
        return Ok(());
    }
    if let Fault::Storage(f) = fault {
        storage_fault::arm(armed, mem, f);
        return Ok(());
    }
    if fault == Fault::Timeout {
        worker::Delay::from(FAULT_DELAY).await;
    }
    Err(ApiError::internal(format!("injected fault: {fault:?}")))
}
