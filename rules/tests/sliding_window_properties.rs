//! Properties of the sliding window over random arrival streams: varying rates, bursts
//! at window edges, equal timestamps.

use proptest::prelude::*;
use rules::sliding_window::{Decision, Rate, SlidingWindow};

/// Arrival times, ascending: gaps of 0 (same millisecond) up to two windows, with
/// extra weight on 0 and on landing exactly at a window edge.
fn arrivals(window_ms: i64) -> impl Strategy<Value = Vec<i64>> {
    let gap = prop_oneof![
        3 => Just(0i64),
        2 => Just(window_ms),
        1 => Just(window_ms - 1),
        1 => Just(1i64),
        4 => 0..=2 * window_ms,
    ];
    proptest::collection::vec(gap, 1..400).prop_map(|gaps| {
        gaps.into_iter()
            .scan(0i64, |time, gap| {
                *time += gap;
                Some(*time)
            })
            .collect()
    })
}

fn rate_and_arrivals() -> impl Strategy<Value = (Rate, Vec<i64>)> {
    (
        1u32..=20,
        prop_oneof![Just(1000i64), Just(100i64), 1i64..5000],
    )
        .prop_flat_map(|(limit, window_ms)| (Just(Rate { limit, window_ms }), arrivals(window_ms)))
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(512))]

    #[test]
    fn no_interval_of_one_window_holds_more_than_the_limit((rate, times) in rate_and_arrivals()) {
        let mut window = SlidingWindow::new(rate);
        let admitted: Vec<i64> = times
            .iter()
            .copied()
            .filter(|at| matches!(window.check(*at), Decision::Admitted { .. }))
            .collect();
        // Any interval (t - W, t] with more than L admissions would contain some run of
        // L + 1 consecutive admissions spanning less than W.
        for run in admitted.windows(rate.limit as usize + 1) {
            prop_assert!(run[run.len() - 1] - run[0] >= rate.window_ms, "{run:?} under {rate:?}");
        }
    }

    #[test]
    fn every_refusal_names_the_exact_wait_and_changes_nothing((rate, times) in rate_and_arrivals()) {
        let mut window = SlidingWindow::new(rate);
        for at in times {
            let before = window.clone();
            if let Decision::Limited { retry_after_ms } = window.check(at) {
                prop_assert!(retry_after_ms > 0);
                prop_assert_eq!(&window, &before, "a refusal changed the window");
                let mut earlier = before.clone();
                prop_assert!(
                    matches!(earlier.check(at + retry_after_ms - 1), Decision::Limited { .. }),
                    "admitted before the wait was over"
                );
                let mut on_time = before;
                prop_assert!(
                    matches!(on_time.check(at + retry_after_ms), Decision::Admitted { .. }),
                    "still refused when the wait was over"
                );
            }
        }
    }

    #[test]
    fn the_record_never_outgrows_the_limit((rate, times) in rate_and_arrivals()) {
        let mut window = SlidingWindow::new(rate);
        for at in times {
            window.check(at);
            prop_assert!(window.admissions(at).count() <= rate.limit as usize);
        }
    }
}
