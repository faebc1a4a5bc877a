//! `Policy.headers`: the core's header writer (`tollgate::headers`) for a decision JavaScript
//! holds. The decision comes back in as numbers (`lib/limiter/header-record.js` lays them out), is read
//! back by the core (`tollgate::layout::read_header_record`) and written by `Policy::headers`,
//! so the package writes exactly what the Worker writes.

use alloc::string::String;
use tollgate::headers::{HeaderOptions, Standard};
use tollgate::layout::read_header_record;
use wasm_bindgen::prelude::*;

use crate::errors::type_error;
use crate::policy::Policy;

#[wasm_bindgen]
impl Policy {
    /// The headers of the decision laid out in `record`, as `name\nvalue\n...`. `standard`:
    /// 6, 7, 8, 10 or 0 (none); `jitter`: a draw in `[0, 1)`, or -1 for none.
    pub fn headers(
        &self,
        record: &[f64],
        standard: u32,
        legacy: bool,
        partition_key: Option<String>,
        jitter: f64,
    ) -> Result<String, JsValue> {
        let (pd, now) = read_header_record(record, self.inner.limits().len())
            .ok_or_else(|| type_error("headers: not a decision of this limiter"))?;
        let options = HeaderOptions {
            standard: Standard::from_draft(standard),
            legacy,
            partition_key: partition_key.as_deref(),
            jitter: (jitter >= 0.0).then_some(jitter),
        };
        let mut out = String::new();
        self.inner.write_headers(&mut out, &pd, now, &options);
        Ok(out)
    }
}
