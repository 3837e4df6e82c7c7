//! The limit on the caller's clock: a PG simulated call by call, each arrival, answer and
//! expired wait an event at its millisecond.

use std::cmp::Reverse;
use std::collections::{BinaryHeap, VecDeque};

use super::*;

const ADAPTIVE: LimitMode = LimitMode::Adaptive {
    floor: 2,
    ceiling: 50,
};
/// The breaker's default slow-call threshold.
const HEALTHY_MS: u64 = 1_000;
const MAX_WAIT_MS: u64 = 2_000;
const TIMEOUT_MS: u64 = 3_000;

/// A small deterministic generator, so every run sees the same latencies.
struct Rng(u64);

impl Rng {
    fn below(&mut self, bound: u64) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0 % bound
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
enum Event {
    /// A call's answer (or its timeout) at the PG: its latency.
    Answer(u64),
    /// A waiting call's wait runs out: its arrival number.
    WaitOver(usize),
    Arrival(usize),
}

#[derive(Debug, Default)]
struct Run {
    sent: Vec<u64>,
    refused: usize,
    longest_wait_ms: u64,
    peak_limit: u32,
    /// The limit after each event, with its time.
    limits: Vec<(u64, u32)>,
}

/// Calls arriving at `arrivals` (ms), each answered after `latency(sent_at)` — a latency
/// at or past the timeout is a failure at the timeout — waiting at most `MAX_WAIT_MS`.
fn simulate(
    limit: &mut ConcurrencyLimit,
    arrivals: &[u64],
    mut latency: impl FnMut(u64) -> u64,
) -> Run {
    let mut events = BinaryHeap::new();
    for (n, &at) in arrivals.iter().enumerate() {
        events.push(Reverse((at, Event::Arrival(n))));
    }
    let mut line: VecDeque<usize> = VecDeque::new();
    let mut run = Run::default();
    let mut send = |now: u64, events: &mut BinaryHeap<_>, run: &mut Run| {
        let took = latency(now).min(TIMEOUT_MS);
        run.sent.push(now);
        events.push(Reverse((now + took, Event::Answer(took))));
    };
    while let Some(Reverse((now, event))) = events.pop() {
        match event {
            Event::Arrival(n) => match limit.arrive(now) {
                Admission::Now => send(now, &mut events, &mut run),
                Admission::Wait => {
                    line.push_back(n);
                    events.push(Reverse((now + MAX_WAIT_MS, Event::WaitOver(n))));
                }
                Admission::Refused => run.refused += 1,
            },
            Event::WaitOver(n) => {
                if let Some(place) = line.iter().position(|&waiting| waiting == n) {
                    line.remove(place);
                    limit.give_up();
                    run.refused += 1;
                }
            }
            Event::Answer(took) => {
                let failed = took >= TIMEOUT_MS;
                limit.finish(
                    now,
                    Sample {
                        latency_ms: took,
                        failed,
                    },
                );
            }
        }
        while limit.hand_over() {
            if let Some(n) = line.pop_front() {
                run.longest_wait_ms = run.longest_wait_ms.max(now - arrivals[n]);
                send(now, &mut events, &mut run);
            }
        }
        let current = limit.limit(now);
        run.peak_limit = run.peak_limit.max(current);
        run.limits.push((now, current));
    }
    run
}

fn adaptive() -> ConcurrencyLimit {
    ConcurrencyLimit::new(ADAPTIVE, HEALTHY_MS).expect("a limit")
}

/// `count` calls, `per_s` a second, from `from_ms`.
fn steady(from_ms: u64, per_s: u64, count: u64) -> Vec<u64> {
    (0..count).map(|n| from_ms + n * 1_000 / per_s).collect()
}

#[test]
fn ten_thousand_calls_with_0_to_300_ms_of_jitter_none_refused() {
    let mut limit = adaptive();
    let mut rng = Rng(7);
    let run = simulate(&mut limit, &steady(0, 100, 10_000), |_| rng.below(301));
    assert_eq!(run.refused, 0);
    assert_eq!(run.sent.len(), 10_000);
    assert!(run.longest_wait_ms < 300, "{run:?}");
}

#[test]
fn a_burst_of_fifty_at_once_on_a_healthy_pg_waits_and_is_sent() {
    let mut limit = adaptive();
    let mut rng = Rng(11);
    let mut arrivals = steady(0, 10, 100);
    arrivals.extend(std::iter::repeat_n(10_000, 50));
    arrivals.extend(steady(10_000, 10, 50));
    let run = simulate(&mut limit, &arrivals, |_| rng.below(301));
    assert_eq!(run.refused, 0);
    assert!(run.longest_wait_ms < MAX_WAIT_MS / 2, "{run:?}");
    let settled = run.limits.iter().rev().find(|(at, _)| *at < 9_000);
    assert!(settled.is_some_and(|(_, limit)| *limit <= 4), "{settled:?}");
}

#[test]
fn a_slow_but_steady_pg_from_a_cold_start_loses_no_call() {
    let slow = ConcurrencyLimit::new(ADAPTIVE, 2_500);
    let mut limit = slow.expect("a limit");
    let mut rng = Rng(13);
    let run = simulate(&mut limit, &steady(0, 10, 600), |_| {
        1_000 + rng.below(1_001)
    });
    assert_eq!(run.refused, 0, "{run:?}");
    assert!(run.peak_limit >= 20, "Little's law: 10/s × 1.5 s × 2");
}

#[test]
fn a_pg_stalled_from_the_start_gets_the_floor_and_no_more_before_the_timeout() {
    let mut limit = adaptive();
    let run = simulate(&mut limit, &steady(0, 10, 100), |_| 6_000);
    let before_timeout = run.sent.iter().filter(|&&at| at < TIMEOUT_MS).count();
    assert_eq!(before_timeout, 2, "the floor");
}

#[test]
fn a_stall_after_a_healthy_spell_gets_the_healthy_limit_and_no_more() {
    let mut limit = adaptive();
    let mut rng = Rng(17);
    let stall_at = 20_000;
    let run = simulate(&mut limit, &steady(0, 10, 400), |sent| {
        if sent >= stall_at {
            6_000
        } else {
            rng.below(301)
        }
    });
    let into_stall = run
        .sent
        .iter()
        .filter(|&&at| (stall_at..stall_at + TIMEOUT_MS).contains(&at))
        .count();
    assert!(into_stall <= 4, "sent into the stall: {into_stall}");
}

/// Sent into a PG that stalls at `stall_at`, with `steady` calls at 10/s before it and a
/// wave of 20 arriving with the stall.
fn wave_into_stall(steady_until: u64, stall_at: u64) -> usize {
    let mut limit = adaptive();
    let mut rng = Rng(19);
    let mut arrivals = steady(0, 10, steady_until / 100);
    arrivals.extend(std::iter::repeat_n(stall_at, 20));
    arrivals.sort_unstable();
    let run = simulate(&mut limit, &arrivals, |sent| {
        if sent >= stall_at {
            6_000
        } else {
            rng.below(301)
        }
    });
    run.sent.iter().filter(|&&at| at >= stall_at).count()
}

#[test]
fn a_wave_arriving_with_the_stall_finds_the_limit_the_healthy_pg_left() {
    let into_stall = wave_into_stall(19_000, 20_000);
    assert!(into_stall <= 3, "sent into the stall: {into_stall}");
}

/// The limit's known cost: calls sent just before the stall come back healthy after the
/// wave arrived, and raise the limit to Little's figure for the wave (2 × 30/s × 150 ms).
#[test]
fn a_wave_with_answers_of_the_healthy_pg_still_out_gets_at_most_little_s_figure() {
    let into_stall = wave_into_stall(20_000, 20_000);
    assert!(into_stall <= 10, "sent into the stall: {into_stall}");
}

#[test]
fn after_a_stall_the_limit_is_back_to_its_healthy_level_within_two_seconds() {
    let mut limit = adaptive();
    let mut rng = Rng(23);
    let (stall_from, stall_to) = (10_000, 20_000);
    let run = simulate(&mut limit, &steady(0, 10, 400), |sent| {
        if (stall_from..stall_to).contains(&sent) {
            6_000
        } else {
            rng.below(301)
        }
    });
    let healthy = |from: u64, to: u64| -> Vec<u32> {
        let limits = run.limits.iter().filter(|(at, _)| (from..to).contains(at));
        limits.map(|(_, limit)| *limit).collect()
    };
    let before = healthy(5_000, stall_from);
    let high = before.iter().max().copied().unwrap_or_default();
    let after = healthy(stall_to + TIMEOUT_MS + 2_000, 40_000);
    assert!(
        after.iter().all(|&limit| (2..=high).contains(&limit)),
        "{after:?}"
    );
    assert!(
        median(&after).abs_diff(median(&before)) <= 1,
        "{before:?} {after:?}"
    );
}

fn median(values: &[u32]) -> u32 {
    let mut sorted = values.to_vec();
    sorted.sort_unstable();
    sorted.get(sorted.len() / 2).copied().unwrap_or_default()
}

#[test]
fn a_burst_s_headroom_is_given_back_once_no_call_has_waited_for_a_window() {
    let mut limit = adaptive();
    for at in 0..40 {
        assert_eq!(
            limit.arrive(at),
            if at < 2 {
                Admission::Now
            } else {
                Admission::Wait
            }
        );
    }
    while limit.hand_over() {}
    for n in 0..40u64 {
        limit.finish(
            100 + n,
            Sample {
                latency_ms: 100,
                failed: false,
            },
        );
        while limit.hand_over() {}
    }
    assert!(
        limit.limit(200) > 20,
        "raised by healthy answers while calls waited"
    );
    assert!(
        limit.limit(200 + WINDOW_MS) <= 2,
        "nothing offered for a window: the floor"
    );
}

#[test]
fn an_unhealthy_answer_halves_the_limit_down_to_the_floor() {
    let mut limit = adaptive();
    limit.limit = 20;
    limit.in_flight = 3;
    limit.waited_at_ms = Some(0);
    let failed = Sample {
        latency_ms: 3_000,
        failed: true,
    };
    limit.finish(0, failed);
    assert_eq!(limit.limit(0), 10);
    limit.finish(
        0,
        Sample {
            latency_ms: HEALTHY_MS,
            failed: false,
        },
    );
    assert_eq!(limit.limit(0), 5, "slow is unhealthy too");
    limit.finish(0, failed);
    assert_eq!(limit.limit(0), 2, "never below the floor");
}

#[test]
fn the_line_holds_the_ceiling_and_refuses_past_it() {
    let mode = LimitMode::Adaptive {
        floor: 1,
        ceiling: 3,
    };
    let mut limit = ConcurrencyLimit::new(mode, HEALTHY_MS).expect("a limit");
    let admissions: Vec<Admission> = (0..6).map(|at| limit.arrive(at)).collect();
    use Admission::*;
    assert_eq!(admissions, [Now, Wait, Wait, Wait, Refused, Refused]);
    assert_eq!((limit.in_flight(), limit.waiting()), (1, 3));
    limit.give_up();
    limit.release();
    assert!(limit.hand_over());
    assert_eq!((limit.in_flight(), limit.waiting()), (1, 1));
}

#[test]
fn a_fixed_limit_never_moves_and_off_is_no_limit() {
    let mut limit = ConcurrencyLimit::new(LimitMode::Fixed(3), HEALTHY_MS).expect("a limit");
    let mut rng = Rng(29);
    let run = simulate(&mut limit, &steady(0, 100, 1_000), |_| rng.below(301));
    assert!(run.limits.iter().all(|(_, limit)| *limit == 3));
    assert!(ConcurrencyLimit::new(LimitMode::Off, HEALTHY_MS).is_none());
}
