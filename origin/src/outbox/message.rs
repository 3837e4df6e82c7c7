//! An outbox event as the merchant reads it — the body of its webhook, and an item of
//! `GET /admin/payment-events` — in the Standard Webhooks shape: `{type, timestamp,
//! data}`, the same bytes on every attempt.

use serde_json::{json, Value};

use crate::store::OutboxEvent;

/// The message id: the same on every attempt, so a receiver can tell a repeat.
pub fn message_id(event: &OutboxEvent) -> String {
    format!("msg_{}", event.id)
}

/// The event as the merchant reads it; amounts in `currency`'s minor unit.
pub fn message(event: &OutboxEvent, currency: &str) -> Value {
    let data = if event.kind == "reconciliation.finding" {
        json!({
            "orderId": event.order_key,
            "finding": event.finding,
            "internalAmount": event.amount,
            "externalAmount": event.external_amount,
            "currency": currency,
        })
    } else {
        json!({
            "orderId": event.order_key,
            "status": event.status,
            "amount": event.amount,
            "currency": currency,
            "eventId": event.event_id,
            "failureReason": event.failure_reason,
            "flag": event.flag,
        })
    };
    json!({
        "type": event.kind,
        "timestamp": timestamp(event.occurred_at),
        "data": data,
    })
}

/// `ms` as RFC 3339 in UTC, to the millisecond.
fn timestamp(ms: i64) -> String {
    chrono::DateTime::from_timestamp_millis(ms)
        .unwrap_or_default()
        .to_rfc3339_opts(chrono::SecondsFormat::Millis, true)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn event(kind: &str) -> OutboxEvent {
        OutboxEvent {
            id: 7,
            position: Some(3),
            order_key: "order-1".into(),
            kind: kind.into(),
            payment_id: Some(1),
            status: Some("FAILED".into()),
            amount: Some(5000),
            event_id: Some("spring".into()),
            failure_reason: Some("REJECT_CARD_PAYMENT".into()),
            flag: None,
            finding: None,
            external_amount: None,
            occurred_at: 1_764_871_200_123,
            delivery: "PENDING".into(),
            attempts: 0,
            last_status: None,
            last_error: None,
            last_attempt_at: None,
            delivered_at: None,
        }
    }

    #[test]
    fn a_payments_change_reads_as_its_type_time_and_payment() {
        let failed = event("payment.failed");
        assert_eq!(message_id(&failed), "msg_7");
        assert_eq!(
            message(&failed, "KRW"),
            json!({
                "type": "payment.failed",
                "timestamp": "2025-12-04T18:00:00.123Z",
                "data": {
                    "orderId": "order-1", "status": "FAILED", "amount": 5000, "currency": "KRW",
                    "eventId": "spring", "failureReason": "REJECT_CARD_PAYMENT", "flag": null,
                },
            })
        );
    }

    #[test]
    fn a_finding_reads_as_its_category_and_both_amounts() {
        let finding = OutboxEvent {
            finding: Some("AMOUNT_MISMATCH".into()),
            external_amount: Some(4000),
            ..event("reconciliation.finding")
        };
        assert_eq!(
            message(&finding, "KRW")["data"],
            json!({"orderId": "order-1", "finding": "AMOUNT_MISMATCH", "internalAmount": 5000,
                   "externalAmount": 4000, "currency": "KRW"})
        );
    }
}
