//! A drop's room lets its passes out in waves, a poll apart (2 s at least), and each
//! wave's confirms reach the limit together: the busiest window of the last five is
//! remembered, so a wave the PG has just answered healthily does not wait for slow start
//! again — and a stall within those five windows finds that headroom open.

use super::*;

/// `count` waves of `size` calls, `every_ms` apart from +1 s, each spread over 100 ms.
fn waves(count: u64, every_ms: u64, size: u64) -> Vec<u64> {
    let mut rng = Rng(41);
    let mut arrivals: Vec<u64> = (0..count * size)
        .map(|n| 1_000 + n / size * every_ms + rng.below(100))
        .collect();
    arrivals.sort_unstable();
    arrivals
}

/// The waits of the calls that arrived after the first wave.
fn after_the_first(every_ms: u64) -> Vec<u64> {
    let mut limit = adaptive();
    let mut rng = Rng(43);
    // The spike's PG: 200–800 ms a confirm; waves of its 10 slots.
    let run = simulate(&mut limit, &waves(12, every_ms, 10), |_| {
        200 + rng.below(601)
    });
    assert_eq!(run.refused, 0);
    let later = run.waits.iter().filter(|(at, _)| *at > 1_000 + every_ms);
    later.map(|(_, waited)| *waited).collect()
}

#[test]
fn waves_a_poll_apart_wait_for_little_after_the_first() {
    for every_ms in [2_000, 2_400, 4_000] {
        let waits = after_the_first(every_ms);
        assert!(waits.len() <= 5, "{every_ms} ms apart, of 110: {waits:?}");
        assert!(waits.iter().all(|&ms| ms < 300), "{waits:?}");
    }
}

#[test]
fn waves_further_apart_than_five_windows_wait_as_the_first_did() {
    let waits = after_the_first(6_000);
    assert!(waits.len() > 50, "{waits:?}");
}

/// The cost: a PG that stalls two seconds after a wave of 10 gets the wave's headroom,
/// where without the memory it would get Little's figure for the calls of the moment.
#[test]
fn a_stall_within_five_windows_of_a_wave_gets_the_wave_s_headroom() {
    let mut limit = adaptive();
    let mut rng = Rng(47);
    let stall_at = 13_000;
    let mut arrivals = waves(5, 2_400, 10);
    arrivals.extend(steady(stall_at, 20, 20));
    arrivals.sort_unstable();
    let run = simulate(&mut limit, &arrivals, |sent| {
        if sent >= stall_at {
            6_000
        } else {
            200 + rng.below(601)
        }
    });
    let into_stall = run.sent.iter().filter(|&&at| at >= stall_at).count();
    // Without the memory: the floor's 2. With it: up to the wave, 10.
    assert!(
        (3..=10).contains(&into_stall),
        "sent into the stall: {into_stall}"
    );
}
