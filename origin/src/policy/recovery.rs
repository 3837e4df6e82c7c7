//! What recovery makes of one payment, given what the PG says about it now: a pure
//! function of (payment, PG answer, now), so every rule is a line in a table test.
//!
//! - The PG approved it → APPROVED (its time of approval). If what the PG approved is
//!   not this order — another order id, amount or currency — it is not APPROVED: it
//!   stays UNKNOWN, flagged for an operator with both amounts, asked about at the
//!   ceiling.
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

use crate::policy::answers::{Expected, GatewayStatus};

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
    /// The first wait after a PG that is still processing the payment, or away: half an
    /// interval, at most 30 s (so the next cycle asks again); it doubles each time.
    pub backoff_base_ms: i64,
    /// The longest wait between two questions about one payment.
    pub backoff_max_ms: i64,
}

impl RecoveryConfig {
    /// The defaults (`docs/design/recovery.md`), for a gateway whose calls time out after
    /// `gateway_timeout`.
    pub fn for_gateway_timeout(gateway_timeout: Duration) -> Self {
        Self {
            interval: Duration::from_secs(30),
            min_age_ms: 30_000,
            not_found_spacing_ms: 2 * gateway_timeout.as_millis() as i64,
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

/// What to do with the payment.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Decision {
    Approve {
        approved_at: i64,
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
    /// The order an approval must be for.
    pub expected: Expected<'a>,
    pub created_at: i64,
    pub state: &'a RecoveryState,
}

pub fn decide(
    subject: Subject<'_>,
    status: &GatewayStatus,
    now_ms: i64,
    config: &RecoveryConfig,
) -> Decision {
    let state = subject.state;
    match status {
        GatewayStatus::Approved(approval) => match approval.mismatch(subject.expected) {
            None => Decision::Approve {
                approved_at: approval.approved_at.unwrap_or(now_ms),
            },
            Some(flag) => Decision::Later {
                state: RecoveryState {
                    attempts: state.attempts + 1,
                    next_attempt_at: now_ms + config.backoff_max_ms,
                    flag: Some(flag),
                    ..state.clone()
                },
            },
        },
        GatewayStatus::Declined => Decision::Fail { reason: "DECLINED" },
        GatewayStatus::Cancelled => Decision::Fail {
            reason: "CANCELLED_AT_PG",
        },
        GatewayStatus::NotFound => {
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
        GatewayStatus::Pending | GatewayStatus::Unavailable { .. } => {
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
                    describe(status)
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

fn describe(status: &GatewayStatus) -> String {
    match status {
        GatewayStatus::Pending => "still processing".to_owned(),
        GatewayStatus::Unavailable { cause } => format!("unavailable ({cause})"),
        other => format!("{other:?}"),
    }
}

#[cfg(test)]
mod tests;
