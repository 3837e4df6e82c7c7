//! The queue's behaviours as scripts: one step per line, with what it must answer.

use super::*;

mod model;
mod named;
mod outflow;
mod pause;
mod restore;
mod snapshot;

use named::{bitmap, written, Named};

/// Two admitted at a time; passes live 100 ms.
const TWO: QueueConfig = QueueConfig {
    admit_limit: 2,
    pass_ttl_ms: 100,
    admit_per_minute: None,
};

#[derive(Debug, Clone, Copy)]
enum Step {
    Enter(&'static str),
    Poll(&'static str),
    Leave(&'static str),
    Expire,
    /// Asks the payment gate whether the user holds a live pass.
    Gate(&'static str),
    SellOut,
}
use Step::*;

/// What a step answered, in a form that fits one line of a script.
#[derive(Debug, Clone, PartialEq, Eq)]
enum Seen {
    Ticket {
        position: u64,
        admitted: bool,
        pass: Option<i64>,
    },
    /// Not in the line (a poll), or turned away (an enter once sold out).
    Absent,
    /// Changes written `a#3` (entered at seq 3), `+a@100` (pass until 100), `-a` (removed),
    /// `sold-out`.
    Changes(String),
    Live(bool),
}

fn ticket(position: u64, admitted: bool, pass: Option<i64>) -> Seen {
    Seen::Ticket {
        position,
        admitted,
        pass,
    }
}

fn changes(written: &str) -> Seen {
    Seen::Changes(written.to_owned())
}

fn run(queue: &mut Named, step: Step, now: i64) -> Seen {
    let seen = |ticket: Ticket| Seen::Ticket {
        position: ticket.position,
        admitted: ticket.admitted,
        pass: ticket.pass_expires_at,
    };
    match step {
        Enter(user) => queue.enter(user, now).0.map_or(Seen::Absent, seen),
        Poll(user) => queue.status(user, now).0.map_or(Seen::Absent, seen),
        Leave(user) => Seen::Changes(written(&queue.leave(user, now))),
        Expire => Seen::Changes(written(&queue.expire(now))),
        Gate(user) => Seen::Live(queue.has_live_pass(user, now)),
        SellOut => Seen::Changes(written(&queue.mark_sold_out())),
    }
}

/// Runs `script` — `(now_ms, step, expected answer)` — on `queue`.
fn check_on(queue: &mut Named, script: &[(i64, Step, Seen)]) {
    for (i, (now, step, expected)) in script.iter().enumerate() {
        assert_eq!(
            run(queue, *step, *now),
            *expected,
            "step {i}: {step:?} at {now}"
        );
    }
}

fn check(config: QueueConfig, script: &[(i64, Step, Seen)]) {
    check_on(&mut Named::new(config), script);
}

#[test]
fn positions_count_arrivals_from_one_and_the_first_limit_are_admitted() {
    check(
        TWO,
        &[
            (0, Enter("a"), ticket(1, true, Some(100))),
            (0, Enter("b"), ticket(2, true, Some(100))),
            (0, Enter("c"), ticket(3, false, None)),
            (7, Enter("d"), ticket(4, false, None)),
            (8, Poll("c"), ticket(3, false, None)),
        ],
    );
}

#[test]
fn entering_again_keeps_the_place_and_the_pass() {
    check(
        TWO,
        &[
            (0, Enter("a"), ticket(1, true, Some(100))),
            (1, Enter("b"), ticket(2, true, Some(101))),
            (2, Enter("c"), ticket(3, false, None)),
            (50, Enter("a"), ticket(1, true, Some(100))),
            (60, Enter("c"), ticket(3, false, None)),
            (70, Poll("a"), ticket(1, true, Some(100))),
        ],
    );
}

#[test]
fn entering_reports_the_arrival_then_the_pass() {
    let mut queue = Named::new(QueueConfig {
        admit_limit: 1,
        ..TWO
    });
    assert_eq!(written(&queue.enter("a", 5).1), "a#0 +a@105");
    assert_eq!(written(&queue.enter("b", 6).1), "b#1");
    assert_eq!(written(&queue.enter("a", 7).1), "");
    assert_eq!(queue.next_seq(), 2);
}

#[test]
fn leaving_from_the_middle_moves_up_only_those_behind() {
    check(
        QueueConfig {
            admit_limit: 1,
            ..TWO
        },
        &[
            (0, Enter("a"), ticket(1, true, Some(100))),
            (0, Enter("b"), ticket(2, false, None)),
            (0, Enter("c"), ticket(3, false, None)),
            (0, Enter("d"), ticket(4, false, None)),
            (1, Leave("c"), changes("-c")),
            (2, Poll("a"), ticket(1, true, Some(100))),
            (2, Poll("b"), ticket(2, false, None)),
            (2, Poll("c"), Seen::Absent),
            (2, Poll("d"), ticket(3, false, None)),
        ],
    );
}

#[test]
fn an_admitted_user_leaving_admits_the_next_at_that_moment_without_a_poll() {
    check(
        TWO,
        &[
            (0, Enter("a"), ticket(1, true, Some(100))),
            (0, Enter("b"), ticket(2, true, Some(100))),
            (5, Enter("c"), ticket(3, false, None)),
            (6, Enter("d"), ticket(4, false, None)),
            (50, Leave("a"), changes("-a +c@150")),
            (50, Gate("c"), Seen::Live(true)),
            (90, Poll("c"), ticket(2, true, Some(150))),
            (90, Poll("d"), ticket(3, false, None)),
        ],
    );
}

#[test]
fn a_pass_issued_without_a_poll_still_expires() {
    check(
        QueueConfig {
            admit_limit: 1,
            ..TWO
        },
        &[
            (0, Enter("a"), ticket(1, true, Some(100))),
            (0, Enter("b"), ticket(2, false, None)),
            (50, Leave("a"), changes("-a +b@150")),
            (149, Expire, changes("")),
            (150, Expire, changes("-b")),
            (150, Poll("b"), Seen::Absent),
        ],
    );
}

#[test]
fn an_expired_pass_admits_the_next_in_line() {
    check(
        TWO,
        &[
            (0, Enter("a"), ticket(1, true, Some(100))),
            (10, Enter("b"), ticket(2, true, Some(110))),
            (20, Enter("c"), ticket(3, false, None)),
            (30, Enter("d"), ticket(4, false, None)),
            (100, Expire, changes("-a +c@200")),
            (101, Poll("b"), ticket(1, true, Some(110))),
            (101, Poll("c"), ticket(2, true, Some(200))),
            (110, Expire, changes("-b +d@210")),
        ],
    );
}

#[test]
fn a_pass_is_dead_at_exactly_its_expiry() {
    check(
        TWO,
        &[
            (0, Enter("a"), ticket(1, true, Some(100))),
            (99, Gate("a"), Seen::Live(true)),
            (99, Expire, changes("")),
            (100, Gate("a"), Seen::Live(false)),
            (100, Expire, changes("-a")),
        ],
    );
}

#[test]
fn expiry_removes_in_expiry_order_and_admits_as_many_in_line_order() {
    check(
        QueueConfig {
            admit_limit: 3,
            ..TWO
        },
        &[
            (5, Enter("a"), ticket(1, true, Some(105))),
            (0, Enter("b"), ticket(2, true, Some(100))),
            (5, Enter("c"), ticket(3, true, Some(105))),
            (6, Enter("d"), ticket(4, false, None)),
            (6, Enter("e"), ticket(5, false, None)),
            (7, Enter("f"), ticket(6, false, None)),
            (105, Expire, changes("-b -a -c +d@205 +e@205 +f@205")),
        ],
    );
}

#[test]
fn an_admit_limit_of_zero_admits_nobody() {
    check(
        QueueConfig {
            admit_limit: 0,
            ..TWO
        },
        &[
            (0, Enter("a"), ticket(1, false, None)),
            (0, Enter("b"), ticket(2, false, None)),
            (1, Leave("a"), changes("-a")),
            (1000, Expire, changes("")),
            (1000, Poll("b"), ticket(1, false, None)),
            (1000, Gate("b"), Seen::Live(false)),
        ],
    );
}

#[test]
fn leaving_when_absent_changes_nothing() {
    check(
        TWO,
        &[
            (0, Leave("a"), changes("")),
            (0, Enter("a"), ticket(1, true, Some(100))),
            (1, Leave("a"), changes("-a")),
            (2, Leave("a"), changes("")),
            (3, Gate("a"), Seen::Live(false)),
        ],
    );
}

#[test]
fn the_alarm_is_set_for_the_earliest_pass() {
    let mut queue = Named::new(TWO);
    assert_eq!(queue.next_pass_expiry(), None);
    queue.enter("a", 30);
    queue.enter("b", 10);
    assert_eq!(queue.next_pass_expiry(), Some(110));
    queue.leave("b", 20);
    assert_eq!(queue.next_pass_expiry(), Some(130));
}

#[test]
fn a_sold_out_event_turns_newcomers_away_and_keeps_its_line() {
    check(
        TWO,
        &[
            (0, Enter("a"), ticket(1, true, Some(100))),
            (0, Enter("b"), ticket(2, true, Some(100))),
            (0, Enter("c"), ticket(3, false, None)),
            (1, SellOut, changes("sold-out")),
            (2, SellOut, changes("")),
            (3, Enter("d"), Seen::Absent),
            (3, Poll("d"), Seen::Absent),
            (4, Enter("c"), ticket(3, false, None)),
            (5, Gate("a"), Seen::Live(true)),
            (50, Leave("a"), changes("-a +c@150")),
            (60, Enter("a"), Seen::Absent),
            (60, Poll("c"), ticket(2, true, Some(150))),
            (150, Expire, changes("-b -c")),
            (150, Enter("e"), Seen::Absent),
        ],
    );
}

#[test]
fn turning_a_newcomer_away_changes_nothing() {
    let mut queue = Named::new(TWO);
    queue.enter("a", 0);
    assert_eq!(written(&queue.mark_sold_out()), "sold-out");
    let (ticket, changes) = queue.enter("b", 1);
    assert_eq!((ticket, written(&changes)), (None, String::new()));
    assert_eq!((queue.len(), queue.next_seq()), (1, 1));
    assert!(queue.is_sold_out());
}
