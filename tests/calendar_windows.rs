//! Calendar windows (days, ISO weeks, calendar months at a UTC offset), checked against an
//! independent calendar: a naive walk over years and months written here, sharing nothing
//! with the core's civil-from-days arithmetic.

use proptest::prelude::*;
use tollgate::calendar::Months;
use tollgate::describe::{describe, StateView};
use tollgate::{Algorithm, AnyAlgorithm, AnyState, Kind, LimitSpec, Nanos};

const SEC: i128 = 1_000_000_000;
const DAY: i128 = 86_400 * SEC;
/// The latest instant the tests use: 2400-01-01, past several leap-century rules.
const LATEST: i128 = 13_569_465_600 * SEC;

fn leap(year: i128) -> bool {
    (year % 4 == 0 && year % 100 != 0) || year % 400 == 0
}

fn month_days(year: i128, month: usize) -> i128 {
    [31, if leap(year) { 29 } else { 28 }, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31][month]
}

/// The start (ns since the epoch, UTC) of every month from January 1969, walking the
/// calendar one month at a time.
fn month_starts() -> &'static [i128] {
    use std::sync::OnceLock;
    static STARTS: OnceLock<Vec<i128>> = OnceLock::new();
    STARTS.get_or_init(|| {
        let mut at = -365 * DAY;
        let mut out = Vec::new();
        for year in 1969..2500 {
            for month in 0..12 {
                out.push(at);
                at += month_days(year, month) * DAY;
            }
        }
        out
    })
}

/// The window of `n` months (counted from January 1970) turning over `offset` after each
/// UTC boundary that holds `t`: `[start, end)`, by a linear search of the walked calendar.
fn month_window(t: i128, n: usize, offset: i128) -> (i128, i128) {
    let starts = month_starts();
    // Month k of the walk is month k - 12 from January 1970; boundaries every n months from it.
    let boundaries: Vec<i128> = (12 % n..starts.len()).step_by(n).map(|k| starts[k] + offset).collect();
    let i = boundaries.iter().rposition(|&b| b <= t).expect("t after the first boundary");
    (boundaries[i], boundaries[i + 1])
}

/// The day of the week of `days` since 1970-01-01, Monday 0 (the epoch was a Thursday).
fn weekday(days: i128) -> i128 {
    (days + 3).rem_euclid(7)
}

#[derive(Clone, Copy, Debug)]
enum Unit {
    Day,
    Week,
    Months(u32),
}

/// A fixed window of `unit` turning over `offset` ns after (negative: before) the UTC
/// boundary, as the spec builds it.
fn window(limit: u64, unit: Unit, offset: i128) -> AnyAlgorithm {
    let spec = match unit {
        Unit::Months(count) => LimitSpec {
            months: Some(Months { count, offset_ns: offset as i64 }),
            ..LimitSpec::new(Kind::FixedWindow, limit, Nanos::from_secs(86_400 * 31))
        },
        Unit::Day | Unit::Week => {
            let length = if matches!(unit, Unit::Day) { DAY } else { 7 * DAY };
            LimitSpec {
                offset: Some(Nanos::new(offset.rem_euclid(length) as u64)),
                ..LimitSpec::new(Kind::FixedWindow, limit, Nanos::new(length as u64))
            }
        }
    };
    AnyAlgorithm::from_spec(&spec).unwrap()
}

/// The independent window of `unit` holding `t`.
fn expected(unit: Unit, offset: i128, t: i128) -> (i128, i128) {
    match unit {
        Unit::Months(n) => month_window(t, n as usize, offset),
        Unit::Day => {
            let start = (t - offset).div_euclid(DAY) * DAY + offset;
            (start, start + DAY)
        }
        Unit::Week => {
            // Back day by day to a Monday: the start is the last Monday midnight (shifted).
            let mut day = (t - offset).div_euclid(DAY);
            while weekday(day) != 0 {
                day -= 1;
            }
            let start = day * DAY + offset;
            (start, start + 7 * DAY)
        }
    }
}

fn unit() -> impl Strategy<Value = Unit> {
    prop_oneof![Just(Unit::Day), Just(Unit::Week), (1u32..=12).prop_map(Unit::Months)]
}

/// An offset either side of UTC: up to 14 h (the farthest time zones) usually, and
/// anything shorter than the shortest window otherwise.
fn offset(unit: Unit) -> impl Strategy<Value = i128> {
    let most = match unit {
        Unit::Day => DAY - 1,
        Unit::Week => 7 * DAY - 1,
        Unit::Months(_) => 28 * DAY - 1,
    };
    prop_oneof![(-14i128..=14).prop_map(|h| h * 3600 * SEC), -most..=most]
}

fn unit_and_offset() -> impl Strategy<Value = (Unit, i128)> {
    unit().prop_flat_map(|u| (Just(u), offset(u)))
}

/// Instants from the epoch to 2400, with a bias to the days around a month's turn.
fn instant() -> impl Strategy<Value = i128> {
    prop_oneof![0..LATEST, (0usize..12 * 420, -2 * DAY..2 * DAY).prop_map(|(m, d)| (month_starts()[12 + m] + d).max(0)),]
}

