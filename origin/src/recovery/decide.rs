//! What recovery makes of one payment, given what the PG says about it now: a pure
//! function of (payment, PG answer, now), so every rule is a line in a table test.
//!
//! - The PG approved it → APPROVED (its time of approval). If the PG approved another
//!   amount, it is APPROVED as the PG says and flagged for an operator.
//! - The PG declined it → FAILED `DECLINED`; it cancelled (refunded) it → FAILED
//!   `CANCELLED_AT_PG`: no money is held either way.
//! - The PG has never heard of it → FAILED `NOT_FOUND_AT_PG`, but only at the third
//!   such answer, each more than the spacing (wider than the PG timeout) after the
//!   one before: a request that stalled on its way may still land, and until it can no
//!   longer land, "not found" is not "never will be".
//! - The PG is still processing it, or cannot be asked → asked again later, with a
//!   backoff that doubles up to a ceiling.
//! - Past the maximum age with no answer → still asked (at the ceiling), and flagged
//!   for an operator with the reason, shown by `GET /admin/payments?status=UNKNOWN`.

use std::time::Duration;

/// How recovery paces itself.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RecoveryConfig {
    /// `RECOVERY_INTERVAL_MS`: how often a cycle runs.
    pub interval: Duration,
    /// `RECOVERY_MIN_AGE_MS`: a PENDING payment younger than this may be a confirm
    /// still running, and is left alone.
    pub min_age_ms: i64,
    /// The least time between two NOT_FOUND answers that both count: wider than the PG
    /// timeout, so a request stalled at the first may have landed by the second.
    pub not_found_spacing_ms: i64,
    /// NOT_FOUND answers, so spaced, that make a payment FAILED.
    pub not_found_needed: u32,
    /// `RECOVERY_MAX_AGE_MS`: unresolved past this, a payment is flagged.
    pub max_age_ms: i64,
    /// The first wait after a PG that is busy or away; it doubles each time.
    pub backoff_base_ms: i64,
    /// The longest wait between two questions about one payment.
    pub backoff_max_ms: i64,
}

impl RecoveryConfig {
    /// The SPEC defaults, for a PG whose calls time out after `pg_timeout`.
    pub fn for_pg_timeout(pg_timeout: Duration) -> Self {
        Self {
            interval: Duration::from_secs(30),
            min_age_ms: 30_000,
            not_found_spacing_ms: 2 * pg_timeout.as_millis() as i64,
            not_found_needed: 3,
            max_age_ms: 24 * 3_600_000,
            backoff_base_ms: 30_000,
            backoff_max_ms: 600_000,
        }
    }
}

/// What recovery knows of a payment it has not settled yet.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct RecoveryState {
    /// Questions asked that left it unsettled.
    pub attempts: u32,
    /// NOT_FOUND answers counted so far.
    pub not_found_count: u32,
    pub last_not_found_at: Option<i64>,
    /// When it may next be asked about.
    pub next_attempt_at: i64,
    /// Why an operator should look at it, once flagged.
    pub flag: Option<String>,
    /// The PG approved it after it was recorded FAILED: the charge must be cancelled.
    pub refund_due: bool,
}

/// The PG's answer to "what happened to this order?".
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum PgView {
    /// `approved_at` when the PG says; else the time recovery learned it.
    Approved {
        approved_at: Option<i64>,
        amount: i64,
    },
    Declined,
    Cancelled,
    NotFound,
    /// Received and still being processed.
    Pending,
    /// No answer: the PG is away, slow, or the recovery guard refused to ask.
    Unavailable {
        cause: String,
    },
}

/// What to do with the payment.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Decision {
    Approve {
        approved_at: i64,
        /// Set when an operator should look at it anyway.
        flag: Option<String>,
    },
    Fail {
        reason: &'static str,
    },
    /// Still unsettled: remember this, ask again at `state.next_attempt_at`.
    Later {
        state: RecoveryState,
    },
}

/// The payment facts recovery decides on.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Subject<'a> {
    pub amount: i64,
    pub created_at: i64,
    pub state: &'a RecoveryState,
}

