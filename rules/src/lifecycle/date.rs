//! Calendar dates and Kubernetes minor versions, as the retirement calendar writes them.
//!
//! The crate has no clock: a [`Date`] is always handed in (the CLI's today, the planner's date field, a
//! setting). [`Date::from_unix_days`] turns a count of days since 1970-01-01, which a caller with a
//! clock computes, into a date.

use std::fmt;
use std::str::FromStr;

use serde::{Deserialize, Deserializer, Serialize, Serializer};

/// A day of the proleptic Gregorian calendar, written `YYYY-MM-DD`.
///
/// ```
/// use winplace_rules::lifecycle::Date;
/// let d: Date = "2026-03-01".parse().unwrap();
/// assert_eq!(d.to_string(), "2026-03-01");
/// assert!(d < "2026-03-02".parse().unwrap());
/// assert!("2026-02-30".parse::<Date>().is_err());
/// assert_eq!(Date::from_unix_days(20_513), "2026-03-01".parse().unwrap());
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Date {
    year: u16,
    month: u8,
    day: u8,
}

/// Text that is not a date or a Kubernetes version.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{text:?} is not {expected}")]
pub struct BadDate {
    /// The text.
    pub text: String,
    /// What was expected (`a date such as 2026-03-01`).
    pub expected: &'static str,
}

const fn leap(year: u16) -> bool {
    (year.is_multiple_of(4) && !year.is_multiple_of(100)) || year.is_multiple_of(400)
}

impl Date {
    /// The date `year-month-day`; `None` when there is no such day.
    pub const fn new(year: u16, month: u8, day: u8) -> Option<Date> {
        if month == 0 || month > 12 || day == 0 {
            return None;
        }
        let max = match month {
            2 if leap(year) => 29,
            2 => 28,
            4 | 6 | 9 | 11 => 30,
            _ => 31,
        };
        if day > max {
            return None;
        }
        Some(Date { year, month, day })
    }

    /// A date known to exist (for the calendar's table); panics at compile time otherwise.
    pub(crate) const fn ymd(year: u16, month: u8, day: u8) -> Date {
        match Date::new(year, month, day) {
            Some(d) => d,
            None => panic!("not a date"),
        }
    }

    /// The year.
    pub fn year(self) -> u16 {
        self.year
    }

    /// The month (1–12).
    pub fn month(self) -> u8 {
        self.month
    }

    /// The day of the month.
    pub fn day(self) -> u8 {
        self.day
    }

    /// The date `days` days after 1970-01-01 (negative: before), the civil-from-days algorithm of Howard
    /// Hinnant's "chrono-Compatible Low-Level Date Algorithms". Years outside 0–9999 are clamped.
    pub fn from_unix_days(days: i64) -> Date {
        let z = days + 719_468;
        let era = z.div_euclid(146_097);
        let doe = z.rem_euclid(146_097);
        let yoe = (doe - doe / 1_460 + doe / 36_524 - doe / 146_096) / 365;
        let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
        let mp = (5 * doy + 2) / 153;
        let day = doy - (153 * mp + 2) / 5 + 1;
        let month = if mp < 10 { mp + 3 } else { mp - 9 };
        let year = yoe + era * 400 + i64::from(month <= 2);
        match u16::try_from(year) {
            Ok(y) if y <= 9999 => Date {
                year: y,
                month: month as u8,
                day: day as u8,
            },
            _ if year < 0 => Date::ymd(0, 1, 1),
            _ => Date::ymd(9999, 12, 31),
        }
    }

    /// Days since 1970-01-01 (negative: before): the inverse of [`Date::from_unix_days`], Hinnant's
    /// days-from-civil.
    ///
    /// ```
    /// # use winplace_rules::lifecycle::Date;
    /// let d: Date = "2026-03-01".parse().unwrap();
    /// assert_eq!(d.unix_days(), 20_513);
    /// ```
    pub fn unix_days(self) -> i64 {
        let month = i64::from(self.month);
        let year = i64::from(self.year) - i64::from(month <= 2);
        let era = year.div_euclid(400);
        let yoe = year.rem_euclid(400);
        let mp = (month + 9) % 12;
        let doy = (153 * mp + 2) / 5 + i64::from(self.day) - 1;
        let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
        era * 146_097 + doe - 719_468
    }
}

impl fmt::Display for Date {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{:04}-{:02}-{:02}", self.year, self.month, self.day)
    }
}

/// Digits only, of exactly `len` characters.
fn digits(text: &str, len: usize) -> Option<u16> {
    (text.len() == len && text.bytes().all(|b| b.is_ascii_digit()))
        .then(|| text.parse().ok())
        .flatten()
}

impl FromStr for Date {
    type Err = BadDate;

    fn from_str(text: &str) -> Result<Date, BadDate> {
        let bad = || BadDate {
            text: text.to_string(),
            expected: "a date such as 2026-03-01",
        };
        let mut parts = text.trim().split('-');
        let (Some(y), Some(m), Some(d), None) =
            (parts.next(), parts.next(), parts.next(), parts.next())
        else {
            return Err(bad());
        };
        let (Some(y), Some(m), Some(d)) = (digits(y, 4), digits(m, 2), digits(d, 2)) else {
            return Err(bad());
        };
        let (m, d) = (
            u8::try_from(m).map_err(|_| bad())?,
            u8::try_from(d).map_err(|_| bad())?,
        );
        Date::new(y, m, d).ok_or_else(bad)
    }
}

impl Serialize for Date {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.collect_str(self)
    }
}

impl<'de> Deserialize<'de> for Date {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Date, D::Error> {
        let text = String::deserialize(d)?;
        text.parse().map_err(serde::de::Error::custom)
    }
}

