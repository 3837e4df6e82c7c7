//! The exact sliding window (`docs/design/rate-limits.md`): in *any* interval of length W, at most L
//! admissions — not the two-fixed-windows approximation, which lets up to 2L through
//! around a boundary.
//!
//! The window keeps the times of its last L admissions, oldest first, so memory is
//! bounded by L. A request is admitted when fewer than L admissions lie in the last W;
//! a refused request changes nothing. When it is refused, the oldest admission is the
//! one whose leaving makes room, so the wait is exact: `oldest + W - now`.
//!
//! An admission at `t` counts in the interval `(now - W, now]`: two admissions exactly W
//! apart never share a window. Times are milliseconds from any fixed origin; a time
//! earlier than the last admission (a clock step back) is read as that last time, so
//! the record stays ordered and the bound holds whatever the clock does.

use std::collections::VecDeque;

/// A limit of `limit` admissions in any `window_ms` milliseconds.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Rate {
    pub limit: u32,
    pub window_ms: i64,
}

/// What the window says to one request.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Decision {
    /// Let it through. `remaining` more would be admitted now; one more unit comes
    /// back after `reset_ms`, when the oldest admission leaves the window.
    Admitted { remaining: u32, reset_ms: i64 },
    /// Refuse it. The next admission is possible after `retry_after_ms` (> 0).
    Limited { retry_after_ms: i64 },
}

impl Decision {
    /// Whole seconds to wait, rounded up: never 0 on a refusal.
    pub fn retry_after_secs(&self) -> Option<i64> {
        match self {
            Decision::Admitted { .. } => None,
            Decision::Limited { retry_after_ms } => Some(ceil_secs(*retry_after_ms).max(1)),
        }
    }
}

/// Milliseconds to whole seconds, rounded up.
pub fn ceil_secs(ms: i64) -> i64 {
    ms.max(0).div_euclid(1000) + i64::from(ms.max(0).rem_euclid(1000) != 0)
}

/// The admissions of one key under one [`Rate`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SlidingWindow {
    rate: Rate,
    /// Times of the admissions still inside the window, oldest first; at most `limit`.
    admitted: VecDeque<i64>,
}

impl SlidingWindow {
    /// An empty window. Its memory grows with the admissions it holds, never ahead of
    /// them: a generous limit (a million a second) costs nothing until it is used, where
    /// reserving `limit` slots up front cost 8 MB per window and ran an edge isolate out
    /// of memory with a few thousand users.
    pub fn new(rate: Rate) -> Self {
        Self {
            rate,
            admitted: VecDeque::new(),
        }
    }

    /// A window holding earlier admissions (restored from storage), oldest first.
    /// Only the last `limit` matter; older ones are dropped.
    pub fn with_admissions(rate: Rate, times: impl IntoIterator<Item = i64>) -> Self {
        let mut window = Self::new(rate);
        for time in times {
            let time = window.admitted.back().map_or(time, |last| time.max(*last));
            if window.admitted.len() == rate.limit as usize {
                window.admitted.pop_front();
            }
            if rate.limit > 0 {
                window.admitted.push_back(time);
            }
        }
        window
    }

    pub fn rate(&self) -> Rate {
        self.rate
    }

    /// Decides one request at `now_ms`, recording it when it is admitted.
    pub fn check(&mut self, now_ms: i64) -> Decision {
        let now = self
            .admitted
            .back()
            .map_or(now_ms, |last| now_ms.max(*last));
        self.forget_before(now);
        if self.admitted.len() < self.rate.limit as usize {
            self.admitted.push_back(now);
            let oldest = self.admitted.front().copied().unwrap_or(now);
            Decision::Admitted {
                remaining: self.rate.limit - self.admitted.len() as u32,
                reset_ms: oldest + self.rate.window_ms - now,
            }
        } else {
            // A zero limit admits nothing, ever: the wait is one whole window.
            let oldest = self.admitted.front().copied().unwrap_or(now);
            Decision::Limited {
                retry_after_ms: oldest + self.rate.window_ms - now,
            }
        }
    }

    /// Takes back the admission made at `at_ms` (a later stage refused the request),
    /// so a refused request consumes nothing.
    pub fn release(&mut self, at_ms: i64) {
        if let Some(index) = self.admitted.iter().rposition(|time| *time == at_ms) {
            self.admitted.remove(index);
        }
    }

    /// The time of the latest admission, as recorded (never before an earlier one).
    pub fn latest(&self) -> Option<i64> {
        self.admitted.back().copied()
    }

