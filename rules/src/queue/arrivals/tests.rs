use proptest::prelude::*;

use super::*;
use crate::queue::QueueConfig;

const CONFIG: QueueConfig = QueueConfig {
    admit_limit: 3,
    pass_ttl_ms: 60_000,
    admit_per_minute: None,
};

fn users(prefix: &str, n: usize) -> Vec<String> {
    (0..n).map(|i| format!("{prefix}-{i}")).collect()
}

#[test]
fn users_spread_evenly_over_the_shards_and_keep_theirs() {
    for shards in [8u32, 64] {
        let mut counts = vec![0u32; shards as usize];
        for user in users("u", 100_000) {
            counts[shard_of(b"key", "drop", &user, shards) as usize] += 1;
        }
        let fair = 100_000.0 / f64::from(shards);
        for count in &counts {
            assert!(
                (f64::from(*count) - fair).abs() < fair * 0.1,
                "{shards} shards: {counts:?}"
            );
        }
    }
    let one = shard_of(b"key", "drop", "alice", 64);
    assert_eq!(one, shard_of(b"key", "drop", "alice", 64));
    let moved = (0..64)
        .filter(|n| {
            let user = format!("user-{n}");
            shard_of(b"key", "drop", &user, 64) != shard_of(b"other key", "drop", &user, 64)
        })
        .count();
    assert!(moved > 50, "another key, other shards: {moved} of 64 moved");
}

#[test]
fn shards_and_their_interval_follow_the_expected_rate() {
    assert_eq!(shards_for(0), 1);
    assert_eq!(shards_for(60 * SHARD_ENTERS_PER_SECOND), 1);
    assert_eq!(shards_for(1_000_000), 67);
    assert_eq!(shards_for(u64::MAX / 2), MAX_SHARDS);
    assert_eq!(flush_interval_ms(1), MIN_FLUSH_MS);
    assert_eq!(flush_interval_ms(64), 320);
    for shards in [1, 8, 64, MAX_SHARDS] {
        let batches_per_second = f64::from(shards) * 1000.0 / flush_interval_ms(shards) as f64;
        assert!(batches_per_second <= f64::from(HEAD_BATCHES_PER_SECOND));
    }
}

#[test]
fn a_batch_waits_its_interval_and_one_is_in_flight_at_a_time() {
    let mut batcher = Batcher::restore(100, 0, None);
    assert!(batcher.arrive("a", 1_000));
    assert!(!batcher.arrive("a", 1_010), "twice is once");
    assert!(batcher.arrive("b", 1_050));
    assert_eq!(batcher.due_at(), Some(1_100));
    assert_eq!(batcher.to_send(1_099), None);
    let first = batcher.to_send(1_100).expect("due");
    assert_eq!(
        (first.id, first.users.clone()),
        (0, vec!["a".into(), "b".into()])
    );
    batcher.arrive("c", 1_120);
    assert_eq!(
        batcher.to_send(1_300),
        Some(first.clone()),
        "until answered"
    );
    assert_eq!(batcher.numbered(7), None, "not the batch in flight");
    assert_eq!(batcher.numbered(0), Some(first));
    assert!(!batcher.is_waiting("a"));
    let second = batcher.to_send(1_300).expect("c's, due since 1 220");
    assert_eq!((second.id, second.users), (1, vec!["c".to_owned()]));
}

#[test]
fn a_full_batch_goes_at_once_and_the_rest_waits_for_the_next() {
    let mut batcher = Batcher::restore(1_000, 0, None);
    for user in users("u", MAX_BATCH + 5) {
        batcher.arrive(&user, 0);
    }
    assert_eq!(batcher.due_at(), Some(0));
    let full = batcher.to_send(0).expect("full");
    assert_eq!(full.users.len(), MAX_BATCH);
    batcher.numbered(full.id);
    assert_eq!(batcher.due_at(), Some(1_000), "the rest waits its interval");
}

