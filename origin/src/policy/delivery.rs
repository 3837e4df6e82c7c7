//! The merchant's webhooks: what a receiver's answer makes of a delivery, and when the
//! next attempt is — exponential backoff with jitter, for as long as the schedule
//! allows (3 days unless configured), then a dead letter.

/// When attempts are made.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Schedule {
    /// The wait after the first failed attempt.
    pub first_ms: u64,
    /// The longest wait between two attempts.
    pub max_ms: u64,
    /// An event not delivered this long after it happened is a dead letter.
    pub give_up_after_ms: u64,
}

impl Default for Schedule {
    fn default() -> Self {
        Self {
            first_ms: 5_000,
            max_ms: 3_600_000,
            give_up_after_ms: 3 * 24 * 3_600_000,
        }
    }
}

impl Schedule {
    /// When to try again after `attempts` failed attempts at an event that happened at
    /// `occurred_at`, at `now_ms`; `jitter` in [0, 1) spreads the retries (a wait is
    /// between half and all of its backoff). `None`: give up — a dead letter.
    pub fn next_attempt(
        &self,
        attempts: u32,
        occurred_at: i64,
        now_ms: i64,
        jitter: f64,
    ) -> Option<i64> {
        let doublings = attempts.saturating_sub(1).min(40);
        let backoff = self
            .first_ms
            .saturating_mul(1u64 << doublings)
            .min(self.max_ms);
        let wait = (backoff as f64 * (0.5 + 0.5 * jitter.clamp(0.0, 1.0))) as i64;
        let next = now_ms.saturating_add(wait.max(1));
        let deadline =
            occurred_at.saturating_add(i64::try_from(self.give_up_after_ms).unwrap_or(i64::MAX));
        (next <= deadline).then_some(next)
    }
}

/// What a receiver's answer (or its absence) makes of an attempt.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Verdict {
    /// 2xx: acknowledged.
    Delivered(u16),
    /// 410 Gone: the endpoint wants no more; it is disabled until an operator enables it.
    Gone,
    /// Anything else — another status, a timeout, a connection refused: tried again.
    Failed { status: Option<u16>, error: String },
}

/// The verdict on an answer with `status`, or on a transport `error`.
pub fn verdict(answer: Result<u16, String>) -> Verdict {
    match answer {
        Ok(status @ 200..=299) => Verdict::Delivered(status),
        Ok(410) => Verdict::Gone,
        Ok(status) => Verdict::Failed {
            status: Some(status),
            error: format!("answered {status}"),
        },
        Err(error) => Verdict::Failed {
            status: None,
            error,
        },
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const T0: i64 = 1_000_000;

    #[test]
    fn waits_double_from_the_first_up_to_the_longest() {
        let schedule = Schedule::default();
        let waits: Vec<i64> = (1..=12)
            .map(|n| schedule.next_attempt(n, T0, T0, 1.0).unwrap_or(0) - T0)
            .collect();
        let whole = [5, 10, 20, 40, 80, 160, 320, 640, 1_280, 2_560, 3_600, 3_600];
        for (wait, seconds) in waits.iter().zip(whole) {
            assert_eq!(*wait, seconds * 1_000, "{waits:?}");
        }
    }

    #[test]
    fn jitter_spreads_a_wait_over_its_upper_half() {
        let schedule = Schedule::default();
        let low = schedule.next_attempt(3, T0, T0, 0.0);
        let high = schedule.next_attempt(3, T0, T0, 1.0);
        assert_eq!((low, high), (Some(T0 + 10_000), Some(T0 + 20_000)));
        assert_eq!(schedule.next_attempt(3, T0, T0, 7.0), high, "clamped");
    }

    #[test]
    fn past_three_days_an_event_is_a_dead_letter() {
        let schedule = Schedule::default();
        let three_days = 3 * 24 * 3_600_000;
        let almost = T0 + three_days - 3_600_000;
        assert_eq!(
            schedule.next_attempt(30, T0, almost, 1.0),
            Some(T0 + three_days)
        );
        assert_eq!(schedule.next_attempt(30, T0, almost + 1, 1.0), None);
        // Counting the attempts alone never overflows.
        assert!(schedule.next_attempt(u32::MAX, T0, T0, 0.5).is_some());
    }

    #[test]
    fn only_2xx_delivers_and_410_disables() {
        assert_eq!(verdict(Ok(204)), Verdict::Delivered(204));
        assert_eq!(verdict(Ok(200)), Verdict::Delivered(200));
        assert_eq!(verdict(Ok(410)), Verdict::Gone);
        for status in [301, 400, 404, 429, 500, 503] {
            assert!(
                matches!(verdict(Ok(status)), Verdict::Failed { status: Some(s), .. } if s == status)
            );
        }
        assert_eq!(
            verdict(Err("timed out".into())),
            Verdict::Failed {
                status: None,
                error: "timed out".into()
            }
        );
    }
}
