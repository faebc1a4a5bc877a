//! The wasm classes under wasm-bindgen-test: run under Node and in headless Chromium
//! (scripts/test-pkg.sh sets the runner).
use js_sys::Array;
use tollgate_wasm::{Limiter, Policy};
use wasm_bindgen::JsCast;
use wasm_bindgen_test::*;

fn policy(algorithm: &str, quota: &str) -> Result<Policy, wasm_bindgen::JsValue> {
    Policy::new(vec!["default".into()], vec![algorithm.into()], vec![quota.into()], vec![0.0], vec!["".into()])
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
    let mut l = Limiter::new(&policy("fixed-window", "2/s").unwrap(), 0.0);
    let e = l.limit("k", -1.0, 1.0).err().unwrap();
    assert!(e.is_instance_of::<js_sys::RangeError>());
    let e = l.limit("k", 1.0, 3.0).err().unwrap();
    assert!(e.is_instance_of::<js_sys::RangeError>());
    assert_eq!(l.size(), 0);
}

#[wasm_bindgen_test]
fn policy_check_returns_new_states_and_leaves_inputs_alone() {
    let mut p = policy("token-bucket", "2/s").unwrap();
    let states = Array::of1(&wasm_bindgen::JsValue::NULL);
    let next = p.check(&states, 5_000.0, 1.0).unwrap();
    assert!(states.get(0).is_null());
    let bytes = next.get(0).dyn_into::<js_sys::Uint8Array>().unwrap().to_vec();
    p.validate_state(&bytes).unwrap();
    assert!(p.validate_state(&bytes[..bytes.len() - 1]).is_err());
}
