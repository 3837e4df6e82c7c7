//! The ledger's rules, case by case: decisions, repeats, declines, caps, cancels, callbacks.

use super::*;

const IDEMPOTENT: Processing = Processing {
    idempotent: true,
    decline: false,
    notify: false,
};
const NOT_IDEMPOTENT: Processing = Processing {
    idempotent: false,
    decline: false,
    notify: false,
};
const DECLINE: Processing = Processing {
    idempotent: true,
    decline: true,
    notify: false,
};
const NOTIFY: Processing = Processing {
    notify: true,
    ..IDEMPOTENT
};
const CANCEL: Cancelling = Cancelling {
    idempotent: true,
    notify: false,
};
const CANCEL_EVERY: Cancelling = Cancelling {
    idempotent: false,
    notify: false,
};

fn request(order_id: &str, payment_key: &str, amount: u64) -> ConfirmRequest {
    ConfirmRequest {
        payment_key: payment_key.to_owned(),
        order_id: order_id.to_owned(),
        amount,
    }
}

fn approved(order_id: &str, approved_at: u64) -> Confirmation {
    Confirmation {
        order_id: order_id.to_owned(),
        status: PaymentStatus::Approved,
        approved_at: Some(approved_at),
    }
}

fn declined(order_id: &str) -> Confirmation {
    Confirmation {
        order_id: order_id.to_owned(),
        status: PaymentStatus::Declined,
        approved_at: None,
    }
}

/// Receives with no rate cap and processes at the same instant.
fn confirm(
    ledger: &mut Ledger,
    req: ConfirmRequest,
    now_ms: u64,
    processing: Processing,
) -> ConfirmOutcome {
    let received = ledger.receive(req, now_ms, None).expect("no cap");
    ledger.process(received, now_ms, processing)
}

fn cap(max: u32) -> Option<NonZeroU32> {
    Some(NonZeroU32::new(max).expect("positive cap"))
}

#[test]
fn first_confirm_is_approved_at_now() {
    let mut ledger = Ledger::default();
    let outcome = confirm(&mut ledger, request("o-1", "pk-1", 1000), 50, IDEMPOTENT);
    assert_eq!(outcome, ConfirmOutcome::New(approved("o-1", 50)));
}

#[test]
fn repeat_confirm_returns_first_result_and_is_counted() {
    let mut ledger = Ledger::default();
    confirm(&mut ledger, request("o-1", "pk-1", 1000), 50, IDEMPOTENT);
    let outcome = confirm(&mut ledger, request("o-1", "pk-1", 1000), 90, IDEMPOTENT);

    assert_eq!(outcome, ConfirmOutcome::Repeat(approved("o-1", 50)));
    let snapshot = ledger.snapshot();
    assert_eq!(snapshot.request_count, 2);
    assert_eq!(snapshot.approvals.len(), 1);
    assert_eq!(snapshot.approvals[0].request_count, 2);
    assert_eq!(snapshot.approvals[0].approved_at, 50);
}

#[test]
fn repeat_with_different_amount_conflicts_and_changes_nothing() {
    let mut ledger = Ledger::default();
    confirm(&mut ledger, request("o-1", "pk-1", 1000), 50, IDEMPOTENT);
    let outcome = confirm(&mut ledger, request("o-1", "pk-1", 999), 60, IDEMPOTENT);

    assert_eq!(outcome, ConfirmOutcome::Conflict);
    let snapshot = ledger.snapshot();
    assert_eq!(
        snapshot.request_count, 2,
        "conflict still counts as received"
    );
    assert_eq!(snapshot.approvals[0].amount, 1000);
    assert_eq!(snapshot.approvals[0].request_count, 1);
}

#[test]
fn repeat_with_different_payment_key_conflicts() {
    let mut ledger = Ledger::default();
    confirm(&mut ledger, request("o-1", "pk-1", 1000), 50, IDEMPOTENT);
    let outcome = confirm(&mut ledger, request("o-1", "pk-2", 1000), 60, IDEMPOTENT);
    assert_eq!(outcome, ConfirmOutcome::Conflict);
}

#[test]
fn unknown_order_has_no_payment() {
    let mut ledger = Ledger::default();
    confirm(&mut ledger, request("o-1", "pk-1", 1000), 50, IDEMPOTENT);
    assert_eq!(ledger.payment("o-2"), None);
}

#[test]
fn known_order_reports_status_and_amount() {
    let mut ledger = Ledger::default();
    confirm(&mut ledger, request("o-1", "pk-1", 1000), 50, IDEMPOTENT);
    let view = ledger.payment("o-1").expect("payment recorded");
    assert_eq!(view.status, OrderStatus::Approved);
    assert_eq!(view.amount, 1000);
}

