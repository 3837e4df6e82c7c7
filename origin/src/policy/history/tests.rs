use super::*;

#[test]
fn a_ring_keeps_the_last_items_and_forgets_the_old_on_request() {
    let mut ring = Ring::new(3);
    for item in 1..=5 {
        ring.push(item);
    }
    assert_eq!(ring.iter().copied().collect::<Vec<_>>(), [3, 4, 5]);
    ring.forget_while(|&item| item < 5);
    assert_eq!(ring.iter().copied().collect::<Vec<_>>(), [5]);
    ring.forget_while(|_| true);
    assert!(ring.is_empty());
}

#[test]
fn the_window_is_kept_whole_with_its_left_edge() {
    assert_eq!(SAMPLES, 181);
}

#[test]
fn quantiles_are_within_the_buckets_precision() {
    let mut calls = Latencies::default();
    assert_eq!(calls.quantile(0.5), None);
    // 1..=1000 ms: p50 is 500 ms, p95 950 ms.
    for ms in 1..=1000 {
        calls.record(f64::from(ms));
    }
    assert_eq!(calls.count(), 1000);
    for (q, truth) in [(0.5, 500.0), (0.95, 950.0), (1.0, 1000.0)] {
        let got = calls.quantile(q).unwrap_or(0.0);
        assert!((got / truth - 1.0).abs() < 0.023, "q{q}: {got} for {truth}");
    }
}

#[test]
fn a_single_call_is_every_quantile_and_extremes_are_kept() {
    let mut calls = Latencies::default();
    calls.record(120.0);
    let p50 = calls.quantile(0.5).unwrap_or(0.0);
    assert_eq!(calls.quantile(0.95), Some(p50));
    assert!((p50 / 120.0 - 1.0).abs() < 0.023, "{p50}");

    let mut fast = Latencies::default();
    fast.record(0.2);
    assert_eq!(fast.quantile(0.5), Some(0.5));
    let mut slow = Latencies::default();
    slow.record(1e12);
    assert!(slow.quantile(0.5).unwrap_or(0.0) > 1e6);
}

#[test]
fn counters_gain_since_the_last_sample_and_restart_from_zero() {
    let before = BTreeMap::from([("TIMEOUT", 3), ("RATE_LIMITED", 5), ("OPEN", 2)]);
    let now = BTreeMap::from([("TIMEOUT", 7), ("RATE_LIMITED", 1), ("OPEN", 2), ("NEW", 4)]);
    assert_eq!(
        gained(&before, &now),
        BTreeMap::from([("TIMEOUT", 4), ("RATE_LIMITED", 1), ("NEW", 4)])
    );
}
