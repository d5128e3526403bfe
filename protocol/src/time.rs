//! Calendar time in UTC from milliseconds since the Unix epoch: the one conversion the webhook
//! timestamps (RFC 3339), the evidence archive's zip entries and R2's SigV4 dates share. A
//! date-time library would bring its time zones, parsers and error texts into the worker for
//! these few lines.

/// A moment in UTC, to the millisecond, in the proleptic Gregorian calendar.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub struct UtcDateTime {
    pub year: i64,
    /// 1–12.
    pub month: u8,
    /// 1–31.
    pub day: u8,
    pub hour: u8,
    pub minute: u8,
    pub second: u8,
    pub milli: u16,
}

impl UtcDateTime {
    /// The moment `ms` milliseconds after 1970-01-01T00:00:00Z.
    pub fn from_unix_ms(ms: u64) -> Self {
        let (days, rest) = (ms / 86_400_000, ms % 86_400_000);
        // Civil date from days since 1970-01-01 (H. Hinnant, "chrono-Compatible Low-Level Date
        // Algorithms", civil_from_days). Days fit i64: u64 ms / 86.4e6 < 2^38.
        let z = days as i64 + 719_468;
        let era = z.div_euclid(146_097);
        let doe = z - era * 146_097;
        let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
        let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
        let mp = (5 * doy + 2) / 153;
        let day = doy - (153 * mp + 2) / 5 + 1;
        let month = if mp < 10 { mp + 3 } else { mp - 9 };
        // The remainders below are bounded (day ≤ 31, month ≤ 12, hour < 24, …): the casts
        // cannot truncate.
        UtcDateTime {
            year: yoe + era * 400 + i64::from(month <= 2),
            month: month as u8,
            day: day as u8,
            hour: (rest / 3_600_000) as u8,
            minute: (rest / 60_000 % 60) as u8,
            second: (rest / 1000 % 60) as u8,
            milli: (rest % 1000) as u16,
        }
    }

    /// `2021-02-25T15:02:10.123Z`.
    pub fn rfc3339_millis(&self) -> String {
        let UtcDateTime {
            year,
            month,
            day,
            hour,
            minute,
            second,
            milli,
        } = self;
        format!("{year:04}-{month:02}-{day:02}T{hour:02}:{minute:02}:{second:02}.{milli:03}Z")
    }

    /// ISO 8601 basic format to the second, `20130524T000000Z` (SigV4's `X-Amz-Date`).
    pub fn iso8601_basic(&self) -> String {
        let UtcDateTime {
            year,
            month,
            day,
            hour,
            minute,
            second,
            ..
        } = self;
        format!("{year:04}{month:02}{day:02}T{hour:02}{minute:02}{second:02}Z")
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    #[test]
    fn known_moments() {
        let at = |ms| UtcDateTime::from_unix_ms(ms).rfc3339_millis();
        assert_eq!(at(0), "1970-01-01T00:00:00.000Z");
        assert_eq!(at(1_614_265_330_123), "2021-02-25T15:02:10.123Z");
        assert_eq!(at(951_782_400_000), "2000-02-29T00:00:00.000Z");
        assert_eq!(at(4_107_542_400_000), "2100-03-01T00:00:00.000Z");
        assert_eq!(at(253_402_300_799_999), "9999-12-31T23:59:59.999Z");
        assert_eq!(
            UtcDateTime::from_unix_ms(1_369_353_600_000).iso8601_basic(),
            "20130524T000000Z"
        );
    }

    /// Days since the epoch of a civil date, the other way round (Hinnant's days_from_civil),
    /// written independently of the conversion under test.
    fn days_from_civil(year: i64, month: i64, day: i64) -> i64 {
        let y = if month <= 2 { year - 1 } else { year };
        let era = y.div_euclid(400);
        let yoe = y - era * 400;
        let mp = (month + 9) % 12;
        let doy = (153 * mp + 2) / 5 + day - 1;
        let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
        era * 146_097 + doe - 719_468
    }

    fn days_in_month(year: i64, month: u8) -> u8 {
        let leap = (year % 4 == 0 && year % 100 != 0) || year % 400 == 0;
        match month {
            2 if leap => 29,
            2 => 28,
            4 | 6 | 9 | 11 => 30,
            _ => 31,
        }
    }

    proptest! {
        #[test]
        fn every_moment_is_a_valid_date_that_maps_back(ms in 0u64..=u64::MAX / 2) {
            let t = UtcDateTime::from_unix_ms(ms);
            prop_assert!((1..=12).contains(&t.month));
            prop_assert!(t.day >= 1 && t.day <= days_in_month(t.year, t.month));
            prop_assert!(t.hour < 24 && t.minute < 60 && t.second < 60 && t.milli < 1000);
            let days = days_from_civil(t.year, i64::from(t.month), i64::from(t.day));
            let back = days as u64 * 86_400_000
                + u64::from(t.hour) * 3_600_000
                + u64::from(t.minute) * 60_000
                + u64::from(t.second) * 1000
                + u64::from(t.milli);
            prop_assert_eq!(back, ms);
        }
    }
}
