//! The routes and their handlers, the top layer: each reads its request, decides, answers.

pub mod api;
pub mod concurrency_api;
pub mod exact_keys;
pub mod pools_api;
pub mod proxy;
pub mod proxy_slot;
pub mod reserve_api;
pub mod routes;
pub mod state_api;