#[test]
fn a_batch_the_head_does_not_answer_goes_again_ever_more_slowly() {
    let mut batcher = Batcher::restore(100, 0, None);
    batcher.arrive("a", 0);
    let sent = batcher.to_send(100).expect("due");
    assert_eq!(batcher.unreachable(9, 150), None, "not the batch in flight");
    let mut now = 150;
    for wait in [100, 200, 400, 800, 1_600, 3_200, RETRY_MAX_MS, RETRY_MAX_MS] {
        assert_eq!(batcher.unreachable(sent.id, now), Some(now + wait));
        batcher.arrive(&format!("late-{now}"), now);
        assert_eq!(
            batcher.due_at(),
            Some(now + wait),
            "the retry, not the gathering"
        );
        assert_eq!(
            batcher.to_send(now + wait - 1),
            None,
            "not before its retry"
        );
        now += wait;
        assert_eq!(batcher.to_send(now), Some(sent.clone()));
    }
    batcher.numbered(sent.id);
    let next = batcher.to_send(now).expect("the late ones, due long since");
    assert_eq!(
        batcher.unreachable(next.id, now),
        Some(now + 100),
        "the backoff starts over"
    );
}

#[test]
fn a_batch_the_head_refuses_is_given_up_its_leavers_going_with_the_next() {
    let mut batcher = Batcher::restore(100, 0, None);
    batcher.arrive("a", 0);
    batcher.leave(7, 0);
    let sent = batcher.to_send(100).expect("due");
    batcher.arrive("b", 120);
    let refused = batcher.refused(sent.id, 150).expect("the batch in flight");
    assert_eq!(
        (refused.users, refused.dropped),
        (vec!["a".to_owned()], vec![])
    );
    assert!(!batcher.is_waiting("a"), "a enters again");
    assert!(batcher.arrive("a", 160), "and is a newcomer then");
    let next = batcher.to_send(220).expect("b's, due at 220");
    assert_eq!(
        (next.users, next.left),
        (vec!["b".into(), "a".into()], vec![7])
    );
    let alone = batcher.refused(next.id, 230).map(|r| r.dropped);
    assert_eq!(alone, Some(vec![]));
    let leavers_only = batcher.to_send(400).expect("7 again");
    assert_eq!(
        (leavers_only.users.len(), leavers_only.left.clone()),
        (0, vec![7])
    );
    let given_up = batcher.refused(leavers_only.id, 400).expect("in flight");
    assert_eq!(
        given_up.dropped,
        vec![7],
        "leavers alone cannot stall the shard"
    );
    assert_eq!(batcher.to_send(10_000), None, "nothing left");
}

#[test]
fn a_restart_loses_what_was_pending_and_sends_the_stored_batch_again() {
    let mut batcher = Batcher::restore(100, 0, None);
    batcher.arrive("a", 0);
    let sent = batcher.to_send(100).expect("due");
    batcher.arrive("b", 150);
    batcher.restart();
    assert!(
        !batcher.is_waiting("b"),
        "b was never answered: it enters again"
    );
    assert_eq!(batcher.to_send(150), Some(sent));
    batcher.numbered(0);
    batcher.arrive("b", 200);
    assert_eq!(batcher.to_send(300).map(|b| b.id), Some(1));
}

#[test]
fn the_head_numbers_batches_in_the_order_they_reach_it_and_a_retry_the_same() {
    let mut line = EventQueue::new(CONFIG);
    let a = enter_batch(&mut line, &[None, None], &[], 0);
    let seqs = |batch: &BatchNumbered| -> Vec<(u64, u64)> {
        batch
            .tickets
            .iter()
            .flatten()
            .map(|t| (t.seq, t.position))
            .collect()
    };
    assert_eq!(seqs(&a), [(0, 1), (1, 2)]);
    assert!(!a.changes.is_empty());
    let b = enter_batch(&mut line, &[None; 3], &[], 0);
    assert_eq!(seqs(&b), [(2, 3), (3, 4), (4, 5)]);
    assert_eq!(b.tickets[2].as_ref().map(|t| t.admitted), Some(false));

    let again = enter_batch(&mut line, &[Some(0), Some(1)], &[], 0);
    assert_eq!(seqs(&again), seqs(&a), "the numbers it got");
    assert!(
        !again
            .changes
            .iter()
            .any(|c| matches!(c, Change::Entered { .. })),
        "nobody numbered twice"
    );
    assert_eq!(line.len(), 5);

    let after = enter_batch(&mut line, &[None], &[1, 3], 0);
    assert_eq!(seqs(&after), [(5, 4)], "the leavers out first");
}

#[test]
fn a_sold_out_line_numbers_nobody_of_a_batch() {
    let mut line = EventQueue::new(CONFIG);
    line.mark_sold_out();
    let batch = enter_batch(&mut line, &[None; 4], &[], 0);
    assert!(batch.tickets.iter().all(Option::is_none));
    assert!(line.is_empty());
}

