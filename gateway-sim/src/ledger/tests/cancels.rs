//! Cancels: in full, refused, repeated, and every charge when not idempotent.

use super::*;

const CANCEL: Cancelling = Cancelling {
    idempotent: true,
    notify: false,
};
const CANCEL_EVERY: Cancelling = Cancelling {
    idempotent: false,
    notify: false,
};

fn cancel_request(payment_key: &str, amount: Option<u64>) -> CancelRequest {
    CancelRequest {
        payment_key: payment_key.to_owned(),
        reason: "changed my mind".to_owned(),
        amount,
    }
}

fn cancel(
    ledger: &mut Ledger,
    payment_key: &str,
    now_ms: u64,
    cancelling: Cancelling,
) -> CancelOutcome {
    ledger.cancel(&cancel_request(payment_key, None), now_ms, cancelling)
}

#[test]
fn cancel_takes_the_whole_payment_back_and_keeps_the_approval() {
    let mut ledger = Ledger::default();
    confirm(&mut ledger, request("o-1", "pk-1", 1000), 50, IDEMPOTENT);
    let CancelOutcome::Cancelled(payment) = cancel(&mut ledger, "pk-1", 90, CANCEL) else {
        panic!("not cancelled");
    };
    assert_eq!(payment.status, PaymentStatus::Canceled);
    assert_eq!((payment.amount, payment.approved_at), (1000, Some(50)));
    let record = payment.cancel.clone().expect("its cancel");
    assert_eq!(
        (record.reason.as_str(), record.canceled_at, record.amount),
        ("changed my mind", 90, 1000)
    );
    assert_ne!(Some(record.transaction_key), payment.transaction_key);
    assert_eq!(ledger.payment_by_order("o-1"), Some(payment));
    let snapshot = ledger.snapshot();
    assert_eq!(snapshot.approvals.len(), 1);
    assert_eq!(snapshot.approvals[0].cancelled_at, Some(90));
}

#[test]
fn a_cancel_amount_must_be_the_whole_balance() {
    let mut ledger = Ledger::default();
    confirm(&mut ledger, request("o-1", "pk-1", 1000), 50, IDEMPOTENT);
    for (amount, refused) in [
        (999, CancelOutcome::Partial),
        (1001, CancelOutcome::AmountTooLarge),
    ] {
        let outcome = ledger.cancel(&cancel_request("pk-1", Some(amount)), 60, CANCEL);
        assert_eq!(outcome, refused);
        assert_eq!(status_by_key(&ledger, "pk-1"), Some(PaymentStatus::Done));
    }
    let outcome = ledger.cancel(&cancel_request("pk-1", Some(1000)), 70, CANCEL);
    assert!(
        matches!(outcome, CancelOutcome::Cancelled(_)),
        "{outcome:?}"
    );
}

#[test]
fn second_cancel_is_already_cancelled_and_changes_nothing() {
    let mut ledger = Ledger::default();
    confirm(&mut ledger, request("o-1", "pk-1", 1000), 50, IDEMPOTENT);
    cancel(&mut ledger, "pk-1", 60, CANCEL);
    assert_eq!(
        cancel(&mut ledger, "pk-1", 70, CANCEL),
        CancelOutcome::AlreadyCancelled
    );
    assert_eq!(ledger.snapshot().approvals[0].cancelled_at, Some(60));
}

#[test]
fn unknown_declined_and_in_progress_payments_are_not_cancelled() {
    let mut ledger = Ledger::default();
    assert_eq!(
        cancel(&mut ledger, "pk-none", 10, CANCEL),
        CancelOutcome::Unknown
    );
    confirm(&mut ledger, request("o-1", "pk-1", 1000), 50, DECLINE);
    assert_eq!(
        cancel(&mut ledger, "pk-1", 60, CANCEL),
        CancelOutcome::Declined
    );
    let received = ledger
        .receive(request("o-2", "pk-2", 1000), 70, None)
        .expect("no cap");
    let received = ledger.defer(received);
    assert_eq!(
        cancel(&mut ledger, "pk-2", 80, CANCEL),
        CancelOutcome::InProgress
    );
    ledger.process(received, 90, IDEMPOTENT);
    assert!(matches!(
        cancel(&mut ledger, "pk-2", 100, CANCEL),
        CancelOutcome::Cancelled(_)
    ));
}

