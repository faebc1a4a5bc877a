//! Calendar arithmetic for windows of whole calendar months and ISO weeks, in UTC shifted by a
//! fixed offset (never a time zone with daylight saving: a window's boundaries never move).
//!
//! Days are counted from 1970-01-01 (a Thursday) in the proleptic Gregorian calendar, with
//! the civil-from-days algorithm (era of 400 years, March-based years), exact for every day a
//! [`Nanos`](crate::Nanos) can reach.
//!
//! ```
//! use tollgate::calendar::{days_from_civil, civil_from_days, month_start_days};
//! assert_eq!(days_from_civil(2024, 3, 1), 19_783);
//! assert_eq!(civil_from_days(19_782), (2024, 2, 29)); // a leap day
//! assert_eq!(month_start_days(54 * 12 + 2), 19_783); // month 0 is January 1970
//! ```

/// Nanoseconds in a day.
pub const DAY_NS: u64 = 86_400_000_000_000;
/// Nanoseconds in a week.
pub const WEEK_NS: u64 = 7 * DAY_NS;
/// From the epoch (a Thursday) to the first Monday after it, 1970-01-05: where windows of
/// whole weeks start, so that a week is the ISO week, Monday to Sunday.
pub const MONDAY_SHIFT_NS: u64 = 4 * DAY_NS;
/// The most months one window may span: a year.
pub const MAX_MONTHS: u32 = 12;
/// The largest offset of a window of months from the UTC month's start, either way: shorter
/// than the shortest month, so a boundary never passes the next.
pub const MAX_MONTH_OFFSET_NS: u64 = 28 * DAY_NS - 1;

/// A window of whole calendar months, as a limit describes it: `count` months (1 to
/// [`MAX_MONTHS`]) turning over `offset_ns` after (negative: before) midnight UTC on the 1st.
#[derive(Copy, Clone, Debug, PartialEq, Eq, Hash)]
pub struct Months {
    /// Months per window.
    pub count: u32,
    /// Nanoseconds from the UTC month's start to the window's boundary, either way.
    pub offset_ns: i64,
}

/// The day (since 1970-01-01) of `year`-`month`-`day` (month 1 to 12).
pub const fn days_from_civil(year: i64, month: u32, day: u32) -> i64 {
    let y = if month <= 2 { year - 1 } else { year };
    let era = y.div_euclid(400);
    let yoe = y - era * 400;
    let m = month as i64;
    let doy = (153 * (if m > 2 { m - 3 } else { m + 9 }) + 2) / 5 + day as i64 - 1;
    let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    era * 146_097 + doe - 719_468
}

/// The civil date (year, month 1 to 12, day 1 to 31) of `days` since 1970-01-01.
pub const fn civil_from_days(days: i64) -> (i64, u32, u32) {
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z - era * 146_097;
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let day = (doy - (153 * mp + 2) / 5 + 1) as u32;
    let month = if mp < 10 { mp + 3 } else { mp - 9 } as u32;
    let year = yoe + era * 400 + if month <= 2 { 1 } else { 0 };
    (year, month, day)
}

/// The day (since 1970-01-01) the month `index` starts, month 0 being January 1970
/// (negative indices are earlier months).
pub const fn month_start_days(index: i64) -> i64 {
    days_from_civil(1970 + index.div_euclid(12), index.rem_euclid(12) as u32 + 1, 1)
}

/// The month index (0 = January 1970) of the day `days` since 1970-01-01.
pub const fn month_of_day(days: i64) -> i64 {
    let (y, m, _) = civil_from_days(days);
    (y - 1970) * 12 + m as i64 - 1
}

/// The longest `months` consecutive calendar months can last, in days (31 for one month,
/// 62 for July and August, 366 for a leap year).
pub const fn longest_days(months: u32) -> u64 {
    // Read off the calendar (a test recomputes it over 400 years).
    const LONGEST: [u64; 13] = [0, 31, 62, 92, 123, 153, 184, 215, 245, 276, 306, 337, 366];
    if months as usize >= LONGEST.len() {
        366
    } else {
        LONGEST[months as usize]
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn days_and_dates_round_trip_over_centuries() {
        for d in -800_000..800_000i64 {
            let (y, m, day) = civil_from_days(d);
            assert_eq!(days_from_civil(y, m, day), d);
        }
        assert_eq!(civil_from_days(0), (1970, 1, 1));
        assert_eq!(civil_from_days(-1), (1969, 12, 31));
        assert_eq!(civil_from_days(days_from_civil(2000, 2, 29)), (2000, 2, 29));
        assert_eq!(civil_from_days(days_from_civil(2100, 3, 1) - 1), (2100, 2, 28));
    }

    #[test]
    fn the_longest_runs_of_months_are_the_calendars() {
        for n in 1..=12u32 {
            let most = (0..400 * 12).map(|i| month_start_days(i + n as i64) - month_start_days(i)).max().unwrap();
            assert_eq!(longest_days(n), most as u64, "{n} months");
        }
    }
}
