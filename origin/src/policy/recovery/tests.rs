//! The recovery decision table, one rule at a time.

use super::*;
use crate::policy::answers::Approval;

const SPACING: i64 = 6_000;

fn config() -> RecoveryConfig {
    RecoveryConfig::for_gateway_timeout(Duration::from_secs(3))
}

fn decide_at(state: &RecoveryState, pg: &GatewayStatus, now_ms: i64) -> Decision {
    let subject = Subject {
        expected: Expected {
            order_id: "order-1",
            amount: 5_000,
            currency: "KRW",
        },
        created_at: 0,
        state,
    };
    decide(subject, pg, now_ms, &config())
}

fn approved(approved_at: Option<i64>, amount: i64) -> GatewayStatus {
    GatewayStatus::Approved(Approval {
        order_id: "order-1".into(),
        amount,
        currency: "KRW".into(),
        approved_at,
        reference: None,
    })
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
            approved(Some(77), 5_000),
            Decision::Approve { approved_at: 77 },
        ),
        (
            approved(None, 5_000),
            Decision::Approve {
                approved_at: 40_000,
            },
        ),
        (
            GatewayStatus::Declined,
            Decision::Fail { reason: "DECLINED" },
        ),
        (
            GatewayStatus::Cancelled,
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
fn an_approval_of_another_amount_or_currency_is_not_approved_but_flagged() {
    let other_currency = GatewayStatus::Approved(Approval {
        currency: "USD".into(),
        ..Approval {
            order_id: "order-1".into(),
            amount: 5_000,
            currency: String::new(),
            approved_at: Some(5),
            reference: None,
        }
    });
    for (pg, said) in [
        (approved(Some(5), 9_000), "9000 KRW"),
        (other_currency, "5000 USD"),
    ] {
        let state = later(decide_at(&RecoveryState::default(), &pg, 40_000));
        let flag = state.flag.expect("flagged for an operator");
        assert!(flag.contains(said) && flag.contains("5000 KRW"), "{flag}");
        assert_eq!(state.next_attempt_at, 40_000 + config().backoff_max_ms);
    }
}

#[test]
fn not_found_fails_only_at_the_third_spaced_answer() {
    let mut state = RecoveryState::default();
    let mut now = 40_000;
    for count in 1..=2 {
        state = later(decide_at(&state, &GatewayStatus::NotFound, now));
        assert_eq!(state.not_found_count, count);
        assert_eq!(state.last_not_found_at, Some(now));
        assert_eq!(state.next_attempt_at, now + SPACING + 1);
        now = state.next_attempt_at;
    }
    assert_eq!(
        decide_at(&state, &GatewayStatus::NotFound, now),
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
        let next = later(decide_at(&state, &GatewayStatus::NotFound, now));
        assert_eq!(next.not_found_count, 2, "at {now}");
        assert_eq!(next.next_attempt_at, 40_000 + SPACING + 1);
    }
    assert!(matches!(
        decide_at(&state, &GatewayStatus::NotFound, 40_000 + SPACING + 1),
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
    assert_eq!(
        decide_at(&state, &approved(Some(45_000), 5_000), 100_000),
        Decision::Approve {
            approved_at: 45_000
        }
    );
}

#[test]
fn a_busy_or_absent_pg_is_asked_again_with_a_doubling_backoff() {
    let mut state = RecoveryState::default();
    let mut now = 40_000;
    let mut waits = Vec::new();
    for pg in [
        GatewayStatus::Pending,
        GatewayStatus::Unavailable {
            cause: "connection refused".into(),
        },
        GatewayStatus::Pending,
        GatewayStatus::Pending,
        GatewayStatus::Pending,
        GatewayStatus::Pending,
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
    let pg = GatewayStatus::Unavailable {
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
        &GatewayStatus::Pending,
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
        decide_at(&state, &GatewayStatus::NotFound, 48 * 3_600_000),
        Decision::Fail { .. }
    ));
}
