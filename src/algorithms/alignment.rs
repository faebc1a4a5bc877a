//! Clock-aligned windows: boundaries at `offset + k * length` since the Unix epoch, or at the
//! start of every `n`-th calendar month.
//!
//! Never a local time zone: a "daily" window that follows the user's midnight lets a user who
//! changes zones get an extra window. A caller who wants windows to turn
//! over at, say, 09:00 UTC passes that as an explicit offset.
//!
//! Windows of whole weeks start on Mondays (the ISO week; the epoch is a Thursday), windows
//! of whole days at midnight UTC, and windows of calendar months on the 1st at midnight UTC
//! (months counted from January 1970), each shifted by the offset.

use crate::calendar::{
    longest_days, month_of_day, month_start_days, DAY_NS, MAX_MONTHS, MAX_MONTH_OFFSET_NS, MONDAY_SHIFT_NS, WEEK_NS,
};
use crate::error::ConfigError;
use crate::time::Nanos;

/// Window boundaries at `offset + k * length`, or at calendar months shifted by an offset.
#[derive(Copy, Clone, Debug, PartialEq, Eq, Hash)]
pub struct Alignment {
    /// The window length; for months, the longest the window can last.
    length: u64,
    /// The offset as given (durations).
    offset: u64,
    /// Where boundaries fall modulo the length: the offset, plus the shift to Mondays for
    /// windows of whole weeks.
    shift: u64,
    /// Calendar months per window; 0 for a window of fixed length.
    months: u32,
    /// The months' boundaries from the UTC month's start, either way.
    month_offset: i64,
}

impl Alignment {
    /// Windows of `length`, shifted by `offset` (which must be shorter than `length`).
    pub fn new(length: Nanos, offset: Nanos) -> Result<Alignment, ConfigError> {
        if offset >= length {
            return Err(ConfigError::OffsetTooLarge { offset_ns: offset.as_nanos(), window_ns: length.as_nanos() });
        }
        let (length, offset) = (length.as_nanos(), offset.as_nanos());
        let shift = if length % WEEK_NS == 0 { (offset + MONDAY_SHIFT_NS) % length } else { offset };
        Ok(Alignment { length, offset, shift, months: 0, month_offset: 0 })
    }

    /// Windows of `months` calendar months (1 to 12, counted from January 1970: 3 gives
    /// quarters, 12 years), turning over `offset_ns` after (or, negative, before) midnight
    /// UTC of the 1st; the offset is shorter than 28 days either way.
    ///
    /// ```
    /// use tollgate::{algorithms::Alignment, Nanos};
    /// let h = 3_600_000_000_000i64;
    /// // Months at UTC+2: they turn over at 22:00 UTC on the last day of the month.
    /// let a = Alignment::months(1, -2 * h).unwrap();
    /// let feb_2024 = Nanos::from_secs(1_706_745_600); // 2024-02-01T00:00Z
    /// assert_eq!(a.end_of(feb_2024), Nanos::from_secs(1_709_244_000)); // 2024-02-29T22:00Z
    /// ```
    pub fn months(months: u32, offset_ns: i64) -> Result<Alignment, ConfigError> {
        if months == 0 {
            return Err(ConfigError::ZeroWindow);
        }
        if months > MAX_MONTHS {
            return Err(ConfigError::WindowTooLong {
                window_ms: longest_days(months) * 86_400_000,
                max_ms: crate::quota::MAX_WINDOW.as_millis_floor(),
            });
        }
        if offset_ns.unsigned_abs() > MAX_MONTH_OFFSET_NS {
            return Err(ConfigError::OffsetTooLarge {
                offset_ns: offset_ns.unsigned_abs(),
                window_ns: MAX_MONTH_OFFSET_NS + 1,
            });
        }
        let length = longest_days(months) * DAY_NS;
        Ok(Alignment { length, offset: 0, shift: 0, months, month_offset: offset_ns })
    }

    /// The window length; for calendar months, the longest the window can last (31 days for
    /// one month), which bounds how long a window's state matters.
    pub fn length(&self) -> Nanos {
        Nanos::new(self.length)
    }

    /// The offset of every boundary from a multiple of the length (zero for months: see
    /// [`Alignment::calendar_months`]).
    pub fn offset(&self) -> Nanos {
        Nanos::new(self.offset)
    }

    /// For windows of calendar months, how many months and the signed offset in nanoseconds.
    pub fn calendar_months(&self) -> Option<(u32, i64)> {
        (self.months > 0).then_some((self.months, self.month_offset))
    }

