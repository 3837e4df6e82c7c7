//! What a waiting user is told besides their position: roughly when they will be
//! admitted, and when to ask again.
//!
//! **The admission rate** is an exponentially weighted mean of the gap between
//! admissions that freed slots (someone ahead paid, left or let a pass expire), each
//! admission weighing 1/16 — the estimate follows the last few dozen admissions, so it
//! adapts within a minute of a change in pace, yet one slow payer does not swing it. A
//! batch of n admitted at once after a gap g counts as n admissions g/n apart. The rate
//! moves only when someone is admitted: a stall shows as the last known pace. It is
//! unknown until two admission events have been seen (the first only starts the clock),
//! and while every gap so far was zero.
//!
//! **The poll interval** grows with the distance from the front, so the total poll load
//! stays bounded however long the line. An admitted user polls every 30 s (their page
//! only waits for the pass to be used); a waiting user `w` places from the admitted
//! zone polls every ⌈w/50⌉ s, at least 2 and at most 300. At 100,000 waiting:
//!
//! ```text
//! w ≤ 100            every 2 s        100 / 2               =  50 req/s
//! 100 < w ≤ 15,000   every w/50 s     Σ 50/w ≈ 50 · ln 150  ≈ 250 req/s
//! w > 15,000         every 300 s      85,000 / 300          ≈ 283 req/s
//!                                                     total ≈ 580 req/s
//! ```
//!
//! — against 50,000 req/s if everyone polled every 2 s. Those near the front, whose
//! position changes fastest, see it soonest; past 15,000 the load grows by only one
//! request per second per 300 more people.
//!
//! **Once the event is sold out** nobody who is not admitted has anything left to wait
//! for: they get no ETA and are told to come back in an hour (the waiting-room page
//! stops polling altogether), so a sold-out drop sheds its poll load at once. An
//! admitted user's pass is honoured as before, and so is their 30 s.

/// How much one admission weighs in the mean gap.
const WEIGHT: f64 = 1.0 / 16.0;
/// How often an admitted user polls.
const ADMITTED_POLL_SECS: u64 = 30;
/// A waiting user polls once per this many people between them and the admitted zone.
const PEOPLE_PER_POLL_SECOND: u64 = 50;
const MIN_POLL_SECS: u64 = 2;
const MAX_POLL_SECS: u64 = 300;
/// How often anyone not admitted polls once the event is sold out.
pub const SOLD_OUT_POLL_SECS: u64 = 3600;

/// Smoothed rate at which people are admitted off the waiting line (admissions per
/// second), from the times of admissions that freed slots.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct AdmissionRate {
    last_ms: Option<i64>,
    mean_gap_ms: Option<f64>,
}

impl AdmissionRate {
    pub fn new() -> Self {
        Self::default()
    }

    /// Records `admitted` people admitted at `now_ms`. A time before the last one (a
    /// clock step back) is read as the last one.
    pub fn record(&mut self, now_ms: i64, admitted: u32) {
        if admitted == 0 {
            return;
        }
        let Some(last_ms) = self.last_ms else {
            self.last_ms = Some(now_ms);
            return;
        };
        let now_ms = now_ms.max(last_ms);
        let gap = (now_ms - last_ms) as f64 / f64::from(admitted);
        let kept = (1.0 - WEIGHT).powi(i32::try_from(admitted).unwrap_or(i32::MAX));
        self.mean_gap_ms = Some(match self.mean_gap_ms {
            None => gap,
            Some(mean) => gap + kept * (mean - gap),
        });
        self.last_ms = Some(now_ms);
    }

    /// Admissions per second, if known.
    pub fn per_second(&self) -> Option<f64> {
        self.mean_gap_ms
            .filter(|gap| *gap > 0.0)
            .map(|gap| 1000.0 / gap)
    }
}

/// etaSeconds for a waiting user: people ahead of them in the *waiting* line
/// (`position - admit_limit`) ÷ rate, rounded up; `None` when not waiting or rate
/// unknown.
pub fn eta_seconds(position: u64, admit_limit: u32, rate: Option<f64>) -> Option<u64> {
    let waiting = position
        .checked_sub(u64::from(admit_limit))
        .filter(|waiting| *waiting > 0)?;
    let rate = rate.filter(|rate| rate.is_finite() && *rate > 0.0)?;
    Some((waiting as f64 / rate).ceil() as u64)
}

/// pollAfterSeconds: admitted → 30; waiting at `w = position - admit_limit` →
/// `clamp(ceil(w / 50), 2, 300)`.
pub fn poll_after_seconds(position: u64, admit_limit: u32, admitted: bool) -> u64 {
    if admitted {
        return ADMITTED_POLL_SECS;
    }
    let waiting = position.saturating_sub(u64::from(admit_limit));
    waiting
        .div_ceil(PEOPLE_PER_POLL_SECOND)
        .clamp(MIN_POLL_SECS, MAX_POLL_SECS)
}

/// What a user is told besides their place.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Advice {
    pub eta_seconds: Option<u64>,
    pub poll_after_seconds: u64,
}