/// What a shard does next.
#[derive(Debug, Clone)]
enum Step {
    Arrive {
        shard: usize,
    },
    /// The oldest numbered of the shard's people leaves.
    Leave {
        shard: usize,
    },
    /// The shard sends what is due, and the head's answer is lost or heard.
    Flush {
        shard: usize,
        heard: bool,
    },
    Restart {
        shard: usize,
    },
    Tick,
}

fn step() -> impl Strategy<Value = Step> {
    prop_oneof![
        6 => (0..4usize).prop_map(|shard| Step::Arrive { shard }),
        2 => (0..4usize).prop_map(|shard| Step::Leave { shard }),
        3 => (0..4usize, any::<bool>()).prop_map(|(shard, heard)| Step::Flush { shard, heard }),
        1 => (0..4usize).prop_map(|shard| Step::Restart { shard }),
        2 => Just(Step::Tick),
    ]
}

proptest! {
    /// Whatever the interleaving — answers lost, shards restarted, people leaving — everyone
    /// answered is numbered exactly once, each batch's people right behind the batch
    /// numbered before in the order they came, and every position is the count of those
    /// still in line before one, plus one.
    #[test]
    fn everyone_is_numbered_once_in_the_order_batches_reach_the_head(
        steps in prop::collection::vec(step(), 1..200)
    ) {
        let mut shards: Vec<Batcher> = (0..4).map(|_| Batcher::restore(10, 0, None)).collect();
        let mut numbered_here: Vec<Vec<u64>> = vec![Vec::new(); 4];
        let mut line = EventQueue::new(CONFIG);
        // Who holds each arrival number, in numbering order, and whether they are in line.
        let mut reference: Vec<(u64, String, bool)> = Vec::new();
        let (mut now, mut next_user) = (0i64, 0u32);
        for step in steps {
            match step {
                Step::Arrive { shard } => {
                    shards[shard].arrive(&format!("s{shard}-u{next_user}"), now);
                    next_user += 1;
                }
                Step::Leave { shard } => {
                    if !numbered_here[shard].is_empty() {
                        let seq = numbered_here[shard].remove(0);
                        shards[shard].leave(seq, now);
                    }
                }
                Step::Flush { shard, heard } => {
                    let Some(batch) = shards[shard].to_send(now) else { continue };
                    let retry = reference.iter().any(|(seq, user, _)| {
                        batch.users.first() == Some(user) && *seq < line.next_seq()
                    });
                    let before = reference.iter().filter(|(_, _, present)| *present).count();
                    let held: Vec<Option<u64>> = batch
                        .users
                        .iter()
                        .map(|user| reference.iter().find(|(_, u, _)| u == user).map(|(seq, _, _)| *seq))
                        .collect();
                    let first_seq = line.next_seq();
                    let BatchNumbered { tickets, .. } = enter_batch(&mut line, &held, &batch.left, now);
                    for seq in &batch.left {
                        for entry in reference.iter_mut().filter(|(s, _, _)| s == seq) {
                            entry.2 = false;
                        }
                    }
                    let after_leaving = reference.iter().filter(|(_, _, present)| *present).count();
                    prop_assert!(retry || before >= after_leaving);
                    for (at, ticket) in tickets.iter().enumerate() {
                        let ticket = ticket.as_ref().expect("numbered");
                        let user = &batch.users[at];

                        if !retry {
                            prop_assert_eq!(ticket.seq, first_seq + at as u64);
                            prop_assert_eq!(ticket.position, (after_leaving + at + 1) as u64);
                            reference.push((ticket.seq, user.clone(), true));
                            numbered_here[shard].push(ticket.seq);
                        }
                        let holder = reference.iter().find(|(seq, _, _)| *seq == ticket.seq);
                        prop_assert_eq!(holder.map(|(_, u, _)| u), Some(user));
                    }
                    if heard {
                        shards[shard].numbered(batch.id);
                    }
                }
                Step::Restart { shard } => shards[shard].restart(),
                Step::Tick => now += 5,
            }
        }
        let present: Vec<&(u64, String, bool)> = reference.iter().filter(|e| e.2).collect();
        prop_assert_eq!(line.len(), present.len());
        for (at, (seq, _, _)) in present.iter().enumerate() {
            let (ticket, _) = line.status(*seq, now);
            prop_assert_eq!(ticket.map(|t| t.position), Some(at as u64 + 1));
        }
        let distinct: HashSet<&String> = reference.iter().map(|(_, user, _)| user).collect();
        prop_assert_eq!(distinct.len(), reference.len(), "nobody twice");
    }
}
