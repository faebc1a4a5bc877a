use crate::headers::Standard;
use alloc::boxed::Box;
use alloc::vec;

use super::*;

/// A JSON-like value for the tests: what every edge's `Input` amounts to.
#[derive(Clone, Debug)]
enum J {
    S(&'static str),
    N(f64),
    B(bool),
    L(Vec<J>),
    O(Vec<(&'static str, J)>),
    Null,
}

impl Input for J {
    fn get(&self, name: &str) -> Value<J> {
        let J::O(fields) = self else { return Value::Missing };
        fields.iter().find(|(k, _)| *k == name).map_or(Value::Missing, |(_, v)| v.value())
    }
    fn field_names(&self) -> Vec<String> {
        let J::O(fields) = self else { return Vec::new() };
        fields.iter().map(|(k, _)| (*k).into()).collect()
    }
}

impl J {
    fn value(&self) -> Value<J> {
        match self {
            J::S(s) => Value::Text((*s).into()),
            J::N(n) => Value::Number(*n),
            J::B(b) => Value::Bool(*b),
            J::L(l) => Value::List(l.iter().map(J::value).collect()),
            o @ J::O(_) => Value::Object(o.clone()),
            J::Null => Value::Null,
        }
    }
}

use J::*;

fn err(v: J) -> SpecError {
    parse_policy(&v, &["maxKeys"]).unwrap_err()
}

fn check(v: J, code: &str, field: &str, message: &str) {
    let e = err(v);
    assert_eq!((e.code, e.field.as_str()), (code, field), "{}", e.message);
    assert_eq!(e.message, message);
}

#[test]
fn one_limit_in_each_quota_form() {
    for v in [
        O(vec![("algorithm", S("gcra")), ("quota", S("100/s"))]),
        O(vec![("algorithm", S("gcra")), ("limit", N(100.0)), ("window", S("1s"))]),
        O(vec![("algorithm", S("gcra")), ("limit", N(100.0)), ("window", N(1000.0))]),
    ] {
        let p = parse_policy(&v, &[]).unwrap();
        assert_eq!(p.limits[0], LimitSpec::new(Kind::Gcra, 100, Nanos::from_secs(1)));
        assert_eq!(p.policy.limits()[0].name(), "default");
    }
}

/// `parse_one_limit` (the lite module's parser) reads one limit at the top as `parse_policy`
/// does, and knows neither `limits` nor the penalty's options.
#[test]
fn one_limit_alone_parses_as_in_a_policy_and_knows_no_list_or_penalty() {
    let one = O(vec![("algorithm", S("sliding-buckets")), ("quota", S("12/1s")), ("precision", N(250.0)), ("offset", S("100ms")), ("maxKeys", N(5.0))]);
    let (a, b) = (parse_one_limit(&one, &["maxKeys"]).unwrap(), parse_policy(&one, &["maxKeys"]).unwrap());
    assert_eq!((a.limits, a.policy), (b.limits, b.policy));
    let bad = O(vec![("algorithm", S("gcra")), ("quota", S("0/s"))]);
    let (a, b) = (parse_one_limit(&bad, &[]).unwrap_err(), parse_policy(&bad, &[]).unwrap_err());
    assert_eq!((a.code, a.field, a.message), (b.code, b.field, b.message));
    for field in ["limits", "blockDuration", "continueExceeding", "exponentialBackoff", "maxBlockDuration"] {
        let v = O(vec![("algorithm", S("gcra")), ("quota", S("1/s")), (field, B(false))]);
        let e = parse_one_limit(&v, &["maxKeys"]).unwrap_err();
        assert_eq!((e.code, e.field.as_str()), (code::UNKNOWN_FIELD, field), "{}", e.message);
    }
}

#[test]
fn every_option_reaches_the_core() {
    let v = O(vec![(
        "limits",
        L(vec![
            O(vec![
                ("algorithm", S("token-bucket")),
                ("quota", S("100/s")),
                ("burst", N(500.0)),
                ("refillAmount", N(10.0)),
            ]),
            O(vec![
                ("algorithm", S("sliding-buckets")),
                ("quota", S("12/1s")),
                ("precision", N(250.0)),
                ("offset", S("0s")),
            ]),
            O(vec![
                ("algorithm", S("fixed-window")),
                ("quota", S("5000/1h")),
                ("offset", S("15m")),
                ("name", S("hour")),
            ]),
            O(vec![("algorithm", S("fixed-window")), ("quota", S("15/2s")), ("align", S("first-hit"))]),
            O(vec![("algorithm", S("fixed-window")), ("quota", S("15/2s")), ("align", S("clock"))]),
        ]),
    )]);
    let p = parse_policy(&v, &[]).unwrap();
    assert_eq!((p.limits[0].burst, p.limits[0].refill_amount), (Some(500), Some(10)));
    assert_eq!((p.limits[1].precision, p.limits[1].offset), (Some(Nanos::from_millis(250)), Some(Nanos::ZERO)));
    assert_eq!(p.limits[2].offset, Some(Nanos::from_secs(900)));
    assert_eq!(p.limits[3].algorithm, Kind::FixedWindowFirstHit);
    assert_eq!(p.limits[4].algorithm, Kind::FixedWindow);
    let names: Vec<&str> = p.policy.limits().iter().map(|l| l.name()).collect();
    assert_eq!(names, ["limit-0", "limit-1", "hour", "limit-3", "limit-4"]);
}

#[test]
fn every_algorithm_name_parses_and_round_trips() {
    for (name, kind) in ALGORITHMS.into_iter().zip(KINDS) {
        let mut fields = vec![("algorithm", S(name)), ("quota", S("10/s"))];
        if kind == Kind::SlidingBuckets {
            fields.push(("precision", S("100ms")));
        }
        let p = parse_policy(&O(fields), &[]).unwrap();
        assert_eq!(p.limits[0].algorithm, kind);
        assert_eq!(config_name(kind), (name, None));
    }
    assert_eq!(config_name(Kind::FixedWindowFirstHit), ("fixed-window", Some("first-hit")));
    // Every core algorithm has a configuration name.
    for kind in Kind::ALL {
        assert!(!config_name(kind).0.is_empty(), "{kind:?}");
    }
}

#[test]
fn errors_name_the_field_and_speak_the_units_written() {
    let buckets = |window: J, precision: J| {
        O(vec![("algorithm", S("sliding-buckets")), ("limit", N(10.0)), ("window", window), ("precision", precision)])
    };
    check(
        buckets(S("1s"), S("300ms")),
        "out_of_range",
        "precision",
        "precision 300ms must divide the window 1s exactly",
    );
    check(
        buckets(N(1000.0), N(300.0)),
        "out_of_range",
        "precision",
        "precision 300 ms must divide the window 1000 ms exactly",
    );
    check(
        buckets(S("1h"), S("1ms")),
        "out_of_range",
        "precision",
        "precision 1ms splits the window 1h into 3600000 buckets; at most 3600 are allowed",
    );
    check(
        O(vec![("algorithm", S("sliding-buckets")), ("quota", S("10/s"))]),
        "missing_field",
        "precision",
        "precision is required with sliding-buckets (one bucket's length, e.g. \"100ms\")",
    );
    check(
        O(vec![("algorithm", S("fixed-window")), ("quota", S("10/1h")), ("offset", S("2h"))]),
        "out_of_range",
        "offset",
        "offset 2h must be shorter than the window 1h",
    );
    check(
        O(vec![("algorithm", S("sliding-buckets")), ("quota", S("10/1s")), ("precision", S("250ms")), ("offset", S("1s"))]),
        "out_of_range",
        "offset",
        "offset 1s must be shorter than the window 1s",
    );
    check(
        O(vec![("algorithm", S("gcra")), ("limit", N(2_000_000.0)), ("window", S("1ms"))]),
        "out_of_range",
        "limit",
        "rate too high: 2000000 hits in 1ms is more than one per nanosecond",
    );
    check(
        O(vec![("algorithm", S("gcra")), ("limit", N(1e300)), ("window", S("1s"))]),
        "out_of_range",
        "limit",
        "limit must be a whole number from 1 to 9007199254740991, got a number above 2^64",
    );
    check(
        O(vec![("algorithm", S("gcra")), ("limit", N(10.0)), ("window", N(9007199254740991.0))]),
        "out_of_range",
        "window",
        "window of 9007199254740991 ms is longer than the maximum 31622400000 ms",
    );
    check(
        O(vec![("algorithm", S("gcra")), ("limit", N(10.0)), ("window", S("400d"))]),
        "out_of_range",
        "window",
        "window \"400d\" is longer than the maximum 366 days",
    );
    check(
        O(vec![("algorithm", S("token-bucket")), ("quota", S("10/s")), ("refillAmount", N(11.0))]),
        "out_of_range",
        "refillAmount",
        "refillAmount 11 must be between 1 and the capacity 10",
    );
}

#[test]
fn every_mistake_has_a_code_and_a_field() {
    let gcra = |extra: Vec<(&'static str, J)>| {
        let mut f = vec![("algorithm", S("gcra")), ("quota", S("10/s"))];
        f.extend(extra);
        O(f)
    };
    let cases: Vec<(J, &str, &str)> = vec![
        (gcra(vec![("brust", N(5.0))]), "unknown_field", "brust"),
        (gcra(vec![("burst", S("5"))]), "invalid_type", "burst"),
        (gcra(vec![("burst", N(0.0))]), "out_of_range", "burst"),
        (gcra(vec![("burst", N(1.5))]), "out_of_range", "burst"),
        (gcra(vec![("burst", N(-3.0))]), "out_of_range", "burst"),
        (gcra(vec![("burst", N(f64::NAN))]), "out_of_range", "burst"),
        (gcra(vec![("limit", N(5.0))]), "conflicting_fields", "quota"),
        (gcra(vec![("precision", S("1s"))]), "unsupported_option", "precision"),
        (gcra(vec![("offset", N(5.0))]), "unsupported_option", "offset"),
        (gcra(vec![("refillAmount", N(5.0))]), "unsupported_option", "refillAmount"),
        (gcra(vec![("align", S("first-hit"))]), "unsupported_option", "align"),
        (gcra(vec![("name", S("a b"))]), "invalid_value", "name"),
        (gcra(vec![("name", N(3.0))]), "invalid_type", "name"),
        (gcra(vec![("onError", S("open"))]), "renamed", "onError"),
        (gcra(vec![("blockDuration", S("soon"))]), "invalid_value", "blockDuration"),
        (gcra(vec![("blockDuration", N(-1.0))]), "out_of_range", "blockDuration"),
        (gcra(vec![("blockDuration", N(1.5))]), "out_of_range", "blockDuration"),
        (gcra(vec![("blockDuration", B(true))]), "invalid_type", "blockDuration"),
        (gcra(vec![("continueExceeding", S("yes"))]), "invalid_type", "continueExceeding"),
        (gcra(vec![("exponentialBackoff", N(1.0))]), "invalid_type", "exponentialBackoff"),
        (gcra(vec![("continueExceeding", B(true)), ("exponentialBackoff", B(true))]), "conflicting_fields", "exponentialBackoff"),
        (gcra(vec![("maxBlockDuration", S("1h"))]), "unsupported_option", "maxBlockDuration"),
        (gcra(vec![("exponentialBackoff", B(true)), ("maxBlockDuration", N(0.0))]), "out_of_range", "maxBlockDuration"),
        (gcra(vec![("exponentialBackoff", B(true)), ("maxBlockDuration", S("soon"))]), "invalid_value", "maxBlockDuration"),
        (
            O(vec![("algorithm", S("fixed-window")), ("quota", S("1/s")), ("align", S("sometimes"))]),
            "invalid_value",
            "align",
        ),
        (
            O(vec![("algorithm", S("fixed-window")), ("quota", S("1/s")), ("burst", N(3.0))]),
            "unsupported_option",
            "burst",
        ),
        (O(vec![("algorithm", S("fixed-window-first-hit")), ("quota", S("1/s"))]), "renamed", "algorithm"),
        (O(vec![("algorithm", S("leaky-bucket")), ("quota", S("1/s"))]), "renamed", "algorithm"),
        (O(vec![("algorithm", S("leaky")), ("quota", S("1/s"))]), "invalid_value", "algorithm"),
        (O(vec![("algorithm", N(1.0)), ("quota", S("1/s"))]), "invalid_type", "algorithm"),
        (O(vec![("quota", S("1/s"))]), "missing_field", "algorithm"),
        (O(vec![("algorithm", S("gcra"))]), "missing_field", "limit"),
        (O(vec![("algorithm", S("gcra")), ("limit", N(5.0))]), "missing_field", "window"),
        (O(vec![("algorithm", S("gcra")), ("limit", N(5.0)), ("window", S("soon"))]), "invalid_value", "window"),
        (O(vec![("algorithm", S("gcra")), ("limit", N(5.0)), ("window", S("0s"))]), "out_of_range", "window"),
        (O(vec![("algorithm", S("gcra")), ("limit", N(5.0)), ("window", N(0.0))]), "out_of_range", "window"),
        (O(vec![("algorithm", S("gcra")), ("limit", N(5.0)), ("window", B(true))]), "invalid_type", "window"),
        (O(vec![("algorithm", S("gcra")), ("quota", S("5/parsec"))]), "invalid_value", "quota"),
        (O(vec![("algorithm", S("gcra")), ("quota", S("0/s"))]), "out_of_range", "quota"),
        (O(vec![("algorithm", S("gcra")), ("quota", N(5.0))]), "invalid_type", "quota"),
        (O(vec![("limits", L(vec![]))]), "out_of_range", "limits"),
        (O(vec![("limits", S("x"))]), "invalid_type", "limits"),
        (O(vec![("limits", L(vec![Null]))]), "invalid_type", "limits[0]"),
        (O(vec![("limits", L(vec![gcra(vec![])])), ("burst", N(5.0))]), "conflicting_fields", "burst"),
        (O(vec![("limits", L(vec![gcra(vec![])])), ("algorithm", S("gcra"))]), "conflicting_fields", "algorithm"),
        (O(vec![("limits", L(vec![gcra(vec![])])), ("maxkeys", N(5.0))]), "unknown_field", "maxkeys"),
        (O(vec![("limits", L(vec![gcra(vec![]), gcra(vec![("windw", N(1.0))])]))]), "unknown_field", "limits[1].windw"),
        (O(vec![("limits", L(vec![gcra(vec![]), gcra(vec![("burst", N(0.5))])]))]), "out_of_range", "limits[1].burst"),
        (
            O(vec![("limits", L(vec![gcra(vec![("name", S("a"))]), gcra(vec![("name", S("a"))])]))]),
            "duplicate_name",
            "limits[1].name",
        ),
    ];
    for (v, code, field) in cases {
        let e = err(v.clone());
        assert_eq!((e.code, e.field.as_str()), (code, field), "{v:?}: {}", e.message);
        assert!(e.message.starts_with(field) || e.message.contains(field), "{}", e.message);
        assert!(CODES.contains(&e.code));
    }
    // The edge's own fields are accepted beside the limits, and listed with them.
    assert!(parse_policy(&gcra(vec![("maxKeys", N(5.0))]), &["maxKeys"]).is_ok());
    assert_eq!(
        err(gcra(vec![("brust", N(5.0))])).message,
        "brust is not an option (the options are algorithm, limit, window, quota, burst, refillAmount, align, \
         precision, offset, name, limits, blockDuration, continueExceeding, exponentialBackoff, maxBlockDuration, \
         maxKeys)"
    );
    let _ = Box::new(0);
}

#[test]
fn the_first_hit_spelling_says_what_to_write() {
    let e = err(O(vec![("algorithm", S("fixed-window-first-hit")), ("quota", S("1/s"))]));
    assert_eq!(
        e.message,
        "algorithm \"fixed-window-first-hit\" is not a name here; write algorithm \"fixed-window\" with align \"first-hit\""
    );
    let e = err(O(vec![
        ("algorithm", S("fixed-window")),
        ("align", S("first-hit")),
        ("quota", S("1/s")),
        ("offset", N(5.0)),
    ]));
    assert_eq!(e.message, "algorithm \"fixed-window\" with align \"first-hit\" does not take the option \"offset\"");
}

#[test]
fn numbers_are_shown_as_written() {
    assert_eq!(show_number(12.0), "12");
    assert_eq!(show_number(-5.0), "-5");
    assert_eq!(show_number(0.5), "0.5");
    assert_eq!(show_number(f64::NAN), "NaN");
    assert_eq!(show_number(f64::NEG_INFINITY), "-Infinity");
}

#[test]
fn block_duration_is_a_policy_option_beside_one_limit_or_several() {
    let one = parse_policy(&O(vec![("algorithm", S("gcra")), ("quota", S("1/s")), ("blockDuration", S("15m"))]), &[])
        .unwrap();
    assert_eq!(one.policy.block_duration(), Nanos::from_secs(900));
    let limit = O(vec![("algorithm", S("gcra")), ("quota", S("1/s"))]);
    let several = parse_policy(&O(vec![("limits", L(vec![limit])), ("blockDuration", N(250.0))]), &[]).unwrap();
    assert_eq!(several.policy.block_duration(), Nanos::from_millis(250));
    let off =
        parse_policy(&O(vec![("algorithm", S("gcra")), ("quota", S("1/s")), ("blockDuration", N(0.0))]), &[]).unwrap();
    assert_eq!(off.policy.block_duration(), Nanos::ZERO, "0 is no penalty, as in rate-limiter-flexible");
}

#[test]
fn the_escalations_are_policy_options_whose_block_defaults_to_the_window() {
    use crate::penalty::Escalation;
    let fw = |extra: Vec<(&'static str, J)>| {
        let mut fields = vec![("algorithm", S("fixed-window")), ("quota", S("5/30s"))];
        fields.extend(extra);
        parse_policy(&O(fields), &[]).unwrap().policy
    };
    let renew = fw(vec![("continueExceeding", B(true))]);
    assert_eq!(renew.escalation(), Escalation::Renew);
    assert_eq!(renew.block_duration(), Nanos::from_secs(30), "the peers renew the window");
    let renew = fw(vec![("continueExceeding", B(true)), ("blockDuration", S("2m"))]);
    assert_eq!((renew.escalation(), renew.block_duration()), (Escalation::Renew, Nanos::from_secs(120)));
    let double = fw(vec![("exponentialBackoff", B(true))]);
    assert_eq!(double.escalation(), Escalation::Double { cap: DEFAULT_MAX_BLOCK_DURATION });
    assert_eq!(double.block_duration(), Nanos::from_secs(30));
    let capped = fw(vec![("exponentialBackoff", B(true)), ("maxBlockDuration", S("1h"))]);
    assert_eq!(capped.escalation(), Escalation::Double { cap: Nanos::from_secs(3600) });
    let off = fw(vec![("continueExceeding", B(false)), ("exponentialBackoff", B(false))]);
    assert_eq!((off.escalation(), off.block_duration()), (Escalation::None, Nanos::ZERO));
    // The configuration's bytes carry the escalation (what a stored state was written under).
    for p in [renew, capped, off] {
        let back = crate::policy_codec::decode_policy(&crate::policy_codec::encode_policy(&p)).unwrap();
        assert_eq!(back, p);
    }
}

/// A pool's fields, and the code, field and message of the mistake among them.
type PoolCase = (Vec<(&'static str, J)>, &'static str, &'static str, &'static str);

fn pool_err(fields: Vec<(&'static str, J)>) -> SpecError {
    parse_pool(&O(fields), &["timeoutMs"]).unwrap_err()
}

#[test]
fn a_pool_parses_with_its_defaults_and_the_edges_fields() {
    let p = parse_pool(&O(vec![("partitions", N(20.0)), ("rate", S("25/s")), ("timeoutMs", N(5.0))]), &["timeoutMs"])
        .unwrap();
    assert_eq!((p.pool.partitions(), p.pool.partition_rate(), p.pool.window()), (20, 25, Nanos::from_secs(1)));
    assert_eq!((p.capacity(), p.max_ttl), (500, crate::lease::DEFAULT_MAX_TTL));
    assert_eq!(p.pool.free(Nanos::ZERO), 20, "the pool starts empty");
    let p = parse_pool(&O(vec![("partitions", N(4.0)), ("rate", S("600/m")), ("maxTtl", N(30_000.0))]), &[]).unwrap();
    assert_eq!((p.capacity(), p.pool.window(), p.max_ttl), (2400, Nanos::from_secs(60), Nanos::from_secs(30)));
    let p = parse_pool(&O(vec![("partitions", N(1.0)), ("rate", S("1/s")), ("maxTtl", S("1d"))]), &[]).unwrap();
    assert_eq!(p.max_ttl, crate::lease::MAX_TTL, "the longest lease is allowed");
}

/// Each of a pool's mistakes, by code and field, in the words the user wrote.
#[test]
fn every_pool_mistake_has_a_code_and_a_field() {
    let pr = |extra: Vec<(&'static str, J)>| {
        let mut f = vec![("partitions", N(2.0)), ("rate", S("1/s"))];
        f.extend(extra);
        f
    };
    let cases: Vec<PoolCase> = vec![
        (
            pr(vec![("ttl", S("5s"))]),
            "unknown_field",
            "ttl",
            "ttl is not an option (the options are partitions, rate, maxTtl, timeoutMs)",
        ),
        (
            pr(vec![("onError", S("open"))]),
            "renamed",
            "onError",
            "onError is not an option here; write failure (\"open\" or \"closed\")",
        ),
        (
            vec![("rate", S("1/s"))],
            "missing_field",
            "partitions",
            "partitions is required: how many partitions the capacity is split into",
        ),
        (
            vec![("partitions", S("2")), ("rate", S("1/s"))],
            "invalid_type",
            "partitions",
            "partitions must be a number, got \"2\"",
        ),
        (
            vec![("partitions", N(0.0)), ("rate", S("1/s"))],
            "out_of_range",
            "partitions",
            "partitions must be a whole number from 1 to 1024, got 0",
        ),
        (
            vec![("partitions", N(1025.0)), ("rate", S("1/s"))],
            "out_of_range",
            "partitions",
            "partitions must be a whole number from 1 to 1024, got 1025",
        ),
        (
            vec![("partitions", N(1.5)), ("rate", S("1/s"))],
            "out_of_range",
            "partitions",
            "partitions must be a whole number from 1 to 1024, got 1.5",
        ),
        (
            vec![("partitions", N(2.0))],
            "missing_field",
            "rate",
            "rate is required: the quota one partition carries, e.g. \"25/s\"",
        ),
        (
            vec![("partitions", N(2.0)), ("rate", N(25.0))],
            "invalid_type",
            "rate",
            "rate must be a quota string such as \"25/s\", got 25",
        ),
        (
            vec![("partitions", N(2.0)), ("rate", S("fast"))],
            "invalid_value",
            "rate",
            "rate \"fast\": expected <limit>/<window>, e.g. 100/s (write e.g. \"100/s\" or \"5000/1h\")",
        ),
        (
            vec![("partitions", N(2.0)), ("rate", S("0/s"))],
            "out_of_range",
            "rate",
            "rate \"0/s\": the limit must be at least 1",
        ),
        (
            vec![("partitions", N(1024.0)), ("rate", S("9007199254740991/s"))],
            "out_of_range",
            "rate",
            "capacity 1024 x 9007199254740991 = 9223372036854774784 is above the maximum 9007199254740991",
        ),
        (pr(vec![("maxTtl", S("2d"))]), "out_of_range", "maxTtl", "maxTtl must be from 1ms to 1d (86400000 ms)"),
        (pr(vec![("maxTtl", S("500us"))]), "out_of_range", "maxTtl", "maxTtl must be from 1ms to 1d (86400000 ms)"),
        (
            pr(vec![("maxTtl", N(0.0))]),
            "out_of_range",
            "maxTtl",
            "maxTtl must be a whole number of milliseconds from 1 to 9007199254740991, got 0",
        ),
        (
            pr(vec![("maxTtl", S("soon"))]),
            "invalid_value",
            "maxTtl",
            "maxTtl \"soon\" is not a duration: a duration starts with a whole number, e.g. 5s",
        ),
        (
            pr(vec![("maxTtl", B(true))]),
            "invalid_type",
            "maxTtl",
            "maxTtl must be a duration such as \"1s\" or a number of milliseconds, got true",
        ),
    ];
    for (fields, code, field, message) in cases {
        let e = pool_err(fields);
        assert_eq!((e.code, e.field.as_str(), e.message.as_str()), (code, field, message));
    }
}

fn sync_rate_of(extra: Vec<(&'static str, J)>, algorithm: &'static str) -> Result<i64, SpecError> {
    let mut fields = vec![("algorithm", S(algorithm)), ("quota", S("10/s"))];
    fields.extend(extra);
    let v = O(fields);
    let spec = parse_policy(&v, &["syncRate"]).unwrap();
    parse_sync_rate(&v, &spec.policy)
}

#[test]
fn sync_rate_is_whole_ms_or_a_duration_and_needs_mergeable_limits() {
    assert_eq!(sync_rate_of(vec![], "gcra"), Ok(0));
    assert_eq!(sync_rate_of(vec![("syncRate", N(-250.0))], "fixed-window"), Ok(-250));
    assert_eq!(sync_rate_of(vec![("syncRate", S("100ms"))], "sliding-window"), Ok(100));
    let e = sync_rate_of(vec![("syncRate", N(3_600_001.0))], "fixed-window").unwrap_err();
    assert_eq!((e.code, e.field.as_str()), ("out_of_range", "syncRate"));
    assert_eq!(e.message, "syncRate must be a whole number of milliseconds from -3600000 to 3600000, got 3600001");
    let e = sync_rate_of(vec![("syncRate", S("2h"))], "fixed-window").unwrap_err();
    assert_eq!(e.message, "syncRate \"2h\" is longer than the maximum 3600000 ms");
    let e = sync_rate_of(vec![("syncRate", B(true))], "fixed-window").unwrap_err();
    assert_eq!(e.code, "invalid_type");
    let e = sync_rate_of(vec![("syncRate", N(-5.0))], "gcra").unwrap_err();
    assert_eq!((e.code, e.field.as_str()), ("conflicting_fields", "syncRate"));
    assert!(e.message.starts_with("syncRate = -5 needs every limit to be mergeable"), "{}", e.message);
    let e = sync_rate_of(vec![("syncRate", N(100.0)), ("blockDuration", S("1m"))], "fixed-window").unwrap_err();
    assert_eq!((e.code, e.field.as_str()), ("conflicting_fields", "blockDuration"));
    assert!(e.message.ends_with("got syncRate = 100"), "{}", e.message);
}

#[test]
fn header_options_have_the_middleware_defaults_and_make_an_answer_s_options() {
    let h = parse_headers(&O(vec![])).unwrap();
    assert_eq!(h, HeaderSpec { standard: Some(Standard::Draft10), legacy: true, partition_key: false, jitter: false });
    let h = parse_headers(&O(vec![("standardHeaders", B(true)), ("partitionKey", B(true)), ("jitter", B(true))]));
    let h = h.unwrap();
    assert_eq!((h.standard, h.partition_key, h.jitter), (Some(Standard::Draft6), true, true));
    let denied = h.options("k", false, || 0.5);
    assert_eq!((denied.partition_key, denied.jitter), (Some("k"), Some(0.5)));
    assert_eq!(h.options("k", true, || unreachable!()).jitter, None, "no draw for an allowed answer");
    let e = parse_headers(&O(vec![("standardHeaders", S("draft-9"))])).unwrap_err();
    assert_eq!((e.code, e.field.as_str()), ("invalid_value", "standardHeaders"));
    let e = parse_headers(&O(vec![("legacyHeaders", S("no"))])).unwrap_err();
    assert_eq!((e.code, e.field.as_str()), ("invalid_type", "legacyHeaders"));
}

#[test]
fn a_limit_s_description_shows_its_options_in_milliseconds() {
    let v = O(vec![
        ("algorithm", S("sliding-buckets")),
        ("quota", S("60/1m")),
        ("precision", S("10s")),
        ("offset", N(5.0)),
    ]);
    let spec = parse_policy(&v, &[]).unwrap();
    let d = describe_limit("m", &spec.limits[0]);
    assert_eq!(
        d,
        vec![
            ("name", Shown::Text("m".into())),
            ("algorithm", Shown::Text("sliding-buckets".into())),
            ("limit", Shown::Whole(60)),
            ("windowMs", Shown::Ms(Nanos::from_secs(60))),
            ("precisionMs", Shown::Ms(Nanos::from_secs(10))),
            ("offsetMs", Shown::Ms(Nanos::from_millis(5))),
        ]
    );
    let v =
        O(vec![("algorithm", S("fixed-window")), ("limit", N(5.0)), ("window", S("2months")), ("offset", S("-1h"))]);
    let d = describe_limit("m", &parse_policy(&v, &[]).unwrap().limits[0]);
    assert!(!d.iter().any(|(k, _)| *k == "windowMs"));
    assert!(d.contains(&("window", Shown::Text("2months".into()))));
    assert!(d.contains(&("offsetMs", Shown::Float(-3_600_000.0))));
    let v = O(vec![("algorithm", S("fixed-window")), ("align", S("first-hit")), ("quota", S("1/s"))]);
    assert!(describe_limit("x", &parse_policy(&v, &[]).unwrap().limits[0])
        .contains(&("align", Shown::Text("first-hit".into()))));
}

#[test]
fn controls_are_lists_of_keys_and_networks_and_a_shadow_switch() {
    let c = parse_controls(&O(vec![])).unwrap();
    assert_eq!(c, ControlSpec::default());
    let c = parse_controls(&O(vec![("shadow", B(true)), ("allowList", L(vec![S("10.0.0.0/8"), S("partner")]))]));
    let c = c.unwrap();
    assert!(c.shadow && c.allow.matches("partner", None) && c.allow.matches("k", Some("10.1.2.3")));
    assert!(c.deny.is_empty());
    for (v, code, field) in [
        (O(vec![("shadow", S("yes"))]), "invalid_type", "shadow"),
        (O(vec![("allowList", S("10.0.0.0/8"))]), "invalid_type", "allowList"),
        (O(vec![("denyList", L(vec![S("ok"), N(1.0)]))]), "invalid_type", "denyList[1]"),
        (O(vec![("denyList", L(vec![S("")]))]), "invalid_type", "denyList[0]"),
        (O(vec![("denyList", L(vec![S("ok"), S("10.0.0.0/33")]))]), "invalid_value", "denyList[1]"),
    ] {
        let e = parse_controls(&v).unwrap_err();
        assert_eq!((e.code, e.field.as_str()), (code, field), "{}", e.message);
    }
}

#[test]
fn a_pool_s_figures_are_its_spec_s() {
    let p = parse_pool(&O(vec![("partitions", N(20.0)), ("rate", S("25/s")), ("maxTtl", S("1m"))]), &[]).unwrap();
    assert_eq!((p.partitions(), p.partition_rate(), p.window()), (20, 25, Nanos::from_secs(1)));
    assert_eq!((p.capacity(), p.max_ttl(), p.per_second(150)), (500, Nanos::from_secs(60), 150.0));
    let per_minute = parse_pool(&O(vec![("partitions", N(2.0)), ("rate", S("30/m"))]), &[]).unwrap();
    assert_eq!(per_minute.per_second(per_minute.capacity()), 1.0);
}

#[test]
fn serving_options_have_their_defaults_and_refuse_their_mistakes() {
    let defaults = Serving { on_error: FailMode::Open, timeout_ms: DEFAULT_TIMEOUT_MS, deny_status: 200 };
    assert_eq!(parse_serving(&O(vec![])), Ok(defaults));
    let set = O(vec![("failure", S("closed")), ("timeoutMs", N(250.0)), ("statusCode", N(429.0))]);
    let want = Serving { on_error: FailMode::Closed, timeout_ms: 250, deny_status: 429 };
    assert_eq!(parse_serving(&set), Ok(want));
    assert_eq!((FailMode::Open.name(), FailMode::Closed.name()), ("open", "closed"));
    let cases = [
        (("failure", S("maybe")), "invalid_value", "failure"),
        (("timeoutMs", N(0.0)), "out_of_range", "timeoutMs"),
        (("timeoutMs", N((MAX_TIMEOUT_MS + 1) as f64)), "out_of_range", "timeoutMs"),
        (("statusCode", N(403.0)), "invalid_value", "statusCode"),
        (("statusCode", N(500.0)), "out_of_range", "statusCode"),
    ];
    for (field, code, at) in cases {
        let e = parse_serving(&O(vec![field])).unwrap_err();
        assert_eq!((e.code, e.field.as_str()), (code, at), "{}", e.message);
    }
    let e = parse_serving(&O(vec![("statusCode", N(403.0))])).unwrap_err();
    assert_eq!(e.message, "statusCode must be 200 or 429 (the status of a denial), got 403");
}

#[test]
fn a_located_error_names_its_field_once() {
    let e = SpecError::new(code::INVALID_VALUE, "limits[0].align", Msg::new("align must be one of ..."));
    assert_eq!(e.located(), "limits[0].align: align must be one of ...");
    let limit = O(vec![("algorithm", S("gcra")), ("quota", S("1/s")), ("burst", N(0.0))]);
    let e = err(O(vec![("limits", L(vec![limit]))]));
    assert_eq!((e.field.as_str(), e.located()), ("limits[0].burst", e.message.clone()));
    assert_eq!(SpecError::new(code::INVALID_VALUE, "", Msg::new("no field")).located(), "no field");
}

fn lease_ttl_of(extra: Vec<(&'static str, J)>, sync_ms: i64) -> Result<u64, SpecError> {
    let mut fields = vec![("algorithm", S("gcra")), ("quota", S("10/s"))];
    fields.extend(extra);
    let v = O(fields);
    let spec = parse_policy(&v, &["leaseTtl", "blockDuration"]).unwrap();
    parse_lease_ttl(&v, &spec.policy, sync_ms)
}

#[test]
fn lease_ttl_is_a_duration_up_to_an_hour_and_one_mode() {
    assert_eq!(lease_ttl_of(vec![], 0), Ok(0));
    assert_eq!(lease_ttl_of(vec![("leaseTtl", S("250ms"))], 0), Ok(250));
    assert_eq!(lease_ttl_of(vec![("leaseTtl", N(2000.0))], 0), Ok(2000));
    let e = lease_ttl_of(vec![("leaseTtl", S("2h"))], 0).unwrap_err();
    assert_eq!((e.code, e.field.as_str()), ("out_of_range", "leaseTtl"));
    assert_eq!(e.message, "leaseTtl is longer than the maximum 3600000 ms");
    let e = lease_ttl_of(vec![("leaseTtl", S("1s"))], -100).unwrap_err();
    assert_eq!((e.code, e.field.as_str()), ("conflicting_fields", "leaseTtl"));
    assert_eq!(e.message, "leaseTtl (leased mode) and syncRate = -100 (synced mode) are two modes: choose one");
    let e = lease_ttl_of(vec![("leaseTtl", S("1s")), ("blockDuration", S("1m"))], 0).unwrap_err();
    assert_eq!((e.code, e.field.as_str()), ("conflicting_fields", "blockDuration"));
}

#[test]
fn the_options_around_the_limits_are_one_parser_with_each_edges_domain() {
    let around = |fields: Vec<(&'static str, J)>, edge| parse_around(&O(fields), edge);
    let err = |fields, edge| around(fields, edge).map(|_| ()).unwrap_err();
    // Defaults by edge: the Worker answers a denial with 200, a middleware 429, a socket 1008.
    let worker = around(vec![], Edge::Worker).unwrap();
    assert_eq!((worker.failure, worker.status, worker.ipv6_subnet, worker.blocked_cache_ms), (0, 200, 56, 1000));
    assert_eq!(around(vec![], Edge::Http).unwrap().status, 429);
    assert_eq!(around(vec![], Edge::WebSocket).unwrap().status, 1008);
    assert_eq!(worker.headers.standard, Some(Standard::Draft10));
    // `failure: "throw"` is an npm store's, not the Worker's.
    let store = around(vec![("failure", S("throw")), ("timeoutMs", N(60_000.0))], Edge::Store).unwrap();
    assert_eq!((Edge::Store.domain().failures[store.failure], store.timeout_ms), ("throw", Some(60_000)));
    let e = err(vec![("failure", S("throw"))], Edge::Worker);
    assert_eq!((e.code, e.field.as_str()), ("invalid_value", "failure"));
    let e = err(vec![("timeoutMs", N(60_000.0))], Edge::Worker);
    assert_eq!((e.code, e.field.as_str()), ("out_of_range", "timeoutMs"));
    // statusCode: a choice of 200 or 429 in the Worker, a range of statuses in a middleware.
    assert_eq!(err(vec![("statusCode", N(404.0))], Edge::Worker).code, "invalid_value");
    let e = err(vec![("statusCode", N(200.0))], Edge::Http);
    assert_eq!(e.message, "statusCode must be a whole number from 400 to 599, got 200");
    // insurance: required by failure "insurance", refused without it, (0, 1].
    let insured = |v| vec![("failure", S("insurance")), ("insurance", v)];
    assert_eq!(around(insured(N(0.5)), Edge::Store).unwrap().insurance, Some(0.5));
    assert_eq!(err(vec![("failure", S("insurance"))], Edge::Store).code, "missing_field");
    assert_eq!(err(vec![("insurance", N(0.5))], Edge::Store).code, "conflicting_fields");
    assert_eq!(err(insured(N(1.5)), Edge::Store).code, "out_of_range");
    // blockedCache, syncRate, ipv6Subnet and the header options.
    assert_eq!(around(vec![("blockedCache", S("500ms"))], Edge::Store).unwrap().blocked_cache_ms, 500);
    assert_eq!(around(vec![("blockedCache", B(false))], Edge::Store).unwrap().blocked_cache_ms, 0);
    assert_eq!(around(vec![("syncRate", S("100ms"))], Edge::Store).unwrap().sync_ms, 100);
    assert_eq!(err(vec![("syncRate", S("2h"))], Edge::Store).message, "syncRate \"2h\" is longer than the maximum 3600000 ms");
    assert_eq!(around(vec![("ipv6Subnet", B(false))], Edge::Http).unwrap().ipv6_subnet, 128);
    let e = err(vec![("ipv6Subnet", N(0.0))], Edge::Http);
    assert_eq!((e.code, e.message.as_str()), ("out_of_range", "ipv6Subnet must be a whole number from 1 to 128, or false, got 0"));
    assert_eq!(err(vec![("jitter", S("yes"))], Edge::Worker).message, "jitter must be true or false, got \"yes\"");
    let e = err(vec![("jitter", N(0.5))], Edge::Http);
    assert_eq!(e.message, "jitter must be true, false or a function returning a number in [0, 1), got 0.5");
    let e = err(vec![("standardHeaders", S("draft-9"))], Edge::Http);
    assert_eq!(e.message, "standardHeaders must be \"draft-6\", \"draft-7\", \"draft-8\", \"draft-10\", true or false, got \"draft-9\"");
}

#[test]
fn a_sliding_buckets_offset_moves_only_its_bucket_boundaries() {
    let buckets = |offset: &'static str| {
        let v = O(vec![("algorithm", S("sliding-buckets")), ("quota", S("4/1s")), ("precision", S("250ms")), ("offset", S(offset))]);
        parse_policy(&v, &[]).unwrap().policy
    };
    // An offset of two buckets turns them over where no offset does; one of 100 ms does not.
    assert_eq!(buckets("500ms"), buckets("0s"));
    assert_ne!(buckets("600ms"), buckets("0s"));
    assert_eq!(buckets("600ms"), buckets("100ms"));
}

#[cfg(feature = "concurrency")]
#[test]
fn queue_options_have_their_defaults_and_refuse_their_mistakes() {
    assert_eq!(parse_queue(&O(vec![])), Ok(None));
    let only_wait = parse_queue(&O(vec![("maxWait", S("5s"))])).unwrap().unwrap();
    assert_eq!(only_wait, QueueSpec { max_queue: DEFAULT_MAX_QUEUE, max_wait: Nanos::from_secs(5) });
    let only_queue = parse_queue(&O(vec![("maxQueue", N(0.0))])).unwrap().unwrap();
    assert_eq!(only_queue, QueueSpec { max_queue: 0, max_wait: MAX_WAIT });
    let zero = parse_queue(&O(vec![("maxWait", N(0.0))])).unwrap().unwrap();
    assert_eq!(zero.max_wait, Nanos::ZERO);
    let cases = [
        (("maxQueue", N(-1.0)), "out_of_range", "maxQueue"),
        (("maxQueue", N(1.5)), "out_of_range", "maxQueue"),
        (("maxQueue", N(10_001.0)), "out_of_range", "maxQueue"),
        (("maxQueue", S("9")), "invalid_type", "maxQueue"),
        (("maxWait", S("2h")), "out_of_range", "maxWait"),
        (("maxWait", S("soon")), "invalid_value", "maxWait"),
    ];
    for (field, code, at) in cases {
        let e = parse_queue(&O(vec![field])).unwrap_err();
        assert_eq!((e.code, e.field.as_str()), (code, at), "{}", e.message);
    }
}