#[test]
fn snapshot_lists_requests_and_approvals_in_arrival_order() {
    let mut ledger = Ledger::default();
    confirm(&mut ledger, request("o-2", "pk-2", 200), 10, IDEMPOTENT);
    confirm(&mut ledger, request("o-1", "pk-1", 100), 20, IDEMPOTENT);
    confirm(&mut ledger, request("o-2", "pk-2", 200), 30, IDEMPOTENT);

    let snapshot = ledger.snapshot();
    let received: Vec<_> = snapshot
        .requests
        .iter()
        .map(|r| (r.order_id.as_str(), r.received_at))
        .collect();
    assert_eq!(received, [("o-2", 10), ("o-1", 20), ("o-2", 30)]);
    let approved: Vec<_> = snapshot
        .approvals
        .iter()
        .map(|a| a.order_id.as_str())
        .collect();
    assert_eq!(approved, ["o-2", "o-1"]);
}

#[test]
fn declined_charge_is_stored_declined_and_is_no_approval() {
    let mut ledger = Ledger::default();
    let outcome = confirm(&mut ledger, request("o-1", "pk-1", 1000), 50, DECLINE);

    assert_eq!(outcome, ConfirmOutcome::New(declined("o-1")));
    let view = ledger.payment("o-1").expect("payment recorded");
    assert_eq!(view.status, OrderStatus::Declined);
    let snapshot = ledger.snapshot();
    assert!(snapshot.approvals.is_empty());
    assert_eq!(
        snapshot.declines,
        [Decline {
            order_id: "o-1".into(),
            amount: 1000,
            declined_at: 50,
            request_count: 1,
        }]
    );
}

#[test]
fn repeat_of_a_declined_order_replays_the_decline_whatever_the_roll() {
    let mut ledger = Ledger::default();
    confirm(&mut ledger, request("o-1", "pk-1", 1000), 50, DECLINE);
    let outcome = confirm(&mut ledger, request("o-1", "pk-1", 1000), 60, IDEMPOTENT);

    assert_eq!(outcome, ConfirmOutcome::Repeat(declined("o-1")));
    let snapshot = ledger.snapshot();
    assert!(snapshot.approvals.is_empty());
    assert_eq!(snapshot.declines[0].request_count, 2);
}

#[test]
fn decline_roll_does_not_touch_an_approved_order() {
    let mut ledger = Ledger::default();
    confirm(&mut ledger, request("o-1", "pk-1", 1000), 50, IDEMPOTENT);
    let outcome = confirm(&mut ledger, request("o-1", "pk-1", 1000), 60, DECLINE);
    assert_eq!(outcome, ConfirmOutcome::Repeat(approved("o-1", 50)));
    assert!(ledger.snapshot().declines.is_empty());
}

#[test]
fn non_idempotent_repeat_is_another_approval() {
    let mut ledger = Ledger::default();
    confirm(
        &mut ledger,
        request("o-1", "pk-1", 1000),
        50,
        NOT_IDEMPOTENT,
    );
    let outcome = confirm(
        &mut ledger,
        request("o-1", "pk-1", 1000),
        90,
        NOT_IDEMPOTENT,
    );

    assert_eq!(outcome, ConfirmOutcome::New(approved("o-1", 90)));
    let snapshot = ledger.snapshot();
    let approvals: Vec<_> = snapshot
        .approvals
        .iter()
        .map(|a| (a.order_id.as_str(), a.approved_at, a.request_count))
        .collect();
    assert_eq!(approvals, [("o-1", 50, 1), ("o-1", 90, 1)]);
}

#[test]
fn non_idempotent_repeat_with_another_amount_is_a_new_charge_not_a_conflict() {
    let mut ledger = Ledger::default();
    confirm(
        &mut ledger,
        request("o-1", "pk-1", 1000),
        50,
        NOT_IDEMPOTENT,
    );
    let outcome = confirm(&mut ledger, request("o-1", "pk-2", 700), 60, NOT_IDEMPOTENT);

    assert_eq!(outcome, ConfirmOutcome::New(approved("o-1", 60)));
    assert_eq!(ledger.payment("o-1").map(|view| view.amount), Some(700));
}

