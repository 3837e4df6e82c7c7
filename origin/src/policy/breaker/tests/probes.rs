//! Look-up probes and the calls waiting under the concurrency limit.

use super::*;
use crate::policy::breaker::probe::ProbeKind;

fn open_probed() -> Breaker {
    let mut breaker = Breaker::new(SMALL);
    breaker.probe_with_look_ups();
    open_with_failures(&mut breaker, 0);
    breaker
}

#[test]
fn an_open_breaker_with_look_up_probes_lets_no_payment_through_until_one_answers() {
    let mut breaker = open_probed();
    assert_eq!(breaker.probe_due(999), None, "still waiting");
    assert!(!breaker.admits(1_000));
    assert_eq!(
        breaker.try_acquire(1_000).0,
        Err(CircuitOpen),
        "no payment probes"
    );
    let ticket = breaker.probe_due(1_000).expect("a probe is due");
    assert_eq!(breaker.probe_due(1_000), None, "one at a time");
    assert_eq!(breaker.observe(1_000).0.probes_in_flight, 1);
    let transition = breaker.probe_answered(ticket, true, 1_050);
    assert_eq!(transition.map(|t| t.to), Some(BreakerState::HalfOpen));
    assert!(breaker.admits(1_050));
    assert!(
        breaker.try_acquire(1_050).0.is_ok(),
        "payments probe as before"
    );
}

#[test]
fn a_probe_that_fails_starts_the_open_wait_again_at_no_payment_s_cost() {
    let mut breaker = open_probed();
    let ticket = breaker.probe_due(1_000).expect("a probe is due");
    assert_eq!(breaker.refusing_for(1_000), Some(SMALL.slow_call_ms));
    assert_eq!(breaker.probe_answered(ticket, false, 1_100), None);
    assert_eq!(breaker.observe(1_100).0.state, BreakerState::Open);
    assert_eq!(breaker.probe_due(2_099), None);
    assert_eq!(breaker.refusing_for(1_100), Some(1_000));
    assert!(breaker.probe_due(2_100).is_some());
}

#[test]
fn a_probe_of_an_earlier_generation_changes_nothing() {
    let mut breaker = open_probed();
    let ticket = breaker.probe_due(1_000).expect("a probe is due");
    breaker.reset(1_000);
    open_with_failures(&mut breaker, 1_000);
    assert_eq!(breaker.probe_answered(ticket, true, 1_010), None);
    assert_eq!(breaker.observe(1_010).0.state, BreakerState::Open);
}

#[test]
fn calls_waiting_for_a_slot_count_towards_min_calls() {
    let mut breaker = Breaker::new(BreakerConfig::default());
    let first = breaker.try_acquire(0).0.unwrap();
    let _second = breaker.try_acquire(100).0.unwrap();
    assert_eq!(breaker.overdue(1_000), None, "2 seen, 10 needed");
    breaker.set_waiting(8);
    let transition = breaker.overdue(1_100);
    assert_eq!(transition.map(|t| t.to), Some(BreakerState::Open));
    breaker.release(first);
}

#[test]
fn without_look_up_probes_an_open_breaker_admits_its_probe_once_its_wait_is_over() {
    let mut breaker = Breaker::new(SMALL);
    open_with_failures(&mut breaker, 0);
    assert!(!breaker.admits(999));
    assert!(breaker.admits(1_000));
    assert_eq!(breaker.probe_due(1_000), None);
}

/// Open, probed by look-ups, and half-open after one answered at 1 050.
fn half_open_after_a_look_up() -> Breaker {
    let mut breaker = open_probed();
    let ticket = breaker.probe_due(1_000).expect("a probe is due");
    assert_eq!(ticket.kind(), ProbeKind::LookUp);
    breaker.probe_answered(ticket, true, 1_050);
    breaker
}

#[test]
fn a_half_open_payment_still_out_at_the_threshold_makes_the_next_probe_a_confirm() {
    let mut breaker = half_open_after_a_look_up();
    let _payment = breaker.try_acquire(1_100).0.expect("the half-open payment");
    assert_eq!(breaker.observe(1_199).0.state, BreakerState::HalfOpen);
    let (view, transition) = breaker.observe(1_200);
    assert_eq!(transition.map(|t| t.to), Some(BreakerState::Open));
    assert_eq!(view.next_probe, Some(ProbeKind::Confirm));
    assert_eq!(breaker.probe_due(2_199), None, "the whole open wait again");
    let ticket = breaker.probe_due(2_200).expect("a probe is due");
    assert_eq!(ticket.kind(), ProbeKind::Confirm);
}

#[test]
fn a_half_open_payment_that_fails_fast_makes_the_next_probe_a_confirm_too() {
    let mut breaker = half_open_after_a_look_up();
    let payment = breaker.try_acquire(1_100).0.expect("the half-open payment");
    let failed = CallResult {
        failed: true,
        duration_ms: 5,
    };
    let transition = breaker.record(payment, failed, 1_105);
    assert_eq!(transition.map(|t| t.to), Some(BreakerState::Open));
    let ticket = breaker.probe_due(2_105).expect("a probe is due");
    assert_eq!(ticket.kind(), ProbeKind::Confirm);
}

#[test]
fn confirm_probes_unanswered_keep_every_payment_out_until_one_is_answered() {
    let mut breaker = half_open_after_a_look_up();
    let _payment = breaker.try_acquire(1_100).0.expect("the half-open payment");
    breaker.observe(1_200);
    let mut at = 2_200;
    for _ in 0..5 {
        let ticket = breaker.probe_due(at).expect("a probe is due");
        assert_eq!(ticket.kind(), ProbeKind::Confirm);
        assert!(
            breaker.try_acquire(at + 50).0.is_err(),
            "no payment while it is out"
        );
        // Unanswered: the guard gives up on it at the slow-call threshold.
        assert_eq!(breaker.probe_answered(ticket, false, at + 100), None);
        assert!(breaker.try_acquire(at + 100).0.is_err());
        assert_eq!(breaker.observe(at + 100).0.state, BreakerState::Open);
        at += 100 + SMALL.open_ms;
    }
    // The confirm path answers: half-open, and a PG that is back closes it as before.
    let ticket = breaker.probe_due(at).expect("a probe is due");
    let transition = breaker.probe_answered(ticket, true, at + 10);
    assert_eq!(transition.map(|t| t.to), Some(BreakerState::HalfOpen));
    let ok = CallResult {
        failed: false,
        duration_ms: 10,
    };
    for n in 0..SMALL.half_open_calls {
        let now = at + 20 + u64::from(n) * 20;
        let payment = breaker.try_acquire(now).0.expect("a payment probes");
        breaker.record(payment, ok, now + 10);
    }
    assert_eq!(breaker.observe(at + 100).0.state, BreakerState::Closed);
    // Closed, it starts again from look-ups.
    open_with_failures(&mut breaker, at + 100);
    let ticket = breaker.probe_due(at + 1_100).expect("a probe is due");
    assert_eq!(ticket.kind(), ProbeKind::LookUp);
}

#[test]
fn without_probes_nothing_is_a_confirm_probe() {
    let mut breaker = Breaker::new(SMALL);
    open_with_failures(&mut breaker, 0);
    let _payment = breaker.try_acquire(1_000).0.expect("the half-open payment");
    breaker.observe(1_100);
    assert_eq!(breaker.next_probe(), None);
    assert_eq!(breaker.observe(1_100).0.next_probe, None);
    assert!(breaker.admits(2_100), "its payment probes as before");
}
