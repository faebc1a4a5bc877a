//! The wasm classes under wasm-bindgen-test: run under Node and in headless Chromium
//! (scripts/test-pkg.sh sets the runner).
use tollgate_wasm::{Limiter, Policy};
use wasm_bindgen::JsCast;
use wasm_bindgen_test::*;

/// A policy of one limit, from the options object a JavaScript user would write.
fn policy(algorithm: &str, quota: &str) -> Result<Policy, wasm_bindgen::JsValue> {
    let options = js_sys::Object::new();
    js_sys::Reflect::set(&options, &"algorithm".into(), &algorithm.into()).unwrap();
    js_sys::Reflect::set(&options, &"quota".into(), &quota.into()).unwrap();
    Policy::new(options.into(), vec![])
}

#[wasm_bindgen_test]
fn a_gcra_limiter_admits_its_quota_then_denies() {
    let mut l = Limiter::new(&policy("gcra", "3/s").unwrap(), 0.0);
    for _ in 0..3 {
        assert!(l.limit("k", 1_000.0, 1.0).unwrap());
    }
    assert!(!l.limit("k", 1_000.0, 1.0).unwrap());
    assert_eq!(l.size(), 1);
    assert_eq!(l.prune(10_000.0).unwrap(), 1);
}

#[wasm_bindgen_test]
fn bad_input_throws_a_range_or_type_error_and_changes_nothing() {
    let e = policy("gcra", "0/s").err().unwrap();
    assert!(e.is_instance_of::<js_sys::RangeError>());
    let e = policy("leaky", "1/s").err().unwrap();
    assert!(e.is_instance_of::<js_sys::TypeError>());
    // The core's code and field, as the Worker answers them for the same mistake.
    let prop = |name: &str| js_sys::Reflect::get(&e, &name.into()).unwrap().as_string();
    assert_eq!((prop("code").as_deref(), prop("field").as_deref()), (Some("invalid_value"), Some("algorithm")));
    let mut l = Limiter::new(&policy("fixed-window", "2/s").unwrap(), 0.0);
    let e = l.limit("k", -1.0, 1.0).err().unwrap();
    assert!(e.is_instance_of::<js_sys::RangeError>());
    let e = l.limit("k", 1.0, 3.0).err().unwrap();
    assert!(e.is_instance_of::<js_sys::RangeError>());
    assert_eq!(l.size(), 0);
}

#[wasm_bindgen_test]
fn an_exported_state_imports_and_bad_bytes_throw_and_change_nothing() {
    let mut l = Limiter::new(&policy("token-bucket", "2/s").unwrap(), 0.0);
    assert!(l.limit("k", 5_000.0, 1.0).unwrap());
    let bytes = l.export_state("k").unwrap().unwrap();
    let mut m = Limiter::new(&policy("token-bucket", "2/s").unwrap(), 0.0);
    m.import_state("k", Some(bytes.clone())).unwrap();
    assert!(m.limit("k", 5_000.0, 1.0).unwrap());
    assert!(!m.limit("k", 5_000.0, 1.0).unwrap());
    let e = m.import_state("j", Some(bytes[..bytes.len() - 1].to_vec())).err().unwrap();
    assert!(e.is_instance_of::<js_sys::TypeError>());
    assert_eq!(m.size(), 1);
}
