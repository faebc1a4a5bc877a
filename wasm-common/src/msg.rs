//! Messages without `core::fmt`: the core's builder (`tollgate::text`), which the spec
//! parser's errors use too.

pub use tollgate::text::{push_u64, Msg};
