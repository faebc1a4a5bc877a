//! The configuration: the Worker's vars read once per isolate into policies (the core's spec
//! parser), pools, proxy mode. Uses only `base`.

pub mod env_config;
pub mod pool_config;
pub mod settings;
pub mod spec_input;
pub mod tiers;
pub mod vars;