    /// The admission times inside the window at `now_ms`, oldest first.
    pub fn admissions(&mut self, now_ms: i64) -> impl Iterator<Item = i64> + '_ {
        self.forget_before(now_ms);
        self.admitted.iter().copied()
    }

    fn forget_before(&mut self, now: i64) {
        while self
            .admitted
            .front()
            .is_some_and(|time| *time <= now - self.rate.window_ms)
        {
            self.admitted.pop_front();
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const FIVE_PER_SECOND: Rate = Rate {
        limit: 5,
        window_ms: 1000,
    };

    fn admitted(remaining: u32, reset_ms: i64) -> Decision {
        Decision::Admitted {
            remaining,
            reset_ms,
        }
    }

    fn limited(retry_after_ms: i64) -> Decision {
        Decision::Limited { retry_after_ms }
    }

    /// Feeds `arrivals` in order to a fresh window; each expected decision on one line.
    fn check(rate: Rate, arrivals: &[(i64, Decision)]) {
        let mut window = SlidingWindow::new(rate);
        for (i, (at, expected)) in arrivals.iter().enumerate() {
            assert_eq!(window.check(*at), *expected, "arrival {i} at {at}");
        }
    }

    #[test]
    fn the_limit_th_request_in_one_millisecond_passes_and_the_next_does_not() {
        check(
            FIVE_PER_SECOND,
            &[
                (100, admitted(4, 1000)),
                (100, admitted(3, 1000)),
                (100, admitted(2, 1000)),
                (100, admitted(1, 1000)),
                (100, admitted(0, 1000)),
                (100, limited(1000)),
                (1099, limited(1)),
                (1100, admitted(4, 1000)),
            ],
        );
    }

    #[test]
    fn arrivals_exactly_one_window_apart_never_share_it() {
        let one_per_second = Rate {
            limit: 1,
            window_ms: 1000,
        };
        check(
            one_per_second,
            &[
                (0, admitted(0, 1000)),
                (999, limited(1)),
                (1000, admitted(0, 1000)),
                (2000, admitted(0, 1000)),
            ],
        );
    }

    #[test]
    fn room_comes_back_one_admission_at_a_time() {
        check(
            Rate {
                limit: 2,
                window_ms: 1000,
            },
            &[
                (0, admitted(1, 1000)),
                (400, admitted(0, 600)),
                (500, limited(500)),
                (1000, admitted(0, 400)),
                (1001, limited(399)),
                (1400, admitted(0, 600)),
            ],
        );
    }

    #[test]
    fn refused_requests_consume_nothing() {
        let mut window = SlidingWindow::new(Rate {
            limit: 1,
            window_ms: 1000,
        });
        assert_eq!(window.check(0), admitted(0, 1000));
        for at in (1..1000).step_by(37) {
            assert!(matches!(window.check(at), Decision::Limited { .. }));
        }
        assert_eq!(window.check(1000), admitted(0, 1000));
    }

    #[test]
    fn a_released_admission_makes_room_again() {
        let mut window = SlidingWindow::new(Rate {
            limit: 1,
            window_ms: 1000,
        });
        assert_eq!(window.check(10), admitted(0, 1000));
        window.release(10);
        assert_eq!(window.check(20), admitted(0, 1000));
    }

    #[test]
    fn a_clock_step_back_cannot_open_the_window() {
        check(
            Rate {
                limit: 2,
                window_ms: 1000,
            },
            &[
                (5000, admitted(1, 1000)),
                (4000, admitted(0, 1000)),
                (4500, limited(1000)),
                (5999, limited(1)),
            ],
        );
    }

    #[test]
    fn a_zero_limit_admits_nothing() {
        check(
            Rate {
                limit: 0,
                window_ms: 1000,
            },
            &[(0, limited(1000)), (5000, limited(1000))],
        );
    }

    #[test]
    fn retry_after_is_whole_seconds_rounded_up_and_never_zero() {
        assert_eq!(limited(1).retry_after_secs(), Some(1));
        assert_eq!(limited(1000).retry_after_secs(), Some(1));
        assert_eq!(limited(1001).retry_after_secs(), Some(2));
        assert_eq!(limited(59_999).retry_after_secs(), Some(60));
        assert_eq!(admitted(0, 5).retry_after_secs(), None);
    }

    #[test]
    fn a_restored_window_keeps_only_what_still_counts() {
        let mut window =
            SlidingWindow::with_admissions(FIVE_PER_SECOND, [1, 2, 3, 400, 500, 600, 700]);
        assert_eq!(
            window.admissions(1002).collect::<Vec<_>>(),
            [3, 400, 500, 600, 700]
        );
        assert_eq!(window.check(1002), limited(1));
        assert_eq!(window.check(1003), admitted(0, 397));
    }
}