    /// The index of the window holding `t`. Window `i` is `[start(i), start(i + 1))`; index 0
    /// is the short window before the first boundary when the offset is not zero.
    pub fn index(&self, t: Nanos) -> u64 {
        if self.months > 0 {
            let since = t.as_nanos() as i128 - self.month_offset as i128;
            let day = since.div_euclid(DAY_NS as i128) as i64;
            return (month_of_day(day).div_euclid(self.months as i64) + 1) as u64;
        }
        clamp_u64((t.as_nanos() as u128 + (self.length - self.shift) as u128) / self.length as u128)
    }

    /// Where window `index` starts (window 0 starts at the epoch).
    pub fn start(&self, index: u64) -> Nanos {
        if self.months > 0 {
            // Past any instant a `Nanos` holds (year 2554): the end of time.
            const LAST_MONTH: u64 = 600 * 12;
            let Some(month) = index.checked_sub(1) else { return Nanos::ZERO };
            let month = month.saturating_mul(self.months as u64);
            if month > LAST_MONTH {
                return Nanos::MAX;
            }
            let at = month_start_days(month as i64) as i128 * DAY_NS as i128 + self.month_offset as i128;
            return Nanos::new(clamp_u64(at.max(0) as u128));
        }
        let end_of_previous = (index as u128) * (self.length as u128) + self.shift as u128;
        Nanos::new(clamp_u64(end_of_previous.saturating_sub(self.length as u128)))
    }

    /// The start of the window holding `t`.
    pub fn start_of(&self, t: Nanos) -> Nanos {
        self.start(self.index(t))
    }

    /// The end (exclusive) of the window holding `t`: the next boundary after it.
    pub fn end_of(&self, t: Nanos) -> Nanos {
        self.start(self.index(t).saturating_add(1))
    }
}

pub(crate) fn clamp_u64(v: u128) -> u64 {
    u64::try_from(v).unwrap_or(u64::MAX)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn boundaries_are_multiples_of_the_length_plus_the_offset() {
        let a = Alignment::new(Nanos::new(10), Nanos::new(3)).unwrap();
        assert_eq!((a.start_of(Nanos::new(0)), a.end_of(Nanos::new(0))), (Nanos::new(0), Nanos::new(3)));
        assert_eq!((a.start_of(Nanos::new(3)), a.end_of(Nanos::new(3))), (Nanos::new(3), Nanos::new(13)));
        assert_eq!((a.start_of(Nanos::new(12)), a.end_of(Nanos::new(12))), (Nanos::new(3), Nanos::new(13)));
        assert_eq!(a.start_of(Nanos::new(13)), Nanos::new(13));
        let plain = Alignment::new(Nanos::new(60), Nanos::ZERO).unwrap();
        assert_eq!(plain.start_of(Nanos::new(119)), Nanos::new(60));
        assert_eq!(plain.start_of(Nanos::new(120)), Nanos::new(120));
        assert_eq!(plain.start_of(Nanos::MAX), Nanos::new(u64::MAX - u64::MAX % 60));
    }

    #[test]
    fn windows_of_weeks_start_on_mondays() {
        let week = Alignment::new(Nanos::new(WEEK_NS), Nanos::ZERO).unwrap();
        // 1970-01-05 was the first Monday; 2024-01-01 was a Monday too.
        assert_eq!(week.start_of(Nanos::new(5 * DAY_NS)), Nanos::new(MONDAY_SHIFT_NS));
        let jan_1_2024 = Nanos::from_secs(1_704_067_200);
        assert_eq!(week.start_of(jan_1_2024.saturating_add(Nanos::new(6 * DAY_NS))), jan_1_2024);
        assert_eq!(week.end_of(jan_1_2024), jan_1_2024.saturating_add(Nanos::new(WEEK_NS)));
        assert_eq!(week.offset(), Nanos::ZERO);
    }

    #[test]
    fn month_boundaries_are_the_calendars_at_every_offset() {
        let jan_31_2023 = Nanos::from_secs(1_675_123_200); // 2023-01-31T00:00Z
        let feb_1_2023 = Nanos::from_secs(1_675_209_600);
        let mar_1_2023 = Nanos::from_secs(1_677_628_800);
        let m = Alignment::months(1, 0).unwrap();
        assert_eq!((m.start_of(jan_31_2023), m.end_of(jan_31_2023)), (Nanos::from_secs(1_672_531_200), feb_1_2023));
        assert_eq!((m.start_of(feb_1_2023), m.end_of(feb_1_2023)), (feb_1_2023, mar_1_2023));
        assert_eq!(m.start_of(Nanos::ZERO), Nanos::ZERO);
        assert_eq!(m.end_of(Nanos::MAX), Nanos::MAX);
        assert!(Alignment::months(13, 0).is_err() && Alignment::months(0, 0).is_err());
        assert!(Alignment::months(1, 28 * DAY_NS as i64).is_err());
    }

    #[test]
    fn an_offset_as_long_as_the_window_is_refused() {
        assert!(Alignment::new(Nanos::new(10), Nanos::new(10)).is_err());
    }
}