pub fn decide(subject: Subject<'_>, pg: &PgView, now_ms: i64, config: &RecoveryConfig) -> Decision {
    let state = subject.state;
    match pg {
        PgView::Approved {
            approved_at,
            amount,
        } => Decision::Approve {
            approved_at: approved_at.unwrap_or(now_ms),
            flag: (*amount != subject.amount).then(|| {
                format!(
                    "the PG approved {amount}, the payment was for {}",
                    subject.amount
                )
            }),
        },
        PgView::Declined => Decision::Fail { reason: "DECLINED" },
        PgView::Cancelled => Decision::Fail {
            reason: "CANCELLED_AT_PG",
        },
        PgView::NotFound => {
            let spaced = state
                .last_not_found_at
                .is_none_or(|last| now_ms - last > config.not_found_spacing_ms);
            if !spaced {
                // Too soon after the last one to tell anything new: ask once it counts.
                let last = state.last_not_found_at.unwrap_or(now_ms);
                return Decision::Later {
                    state: RecoveryState {
                        next_attempt_at: last + config.not_found_spacing_ms + 1,
                        ..state.clone()
                    },
                };
            }
            let count = state.not_found_count + 1;
            if count >= config.not_found_needed {
                return Decision::Fail {
                    reason: "NOT_FOUND_AT_PG",
                };
            }
            Decision::Later {
                state: RecoveryState {
                    attempts: state.attempts + 1,
                    not_found_count: count,
                    last_not_found_at: Some(now_ms),
                    next_attempt_at: now_ms + config.not_found_spacing_ms + 1,
                    ..state.clone()
                },
            }
        }
        PgView::Pending | PgView::Unavailable { .. } => {
            let attempts = state.attempts + 1;
            let age = now_ms - subject.created_at;
            let too_old = age > config.max_age_ms;
            let wait = if too_old {
                config.backoff_max_ms
            } else {
                backoff(attempts, config)
            };
            let flag = match (too_old, &state.flag) {
                (_, Some(flag)) => Some(flag.clone()),
                (true, None) => Some(format!(
                    "unresolved {} h after it was made; last PG answer: {}",
                    age / 3_600_000,
                    describe(pg)
                )),
                (false, None) => None,
            };
            Decision::Later {
                state: RecoveryState {
                    attempts,
                    next_attempt_at: now_ms + wait,
                    flag,
                    ..state.clone()
                },
            }
        }
    }
}

/// `base × 2^(attempts-1)`, at most the ceiling.
fn backoff(attempts: u32, config: &RecoveryConfig) -> i64 {
    let doublings = attempts.saturating_sub(1).min(30);
    config
        .backoff_base_ms
        .saturating_mul(1 << doublings)
        .min(config.backoff_max_ms)
}

