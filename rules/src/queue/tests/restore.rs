//! Rebuilding the queue from storage when the object starts.

use super::*;

fn stored(seq: u64, user: &str, pass: Option<i64>) -> StoredEntry {
    StoredEntry {
        seq,
        user: user.to_owned(),
        pass_expires_at: pass,
    }
}

#[test]
fn a_restored_queue_orders_by_seq_whatever_the_stored_order() {
    let entries = vec![
        stored(9, "c", None),
        stored(2, "a", Some(100)),
        stored(4, "b", Some(90)),
    ];
    let mut queue = EventQueue::restore(TWO, entries, 10, false);
    assert_eq!(
        (queue.len(), queue.next_seq(), queue.next_pass_expiry()),
        (3, 10, Some(90))
    );
    check_on(
        &mut queue,
        &[
            (0, Poll("a"), ticket(1, true, Some(100))),
            (0, Poll("c"), ticket(3, false, None)),
            (90, Expire, changes("-b +c@190")),
            (91, Enter("d"), ticket(3, false, None)),
        ],
    );
}

#[test]
fn a_restore_resumes_the_counter_above_every_stored_seq_and_drops_repeats() {
    let entries = vec![
        stored(7, "a", None),
        stored(3, "a", None),
        stored(3, "b", None),
    ];
    let mut queue = EventQueue::restore(
        QueueConfig {
            admit_limit: 0,
            ..TWO
        },
        entries,
        1,
        false,
    );
    assert_eq!((queue.len(), queue.next_seq()), (1, 8));
    assert_eq!(queue.enter("a", 0).0.map(|ticket| ticket.seq), Some(3));
    assert_eq!(written(&queue.enter("b", 0).1), "b#8");
}

#[test]
fn a_larger_limit_after_a_restore_issues_the_missing_pass_on_a_poll() {
    let entries = vec![stored(0, "a", Some(100)), stored(1, "b", None)];
    let mut queue = EventQueue::restore(TWO, entries, 2, false);
    assert_eq!(written(&queue.status("b", 40).1), "+b@140");
    assert_eq!(written(&queue.status("b", 50).1), "");
}

#[test]
fn a_stored_sell_out_still_turns_newcomers_away_after_a_restore() {
    let entries = vec![stored(0, "a", Some(100)), stored(1, "b", None)];
    let mut queue = EventQueue::restore(TWO, entries, 2, true);
    assert!(queue.is_sold_out());
    check_on(
        &mut queue,
        &[
            (0, Poll("b"), ticket(2, true, Some(100))),
            (0, Enter("c"), Seen::Absent),
            (0, SellOut, changes("")),
        ],
    );
}
