//! Look-up probes and the calls waiting under the concurrency limit.

use super::*;

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
