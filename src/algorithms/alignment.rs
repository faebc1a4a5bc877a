//! Clock-aligned windows: boundaries at `offset + k * length` since the Unix epoch.
//!
//! Never a local time zone: a "daily" window that follows the user's midnight lets a user who
//! changes zones get an extra window. A caller who wants windows to turn
//! over at, say, 09:00 UTC passes that as an explicit offset.

use crate::error::ConfigError;
use crate::time::Nanos;

/// Window boundaries at `offset + k * length`.
#[derive(Copy, Clone, Debug, PartialEq, Eq, Hash)]
pub struct Alignment {
    length: u64,
    offset: u64,
}

impl Alignment {
    /// Windows of `length`, shifted by `offset` (which must be shorter than `length`).
    pub fn new(length: Nanos, offset: Nanos) -> Result<Alignment, ConfigError> {
        if offset >= length {
            return Err(ConfigError::OffsetTooLarge { offset_ns: offset.as_nanos(), window_ns: length.as_nanos() });
        }
        Ok(Alignment { length: length.as_nanos(), offset: offset.as_nanos() })
    }

    /// The window length.
    pub fn length(&self) -> Nanos {
        Nanos::new(self.length)
    }

    /// The offset of every boundary from a multiple of the length.
    pub fn offset(&self) -> Nanos {
        Nanos::new(self.offset)
    }

    /// The index of the window holding `t`. Window `i` is `[start(i), start(i + 1))`; index 0
    /// is the short window before the first boundary when the offset is not zero.
    pub fn index(&self, t: Nanos) -> u64 {
        clamp_u64((t.as_nanos() as u128 + (self.length - self.offset) as u128) / self.length as u128)
    }

    /// Where window `index` starts (window 0 starts at the epoch).
    pub fn start(&self, index: u64) -> Nanos {
        let end_of_previous = (index as u128) * (self.length as u128) + self.offset as u128;
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
    fn an_offset_as_long_as_the_window_is_refused() {
        assert!(Alignment::new(Nanos::new(10), Nanos::new(10)).is_err());
    }
}
