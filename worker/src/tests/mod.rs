//! The test build's own modules (feature `test-hooks`, with `TEST_MODE` on only): what the
//! workerd tests drive and no production build holds. `routes`: the `/v1/test/` routes;
//! `fault`: a key object failing on demand, and `storage_fault` its SQL storage; `lease_api`:
//! one step of the several-keys protocol by hand; `clock`: a request's own instant (`now`).

pub mod clock;
pub mod fault;
pub mod lease_api;
pub mod routes;
pub mod storage_fault;
