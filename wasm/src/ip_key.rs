//! `ipKeyOf`: the rate-limit key of a client address, the core's (`tollgate::ip_key`), for the
//! npm package's `ipKey`, `ipKeyGenerator` and its middleware's default key (lib/http/client-ip.js).
//! In the limiter's module only: `tollgate/lite` has no middleware.

use alloc::string::String;
use wasm_bindgen::prelude::*;

/// `address` as a key, its IPv6 networks of `prefix` bits; undefined when it is no address.
#[wasm_bindgen(js_name = ipKeyOf)]
pub fn ip_key_of(address: &str, prefix: u8) -> Option<String> {
    tollgate::ip_key::ip_key(address, prefix)
}
