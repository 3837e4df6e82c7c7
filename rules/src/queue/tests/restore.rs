//! Rebuilding the queue from storage when the object starts: the line's bitmap, the
//! counter, the passes and the marks.

use super::*;

/// Storage holding `seqs` in line (bitmap from 0), with `passes`.
fn stored(seqs: &[u64], next_seq: u64, passes: &[(u64, i64)]) -> Stored {
    Stored {
        base: 0,
        words: bitmap(seqs.iter().copied()),
        next_seq,
        passes: passes.to_vec(),
        ..Stored::default()
    }
}

#[test]
fn a_restored_queue_orders_by_arrival_with_its_passes() {
    let storage = stored(&[2, 4, 9], 10, &[(2, 100), (4, 90)]);
    let mut queue = Named::restored(TWO, storage, &[(2, "a"), (4, "b"), (9, "c")]);
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
fn a_restore_resumes_the_counter_above_every_arrival_in_line_and_drops_stray_passes() {
    let storage = stored(&[3, 7], 1, &[(5, 100)]);
    let mut queue = Named::restored(
        QueueConfig {
            admit_limit: 0,
            ..TWO
        },
        storage,
        &[(3, "a"), (7, "b")],
    );
    assert_eq!((queue.len(), queue.next_seq()), (2, 8));
    assert_eq!(queue.next_pass_expiry(), None, "5 is not in line");
    assert_eq!(queue.enter("a", 0).0.map(|ticket| ticket.seq), Some(3));
    assert_eq!(written(&queue.enter("c", 0).1), "c#8");
}

#[test]
fn a_larger_limit_after_a_restore_issues_the_missing_pass_on_a_poll() {
    let storage = stored(&[0, 1], 2, &[(0, 100)]);
    let mut queue = Named::restored(TWO, storage, &[(0, "a"), (1, "b")]);
    assert_eq!(written(&queue.status("b", 40).1), "+b@140");
    assert_eq!(written(&queue.status("b", 50).1), "");
}

#[test]
fn a_stored_sell_out_still_turns_newcomers_away_after_a_restore() {
    let storage = Stored {
        sold_out: true,
        ..stored(&[0, 1], 2, &[(0, 100), (1, 100)])
    };
    let mut queue = Named::restored(TWO, storage, &[(0, "a"), (1, "b")]);
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

#[test]
fn a_restored_pause_still_holds_passes_back() {
    let storage = Stored {
        paused_until: 80,
        ..stored(&[0, 2], 3, &[(0, 130)])
    };
    let mut restored = Named::restored(TWO, storage, &[(0, "a"), (2, "c")]);
    assert_eq!(written(&restored.expire(60)), "");
    assert_eq!(restored.status("c", 70).0.map(|t| t.admitted), Some(false));
    assert_eq!(written(&restored.expire(80)), "+c@180");
}

#[test]
fn the_stored_bitmap_rebuilds_the_same_line() {
    let mut queue = Named::new(TWO);
    for user in ["a", "b", "c", "d", "e"] {
        queue.enter(user, 0);
    }
    queue.leave("b", 1);
    let (base, words) = queue.words();
    let passes: Vec<(u64, i64)> = queue.pass_of.iter().map(|(s, at)| (*s, *at)).collect();
    assert_eq!(passes.len(), 2, "a's and c's");
    let storage = Stored {
        base,
        words: words.to_vec(),
        next_seq: queue.next_seq(),
        passes,
        ..Stored::default()
    };
    let names = [(0, "a"), (2, "c"), (3, "d"), (4, "e")];
    let mut restored = Named::restored(TWO, storage, &names);
    for user in ["a", "c", "d", "e"] {
        assert_eq!(restored.status(user, 2).0, queue.clone().status(user, 2).0);
    }
}
