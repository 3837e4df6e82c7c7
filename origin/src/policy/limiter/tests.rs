//! The limiter's algorithms, and a simulation of transit times to the PG.

use std::cmp::Reverse;
use std::collections::BinaryHeap;

use proptest::prelude::*;

use super::*;

const FIFTY_PER_SECOND: Rate = Rate {
    limit: 50,
    window_ms: 1_000,
};

/// A call offered to the limiter at `at`, which takes `to_pg` to reach the PG and
/// `back` for its answer to return.
#[derive(Debug, Clone, Copy)]
struct Offered {
    at: i64,
    to_pg: i64,
    back: i64,
}

/// When the PG received each admitted call: calls finish as their answers return,
/// before any call offered at the same moment.
fn received_at_pg(limiter: &mut Limiter, offered: &[Offered]) -> Vec<i64> {
    let mut answers = BinaryHeap::new();
    let mut received = Vec::new();
    for call in offered {
        while let Some(Reverse(at)) = answers.peek().copied() {
            if at > call.at {
                break;
            }
            answers.pop();
            limiter.finished(at);
        }
        if limiter.try_take(call.at) {
            received.push(call.at + call.to_pg);
            answers.push(Reverse(call.at + call.to_pg + call.back));
        }
    }
    received.sort_unstable();
    received
}

/// A steady `per_second` load over `seconds`, answered at once.
fn steady(per_second: i64, seconds: i64) -> Vec<Offered> {
    (0..per_second * seconds)
        .map(|i| Offered {
            at: i * 1_000 / per_second,
            to_pg: 0,
            back: 0,
        })
        .collect()
}

/// The most times in any half-open interval `[t, t + window_ms)`.
fn most_in_any(window_ms: i64, sorted: &[i64]) -> usize {
    let mut most = 0;
    let mut first = 0;
    for (last, time) in sorted.iter().enumerate() {
        while sorted[first] <= time - window_ms {
            first += 1;
        }
        most = most.max(last + 1 - first);
    }
    most
}

#[test]
fn off_admits_everything() {
    let mut limiter = Limiter::new(LimiterConfig::Off);
    assert_eq!(received_at_pg(&mut limiter, &steady(80, 2)).len(), 160);
}

#[test]
fn the_bucket_keeps_the_average_after_a_full_burst() {
    let mut limiter = Limiter::new(LimiterConfig::TokenBucket(FIFTY_PER_SECOND));
    let admitted = received_at_pg(&mut limiter, &steady(80, 20));
    // 50 at once from the full bucket, then 50 per second.
    assert!(
        (1_040..=1_050).contains(&admitted.len()),
        "{}",
        admitted.len()
    );
    assert!(most_in_any(1_000, &admitted) > 50);
}

#[test]
fn the_sliding_window_keeps_the_limit_in_every_second() {
    let mut limiter = Limiter::new(LimiterConfig::SlidingWindow(FIFTY_PER_SECOND));
    let admitted = received_at_pg(&mut limiter, &steady(80, 20));
    // A unit comes back a window and a millisecond after its call: 50 in the first
    // second, then one arrival in eight (12.5 ms apart) waits for the next.
    assert!(
        (950..=1_000).contains(&admitted.len()),
        "{}",
        admitted.len()
    );
    assert_eq!(most_in_any(1_000, &admitted), 50);
}

#[test]
fn a_call_in_flight_counts_however_long_it_takes() {
    let mut window = CallWindow::new(Rate {
        limit: 1,
        window_ms: 1_000,
    });
    assert!(window.try_take(0));
    assert!(!window.try_take(5_000), "still in flight");
    window.finished(5_000);
    assert!(
        !window.try_take(6_000),
        "finished a window ago: still counts"
    );
    assert!(window.try_take(6_001));
}

#[test]
fn a_slow_first_call_cannot_meet_the_next_in_one_pg_window() {
    // Sent at 0 and 1,000, a send-time window admits both; the first takes 5 ms
    // to arrive, so the PG sees two within 996 ms.
    let offered = [
        Offered {
            at: 0,
            to_pg: 5,
            back: 1,
        },
        Offered {
            at: 1_000,
            to_pg: 1,
            back: 1,
        },
        Offered {
            at: 1_007,
            to_pg: 1,
            back: 1,
        },
    ];
    let one = Rate {
        limit: 1,
        window_ms: 1_000,
    };
    let received = received_at_pg(
        &mut Limiter::new(LimiterConfig::SlidingWindow(one)),
        &offered,
    );
    assert_eq!(received, [5, 1_008]);
}

#[test]
fn a_finish_without_a_call_in_flight_changes_nothing() {
    let mut window = CallWindow::new(Rate {
        limit: 1,
        window_ms: 1_000,
    });
    window.finished(0);
    assert!(window.try_take(1));
}

#[test]
fn the_bucket_refills_exactly_and_never_beyond_its_size() {
    let mut bucket = TokenBucket::new(Rate {
        limit: 2,
        window_ms: 1_000,
    });
    assert!(bucket.try_take(0) && bucket.try_take(0) && !bucket.try_take(0));
    assert!(!bucket.try_take(499));
    assert!(bucket.try_take(500));
    assert!(bucket.try_take(100_000) && bucket.try_take(100_000));
    assert!(!bucket.try_take(100_000));
}

fn offered_calls() -> impl Strategy<Value = Vec<Offered>> {
    // Transit times mostly short, sometimes longer than the window.
    let transit = || prop_oneof![3 => 0i64..60, 1 => 0i64..2_000];
    prop::collection::vec((0i64..40, transit(), transit()), 1..600).prop_map(|calls| {
        calls
            .into_iter()
            .scan(0, |at, (gap, to_pg, back)| {
                *at += gap;
                Some(Offered {
                    at: *at,
                    to_pg,
                    back,
                })
            })
            .collect()
    })
}

proptest! {
    /// Whatever the arrivals and transit times, the PG never counts more than the
    /// limit in any window of its clock, and memory stays within the limit.
    #[test]
    fn the_pg_never_sees_more_than_the_limit_in_a_window(
        offered in offered_calls(),
        limit in 1u32..12,
        window_ms in 50i64..1_500,
    ) {
        let rate = Rate { limit, window_ms };
        let mut limiter = Limiter::new(LimiterConfig::SlidingWindow(rate));
        let received = received_at_pg(&mut limiter, &offered);
        prop_assert!(most_in_any(window_ms, &received) <= limit as usize);
        if let Limiter::SlidingWindow(window) = &limiter {
            prop_assert!(window.in_flight as usize + window.finished.len() <= limit as usize);
        }
    }
}