#[test]
fn status_query_answers_the_latest_charge() {
    let mut ledger = Ledger::default();
    let decline_once = Processing {
        idempotent: false,
        decline: true,
        notify: false,
    };
    confirm(
        &mut ledger,
        request("o-1", "pk-1", 1000),
        50,
        NOT_IDEMPOTENT,
    );
    confirm(&mut ledger, request("o-1", "pk-1", 1000), 60, decline_once);
    let view = ledger.payment("o-1").expect("payment recorded");
    assert_eq!(view.status, OrderStatus::Declined);

    // Back to idempotent: a repeat replays the latest charge.
    let outcome = confirm(&mut ledger, request("o-1", "pk-1", 1000), 70, IDEMPOTENT);
    assert_eq!(outcome, ConfirmOutcome::Repeat(declined("o-1")));
}

#[test]
fn received_but_unprocessed_confirm_is_counted_and_undecided() {
    let mut ledger = Ledger::default();
    let received = ledger.receive(request("o-1", "pk-1", 1000), 50, None);
    drop(received.expect("no cap"));

    assert_eq!(ledger.payment("o-1"), None);
    let snapshot = ledger.snapshot();
    assert_eq!(snapshot.request_count, 1);
    assert!(snapshot.approvals.is_empty());
    assert!(snapshot.declines.is_empty());
}

#[test]
fn rate_cap_refuses_confirms_beyond_the_cap_within_a_second() {
    let mut ledger = Ledger::default();
    assert!(ledger.receive(request("o-1", "pk", 1), 0, cap(2)).is_ok());
    assert!(ledger.receive(request("o-2", "pk", 1), 400, cap(2)).is_ok());
    let refused = ledger.receive(request("o-3", "pk", 1), 999, cap(2));
    assert_eq!(
        refused.map(|_| ()),
        Err(RateLimited {
            max_per_second: NonZeroU32::new(2).expect("positive"),
        })
    );

    let snapshot = ledger.snapshot();
    assert_eq!(snapshot.request_count, 3, "refused confirms are received");
    assert_eq!(snapshot.requests[2].order_id, "o-3");
}

#[test]
fn rate_cap_window_slides() {
    let mut ledger = Ledger::default();
    assert!(ledger.receive(request("o-1", "pk", 1), 0, cap(2)).is_ok());
    assert!(ledger.receive(request("o-2", "pk", 1), 400, cap(2)).is_ok());
    // The confirm at 0 leaves the window at 1000; the one at 400 is still in it.
    assert!(ledger
        .receive(request("o-3", "pk", 1), 1000, cap(2))
        .is_ok());
    assert!(ledger
        .receive(request("o-4", "pk", 1), 1100, cap(2))
        .is_err());
    assert!(ledger
        .receive(request("o-5", "pk", 1), 1400, cap(2))
        .is_ok());
}

#[test]
fn refused_confirms_do_not_count_toward_the_cap() {
    let mut ledger = Ledger::default();
    assert!(ledger.receive(request("o-1", "pk", 1), 0, cap(1)).is_ok());
    for now in [100, 500, 900] {
        assert!(ledger
            .receive(request("o-x", "pk", 1), now, cap(1))
            .is_err());
    }
    assert!(ledger
        .receive(request("o-2", "pk", 1), 1000, cap(1))
        .is_ok());
}

#[test]
fn without_a_cap_every_confirm_is_let_through_and_a_later_cap_sees_them() {
    let mut ledger = Ledger::default();
    for now in 0..5 {
        assert!(ledger.receive(request("o", "pk", 1), now, None).is_ok());
    }
    assert!(ledger.receive(request("o", "pk", 1), 10, cap(5)).is_err());
}

fn status(ledger: &Ledger, order_id: &str) -> Option<OrderStatus> {
    ledger.payment(order_id).map(|view| view.status)
}

#[test]
fn deferred_confirm_is_pending_until_processed() {
    let mut ledger = Ledger::default();
    let received = ledger
        .receive(request("o-1", "pk-1", 1000), 50, None)
        .expect("no cap");
    let deferred = ledger.defer(received);
    assert_eq!(
        ledger.payment("o-1"),
        Some(PaymentView {
            order_id: "o-1".into(),
            status: OrderStatus::Pending,
            amount: 1000,
            approved_at: None,
        })
    );
    assert!(ledger.snapshot().approvals.is_empty());

    let outcome = ledger.process(deferred, 80, IDEMPOTENT);
    assert_eq!(outcome, ConfirmOutcome::New(approved("o-1", 80)));
    assert_eq!(
        ledger.payment("o-1"),
        Some(PaymentView {
            order_id: "o-1".into(),
            status: OrderStatus::Approved,
            amount: 1000,
            approved_at: Some(80),
        })
    );
}

#[test]
fn received_but_not_deferred_confirm_is_not_pending() {
    let mut ledger = Ledger::default();
    let received = ledger.receive(request("o-1", "pk-1", 1000), 50, None);
    drop(received.expect("no cap"));
    assert_eq!(ledger.payment("o-1"), None);
    assert_eq!(
        ledger.cancel("o-1", 60, CANCEL),
        CancelOutcome::Unknown,
        "never to be processed: unknown"
    );
}

