//! Stripe's answers, as Stripe documents them, as localstripe sends them, and as they go
//! wrong: the confirm's in `confirm.rs`, the look-up's and the refund's in `look_up.rs`.

mod confirm;
mod look_up;

use serde_json::{json, Value};

use crate::gateway::Approval;

pub(super) fn intent(status: &str, charge: Value) -> Value {
    json!({
        "id": "pi_1",
        "object": "payment_intent",
        "amount": 15_000,
        "currency": "krw",
        "created": 1_707_794_294,
        "status": status,
        "metadata": { "order_id": "order-1" },
        "latest_charge": charge,
        "last_payment_error": if status == "requires_payment_method" {
            json!({ "type": "card_error", "code": "card_declined", "decline_code": "insufficient_funds" })
        } else {
            json!(null)
        },
    })
}

pub(super) fn bytes(value: Value) -> Vec<u8> {
    value.to_string().into_bytes()
}

pub(super) fn error(kind: &str, code: Option<&str>) -> Vec<u8> {
    let mut error = json!({ "type": kind, "message": "…" });
    if let Some(code) = code {
        error["code"] = json!(code);
    }
    bytes(json!({ "error": error }))
}

pub(super) fn approval() -> Approval {
    Approval {
        order_id: "order-1".into(),
        amount: 15_000,
        currency: "KRW".into(),
        approved_at: Some(1_707_794_294_000),
        reference: Some("pi_1".into()),
    }
}
