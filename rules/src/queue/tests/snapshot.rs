//! The snapshot against the queue it was taken of: after every step of random scripts —
//! enters, leaves, expiries, pauses, a sell-out — every holder's place read from the
//! snapshot (and from its decoded bytes) is the queue's own, and nobody else has one.

use proptest::prelude::*;

use super::super::snapshot::{Snapshot, SnapshotOf, SnapshotPlace};
use super::*;

#[derive(Debug, Clone, Copy)]
enum Op {
    Enter(usize),
    Leave(usize),
    Expire,
    Pause(i64),
    SellOut,
}

const USERS: usize = 40;

/// What the shell adds, for the tests that need nothing particular of it.
const OF: SnapshotOf = SnapshotOf {
    room: 1,
    version: 1,
    as_of: 0,
    rate_per_second: None,
};

fn op() -> impl Strategy<Value = Op> {
    prop_oneof![
        5 => (0..USERS).prop_map(Op::Enter),
        3 => (0..USERS).prop_map(Op::Leave),
        2 => Just(Op::Expire),
        1 => (1i64..200).prop_map(Op::Pause),
        1 => Just(Op::SellOut),
    ]
}

/// Every place the queue itself knows, by arrival number.
fn places(queue: &EventQueue) -> Vec<(u64, SnapshotPlace)> {
    queue
        .line
        .present_seqs()
        .filter_map(|seq| {
            let position = queue.line.position(seq)?;
            let pass = queue.pass_of.get(&seq).copied();
            Some((
                seq,
                SnapshotPlace {
                    position,
                    admitted: position <= u64::from(queue.config.admit_limit) && pass.is_some(),
                    pass_expires_at: pass,
                },
            ))
        })
        .collect()
}

proptest! {
    #[test]
    fn every_place_read_from_the_snapshot_is_the_queues_own(
        admit_limit in 0u32..6,
        script in prop::collection::vec((op(), 0i64..50), 0..250),
    ) {
        let mut queue = Named::new(QueueConfig {
            admit_limit,
            pass_ttl_ms: 120,
            admit_per_minute: None,
        });
        let mut now = 0;
        for (version, (op, pause)) in script.into_iter().enumerate() {
            now += pause;
            match op {
                Op::Enter(user) => drop(queue.enter(&format!("u{user}"), now)),
                Op::Leave(user) => drop(queue.leave(&format!("u{user}"), now)),
                Op::Expire => drop(queue.expire(now)),
                Op::Pause(length) => drop(queue.pause(now, now + length)),
                Op::SellOut => drop(queue.mark_sold_out()),
            }
            let of = SnapshotOf { room: 7, version: version as u64, as_of: now, rate_per_second: Some(0.5) };
            let snapshot = queue.snapshot(of);
            let decoded = Snapshot::decode(&snapshot.encode());
            prop_assert_eq!(decoded.as_ref(), Some(&snapshot));
            let expected = places(&queue.queue);
            prop_assert_eq!(snapshot.len(), expected.len() as u64);
            for (seq, place) in &expected {
                prop_assert_eq!(snapshot.place(*seq), Some(*place), "seq {}", seq);
            }
            for seq in 0..queue.next_seq() + 2 {
                if expected.iter().all(|(held, _)| *held != seq) {
                    prop_assert_eq!(snapshot.place(seq), None, "seq {} is not in line", seq);
                }
            }
            prop_assert_eq!(snapshot.sold_out, queue.is_sold_out());
            prop_assert_eq!(snapshot.paused_until, queue.paused_until(now));
        }
    }
}

#[test]
fn a_snapshot_that_is_cut_short_or_padded_does_not_decode() {
    let mut queue = Named::new(TWO);
    for user in ["a", "b", "c"] {
        queue.enter(user, 0);
    }
    let bytes = queue.snapshot(OF).encode();
    assert!(Snapshot::decode(&bytes).is_some());
    for cut in 0..bytes.len() {
        assert_eq!(Snapshot::decode(&bytes[..cut]), None, "cut at {cut}");
    }
    let mut padded = bytes.clone();
    padded.push(0);
    assert_eq!(Snapshot::decode(&padded), None);
    let mut other_format = bytes;
    other_format[0] = 9;
    assert_eq!(Snapshot::decode(&other_format), None);
}

#[test]
fn a_million_in_line_fit_in_about_an_eighth_of_a_megabyte() {
    let mut queue = EventQueue::new(QueueConfig {
        admit_limit: 100,
        pass_ttl_ms: 30_000,
        admit_per_minute: None,
    });
    for _ in 0..1_000_000 {
        queue.enter(None, 0);
    }
    let snapshot = queue.snapshot(OF);
    let bytes = snapshot.encode();
    assert!(bytes.len() < 130_000, "{} bytes", bytes.len());
    let place = snapshot.place(765_432).expect("in line");
    assert_eq!((place.position, place.admitted), (765_433, false));
}
