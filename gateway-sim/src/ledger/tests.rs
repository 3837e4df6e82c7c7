//! The ledger's rules, case by case: decisions, repeats, declines, caps and
//! look-ups here; cancels, Idempotency-Keys and webhooks in `tests/`.

use super::*;

mod cancels;
mod keys;
mod webhooks;

const IDEMPOTENT: Processing = Processing {
    idempotent: true,
    decline: false,
    notify: false,
    amount_delta: 0,
};
const NOT_IDEMPOTENT: Processing = Processing {
    idempotent: false,
    ..IDEMPOTENT
};
const DECLINE: Processing = Processing {
    decline: true,
    ..IDEMPOTENT
};

fn request(order_id: &str, payment_key: &str, amount: u64) -> ConfirmRequest {
    ConfirmRequest {
        payment_key: payment_key.to_owned(),
        order_id: order_id.to_owned(),
        amount,
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

fn status_by_key(ledger: &Ledger, payment_key: &str) -> Option<PaymentStatus> {
    ledger
        .payment_by_key(payment_key)
        .map(|record| record.status)
}

fn status_by_order(ledger: &Ledger, order_id: &str) -> Option<PaymentStatus> {
    ledger
        .payment_by_order(order_id)
        .map(|record| record.status)
}

#[test]
fn first_confirm_is_approved_at_now() {
    let mut ledger = Ledger::default();
    let ConfirmOutcome::Approved(charge, payment) =
        confirm(&mut ledger, request("o-1", "pk-1", 1000), 50, IDEMPOTENT)
    else {
        panic!("not approved");
    };
    assert_eq!(charge, ChargeId(0));
    assert_eq!(payment.status, PaymentStatus::Done);
    assert_eq!(
        (payment.order_id.as_str(), payment.payment_key.as_str()),
        ("o-1", "pk-1")
    );
    assert_eq!(payment.amount, 1000);
    assert_eq!((payment.requested_at, payment.approved_at), (50, Some(50)));
    assert!(payment.transaction_key.is_some() && payment.approve_no.is_some());
    assert_eq!(ledger.payment_by_key("pk-1"), Some(payment.clone()));
    assert_eq!(ledger.payment_by_order("o-1"), Some(payment));
}

#[test]
fn a_decided_payment_confirmed_again_is_already_processed_and_counted() {
    let mut ledger = Ledger::default();
    confirm(&mut ledger, request("o-1", "pk-1", 1000), 50, IDEMPOTENT);
    // Whatever the body says besides the paymentKey.
    for repeat in [request("o-1", "pk-1", 1000), request("o-2", "pk-1", 5)] {
        let outcome = confirm(&mut ledger, repeat, 90, IDEMPOTENT);
        assert_eq!(outcome, ConfirmOutcome::AlreadyProcessed(ChargeId(0)));
    }
    let snapshot = ledger.snapshot();
    assert_eq!(snapshot.request_count, 3);
    assert_eq!(snapshot.approvals.len(), 1);
    assert_eq!(snapshot.approvals[0].request_count, 3);
    assert_eq!(snapshot.approvals[0].approved_at, 50);
    assert_eq!(status_by_order(&ledger, "o-2"), None, "nothing charged");
}

#[test]
fn an_order_paid_under_another_payment_key_is_a_duplicated_order_id() {
    let mut ledger = Ledger::default();
    confirm(&mut ledger, request("o-1", "pk-1", 1000), 50, IDEMPOTENT);
    let outcome = confirm(&mut ledger, request("o-1", "pk-2", 1000), 60, IDEMPOTENT);
    assert_eq!(outcome, ConfirmOutcome::DuplicatedOrderId);
    assert_eq!(status_by_key(&ledger, "pk-2"), None);
    assert_eq!(ledger.snapshot().approvals[0].request_count, 1);
}

#[test]
fn a_declined_order_may_be_paid_under_another_payment_key() {
    let mut ledger = Ledger::default();
    confirm(&mut ledger, request("o-1", "pk-1", 1000), 50, DECLINE);
    let outcome = confirm(&mut ledger, request("o-1", "pk-2", 1000), 60, IDEMPOTENT);
    assert!(
        matches!(outcome, ConfirmOutcome::Approved(..)),
        "{outcome:?}"
    );
    assert_eq!(status_by_key(&ledger, "pk-1"), Some(PaymentStatus::Aborted));
    assert_eq!(status_by_order(&ledger, "o-1"), Some(PaymentStatus::Done));
}

#[test]
fn declined_charge_is_aborted_and_no_approval() {
    let mut ledger = Ledger::default();
    let processing = Processing {
        amount_delta: 7,
        ..DECLINE
    };
    let outcome = confirm(&mut ledger, request("o-1", "pk-1", 1000), 50, processing);
    let ConfirmOutcome::Declined(_, payment) = outcome else {
        panic!("not declined: {outcome:?}");
    };
    assert_eq!(payment.status, PaymentStatus::Aborted);
    assert_eq!((payment.amount, payment.approved_at), (1000, None));
    let snapshot = ledger.snapshot();
    assert!(snapshot.approvals.is_empty());
    assert_eq!(snapshot.declines[0].payment_key, "pk-1");
    assert_eq!(snapshot.declines[0].amount, 1000);
    assert_eq!(snapshot.declines[0].declined_at, 50);
}

#[test]
fn a_declined_payment_confirmed_again_is_already_processed_whatever_the_roll() {
    let mut ledger = Ledger::default();
    confirm(&mut ledger, request("o-1", "pk-1", 1000), 50, DECLINE);
    let outcome = confirm(&mut ledger, request("o-1", "pk-1", 1000), 60, IDEMPOTENT);
    assert_eq!(outcome, ConfirmOutcome::AlreadyProcessed(ChargeId(0)));
    assert_eq!(ledger.snapshot().declines[0].request_count, 2);
}

#[test]
fn approved_amount_delta_is_what_is_approved_and_charged() {
    let mut ledger = Ledger::default();
    for (payment_key, delta, approved) in
        [("pk-1", 500, 1500), ("pk-2", -1, 999), ("pk-3", -5000, 0)]
    {
        let processing = Processing {
            amount_delta: delta,
            ..IDEMPOTENT
        };
        let order_id = format!("o-{payment_key}");
        let outcome = confirm(
            &mut ledger,
            request(&order_id, payment_key, 1000),
            50,
            processing,
        );
        let ConfirmOutcome::Approved(_, payment) = outcome else {
            panic!("not approved");
        };
        assert_eq!(payment.amount, approved, "{delta}");
    }
    let amounts: Vec<_> = ledger
        .snapshot()
        .approvals
        .iter()
        .map(|a| a.amount)
        .collect();
    assert_eq!(amounts, [1500, 999, 0]);
}

#[test]
fn non_idempotent_repeats_are_new_charges_whatever_they_say() {
    let mut ledger = Ledger::default();
    confirm(
        &mut ledger,
        request("o-1", "pk-1", 1000),
        50,
        NOT_IDEMPOTENT,
    );
    let again = confirm(
        &mut ledger,
        request("o-1", "pk-1", 1000),
        60,
        NOT_IDEMPOTENT,
    );
    assert!(
        matches!(again, ConfirmOutcome::Approved(ChargeId(1), _)),
        "{again:?}"
    );
    let other_key = confirm(&mut ledger, request("o-1", "pk-2", 999), 70, NOT_IDEMPOTENT);
    assert!(matches!(
        other_key,
        ConfirmOutcome::Approved(ChargeId(2), _)
    ));

    let snapshot = ledger.snapshot();
    let charged: Vec<_> = snapshot
        .approvals
        .iter()
        .map(|a| {
            (
                a.payment_key.as_str(),
                a.amount,
                a.approved_at,
                a.request_count,
            )
        })
        .collect();
    assert_eq!(
        charged,
        [
            ("pk-1", 1000, 50, 1),
            ("pk-1", 1000, 60, 1),
            ("pk-2", 999, 70, 1)
        ]
    );
    // A look-up answers the latest charge.
    assert_eq!(
        ledger.payment_by_key("pk-1").map(|p| p.approved_at),
        Some(Some(60))
    );
    assert_eq!(ledger.payment_by_order("o-1").map(|p| p.amount), Some(999));
}

#[test]
fn unknown_payments_are_not_found() {
    let mut ledger = Ledger::default();
    confirm(&mut ledger, request("o-1", "pk-1", 1000), 50, IDEMPOTENT);
    assert_eq!(ledger.payment_by_key("pk-2"), None);
    assert_eq!(ledger.payment_by_order("o-2"), None);
    assert_eq!(ledger.payment_by_key("o-1"), None, "keys and orders apart");
}

#[test]
fn snapshot_lists_requests_and_calls_in_arrival_order() {
    let mut ledger = Ledger::default();
    for (order_id, at) in [("o-2", 10), ("o-1", 20)] {
        ledger.record_call(Call {
            method: "POST".into(),
            path: "/v1/payments/confirm".into(),
            idempotency_key: Some(format!("confirm:{order_id}")),
            authorized: true,
            test_code: None,
            received_at: at,
        });
        confirm(
            &mut ledger,
            request(order_id, order_id, 100),
            at,
            IDEMPOTENT,
        );
    }
    let snapshot = ledger.snapshot();
    let received: Vec<_> = snapshot
        .requests
        .iter()
        .map(|r| (r.order_id.as_str(), r.received_at))
        .collect();
    assert_eq!(received, [("o-2", 10), ("o-1", 20)]);
    let keys: Vec<_> = snapshot
        .calls
        .iter()
        .map(|c| c.idempotency_key.as_deref())
        .collect();
    assert_eq!(keys, [Some("confirm:o-2"), Some("confirm:o-1")]);
}

#[test]
fn received_but_unprocessed_confirm_is_counted_and_undecided() {
    let mut ledger = Ledger::default();
    let received = ledger.receive(request("o-1", "pk-1", 1000), 50, None);
    drop(received.expect("no cap"));

    assert_eq!(ledger.payment_by_key("pk-1"), None);
    assert_eq!(ledger.payment_by_order("o-1"), None);
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
    let mut receive = |now| ledger.receive(request("o", "pk", 1), now, cap(2)).is_ok();
    assert!(receive(0));
    assert!(receive(400));
    // The confirm at 0 leaves the window at 1000; the one at 400 is still in it.
    assert!(receive(1000));
    assert!(!receive(1100));
    assert!(receive(1400));
}

#[test]
fn refused_confirms_do_not_count_toward_the_cap() {
    let mut ledger = Ledger::default();
    let mut receive = |now| ledger.receive(request("o", "pk", 1), now, cap(1)).is_ok();
    assert!(receive(0));
    for now in [100, 500, 900] {
        assert!(!receive(now));
    }
    assert!(receive(1000));
}

#[test]
fn without_a_cap_every_confirm_is_let_through_and_a_later_cap_sees_them() {
    let mut ledger = Ledger::default();
    for now in 0..5 {
        assert!(ledger.receive(request("o", "pk", 1), now, None).is_ok());
    }
    assert!(ledger.receive(request("o", "pk", 1), 10, cap(5)).is_err());
}

#[test]
fn deferred_confirm_is_in_progress_until_processed() {
    let mut ledger = Ledger::default();
    let received = ledger
        .receive(request("o-1", "pk-1", 1000), 50, None)
        .expect("no cap");
    let received = ledger.defer(received);
    let in_progress = ledger.payment_by_key("pk-1").expect("in progress");
    assert_eq!(in_progress.status, PaymentStatus::InProgress);
    assert_eq!((in_progress.amount, in_progress.requested_at), (1000, 50));
    assert_eq!(in_progress.approved_at, None);
    assert_eq!(in_progress.transaction_key, None);
    assert_eq!(ledger.payment_by_order("o-1"), Some(in_progress));

    ledger.process(received, 80, IDEMPOTENT);
    let done = ledger.payment_by_key("pk-1").expect("decided");
    assert_eq!(done.status, PaymentStatus::Done);
    assert_eq!((done.requested_at, done.approved_at), (50, Some(80)));
}

#[test]
fn received_but_not_deferred_confirm_is_not_in_progress() {
    let mut ledger = Ledger::default();
    let received = ledger.receive(request("o-1", "pk-1", 1000), 50, None);
    drop(received.expect("no cap"));
    assert_eq!(status_by_key(&ledger, "pk-1"), None);
}

#[test]
fn deferred_confirms_of_one_payment_charge_it_once_whichever_is_decided_first() {
    let mut ledger = Ledger::default();
    let defer = |ledger: &mut Ledger, now| {
        let received = ledger
            .receive(request("o-1", "pk-1", 1000), now, None)
            .expect("no cap");
        ledger.defer(received)
    };
    let first = defer(&mut ledger, 10);
    let second = defer(&mut ledger, 20);
    // The later one is decided first; the earlier one finds it decided.
    assert!(matches!(
        ledger.process(second, 30, IDEMPOTENT),
        ConfirmOutcome::Approved(..)
    ));
    assert_eq!(status_by_key(&ledger, "pk-1"), Some(PaymentStatus::Done));
    assert_eq!(
        ledger.process(first, 40, IDEMPOTENT),
        ConfirmOutcome::AlreadyProcessed(ChargeId(0))
    );
    assert_eq!(ledger.snapshot().approvals.len(), 1);
}