/// The advice for a user at `position` (0: not in the line), [`eta_seconds`] and
/// [`poll_after_seconds`] — unless the event is `sold_out` and they are not admitted:
/// then no ETA, and [`SOLD_OUT_POLL_SECS`].
pub fn advice(
    position: u64,
    admit_limit: u32,
    admitted: bool,
    sold_out: bool,
    rate: Option<f64>,
) -> Advice {
    if sold_out && !admitted {
        return Advice {
            eta_seconds: None,
            poll_after_seconds: SOLD_OUT_POLL_SECS,
        };
    }
    Advice {
        eta_seconds: eta_seconds(position, admit_limit, rate),
        poll_after_seconds: poll_after_seconds(position, admit_limit, admitted),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Feeds `(now_ms, admitted)` events to a fresh rate; the expected rate after each.
    fn check(events: &[(i64, u32, Option<f64>)]) {
        let mut rate = AdmissionRate::new();
        for (i, (now_ms, admitted, expected)) in events.iter().enumerate() {
            rate.record(*now_ms, *admitted);
            let got = rate.per_second();
            let close = match (got, expected) {
                (Some(got), Some(expected)) => (got - expected).abs() < 1e-9,
                (got, expected) => got == *expected,
            };
            assert!(
                close,
                "event {i} at {now_ms}: {got:?}, expected {expected:?}"
            );
        }
    }

    #[test]
    fn the_rate_is_unknown_until_a_second_admission() {
        check(&[(1000, 1, None), (3000, 1, Some(0.5))]);
    }

    #[test]
    fn a_steady_pace_is_read_exactly() {
        check(&[
            (0, 1, None),
            (250, 1, Some(4.0)),
            (500, 1, Some(4.0)),
            (750, 1, Some(4.0)),
        ]);
    }

    #[test]
    fn a_batch_counts_as_that_many_admissions() {
        check(&[(0, 1, None), (1000, 4, Some(4.0)), (2000, 4, Some(4.0))]);
    }

    #[test]
    fn one_slow_admission_moves_the_rate_by_a_sixteenth_of_the_gap() {
        // Mean gap 1000 ms; one gap of 17,000 ms moves it by (17,000 - 1,000) / 16.
        check(&[(0, 1, None), (1000, 1, Some(1.0)), (18_000, 1, Some(0.5))]);
    }

    #[test]
    fn simultaneous_admissions_alone_give_no_rate() {
        check(&[
            (500, 1, None),
            (500, 1, None),
            (500, 3, None),
            (1500, 1, Some(1000.0 / 62.5)),
        ]);
    }

    #[test]
    fn a_clock_step_back_reads_as_no_time_passing() {
        let mut rate = AdmissionRate::new();
        rate.record(10_000, 1);
        rate.record(9_000, 1);
        assert_eq!(rate.per_second(), None);
        assert_eq!(rate.last_ms, Some(10_000));
    }

    #[test]
    fn eta_counts_only_the_waiting_line() {
        let cases: &[(u64, u32, Option<f64>, Option<u64>)] = &[
            (100, 100, Some(1.0), None),
            (101, 100, Some(1.0), Some(1)),
            (150, 100, Some(2.0), Some(25)),
            (151, 100, Some(2.0), Some(26)),
            (5, 0, Some(0.5), Some(10)),
            (150, 100, None, None),
            (150, 100, Some(0.0), None),
        ];
        for (position, limit, rate, expected) in cases {
            assert_eq!(
                eta_seconds(*position, *limit, *rate),
                *expected,
                "{position} of {limit} at {rate:?}"
            );
        }
    }

    #[test]
    fn the_poll_interval_grows_with_the_distance_from_the_front() {
        let cases: &[(u64, bool, u64)] = &[
            (1, true, 30),
            (100, true, 30),
            (101, false, 2),
            (200, false, 2),
            (201, false, 3),
            (600, false, 10),
            (15_100, false, 300),
            (1_000_100, false, 300),
        ];
        for (position, admitted, expected) in cases {
            assert_eq!(
                poll_after_seconds(*position, 100, *admitted),
                *expected,
                "position {position}"
            );
        }
    }

    #[test]
    fn a_sold_out_event_tells_only_its_admitted_users_to_keep_polling() {
        let rate = Some(2.0);
        let cases: &[(u64, bool, bool, Advice)] = &[
            (150, false, false, advise(Some(25), 2)),
            (150, false, true, advise(None, SOLD_OUT_POLL_SECS)),
            (20_000, false, true, advise(None, SOLD_OUT_POLL_SECS)),
            (0, false, true, advise(None, SOLD_OUT_POLL_SECS)),
            (1, true, false, advise(None, 30)),
            (1, true, true, advise(None, 30)),
        ];
        for (position, admitted, sold_out, expected) in cases {
            assert_eq!(
                advice(*position, 100, *admitted, *sold_out, rate),
                *expected,
                "position {position}, admitted {admitted}, sold out {sold_out}"
            );
        }
    }

    fn advise(eta_seconds: Option<u64>, poll_after_seconds: u64) -> Advice {
        Advice {
            eta_seconds,
            poll_after_seconds,
        }
    }

    #[test]
    fn a_hundred_thousand_waiting_poll_about_600_times_a_second() {
        let load: f64 = (1..=100_000u64)
            .map(|waiting| 1.0 / poll_after_seconds(100 + waiting, 100, false) as f64)
            .sum();
        assert!((550.0..650.0).contains(&load), "{load} req/s");
    }
}
