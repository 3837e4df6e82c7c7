//! Outflow, step by step: passes by rate as well as by count, an operator's hold and
//! resume, a closed drop, and new limits mid-drop — places never moved.

use super::*;

const MINUTE: i64 = crate::queue::outflow::MINUTE_MS;

fn config(admit_limit: u32, admit_per_minute: Option<u32>) -> QueueConfig {
    QueueConfig {
        admit_limit,
        pass_ttl_ms: 10 * MINUTE,
        admit_per_minute,
    }
}

fn admitted(queue: &mut Named, user: &str, now: i64) -> bool {
    queue
        .status(user, now)
        .0
        .is_some_and(|ticket| ticket.admitted)
}

#[test]
fn no_more_passes_than_the_rate_in_any_minute_and_the_rest_at_the_windows_end() {
    let mut queue = Named::new(config(10, Some(3)));
    for (at, user) in ["a", "b", "c", "d", "e"].iter().enumerate() {
        queue.enter(user, at as i64);
    }
    assert_eq!(queue.queue.issued_last_minute(10), 3);
    assert!(
        !admitted(&mut queue, "d", 30_000),
        "in the zone, past the rate"
    );
    assert_eq!(
        queue.queue.next_wake(30_000),
        Some(MINUTE),
        "when a's pass leaves the window"
    );
    assert_eq!(written(&queue.expire(MINUTE)), "+d@660000");
    assert_eq!(written(&queue.expire(MINUTE + 1)), "+e@660001");
    assert_eq!(queue.queue.issued_last_minute(MINUTE + 1), 3);
    let (ticket, _) = queue.status("e", MINUTE + 2);
    assert_eq!(ticket.map(|t| t.position), Some(5), "nobody moved");
}

#[test]
fn a_held_room_issues_no_pass_keeps_live_ones_and_resumes_front_first() {
    let mut queue = Named::new(config(2, None));
    queue.enter("a", 0);
    assert_eq!(written(&queue.queue.hold(true, 1)), "held");
    queue.enter("b", 2);
    queue.enter("c", 3);
    assert!(!admitted(&mut queue, "b", 4), "held: no new pass");
    assert!(queue.has_live_pass("a", 5), "a's pass still works");
    assert_eq!(
        queue.queue.next_wake(5),
        Some(10 * MINUTE),
        "only a's expiry"
    );
    assert_eq!(
        written(&queue.leave("a", 6)),
        "-a",
        "nobody moves up into a pass"
    );
    assert_eq!(
        written(&queue.queue.hold(false, 7)),
        "resumed +b@600007 +c@600007",
        "both owed, front first"
    );
    assert_eq!(written(&queue.queue.hold(false, 8)), "", "resuming twice");
}

#[test]
fn a_closed_drop_turns_newcomers_away_and_issues_no_pass() {
    let mut queue = Named::new(config(1, None));
    queue.enter("a", 0);
    queue.enter("b", 0);
    assert_eq!(written(&queue.queue.close()), "closed");
    assert_eq!(
        written(&queue.queue.close()),
        "",
        "closing is one-way, once"
    );
    assert_eq!(queue.enter("c", 1).0, None, "turned away");
    assert!(queue.has_live_pass("a", 2));
    queue.leave("a", 3);
    assert!(!admitted(&mut queue, "b", 4), "closed: no new pass");
    assert_eq!(queue.queue.next_wake(4), None);
}

#[test]
fn new_limits_mid_drop_move_nobody_and_a_larger_zone_admits_at_once() {
    let mut queue = Named::new(config(1, None));
    for user in ["a", "b", "c"] {
        queue.enter(user, 0);
    }
    assert_eq!(
        written(&queue.queue.configure(config(3, Some(1)), 5)),
        "",
        "a's pass already fills the minute's one"
    );
    assert_eq!(
        written(&queue.queue.configure(config(3, Some(2)), 6)),
        "+b@600006"
    );
    assert_eq!(
        written(&queue.queue.configure(config(3, None), 7)),
        "+c@600007"
    );
    let positions: Vec<u64> = ["a", "b", "c"]
        .iter()
        .filter_map(|user| queue.status(user, 8).0.map(|t| t.position))
        .collect();
    assert_eq!(positions, [1, 2, 3]);
}
