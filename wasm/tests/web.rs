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

#[wasm_bindgen_test]
fn headers_of_a_record_that_is_not_a_decision_throw_and_odd_numbers_never_panic() {
    let p = policy("gcra", "10/s").unwrap();
    for bad in [&[][..], &[1.0][..], &[0.0; 10][..], &[f64::NAN; 18][..]] {
        assert!(p.headers(bad, 10, true, None, -1.0).is_err());
    }
    // One pair whose limit is not this policy's: an error, not a panic.
    let mut r = [0.0; 18];
    r[9] = 1.0;
    r[11] = 3.0;
    assert!(p.headers(&r, 10, true, None, -1.0).is_err());
    // Odd figures (NaN, negative, huge) are written as something, never a panic.
    let mut r = [f64::NAN; 18];
    r[9] = 1.0;
    r[10] = 0.0;
    r[11] = 0.0;
    r[14] = -5.0;
    r[15] = 1e300;
    for standard in [0, 6, 7, 8, 10] {
        let text = p.headers(&r, standard, true, Some("k".into()), 0.5).unwrap();
        assert!(text.contains("X-RateLimit-Limit\n10"), "{text}");
    }
}
