//! The test build's own modules (feature `test-hooks`, with `TEST_MODE` on only): what the
//! workerd tests drive and no production build holds. `storage_fault`: a key object's SQL
//! storage failing on demand; `lease_api`: one step of the several-keys protocol by hand.

pub mod lease_api;
pub mod storage_fault;