#[test]
fn a_cancelled_payment_confirmed_again_is_already_processed() {
    let mut ledger = Ledger::default();
    confirm(&mut ledger, request("o-1", "pk-1", 1000), 50, IDEMPOTENT);
    cancel(&mut ledger, "pk-1", 60, CANCEL);
    let outcome = confirm(&mut ledger, request("o-1", "pk-1", 1000), 70, IDEMPOTENT);
    assert_eq!(outcome, ConfirmOutcome::AlreadyProcessed(ChargeId(0)));
    let again = confirm(&mut ledger, request("o-1", "pk-9", 1000), 80, IDEMPOTENT);
    assert_eq!(
        again,
        ConfirmOutcome::DuplicatedOrderId,
        "a cancelled order stays taken"
    );
}

#[test]
fn idempotent_cancel_takes_back_the_latest_charge_only() {
    let mut ledger = Ledger::default();
    confirm(
        &mut ledger,
        request("o-1", "pk-1", 1000),
        10,
        NOT_IDEMPOTENT,
    );
    confirm(
        &mut ledger,
        request("o-1", "pk-1", 1000),
        20,
        NOT_IDEMPOTENT,
    );
    cancel(&mut ledger, "pk-1", 30, CANCEL);
    let cancelled: Vec<_> = ledger
        .snapshot()
        .approvals
        .iter()
        .map(|a| a.cancelled_at)
        .collect();
    assert_eq!(cancelled, [None, Some(30)]);
}

#[test]
fn non_idempotent_cancel_takes_back_every_charge_of_the_order() {
    let mut ledger = Ledger::default();
    confirm(
        &mut ledger,
        request("o-1", "pk-1", 1000),
        10,
        NOT_IDEMPOTENT,
    );
    confirm(
        &mut ledger,
        request("o-1", "pk-1", 1000),
        20,
        NOT_IDEMPOTENT,
    );
    confirm(
        &mut ledger,
        request("o-1", "pk-2", 1000),
        25,
        NOT_IDEMPOTENT,
    );
    confirm(
        &mut ledger,
        request("o-2", "pk-3", 1000),
        26,
        NOT_IDEMPOTENT,
    );
    let outcome = cancel(&mut ledger, "pk-1", 30, CANCEL_EVERY);
    assert!(
        matches!(outcome, CancelOutcome::Cancelled(_)),
        "{outcome:?}"
    );
    let cancelled: Vec<_> = ledger
        .snapshot()
        .approvals
        .iter()
        .map(|a| a.cancelled_at)
        .collect();
    assert_eq!(cancelled, [Some(30), Some(30), Some(30), None]);
    assert_eq!(
        cancel(&mut ledger, "pk-2", 40, CANCEL_EVERY),
        CancelOutcome::AlreadyCancelled
    );
}

#[test]
fn non_idempotent_cancel_skips_declines_and_refuses_all_declined() {
    let mut ledger = Ledger::default();
    let decline_anew = Processing {
        decline: true,
        ..NOT_IDEMPOTENT
    };
    confirm(&mut ledger, request("o-1", "pk-1", 1000), 10, decline_anew);
    assert_eq!(
        cancel(&mut ledger, "pk-1", 20, CANCEL_EVERY),
        CancelOutcome::Declined
    );
    confirm(
        &mut ledger,
        request("o-1", "pk-1", 1000),
        30,
        NOT_IDEMPOTENT,
    );
    confirm(&mut ledger, request("o-1", "pk-1", 1000), 40, decline_anew);
    let outcome = cancel(&mut ledger, "pk-1", 50, CANCEL_EVERY);
    let CancelOutcome::Cancelled(payment) = outcome else {
        panic!("not cancelled: {outcome:?}");
    };
    assert_eq!(
        payment.status,
        PaymentStatus::Canceled,
        "the charge cancelled"
    );
    let snapshot = ledger.snapshot();
    assert_eq!(snapshot.approvals[0].cancelled_at, Some(50));
    assert_eq!(snapshot.declines.len(), 2);
}