/// When a fact takes effect: a day, or only a month when the source names only the month ("in March
/// 2026"), which counts from the month's first day (the earliest the source allows: a plan made for that
/// month must already expect it).
///
/// ```
/// use winplace_rules::lifecycle::{Date, FactDate};
/// let march = FactDate::Month { year: 2026, month: 3 };
/// assert_eq!(march.to_string(), "2026-03");
/// assert_eq!(march.effective(), "2026-03-01".parse::<Date>().unwrap());
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum FactDate {
    /// A day.
    Day(Date),
    /// A month only.
    Month {
        /// The year.
        year: u16,
        /// The month (1–12).
        month: u8,
    },
}

impl FactDate {
    /// The first day the fact holds.
    pub fn effective(self) -> Date {
        match self {
            FactDate::Day(d) => d,
            FactDate::Month { year, month } => Date::ymd(year, month, 1),
        }
    }
}

impl fmt::Display for FactDate {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            FactDate::Day(d) => d.fmt(f),
            FactDate::Month { year, month } => write!(f, "{year:04}-{month:02}"),
        }
    }
}

/// A Kubernetes minor version (`1.36`); read from `1.36`, `v1.36` or `1.36.2`.
///
/// ```
/// use winplace_rules::lifecycle::KubeMinor;
/// let v: KubeMinor = "v1.37.1".parse().unwrap();
/// assert_eq!(v.to_string(), "1.37");
/// assert!(v > "1.36".parse().unwrap());
/// assert!("1".parse::<KubeMinor>().is_err());
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct KubeMinor {
    major: u16,
    minor: u16,
}

impl KubeMinor {
    /// `major.minor`.
    pub const fn new(major: u16, minor: u16) -> KubeMinor {
        KubeMinor { major, minor }
    }
}

impl fmt::Display for KubeMinor {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}.{}", self.major, self.minor)
    }
}

impl FromStr for KubeMinor {
    type Err = BadDate;

    fn from_str(text: &str) -> Result<KubeMinor, BadDate> {
        let bad = || BadDate {
            text: text.to_string(),
            expected: "a Kubernetes version such as 1.36",
        };
        let t = text.trim();
        let t = t.strip_prefix('v').unwrap_or(t);
        let mut parts = t.split('.');
        let number = |p: Option<&str>| -> Option<u16> {
            let p = p?;
            (!p.is_empty() && p.len() <= 4 && p.bytes().all(|b| b.is_ascii_digit()))
                .then(|| p.parse().ok())
                .flatten()
        };
        let (Some(major), Some(minor)) = (number(parts.next()), number(parts.next())) else {
            return Err(bad());
        };
        match parts.next() {
            None => {}
            Some(patch) if number(Some(patch)).is_some() && parts.next().is_none() => {}
            Some(_) => return Err(bad()),
        }
        Ok(KubeMinor { major, minor })
    }
}

impl Serialize for KubeMinor {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.collect_str(self)
    }
}

impl<'de> Deserialize<'de> for KubeMinor {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<KubeMinor, D::Error> {
        // Only text: an unquoted YAML `1.30` is the number 1.3.
        let value = serde_json::Value::deserialize(d)?;
        match value {
            serde_json::Value::String(s) => s.parse().map_err(serde::de::Error::custom),
            other => Err(serde::de::Error::custom(format!(
                "write the Kubernetes version as text, quoted ('1.36'), not {other}"
            ))),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn dates_read_and_reject() {
        for (text, ok) in [
            ("2026-03-01", true),
            ("2024-02-29", true),
            ("2000-02-29", true),
            ("1900-02-29", false),
            ("2026-02-29", false),
            ("2026-13-01", false),
            ("2026-00-10", false),
            ("2026-04-31", false),
            ("2026-3-1", false),
            ("26-03-01", false),
            ("2026-03-01T00:00:00Z", false),
            ("", false),
            ("２０２６-03-01", false),
        ] {
            assert_eq!(text.parse::<Date>().is_ok(), ok, "{text}");
        }
    }

    #[test]
    fn unix_days_round_the_calendar() {
        // (days since 1970-01-01, date) — 20,513 days is 2026-03-01 (56 years, 14 of them leap).
        for (days, date) in [
            (0, "1970-01-01"),
            (-1, "1969-12-31"),
            (11_016, "2000-02-29"),
            (20_513, "2026-03-01"),
            (20_782, "2026-11-25"),
        ] {
            assert_eq!(Date::from_unix_days(days).to_string(), date, "{days}");
            assert_eq!(
                date.parse::<Date>().map(Date::unix_days),
                Ok(days),
                "{date}"
            );
        }
        // Every day of 1999–2001 follows the one before it.
        let mut prev = Date::from_unix_days(10_591);
        for d in 10_592..11_700 {
            let next = Date::from_unix_days(d);
            assert!(next > prev, "{d}");
            assert_eq!(next.to_string().parse::<Date>(), Ok(next));
            assert_eq!(next.unix_days(), d);
            prev = next;
        }
    }

    #[test]
    fn kubernetes_versions() {
        for (text, want) in [
            ("1.36", Some((1, 36))),
            ("v1.36", Some((1, 36))),
            ("1.36.2", Some((1, 36))),
            ("1", None),
            ("1.x", None),
            ("1.36.2.1", None),
            ("", None),
        ] {
            assert_eq!(
                text.parse::<KubeMinor>().ok(),
                want.map(|(a, b)| KubeMinor::new(a, b)),
                "{text}"
            );
        }
        let quoted: KubeMinor = serde_json::from_value(serde_json::json!("1.30")).unwrap();
        assert_eq!(quoted, KubeMinor::new(1, 30));
        let err = serde_json::from_value::<KubeMinor>(serde_json::json!(1.3)).unwrap_err();
        assert!(err.to_string().contains("quoted"), "{err}");
    }
}
