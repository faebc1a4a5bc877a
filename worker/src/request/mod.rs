//! Reading requests: bodies, paths and headers validated into what the handlers decide on.

pub mod api_request;
pub mod auth;
pub mod clock;
pub mod pool_request;
pub mod proxy_headers;