fn describe(pg: &PgView) -> String {
    match pg {
        PgView::Pending => "still processing".to_owned(),
        PgView::Unavailable { cause } => format!("unavailable ({cause})"),
        other => format!("{other:?}"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const SPACING: i64 = 6_000;

    fn config() -> RecoveryConfig {
        RecoveryConfig::for_pg_timeout(Duration::from_secs(3))
    }

    fn decide_at(state: &RecoveryState, pg: &PgView, now_ms: i64) -> Decision {
        let subject = Subject {
            amount: 5_000,
            created_at: 0,
            state,
        };
        decide(subject, pg, now_ms, &config())
    }

    fn later(decision: Decision) -> RecoveryState {
        match decision {
            Decision::Later { state } => state,
            other => panic!("expected Later, got {other:?}"),
        }
    }

    #[test]
    fn the_pgs_word_settles_the_payment() {
        let fresh = RecoveryState::default();
        let cases = [
            (
                PgView::Approved {
                    approved_at: Some(77),
                    amount: 5_000,
                },
                Decision::Approve {
                    approved_at: 77,
                    flag: None,
                },
            ),
            (
                PgView::Approved {
                    approved_at: None,
                    amount: 5_000,
                },
                Decision::Approve {
                    approved_at: 40_000,
                    flag: None,
                },
            ),
            (PgView::Declined, Decision::Fail { reason: "DECLINED" }),
            (
                PgView::Cancelled,
                Decision::Fail {
                    reason: "CANCELLED_AT_PG",
                },
            ),
        ];
        for (pg, expected) in cases {
            assert_eq!(decide_at(&fresh, &pg, 40_000), expected, "{pg:?}");
        }
    }

    #[test]
    fn an_approval_of_another_amount_is_kept_and_flagged() {
        let pg = PgView::Approved {
            approved_at: Some(5),
            amount: 9_000,
        };
        let Decision::Approve { flag, .. } = decide_at(&RecoveryState::default(), &pg, 40_000)
        else {
            panic!("an approval is an approval");
        };
        assert!(flag.is_some_and(|f| f.contains("9000") && f.contains("5000")));
    }

    #[test]
    fn not_found_fails_only_at_the_third_spaced_answer() {
        let mut state = RecoveryState::default();
        let mut now = 40_000;
        for count in 1..=2 {
            state = later(decide_at(&state, &PgView::NotFound, now));
            assert_eq!(state.not_found_count, count);
            assert_eq!(state.last_not_found_at, Some(now));
            assert_eq!(state.next_attempt_at, now + SPACING + 1);
            now = state.next_attempt_at;
        }
        assert_eq!(
            decide_at(&state, &PgView::NotFound, now),
            Decision::Fail {
                reason: "NOT_FOUND_AT_PG"
            }
        );
    }

    #[test]
    fn a_not_found_too_soon_after_the_last_does_not_count() {
        let state = RecoveryState {
            not_found_count: 2,
            last_not_found_at: Some(40_000),
            ..RecoveryState::default()
        };
        for now in [40_000, 41_000, 40_000 + SPACING] {
            let next = later(decide_at(&state, &PgView::NotFound, now));
            assert_eq!(next.not_found_count, 2, "at {now}");
            assert_eq!(next.next_attempt_at, 40_000 + SPACING + 1);
        }
        assert!(matches!(
            decide_at(&state, &PgView::NotFound, 40_000 + SPACING + 1),
            Decision::Fail { .. }
        ));
    }

    #[test]
    fn an_approval_after_not_found_answers_still_wins() {
        let state = RecoveryState {
            not_found_count: 2,
            last_not_found_at: Some(40_000),
            ..RecoveryState::default()
        };
        let pg = PgView::Approved {
            approved_at: Some(45_000),
            amount: 5_000,
        };
        assert!(matches!(
            decide_at(&state, &pg, 100_000),
            Decision::Approve { flag: None, .. }
        ));
    }

    #[test]
    fn a_busy_or_absent_pg_is_asked_again_with_a_doubling_backoff() {
        let mut state = RecoveryState::default();
        let mut now = 40_000;
        let mut waits = Vec::new();
        for pg in [
            PgView::Pending,
            PgView::Unavailable {
                cause: "connection refused".into(),
            },
            PgView::Pending,
            PgView::Pending,
            PgView::Pending,
            PgView::Pending,
        ] {
            state = later(decide_at(&state, &pg, now));
            waits.push(state.next_attempt_at - now);
            now = state.next_attempt_at;
        }
        assert_eq!(waits, [30_000, 60_000, 120_000, 240_000, 480_000, 600_000]);
        assert_eq!(state.attempts, 6);
        assert_eq!(state.flag, None);
    }

    #[test]
    fn past_the_maximum_age_it_is_flagged_and_still_asked() {
        let day = 24 * 3_600_000;
        let pg = PgView::Unavailable {
            cause: "connection refused".into(),
        };
        let state = later(decide_at(&RecoveryState::default(), &pg, day + 1));
        let flag = state.flag.expect("flagged");
        assert!(
            flag.contains("24 h") && flag.contains("connection refused"),
            "{flag}"
        );
        assert_eq!(state.next_attempt_at, day + 1 + 600_000);
        let still = later(decide_at(
            &RecoveryState {
                flag: Some(flag.clone()),
                ..RecoveryState::default()
            },
            &PgView::Pending,
            day + 2,
        ));
        assert_eq!(still.flag, Some(flag), "the first reason is kept");
    }

    #[test]
    fn not_found_answers_are_counted_at_any_age() {
        let state = RecoveryState {
            not_found_count: 2,
            last_not_found_at: Some(0),
            ..RecoveryState::default()
        };
        assert!(matches!(
            decide_at(&state, &PgView::NotFound, 48 * 3_600_000),
            Decision::Fail { .. }
        ));
    }
}
