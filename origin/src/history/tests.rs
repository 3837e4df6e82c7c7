use super::*;

const T0: i64 = 1_700_000_000_000;

fn guard_at(at_ms: i64, breaker: BreakerState) -> GuardSample {
    GuardSample {
        at_ms,
        calls: 0,
        p50_ms: None,
        p95_ms: None,
        in_flight: 0,
        refusals: BTreeMap::new(),
        breaker: Some(breaker),
    }
}

fn room(waiting: u64) -> DropSample {
    DropSample {
        waiting: Some(waiting),
        ..DropSample::default()
    }
}

#[test]
fn each_drop_sample_carries_the_confirms_answered_since_the_last() {
    let history = History::new(T0);
    history.confirm_answered("spring", PaymentStatus::Approved);
    history.confirm_answered("spring", PaymentStatus::Approved);
    history.confirm_answered("spring", PaymentStatus::Unknown);
    history.confirm_answered("spring", PaymentStatus::Refunded);
    history.confirm_answered("plain", PaymentStatus::Failed);
    history.record_drops(T0, vec![("spring".into(), room(40))]);
    history.confirm_answered("spring", PaymentStatus::Failed);
    history.record_drops(T0 + INTERVAL_MS, vec![("spring".into(), room(35))]);

    let view = history.view(T0 + INTERVAL_MS);
    assert_eq!(view.kept_since_ms, T0);
    let spring = &view.drops["spring"];
    assert_eq!(spring.len(), 2);
    assert_eq!(
        (spring[0].at_ms, spring[0].waiting, spring[0].confirms),
        (
            T0,
            Some(40),
            Confirms {
                approved: 2,
                failed: 1,
                unknown: 1
            }
        )
    );
    assert_eq!(spring[1].confirms.failed, 1);
    assert_eq!(spring[1].confirms.approved, 0);
    // An event that is no drop is not charted, and its count does not linger.
    assert!(!view.drops.contains_key("plain"));
}

#[test]
fn a_series_keeps_the_window_and_a_drop_no_longer_sampled_ages_out() {
    let history = History::new(T0);
    let samples = i64::try_from(SAMPLES).unwrap_or(0);
    for i in 0..samples + 20 {
        let at = T0 + i * INTERVAL_MS;
        history.record_guard(guard_at(at, BreakerState::Closed), &BTreeMap::new(), &[]);
        let rooms = if i < 10 {
            vec![("early".into(), room(1)), ("late".into(), room(2))]
        } else {
            vec![("late".into(), room(2))]
        };
        history.record_drops(at, rooms);
    }
    let view = history.view(T0);
    assert_eq!(view.guard.samples.len(), SAMPLES);
    assert_eq!(view.drops["late"].len(), SAMPLES);
    let first = view.drops["late"][0].at_ms;
    let last = view.drops["late"][SAMPLES - 1].at_ms;
    assert_eq!(last - first, WINDOW_MS);
    assert!(!view.drops.contains_key("early"), "{:?}", view.drops.keys());
}

#[test]
fn refusals_are_counted_per_interval_and_transitions_once_each() {
    let history = History::new(T0);
    let open = WallTransition {
        from: BreakerState::Closed,
        to: BreakerState::Open,
        at_ms: T0 + 1_000,
    };
    let half = WallTransition {
        from: BreakerState::Open,
        to: BreakerState::HalfOpen,
        at_ms: T0 + 7_000,
    };
    history.record_guard(
        guard_at(T0 + 5_000, BreakerState::Open),
        &BTreeMap::from([("CIRCUIT_OPEN", 4)]),
        &[open],
    );
    history.record_guard(
        guard_at(T0 + 10_000, BreakerState::HalfOpen),
        &BTreeMap::from([("CIRCUIT_OPEN", 9), ("TIMEOUT", 0)]),
        &[open, half],
    );
    let view = history.view(T0 + 10_000);
    let refusals: Vec<_> = view
        .guard
        .samples
        .iter()
        .map(|s| s.refusals.clone())
        .collect();
    assert_eq!(
        refusals,
        [
            BTreeMap::from([("CIRCUIT_OPEN", 4)]),
            BTreeMap::from([("CIRCUIT_OPEN", 5)])
        ]
    );
    assert_eq!(view.guard.transitions, [open, half]);
}

#[test]
fn confirms_are_counted_for_a_bounded_number_of_events() {
    let history = History::new(T0);
    for i in 0..MAX_COUNTED + 50 {
        history.confirm_answered(&format!("event-{i}"), PaymentStatus::Approved);
    }
    assert_eq!(history.kept().confirms.len(), MAX_COUNTED);
}
