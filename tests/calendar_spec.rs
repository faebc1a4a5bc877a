//! Calendar units through the one spec: what `quota: "10000/month"`, `"500/week"`,
//! `"100/day"` and a signed `offset` build, and the errors every edge shows for them.

use tollgate::calendar::Months;
use tollgate::spec::{parse_policy, Input, SpecError, Value};
use tollgate::{Algorithm, Nanos, Quota};

/// A JSON-like object of fields, as an edge holds one.
struct O(Vec<(&'static str, Value<O>)>);

fn s(v: &str) -> Value<O> {
    Value::Text(v.into())
}

impl Input for O {
    fn get(&self, name: &str) -> Value<O> {
        self.0.iter().find(|(k, _)| *k == name).map_or(Value::Missing, |(_, v)| match v {
            Value::Text(t) => Value::Text(t.clone()),
            Value::Number(n) => Value::Number(*n),
            _ => Value::Other,
        })
    }
    fn field_names(&self) -> Vec<String> {
        self.0.iter().map(|(k, _)| k.to_string()).collect()
    }
}

fn limit(fields: Vec<(&'static str, Value<O>)>) -> Result<tollgate::LimitSpec, SpecError> {
    parse_policy(&O(fields), &[]).map(|p| p.limits[0])
}

fn error(fields: Vec<(&'static str, Value<O>)>) -> (&'static str, String, String) {
    let e = limit(fields).unwrap_err();
    (e.code, e.field, e.message)
}

const H: i64 = 3_600_000_000_000;

#[test]
fn a_month_is_a_window_of_calendar_months() {
    let m = limit(vec![("algorithm", s("fixed-window")), ("quota", s("10000/month"))]).unwrap();
    assert_eq!((m.limit, m.months, m.offset), (10_000, Some(Months { count: 1, offset_ns: 0 }), None));
    assert_eq!(m.window, Nanos::from_secs(31 * 86_400));
    let q = limit(vec![("algorithm", s("fixed-window")), ("limit", Value::Number(9.0)), ("window", s("3months"))]);
    assert_eq!(q.unwrap().months, Some(Months { count: 3, offset_ns: 0 }));
    let utc2 = limit(vec![("algorithm", s("fixed-window")), ("quota", s("10000/month")), ("offset", s("-2h"))]);
    assert_eq!(utc2.unwrap().months, Some(Months { count: 1, offset_ns: -2 * H }));
    let ms =
        limit(vec![("algorithm", s("fixed-window")), ("quota", s("1/month")), ("offset", Value::Number(-3_600_000.0))]);
    assert_eq!(ms.unwrap().months, Some(Months { count: 1, offset_ns: -H }));
}

#[test]
fn days_and_weeks_are_durations_whose_fixed_windows_follow_the_calendar() {
    let week = limit(vec![("algorithm", s("fixed-window")), ("quota", s("500/week"))]).unwrap();
    assert_eq!((week.window, week.months), (Nanos::from_secs(7 * 86_400), None));
    let monday = Nanos::from_secs(1_704_067_200); // 2024-01-01
    let a = tollgate::AnyAlgorithm::from_spec(&week).unwrap();
    let d = a.check(None, monday.saturating_add(Nanos::from_secs(86_400 * 6)), 1).unwrap().decision;
    assert_eq!(d.reset_at, monday.saturating_add(Nanos::from_secs(7 * 86_400)));
    // A day before UTC's by 2 h is a day after it by 22 h: one encoding for one meaning.
    let day = limit(vec![("algorithm", s("fixed-window")), ("quota", s("100/day")), ("offset", s("-2h"))]).unwrap();
    assert_eq!(day.offset, Some(Nanos::from_secs(22 * 3600)));
    // Sliding buckets repeat every bucket: 10 s before is 50 s after, in buckets of a minute.
    let buckets = limit(vec![
        ("algorithm", s("sliding-buckets")),
        ("quota", s("60/h")),
        ("precision", s("1m")),
        ("offset", s("-10s")),
    ]);
    assert_eq!(buckets.unwrap().offset, Some(Nanos::from_secs(50)));
    // Other algorithms read a week as seven days.
    let gcra = limit(vec![("algorithm", s("gcra")), ("quota", s("500/week"))]).unwrap();
    assert_eq!(gcra.window, Nanos::from_secs(7 * 86_400));
}

#[test]
fn calendar_mistakes_name_their_field() {
    let fw = || ("algorithm", s("fixed-window"));
    assert_eq!(
        error(vec![("algorithm", s("gcra")), ("quota", s("10000/month"))]),
        (
            "unsupported_option",
            "quota".into(),
            "quota \"10000/month\": calendar months are a window of algorithm \"fixed-window\" only, not of \"gcra\""
                .into()
        )
    );
    let first_hit = error(vec![fw(), ("align", s("first-hit")), ("limit", Value::Number(5.0)), ("window", s("month"))]);
    assert_eq!((first_hit.0, first_hit.1.as_str()), ("unsupported_option", "window"));
    assert_eq!(
        error(vec![fw(), ("quota", s("10/13months"))]),
        (
            "out_of_range",
            "quota".into(),
            "quota \"10/13months\": a window of calendar months holds 1 to 12 months".into()
        )
    );
    assert_eq!(error(vec![fw(), ("quota", s("0/month"))]).0, "out_of_range");
    assert_eq!(error(vec![fw(), ("quota", s("x/month"))]).0, "invalid_value");
    assert_eq!(
        error(vec![fw(), ("quota", s("10/month")), ("offset", s("-28d"))]),
        (
            "out_of_range",
            "offset".into(),
            "offset -28d must be shorter than 28 days (the shortest month), either way".into()
        )
    );
    assert_eq!(
        error(vec![fw(), ("quota", s("10/day")), ("offset", s("-25h"))]),
        ("out_of_range", "offset".into(), "offset -25h must be shorter than the window 1day".into())
    );
    assert_eq!(error(vec![fw(), ("quota", s("10/day")), ("offset", s("-x"))]).0, "invalid_value");
    assert_eq!(
        error(vec![("algorithm", s("gcra")), ("quota", s("10/s")), ("offset", s("-1s"))]).0,
        "unsupported_option"
    );
}

#[test]
fn a_quota_of_months_is_not_a_duration() {
    let e = "10/month".parse::<Quota>().unwrap_err().to_string();
    assert!(e.contains("calendar window"), "{e}");
    assert!(tollgate::quota::parse_duration("1month").is_err());
}
