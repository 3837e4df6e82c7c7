//! The days a settlement file covers: whole UTC days, first to last inclusive. Our side
//! of a reconciliation is the payments approved in them. The operator names the period,
//! or it is the span of the file's transaction dates.

use std::fmt;

use chrono::{Days, NaiveDate};
use serde::Serialize;

/// The longest period reconciled at once: a year of days. Longer is a typing mistake,
/// and would load a year of payments.
pub const MAX_DAYS: u64 = 366;

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub struct Period {
    pub first: NaiveDate,
    pub last: NaiveDate,
}

/// Why a period is refused.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum PeriodError {
    #[error("`{0}` is not a date: expected YYYY-MM-DD")]
    NotADate(String),
    #[error("the period ends ({last}) before it starts ({first})")]
    Backwards { first: NaiveDate, last: NaiveDate },
    #[error("the period is longer than {MAX_DAYS} days")]
    TooLong,
    #[error("give a date, or both from and to, not both")]
    Ambiguous,
    #[error("give both from and to")]
    Incomplete,
}

impl Period {
    /// From an operator's `date`, or `from` and `to` (inclusive), each `YYYY-MM-DD`;
    /// `None` when none is given.
    pub fn from_query(
        date: Option<&str>,
        from: Option<&str>,
        to: Option<&str>,
    ) -> Result<Option<Period>, PeriodError> {
        let day = |text: &str| {
            NaiveDate::parse_from_str(text.trim(), "%Y-%m-%d")
                .map_err(|_| PeriodError::NotADate(text.to_owned()))
        };
        match (date, from, to) {
            (None, None, None) => Ok(None),
            (Some(date), None, None) => {
                let date = day(date)?;
                Ok(Some(Period {
                    first: date,
                    last: date,
                }))
            }
            (Some(_), _, _) => Err(PeriodError::Ambiguous),
            (None, Some(from), Some(to)) => Period::new(day(from)?, day(to)?).map(Some),
            (None, _, _) => Err(PeriodError::Incomplete),
        }
    }

    pub fn new(first: NaiveDate, last: NaiveDate) -> Result<Period, PeriodError> {
        if last < first {
            return Err(PeriodError::Backwards { first, last });
        }
        let days = last.signed_duration_since(first).num_days().unsigned_abs() + 1;
        if days > MAX_DAYS {
            return Err(PeriodError::TooLong);
        }
        Ok(Period { first, last })
    }

    /// Widens the period to take in `date`.
    pub fn cover(period: Option<Period>, date: NaiveDate) -> Period {
        match period {
            None => Period {
                first: date,
                last: date,
            },
            Some(period) => Period {
                first: period.first.min(date),
                last: period.last.max(date),
            },
        }
    }

    /// The period in epoch milliseconds: from the first day's midnight (UTC), up to but
    /// not including the midnight after the last day.
    pub fn millis(&self) -> (i64, i64) {
        let midnight = |date: NaiveDate| {
            date.and_hms_opt(0, 0, 0)
                .map_or(i64::MAX, |at| at.and_utc().timestamp_millis())
        };
        let after = self
            .last
            .checked_add_days(Days::new(1))
            .map_or(i64::MAX, midnight);
        (midnight(self.first), after)
    }
}

impl fmt::Display for Period {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.first == self.last {
            write!(f, "{}", self.first)
        } else {
            write!(f, "{} to {}", self.first, self.last)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn day(text: &str) -> NaiveDate {
        text.parse().expect("a date")
    }

    #[test]
    fn an_operator_names_one_day_or_a_range() {
        let one = Period::from_query(Some("2026-11-30"), None, None);
        assert_eq!(
            one,
            Ok(Some(Period {
                first: day("2026-11-30"),
                last: day("2026-11-30")
            }))
        );
        let range = Period::from_query(None, Some("2026-11-01"), Some("2026-11-30"));
        assert_eq!(
            range,
            Ok(Some(Period {
                first: day("2026-11-01"),
                last: day("2026-11-30")
            }))
        );
        assert_eq!(Period::from_query(None, None, None), Ok(None));
    }

    #[test]
    fn what_an_operator_cannot_mean() {
        let cases = [
            (Some("30.11.2026"), None, None),
            (Some("2026-11-31"), None, None),
            (Some("2026-11-30"), Some("2026-11-30"), None),
            (None, Some("2026-11-30"), None),
            (None, None, Some("2026-11-30")),
            (None, Some("2026-12-01"), Some("2026-11-30")),
            (None, Some("2024-01-01"), Some("2026-11-30")),
        ];
        for (date, from, to) in cases {
            assert!(
                Period::from_query(date, from, to).is_err(),
                "{date:?} {from:?} {to:?}"
            );
        }
    }

    #[test]
    fn a_period_is_whole_utc_days() {
        let period = Period::new(day("2026-11-29"), day("2026-11-30")).expect("a period");
        assert_eq!(
            period.millis(),
            (1_795_910_400_000, 1_795_910_400_000 + 2 * 86_400_000)
        );
        assert_eq!(period.to_string(), "2026-11-29 to 2026-11-30");
    }

    #[test]
    fn covering_dates_spans_them() {
        let dates = ["2026-11-30", "2026-11-28", "2026-11-29"].map(day);
        let period = dates
            .into_iter()
            .fold(None, |period, date| Some(Period::cover(period, date)));
        assert_eq!(
            period,
            Some(Period {
                first: day("2026-11-28"),
                last: day("2026-11-30")
            })
        );
    }
}