#[test]
fn order_stays_pending_while_any_deferred_confirm_waits() {
    let mut ledger = Ledger::default();
    let first = ledger.receive(request("o-1", "pk-1", 1000), 10, None);
    let first = ledger.defer(first.expect("no cap"));
    let second = ledger.receive(request("o-1", "pk-1", 1000), 20, None);
    let second = ledger.defer(second.expect("no cap"));
    // Deferring twice counts once.
    let second = ledger.defer(second);

    let outcome = ledger.process(first, 30, NOT_IDEMPOTENT);
    assert_eq!(outcome, ConfirmOutcome::New(approved("o-1", 30)));
    assert_eq!(
        status(&ledger, "o-1"),
        Some(OrderStatus::Approved),
        "a decided charge answers before a pending repeat"
    );
    ledger.process(second, 40, IDEMPOTENT);
    assert!(ledger.pending.is_empty(), "{:?}", ledger.pending);
}

#[test]
fn pending_order_cannot_be_cancelled_yet() {
    let mut ledger = Ledger::default();
    let received = ledger.receive(request("o-1", "pk-1", 1000), 50, None);
    let deferred = ledger.defer(received.expect("no cap"));
    assert_eq!(ledger.cancel("o-1", 60, CANCEL), CancelOutcome::Pending);
    ledger.process(deferred, 70, IDEMPOTENT);
    assert_eq!(ledger.cancel("o-1", 80, CANCEL), CancelOutcome::Cancelled);
}

#[test]
fn cancel_marks_the_approval_and_the_status() {
    let mut ledger = Ledger::default();
    confirm(&mut ledger, request("o-1", "pk-1", 1000), 50, IDEMPOTENT);
    assert_eq!(ledger.cancel("o-1", 90, CANCEL), CancelOutcome::Cancelled);

    assert_eq!(status(&ledger, "o-1"), Some(OrderStatus::Cancelled));
    assert_eq!(
        ledger.snapshot().approvals,
        [Approval {
            order_id: "o-1".into(),
            amount: 1000,
            approved_at: 50,
            request_count: 1,
            cancelled_at: Some(90),
        }],
        "the approval stays, with the time it was cancelled"
    );
}

#[test]
fn second_cancel_is_answered_alike_and_changes_nothing() {
    let mut ledger = Ledger::default();
    confirm(&mut ledger, request("o-1", "pk-1", 1000), 50, IDEMPOTENT);
    ledger.cancel("o-1", 90, CANCEL);
    assert_eq!(
        ledger.cancel("o-1", 120, CANCEL),
        CancelOutcome::AlreadyCancelled
    );
    assert_eq!(ledger.snapshot().approvals[0].cancelled_at, Some(90));
}

#[test]
fn cancel_of_an_unknown_or_declined_order_is_refused() {
    let mut ledger = Ledger::default();
    assert_eq!(ledger.cancel("o-1", 10, CANCEL), CancelOutcome::Unknown);
    confirm(&mut ledger, request("o-1", "pk-1", 1000), 50, DECLINE);
    assert_eq!(ledger.cancel("o-1", 60, CANCEL), CancelOutcome::Declined);
    assert_eq!(status(&ledger, "o-1"), Some(OrderStatus::Declined));
}

#[test]
fn repeat_confirm_of_a_cancelled_order_replays_the_approval() {
    let mut ledger = Ledger::default();
    confirm(&mut ledger, request("o-1", "pk-1", 1000), 50, IDEMPOTENT);
    ledger.cancel("o-1", 60, CANCEL);
    let outcome = confirm(&mut ledger, request("o-1", "pk-1", 1000), 70, IDEMPOTENT);
    assert_eq!(outcome, ConfirmOutcome::Repeat(approved("o-1", 50)));
    assert_eq!(status(&ledger, "o-1"), Some(OrderStatus::Cancelled));
}

#[test]
fn idempotent_cancel_takes_back_the_latest_charge_only() {
    let mut ledger = Ledger::default();
    for now in [50, 60] {
        confirm(
            &mut ledger,
            request("o-1", "pk-1", 1000),
            now,
            NOT_IDEMPOTENT,
        );
    }
    assert_eq!(ledger.cancel("o-1", 90, CANCEL), CancelOutcome::Cancelled);
    let cancelled: Vec<_> = ledger
        .snapshot()
        .approvals
        .iter()
        .map(|a| a.cancelled_at)
        .collect();
    assert_eq!(cancelled, [None, Some(90)]);
}