fn window_of(a: &AnyAlgorithm, t: i128) -> (i128, i128) {
    let AnyAlgorithm::FixedWindow(fw) = a else { unreachable!() };
    let al = fw.alignment();
    let t = Nanos::new(t as u64);
    (al.start_of(t).as_nanos() as i128, al.end_of(t).as_nanos() as i128)
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 400, ..ProptestConfig::default() })]

    /// The boundaries are the calendar's, at every offset, leap days and centuries included.
    #[test]
    fn boundaries_are_the_calendars((unit, offset) in unit_and_offset(), t in instant()) {
        let a = window(10, unit, offset);
        let (start, end) = expected(unit, offset, t);
        prop_assert_eq!(window_of(&a, t), (start.max(0), end), "{:?} offset {} at {}", unit, offset, t);
        if let Unit::Months(n) = unit {
            let days = (end - start) / DAY;
            prop_assert!((28 * n as i128..=31 * n as i128).contains(&days) && (end - start) % DAY == 0);
        }
    }

    /// Windows tile time: the window after one starts where it ends (no gap), and the
    /// instant before a window's start lies in a window that ends there (no overlap).
    #[test]
    fn windows_tile_time((unit, offset) in unit_and_offset(), t in instant()) {
        let a = window(10, unit, offset);
        let (start, end) = window_of(&a, t);
        prop_assert!(start <= t && t < end);
        prop_assert_eq!(window_of(&a, end).0, end);
        if start > 0 {
            prop_assert_eq!(window_of(&a, start - 1).1, start);
        }
    }

    /// On a clock that only moves forward, at most the limit is admitted in each calendar
    /// window (by the independent calendar), and every `resetAt` and `retryAfter` is exact.
    #[test]
    fn never_more_than_the_limit_per_window(
        (unit, offset) in unit_and_offset(),
        limit in 1u64..=5,
        from in instant(),
        steps in prop::collection::vec((0i128..4 * DAY, 1u64..=3), 1..120),
    ) {
        let a = window(limit, unit, offset);
        let mut state: Option<AnyState> = None;
        let mut t = from;
        let mut admitted: std::collections::BTreeMap<i128, u64> = Default::default();
        for (dt, cost) in steps {
            t = (t + dt * match unit { Unit::Months(_) => 4, _ => 1 } / 8).min(LATEST);
            let cost = cost.min(limit);
            let (start, end) = expected(unit, offset, t);
            let out = a.check(state.as_ref(), Nanos::new(t as u64), cost).unwrap();
            let d = out.decision;
            prop_assert_eq!(d.reset_at.as_nanos() as i128, end);
            if d.allowed {
                *admitted.entry(start).or_default() += cost;
                prop_assert!(admitted[&start] <= limit, "{} admitted in the window from {}", admitted[&start], start);
                prop_assert_eq!(d.retry_after, Nanos::ZERO);
            } else {
                prop_assert_eq!(d.retry_after.as_nanos() as i128, end - t);
                prop_assert!(admitted.get(&start).copied().unwrap_or(0) + cost > limit);
            }
            if let Some(s) = out.state {
                state = Some(s);
            }
        }
    }

    /// A clock that jumps back never corrupts the state: the window a key counts in never
    /// moves back, never holds more than the limit, and every decision resets in the future
    /// and waits exactly until then.
    #[test]
    fn time_going_backwards_never_corrupts_state(
        (unit, offset) in unit_and_offset(),
        limit in 1u64..=5,
        times in prop::collection::vec(instant(), 1..60),
    ) {
        let a = window(limit, unit, offset);
        let mut state: Option<AnyState> = None;
        let mut last_start = 0u64;
        for t in times {
            let now = Nanos::new(t as u64);
            let out = a.check(state.as_ref(), now, 1).unwrap();
            let d = out.decision;
            prop_assert!(d.reset_at > now);
            if !d.allowed {
                prop_assert_eq!(d.retry_after, d.reset_at - now);
            }
            if let Some(s) = out.state {
                state = Some(s);
            }
            let view = describe(&a, state.as_ref(), now);
            let StateView::FixedWindow { start, end, count, .. } = view else { unreachable!() };
            prop_assert!(start.as_nanos() >= last_start && count <= limit && end > start);
            prop_assert_eq!(window_of(&a, start.as_nanos() as i128), (start.as_nanos() as i128, end.as_nanos() as i128));
            last_start = start.as_nanos();
        }
    }
}

/// The windows the issue names, at their real boundaries.
#[test]
fn worked_boundaries() {
    let utc = |s: i128| s * SEC;
    // February 2024 (a leap year): 29 days, at UTC, UTC+2 (turning over 2 h early) and
    // UTC-5 (5 h late).
    let feb = utc(1_706_745_600);
    let mar = utc(1_709_251_200);
    assert_eq!(window_of(&window(10_000, Unit::Months(1), 0), feb + DAY), (feb, mar));
    let h = 3600 * SEC;
    assert_eq!(window_of(&window(10_000, Unit::Months(1), -2 * h), feb + DAY), (feb - 2 * h, mar - 2 * h));
    assert_eq!(window_of(&window(10_000, Unit::Months(1), 5 * h), feb + DAY), (feb + 5 * h, mar + 5 * h));
    // 2100 is not a leap year: February has 28 days.
    let feb_2100 = utc(4_105_123_200);
    assert_eq!(window_of(&window(1, Unit::Months(1), 0), feb_2100).1 - feb_2100, 28 * DAY);
    // ISO weeks start on Monday: 2024-01-01 was one.
    let monday = utc(1_704_067_200);
    assert_eq!(window_of(&window(500, Unit::Week, 0), monday + 3 * DAY), (monday, monday + 7 * DAY));
    // Days at 09:00 UTC.
    assert_eq!(window_of(&window(100, Unit::Day, 9 * h), monday + 8 * h), (monday - 15 * h, monday + 9 * h));
}
