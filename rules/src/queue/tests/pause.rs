//! Paused payments, step by step: no pass issued while paused, every live pass extended by
//! what the pause adds, the held-back passes issued when it ends, places never moved.

use super::*;

fn queue_of(users: &[&str]) -> Named {
    let mut queue = Named::new(TWO);
    for user in users {
        queue.enter(user, 0);
    }
    queue
}

#[test]
fn a_pause_extends_every_live_pass_and_admits_nobody_new_until_it_ends() {
    let mut queue = queue_of(&["a", "b", "c"]);
    // a and b hold passes until 100; the PG is down from 50 until 80.
    assert_eq!(
        written(&queue.pause(50, 80)),
        "paused<80 ~a@130 ~b@130",
        "each pass extended by the 30 ms the pause adds"
    );
    assert!(queue.is_paused(79) && !queue.is_paused(80));
    assert_eq!(queue.paused_until(60), Some(80));
    assert!(queue.has_live_pass("a", 120), "passes stay live");

    // b leaves: c moves into the admitted zone, but waits for the pause to end.
    assert_eq!(written(&queue.leave("b", 60)), "-b");
    let (ticket, changes) = queue.status("c", 70);
    let ticket = ticket.expect("in line");
    assert_eq!((ticket.position, ticket.admitted), (2, false));
    assert!(changes.is_empty());
    let (newcomer, _) = queue.enter("d", 70);
    assert_eq!(newcomer.map(|t| (t.position, t.admitted)), Some((3, false)));
    assert_eq!(
        queue.next_wake(70),
        Some(80),
        "the alarm is for the pause's end"
    );

    // At its end the held-back pass is issued, whether c polls or not.
    assert_eq!(written(&queue.expire(80)), "+c@180");
    assert_eq!(queue.next_wake(80), Some(130));
    assert!(queue.has_live_pass("c", 100));
}

#[test]
fn a_pause_already_covered_changes_nothing_and_a_longer_one_adds_the_difference() {
    let mut queue = queue_of(&["a"]);
    assert_eq!(written(&queue.pause(10, 50)), "paused<50 ~a@140");
    assert_eq!(
        written(&queue.pause(20, 40)),
        "",
        "covered by the pause in force"
    );
    assert_eq!(written(&queue.pause(30, 70)), "paused<70 ~a@160");
    // A pause that starts after the last one ended adds all of its length.
    assert_eq!(written(&queue.pause(100, 110)), "paused<110 ~a@170");
}

#[test]
fn a_pause_first_removes_the_passes_that_already_ran_out() {
    let mut queue = queue_of(&["a", "b", "c"]);
    // a and b's passes ran out at 100; c takes a's place at the front first.
    assert_eq!(
        written(&queue.pause(100, 150)),
        "-a -b +c@200 paused<150 ~c@250"
    );
}
