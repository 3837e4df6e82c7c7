//! The concurrency limit with the guard's other devices: the bulkhead is asked after the
//! slot and its refusal teaches the limit nothing; an operator's `DISABLED` breaker
//! turns off the breaker's judgement, not the limit.

use std::sync::atomic::{AtomicU32, Ordering};
use std::sync::Arc;
use std::time::Duration;

use tokio::time::Instant;

use super::tests::{
    approved_calls_of, counted_call, fixed, shared, until_in_flight, until_waiting,
};
use crate::guard::tests::{approved, held_call, small_breaker};
use crate::guard::{GuardConfig, Refusal};
use crate::policy::breaker::{BreakerMode, BreakerState};
use crate::policy::concurrency::LimitMode;
use crate::store::BreakerControl;

#[tokio::test(start_paused = true)]
async fn calls_waiting_for_a_slot_hold_no_bulkhead_permit() {
    let (guard, _) = shared(GuardConfig {
        bulkhead: 5,
        ..fixed(2, 10_000)
    });
    let held: Vec<_> = (0..2).map(|_| held_call(&guard)).collect();
    until_in_flight(&guard, 2).await;
    let sent = Arc::new(AtomicU32::new(0));
    // The line holds as many as the ceiling: two here.
    let waiting: Vec<_> = (0..2).map(|_| counted_call(&guard, &sent)).collect();
    until_waiting(&guard, 2).await;
    assert_eq!(guard.view().bulkhead.available, 3, "only the calls sent");
    for (release, call) in held {
        release.send(()).unwrap();
        assert_eq!(call.await.unwrap(), Ok(approved()));
    }
    for call in waiting {
        assert_eq!(call.await.unwrap(), Ok(approved()));
    }
    assert_eq!(sent.load(Ordering::SeqCst), 2);
    assert_eq!(guard.view().bulkhead.available, 5);
}

#[tokio::test(start_paused = true)]
async fn a_full_bulkhead_refuses_past_a_free_slot_and_the_limit_learns_nothing_from_it() {
    let (guard, metrics) = shared(GuardConfig {
        bulkhead: 1,
        concurrency: LimitMode::Adaptive {
            floor: 1,
            ceiling: 50,
        },
        breaker: None,
        ..GuardConfig::default()
    });
    // Two at once over a limit of 1: the second waits, and the first's healthy answer
    // with every slot taken raises the limit to 2.
    approved_calls_of(&guard, 2, Duration::from_millis(100)).await;
    assert_eq!(guard.view().concurrency.limit, Some(2));
    let (release, first) = held_call(&guard);
    until_in_flight(&guard, 1).await;
    let sent = Arc::new(AtomicU32::new(0));
    let started = Instant::now();
    assert_eq!(
        counted_call(&guard, &sent).await.unwrap(),
        Err(Refusal::BulkheadFull),
        "a slot was free: refused by the bulkhead at once"
    );
    assert_eq!(started.elapsed(), Duration::ZERO);
    assert_eq!(sent.load(Ordering::SeqCst), 0);
    let view = guard.view().concurrency;
    assert_eq!(
        (view.limit, view.in_flight, view.waiting),
        (Some(2), 1, 0),
        "the refused call's slot given back, the limit not halved"
    );
    assert_eq!(metrics.guard_refusals("approve", "BULKHEAD_FULL"), 1);
    release.send(()).unwrap();
    assert_eq!(first.await.unwrap(), Ok(approved()));
}

#[tokio::test(start_paused = true)]
async fn a_disabled_breaker_leaves_the_limit_in_force_and_judges_nothing() {
    let (guard, _) = shared(GuardConfig {
        breaker: Some(small_breaker()),
        ..fixed(2, 1_000)
    });
    guard.apply_control(BreakerControl {
        mode: BreakerMode::Disabled,
        reason: "the PG's incident is ours to watch".into(),
        by: "127.0.0.1".into(),
        at_ms: 0,
        version: 1,
    });
    // Two calls the PG never answers take both slots, and time out at 3 s.
    let held: Vec<_> = (0..2).map(|_| held_call(&guard)).collect();
    until_in_flight(&guard, 2).await;
    let sent = Arc::new(AtomicU32::new(0));
    let started = Instant::now();
    assert_eq!(
        counted_call(&guard, &sent).await.unwrap(),
        Err(Refusal::ConcurrencyLimited),
        "the limit still bounds the calls out; the breaker refuses nothing"
    );
    assert_eq!(started.elapsed(), Duration::from_secs(1));
    assert_eq!(sent.load(Ordering::SeqCst), 0);
    for (_release, call) in held {
        assert!(call.await.unwrap().is_ok(), "sent, and timed out");
    }
    let view = guard.view();
    let breaker = view.breaker.state.map(|s| (s.state, s.calls, s.failures));
    assert_eq!(
        breaker,
        Some((BreakerState::Closed, 0, 0)),
        "two timeouts, a window of 2 min calls: nothing recorded while disabled"
    );
    assert_eq!(view.concurrency.in_flight, 0);
}
