//! Webhooks owed: by decisions and cancels made with `notify`, never by
//! refusals, with their delivery attempts.

use super::*;

const NOTIFY: Processing = Processing {
    notify: true,
    ..IDEMPOTENT
};
const CANCEL_NOTIFYING: Cancelling = Cancelling {
    idempotent: true,
    notify: true,
};

fn cancel(ledger: &mut Ledger, payment_key: &str, now_ms: u64) -> CancelOutcome {
    let request = CancelRequest {
        payment_key: payment_key.to_owned(),
        reason: "refund".to_owned(),
        amount: None,
    };
    ledger.cancel(&request, now_ms, CANCEL_NOTIFYING)
}

#[test]
fn without_notify_nothing_is_owed() {
    let mut ledger = Ledger::default();
    confirm(&mut ledger, request("o-1", "pk-1", 1000), 10, IDEMPOTENT);
    let quiet = Cancelling {
        idempotent: true,
        notify: false,
    };
    let request = CancelRequest {
        payment_key: "pk-1".into(),
        reason: "refund".into(),
        amount: None,
    };
    ledger.cancel(&request, 20, quiet);
    assert!(ledger.take_webhooks().is_empty());
    assert!(ledger.snapshot().webhooks.is_empty());
}

#[test]
fn decisions_and_cancels_owe_webhooks_with_the_payment_as_it_stood() {
    let mut ledger = Ledger::default();
    confirm(&mut ledger, request("o-1", "pk-1", 1000), 10, NOTIFY);
    let declining = Processing {
        decline: true,
        ..NOTIFY
    };
    confirm(&mut ledger, request("o-2", "pk-2", 500), 20, declining);
    // Refusals change nothing and tell nothing.
    confirm(&mut ledger, request("o-1", "pk-1", 1000), 30, NOTIFY);
    confirm(&mut ledger, request("o-1", "pk-9", 1000), 30, NOTIFY);
    cancel(&mut ledger, "pk-1", 40);
    cancel(&mut ledger, "pk-1", 50);
    cancel(&mut ledger, "pk-2", 50);

    let owed = ledger.take_webhooks();
    let told: Vec<_> = owed
        .iter()
        .map(|w| {
            (
                w.payment.payment_key.as_str(),
                w.payment.status,
                w.created_at,
            )
        })
        .collect();
    assert_eq!(
        told,
        [
            ("pk-1", PaymentStatus::Done, 10),
            ("pk-2", PaymentStatus::Aborted, 20),
            ("pk-1", PaymentStatus::Canceled, 40),
        ]
    );
    assert_eq!(
        owed[2].payment.cancel.as_ref().map(|c| c.canceled_at),
        Some(40)
    );
    assert!(ledger.take_webhooks().is_empty(), "the outbox is emptied");

    let records = ledger.snapshot().webhooks;
    let ids: Vec<_> = records.iter().map(|r| r.transmission_id.as_str()).collect();
    let owed_ids: Vec<_> = owed.iter().map(|w| w.transmission_id.as_str()).collect();
    assert_eq!(ids, owed_ids);
    assert!(ids[0] != ids[1] && ids[1] != ids[2] && ids[0] != ids[2]);
    assert!(records
        .iter()
        .all(|r| r.attempts == 0 && r.delivered_at.is_none()));
    assert_eq!(records[1].order_id, "o-2");
}

#[test]
fn delivery_attempts_are_counted_and_the_first_success_is_kept() {
    let mut ledger = Ledger::default();
    confirm(&mut ledger, request("o-1", "pk-1", 1000), 10, NOTIFY);
    let [webhook] = ledger.take_webhooks().try_into().expect("one webhook");
    ledger.webhook_attempted(webhook.id, 20, false);
    ledger.webhook_attempted(webhook.id, 30, true);
    ledger.webhook_attempted(webhook.id, 40, true);
    let record = &ledger.snapshot().webhooks[0];
    assert_eq!((record.attempts, record.delivered_at), (3, Some(30)));
}
