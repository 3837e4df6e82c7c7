//! A verified webhook's event read for the payment it names — pure. Only the order id
//! is taken from it: a webhook is a hint, and the payment is looked up before anything
//! is decided.

use serde::Deserialize;
use serde_json::Value;

use crate::gateway::{Hint, WebhookRefusal};

/// The events that name a payment to look up. A charge's metadata is its own:
/// `charge.refunded` names an order only when the charge carries `metadata.order_id`
/// (localstripe's carry none; whether Stripe copies a PaymentIntent's metadata to its
/// charges is not confirmed here), and is acknowledged and left otherwise.
const HINTED_EVENTS: &[&str] = &[
    "payment_intent.succeeded",
    "payment_intent.payment_failed",
    "payment_intent.canceled",
    "payment_intent.processing",
    "charge.refunded",
];

/// Which payment a verified event is about: `payment_intent.*` and `charge.refunded`
/// name theirs in `data.object.metadata.order_id`; any other event, or one without it, is
/// acknowledged and left.
pub fn hint(body: &[u8]) -> Result<Option<Hint>, WebhookRefusal> {
    #[derive(Deserialize)]
    struct Event {
        id: Option<String>,
        #[serde(rename = "type")]
        kind: String,
        data: Option<Value>,
    }
    let event: Event =
        serde_json::from_slice(body).map_err(|err| WebhookRefusal::Malformed(err.to_string()))?;
    if !HINTED_EVENTS.contains(&event.kind.as_str()) {
        return Ok(None);
    }
    let data = event
        .data
        .ok_or_else(|| WebhookRefusal::Malformed(format!("{} without data", event.kind)))?;
    let order_id = data
        .pointer("/object/metadata/order_id")
        .and_then(Value::as_str)
        .filter(|order_id| !order_id.is_empty());
    Ok(order_id.map(|order_id| Hint {
        order_id: order_id.to_owned(),
        event_id: event.id,
    }))
}

#[cfg(test)]
mod tests {
    use serde_json::{json, Value};

    use super::*;

    fn webhook(kind: &str, object: Value) -> Vec<u8> {
        let event = json!({ "id": "evt_1", "type": kind, "data": { "object": object } });
        event.to_string().into_bytes()
    }

    #[test]
    fn an_event_names_its_order_only_for_payment_intents_and_refunds() {
        let paid = json!({ "id": "pi_1", "metadata": { "order_id": "order-1" } });
        let named = Hint {
            order_id: "order-1".into(),
            event_id: Some("evt_1".into()),
        };
        for kind in HINTED_EVENTS {
            assert_eq!(
                hint(&webhook(kind, paid.clone())),
                Ok(Some(named.clone())),
                "{kind}"
            );
        }
        for (kind, object) in [
            ("customer.created", paid.clone()),
            (
                "payment_intent.succeeded",
                json!({ "id": "pi_1", "metadata": {} }),
            ),
            (
                "payment_intent.succeeded",
                json!({ "id": "pi_1", "metadata": { "order_id": "" } }),
            ),
            ("charge.refunded", json!({ "id": "ch_1", "metadata": {} })),
        ] {
            assert_eq!(
                hint(&webhook(kind, object.clone())),
                Ok(None),
                "{kind} {object}"
            );
        }
    }

    #[test]
    fn an_event_that_is_not_one_is_malformed() {
        for body in [
            &b"not json"[..],
            br#"{"id":"evt_1","data":{"object":{}}}"#,
            br#"{"id":"evt_1","type":"payment_intent.succeeded"}"#,
        ] {
            assert!(
                matches!(hint(body), Err(WebhookRefusal::Malformed(_))),
                "{}",
                String::from_utf8_lossy(body)
            );
        }
    }
}