#[test]
fn non_idempotent_cancel_takes_back_every_charge_of_the_order() {
    let mut ledger = Ledger::default();
    for now in [50, 60] {
        confirm(
            &mut ledger,
            request("o-1", "pk-1", 1000),
            now,
            NOT_IDEMPOTENT,
        );
    }
    confirm(&mut ledger, request("o-2", "pk-2", 5), 70, NOT_IDEMPOTENT);
    assert_eq!(
        ledger.cancel("o-1", 90, CANCEL_EVERY),
        CancelOutcome::Cancelled
    );
    let snapshot = ledger.snapshot();
    let cancelled: Vec<_> = snapshot
        .approvals
        .iter()
        .map(|a| (a.order_id.as_str(), a.cancelled_at))
        .collect();
    assert_eq!(
        cancelled,
        [("o-1", Some(90)), ("o-1", Some(90)), ("o-2", None)]
    );
    assert_eq!(
        ledger.cancel("o-1", 95, CANCEL_EVERY),
        CancelOutcome::AlreadyCancelled
    );
}

#[test]
fn non_idempotent_cancel_skips_declines_and_refuses_all_declined() {
    let mut ledger = Ledger::default();
    let decline_every = Processing {
        decline: true,
        ..NOT_IDEMPOTENT
    };
    confirm(&mut ledger, request("o-1", "pk-1", 1000), 50, decline_every);
    assert_eq!(
        ledger.cancel("o-1", 55, CANCEL_EVERY),
        CancelOutcome::Declined
    );
    confirm(
        &mut ledger,
        request("o-1", "pk-1", 1000),
        60,
        NOT_IDEMPOTENT,
    );
    assert_eq!(
        ledger.cancel("o-1", 70, CANCEL_EVERY),
        CancelOutcome::Cancelled
    );
    let snapshot = ledger.snapshot();
    assert_eq!(snapshot.approvals[0].cancelled_at, Some(70));
    assert_eq!(snapshot.declines.len(), 1);
}

#[test]
fn without_notify_nothing_is_owed() {
    let mut ledger = Ledger::default();
    confirm(&mut ledger, request("o-1", "pk-1", 1000), 50, IDEMPOTENT);
    ledger.cancel("o-1", 60, CANCEL);
    assert!(ledger.take_callbacks().is_empty());
    assert!(ledger.snapshot().callbacks.is_empty());
}

#[test]
fn new_decisions_and_cancels_owe_callbacks_repeats_do_not() {
    let mut ledger = Ledger::default();
    confirm(&mut ledger, request("o-1", "pk-1", 1000), 50, NOTIFY);
    confirm(&mut ledger, request("o-1", "pk-1", 1000), 55, NOTIFY);
    let decline = Processing {
        notify: true,
        ..DECLINE
    };
    confirm(&mut ledger, request("o-2", "pk-2", 700), 60, decline);
    let notify_cancel = Cancelling {
        notify: true,
        ..CANCEL
    };
    ledger.cancel("o-1", 70, notify_cancel);
    ledger.cancel("o-1", 75, notify_cancel);

    let bodies: Vec<_> = ledger
        .take_callbacks()
        .into_iter()
        .map(|callback| callback.body)
        .collect();
    let body = |order_id: &str, status, amount, approved_at| CallbackBody {
        order_id: order_id.to_owned(),
        status,
        amount,
        approved_at,
    };
    assert_eq!(
        bodies,
        [
            body("o-1", CallbackStatus::Approved, 1000, Some(50)),
            body("o-2", CallbackStatus::Declined, 700, None),
            body("o-1", CallbackStatus::Cancelled, 1000, Some(50)),
        ]
    );
    assert!(ledger.take_callbacks().is_empty(), "the outbox is emptied");
}

#[test]
fn delivery_attempts_are_counted_and_the_first_success_is_kept() {
    let mut ledger = Ledger::default();
    confirm(&mut ledger, request("o-1", "pk-1", 1000), 50, NOTIFY);
    let [callback] = ledger.take_callbacks().try_into().expect("one callback");
    assert_eq!(
        ledger.snapshot().callbacks,
        [CallbackRecord {
            order_id: "o-1".into(),
            status: CallbackStatus::Approved,
            delivered_at: None,
            attempts: 0,
        }]
    );

    ledger.callback_attempted(callback.id, 60, false);
    ledger.callback_attempted(callback.id, 600, true);
    ledger.callback_attempted(callback.id, 700, true);
    let record = &ledger.snapshot().callbacks[0];
    assert_eq!(record.attempts, 3);
    assert_eq!(record.delivered_at, Some(600));
}
