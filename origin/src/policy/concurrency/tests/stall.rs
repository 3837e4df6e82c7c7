//! The limit in a stall: where a healthy PG left it until the first call sent into the
//! stall is overdue, then the floor; and back to the healthy level after.

use super::*;

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

/// 20 calls a second, answered in 400 ms (a limit of 16 by Little's law), until the PG
/// stalls for the calls sent from +5 s on.
fn stall_at_5_s() -> Run {
    let mut limit = adaptive();
    simulate(&mut limit, &steady(0, 20, 200), |sent| {
        if sent >= 5_000 {
            6_000
        } else {
            400
        }
    })
}

#[test]
fn a_call_out_past_the_threshold_puts_the_limit_at_its_floor_at_that_moment() {
    let run = stall_at_5_s();
    let before = run.limits.iter().rev().find(|(at, _)| *at < 6_000);
    assert!(before.is_some_and(|(_, limit)| *limit > 8), "{before:?}");
    // The first call into the stall was sent at +5 s: overdue at +6 s, on the arrival
    // that finds it so.
    let at = run.limits.iter().find(|(at, _)| *at >= 6_000);
    assert_eq!(at, Some(&(6_000, 2)));
    let held: Vec<&(u64, u32)> = run
        .limits
        .iter()
        .filter(|(at, _)| (6_000..8_000).contains(at))
        .collect();
    assert!(held.iter().all(|(_, limit)| *limit == 2), "{held:?}");
    let sent = run.sent.iter().filter(|&&at| (6_000..8_000).contains(&at));
    assert_eq!(sent.count(), 0, "nothing more sent while calls are overdue");
}

/// The calls sent before the stall that are still out when the first call into it is
/// overdue: their answers, healthy as the PG measured them from their send, raise nothing
/// (a call can take its slot a while before it is sent: the bulkhead, the limiter).
#[test]
fn answers_of_calls_that_took_their_slots_before_the_overdue_ones_raise_nothing() {
    let mut limit = adaptive();
    let run = simulate(&mut limit, &steady(0, 20, 100), |_| 400);
    let end = run.limits.last().map_or(0, |(at, _)| *at);
    let learned = limit.limit(end);
    assert!(learned > 4, "learned {learned}");
    let early: Vec<Ticket> = (0..2).map(|_| sent(limit.arrive(end))).collect();
    let stalled: Vec<Ticket> = (2..learned).map(|_| sent(limit.arrive(end))).collect();
    assert_eq!(limit.arrive(end + 10), Admission::Wait, "every slot taken");
    assert_eq!(limit.limit(end + 999), learned, "nothing overdue yet");
    assert_eq!(limit.limit(end + 1_000), 2, "overdue: the floor");
    for (n, ticket) in early.into_iter().enumerate() {
        let now = end + 1_100 + n as u64;
        limit.finish(ticket, now, healthy(600));
        assert_eq!(limit.limit(now), 2, "answered before the stall: no raise");
        assert_eq!(limit.hand_over(now), None);
    }
    for ticket in stalled {
        limit.release(ticket);
    }
}

/// One call lost among healthy ones is a straggler, not a stall: the calls sent after it
/// come back healthy, so the limit neither stays at the floor nor refuses anybody.
#[test]
fn a_lone_straggler_among_healthy_answers_refuses_nobody() {
    let mut limit = adaptive();
    let mut rng = Rng(31);
    let run = simulate(&mut limit, &steady(0, 100, 1_000), |sent| {
        if sent == 5_000 {
            6_000
        } else {
            rng.below(301)
        }
    });
    assert!(run.sent.contains(&5_000), "the straggler was sent");
    assert_eq!(run.refused, 0);
    assert!(run.longest_wait_ms < 300, "{}", run.longest_wait_ms);
    let after = run.limits.iter().find(|(at, _)| *at >= 6_100);
    assert!(after.is_some_and(|(_, limit)| *limit > 2), "{after:?}");
}

#[test]
fn an_answer_of_a_call_sent_at_once_adds_no_slot_while_the_calls_after_it_hold_them_all() {
    let mut limit = adaptive();
    // At the floor of two, a line has formed; the PG stalls for the second call on.
    let first = sent(limit.arrive(0));
    let _stalled = sent(limit.arrive(10));
    assert_eq!(limit.arrive(20), Admission::Wait);
    // The first call, sent at once before the stall, comes back healthy: its slot goes
    // to the call waiting, and no more — the next arrival waits too.
    limit.finish(first, 100, healthy(100));
    let _into_the_stall = limit.hand_over(100).expect("the freed slot");
    assert_eq!(limit.arrive(110), Admission::Wait);
    assert_eq!(limit.limit(110), 2);
}

#[test]
fn a_call_that_waited_for_its_slot_and_is_answered_in_a_full_line_earns_slow_start_s_step() {
    let mut limit = adaptive();
    let (first, second) = (sent(limit.arrive(0)), sent(limit.arrive(0)));
    assert_eq!(limit.arrive(0), Admission::Wait);
    assert_eq!(limit.arrive(0), Admission::Wait);
    limit.finish(first, 100, healthy(100));
    let waited = limit.hand_over(100).expect("the first's slot");
    limit.finish(second, 100, healthy(100));
    let _also_waited = limit.hand_over(100).expect("the second's slot");
    assert_eq!(
        limit.limit(100),
        2,
        "answers of calls sent at once raise nothing"
    );
    assert_eq!(limit.arrive(150), Admission::Wait);
    limit.finish(waited, 200, healthy(100));
    assert_eq!(limit.limit(200), 3);
}
