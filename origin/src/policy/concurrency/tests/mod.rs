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
    /// A call's answer (or its timeout) at the PG: its latency, and its slot.
    Answer(u64, Ticket),
    /// A waiting call's wait runs out: its arrival number.
    WaitOver(usize),
    Arrival(usize),
}

#[derive(Debug, Default)]
struct Run {
    sent: Vec<u64>,
    refused: usize,
    longest_wait_ms: u64,
    /// Each waiting call's arrival and wait.
    waits: Vec<(u64, u64)>,
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
    let mut send = |now: u64, ticket: Ticket, events: &mut BinaryHeap<_>, run: &mut Run| {
        let took = latency(now).min(TIMEOUT_MS);
        run.sent.push(now);
        events.push(Reverse((now + took, Event::Answer(took, ticket))));
    };
    while let Some(Reverse((now, event))) = events.pop() {
        match event {
            Event::Arrival(n) => match limit.arrive(now) {
                Admission::Now(ticket) => send(now, ticket, &mut events, &mut run),
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
            Event::Answer(took, ticket) => {
                let failed = took >= TIMEOUT_MS;
                limit.finish(
                    ticket,
                    now,
                    Sample {
                        latency_ms: took,
                        failed,
                    },
                );
            }
        }
        while !line.is_empty() {
            let Some(ticket) = limit.hand_over(now) else {
                break;
            };
            if let Some(n) = line.pop_front() {
                run.longest_wait_ms = run.longest_wait_ms.max(now - arrivals[n]);
                run.waits.push((arrivals[n], now - arrivals[n]));
                send(now, ticket, &mut events, &mut run);
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

/// The slot of a call sent at once.
fn sent(admission: Admission) -> Ticket {
    match admission {
        Admission::Now(ticket) => ticket,
        other => panic!("not sent at once: {other:?}"),
    }
}

fn healthy(latency_ms: u64) -> Sample {
    Sample {
        latency_ms,
        failed: false,
    }
}

#[test]
fn a_burst_s_headroom_is_given_back_to_its_busiest_window_then_to_the_floor() {
    let mut limit = adaptive();
    let mut held: VecDeque<Ticket> = (0..2).map(|at| sent(limit.arrive(at))).collect();
    for at in 2..40 {
        assert_eq!(limit.arrive(at), Admission::Wait);
    }
    assert_eq!(limit.hand_over(40), None, "every slot taken");
    for n in 0..40u64 {
        let ticket = held.pop_front().expect("a call out");
        limit.finish(ticket, 100 + n, healthy(100));
        while let Some(ticket) = limit.hand_over(100 + n) {
            held.push_back(ticket);
        }
    }
    assert!(
        limit.limit(200) > 20,
        "raised by healthy answers while calls waited"
    );
    assert_eq!(
        limit.limit(200 + WINDOW_MS),
        8,
        "no call waited for a window: Little's figure for the busiest, 2 × 40 × 100 ms"
    );
    assert!(
        limit.limit(6 * WINDOW_MS) <= 2,
        "nothing offered for five windows: the floor"
    );
}

#[test]
fn an_unhealthy_answer_sets_the_limit_to_the_floor() {
    let mut limit = adaptive();
    limit.limit = 20;
    // A call waited just now: the limit is not lowered to what is needed meanwhile.
    limit.waited_at_ms = Some(0);
    let calls: Vec<Ticket> = (0..3).map(|at| sent(limit.arrive(at))).collect();
    let failed = Sample {
        latency_ms: 3_000,
        failed: true,
    };
    limit.finish(calls[0], 10, failed);
    assert_eq!(limit.limit(10), 2, "failed: the floor, not half");
    limit.limit = 20;
    limit.finish(calls[1], 20, healthy(HEALTHY_MS));
    assert_eq!(limit.limit(20), 2, "slow is unhealthy too");
}

#[test]
fn the_line_holds_the_ceiling_and_refuses_past_it() {
    let mode = LimitMode::Adaptive {
        floor: 1,
        ceiling: 3,
    };
    let mut limit = ConcurrencyLimit::new(mode, HEALTHY_MS).expect("a limit");
    let first = sent(limit.arrive(0));
    let admissions: Vec<Admission> = (1..6).map(|at| limit.arrive(at)).collect();
    use Admission::*;
    assert_eq!(admissions, [Wait, Wait, Wait, Refused, Refused]);
    assert_eq!((limit.in_flight(), limit.waiting()), (1, 3));
    limit.give_up();
    limit.release(first);
    assert!(limit.hand_over(10).is_some());
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

mod stall;
mod waves;
