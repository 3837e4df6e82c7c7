//! The Stripe adapter against a real localstripe (`harness::localstripe`, one per test):
//! confirm, look-up, refund and webhooks over the wire, as the port's callers use them.
//!
//! What localstripe cannot show, so these tests do not claim it (the pure tests in
//! `gateway::stripe` hold Stripe's documented answers instead):
//! - Idempotency: it ignores `Idempotency-Key`, so a repeated POST makes a new object; a
//!   replayed answer, `idempotency_error` and 409 `idempotency_key_in_use` never happen.
//! - Search: there is no `/v1/payment_intents/search` (it answers 404), so a look-up
//!   without a stored `pi_…` id is only ever unavailable here.
//! - Declines are typed `invalid_request_error` (Stripe's are `card_error`), with no
//!   `decline_code` and no `error.payment_intent`: the decline's id is not in its answer.
//! - Refunds: no over-refund check, always `succeeded` (never `pending`), and no
//!   `charge_already_refunded`.
//! - Webhooks: each is sent once, about a second after its event, never retried; only a
//!   few event types (`payment_intent.succeeded` and `.payment_failed` among them; no
//!   `charge.refunded`).
//! - Stripe's 429 and 5xx answers, and the `Stripe-Version` pin (it reads no such header).

use std::sync::Arc;
use std::time::Duration;

use axum::body::Bytes;
use axum::http::{HeaderMap, HeaderValue, StatusCode};
use harness::localstripe::Localstripe;
use hmac::{Hmac, Mac};
use origin::clock::now_ms;
use origin::gateway::{
    self, CancelAnswer, Gateway, GatewayAnswer, GatewayConfig, GatewayStatus, Hint, Order,
    WebhookRefusal,
};
use serde_json::Value;
use sha2::Sha256;

pub(crate) const SECRET_KEY: &str = "sk_test_origin";
const WEBHOOK_SECRET: &str = "whsec_origin_test";

/// The Stripe adapter, speaking to `url`.
pub(crate) fn adapter(url: &str) -> Arc<dyn Gateway> {
    let config = GatewayConfig::from_lookup(|name| match name {
        "GATEWAY_PROVIDER" => Some("stripe".into()),
        "GATEWAY_URL" => Some(url.to_owned()),
        "GATEWAY_SECRET_KEY" => Some(SECRET_KEY.into()),
        "GATEWAY_WEBHOOK_SECRET" => Some(WEBHOOK_SECRET.into()),
        _ => None,
    })
    .expect("a Stripe configuration");
    gateway::open(&config).expect("the Stripe adapter")
}

fn order<'a>(order_id: &'a str, card: &'a str, reference: Option<&'a str>) -> Order<'a> {
    Order {
        order_id,
        payment_key: card,
        amount: 15_000,
        confirm_key: order_id,
        reference,
    }
}

/// Every PaymentIntent localstripe holds (its first 100).
pub(crate) async fn all_intents(localstripe: &Localstripe) -> Vec<Value> {
    let list: Value = reqwest::Client::new()
        .get(format!(
            "{}/v1/payment_intents?limit=100",
            localstripe.url()
        ))
        .bearer_auth(SECRET_KEY)
        .send()
        .await
        .and_then(reqwest::Response::error_for_status)
        .expect("localstripe lists its PaymentIntents")
        .json()
        .await
        .expect("a list");
    list["data"].as_array().cloned().unwrap_or_default()
}

/// Every PaymentIntent localstripe holds whose `metadata.order_id` is `order_id`.
async fn intents_for(localstripe: &Localstripe, order_id: &str) -> Vec<Value> {
    let all = all_intents(localstripe).await;
    all.into_iter()
        .filter(|intent| intent["metadata"]["order_id"] == order_id)
        .collect()
}

#[tokio::test]
async fn a_visa_card_is_approved_and_stripe_holds_one_succeeded_payment_intent_for_it() {
    let localstripe = Localstripe::start().await;
    let stripe = adapter(localstripe.url());
    let confirmed = stripe
        .confirm(&order("order-1", "pm_card_visa", None))
        .await;
    let GatewayAnswer::Approved(approval) = &confirmed.answer else {
        panic!("not approved: {confirmed:?}\n{}", localstripe.log());
    };
    assert_eq!(
        (
            approval.order_id.as_str(),
            approval.amount,
            approval.currency.as_str()
        ),
        ("order-1", 15_000, "KRW")
    );
    assert!(approval.approved_at.is_some(), "{approval:?}");
    let intents = intents_for(&localstripe, "order-1").await;
    let [intent] = intents.as_slice() else {
        panic!("not one PaymentIntent for order-1: {intents:?}");
    };
    assert_eq!(confirmed.reference.as_deref(), intent["id"].as_str());
    assert_eq!(
        (&intent["status"], &intent["currency"], &intent["amount"]),
        (&"succeeded".into(), &"krw".into(), &15_000.into())
    );
}

#[tokio::test]
async fn a_declining_card_is_declined_never_unknown_and_its_look_up_says_declined() {
    let localstripe = Localstripe::start().await;
    let stripe = adapter(localstripe.url());
    let confirmed = stripe
        .confirm(&order("order-2", "pm_card_chargeCustomerFail", None))
        .await;
    assert_eq!(
        confirmed.answer,
        GatewayAnswer::Declined {
            code: "card_declined".into()
        }
    );
    // localstripe's decline names no PaymentIntent; Stripe's does (`error.payment_intent`).
    let intents = intents_for(&localstripe, "order-2").await;
    let [intent] = intents.as_slice() else {
        panic!("not one PaymentIntent for order-2: {intents:?}");
    };
    let reference = intent["id"].as_str();
    let status = stripe
        .look_up(&order("order-2", "pm_card_chargeCustomerFail", reference))
        .await;
    assert_eq!(status, GatewayStatus::Declined);
}

#[tokio::test]
async fn an_approval_looked_up_by_its_reference_is_approved_and_once_refunded_cancelled() {
    let localstripe = Localstripe::start().await;
    let stripe = adapter(localstripe.url());
    let confirmed = stripe
        .confirm(&order("order-3", "pm_card_visa", None))
        .await;
    let GatewayAnswer::Approved(approval) = confirmed.answer else {
        panic!("not approved: {:?}", confirmed.answer);
    };
    let stored = order("order-3", "pm_card_visa", confirmed.reference.as_deref());
    assert_eq!(
        stripe.look_up(&stored).await,
        GatewayStatus::Approved(approval)
    );
    assert_eq!(
        stripe.cancel(&stored, "a test refund").await,
        CancelAnswer::Cancelled
    );
    assert_eq!(stripe.look_up(&stored).await, GatewayStatus::Cancelled);
}

#[tokio::test]
async fn without_a_stored_reference_nothing_is_decided() {
    let localstripe = Localstripe::start().await;
    let stripe = adapter(localstripe.url());
    let confirmed = stripe
        .confirm(&order("order-4", "pm_card_visa", None))
        .await;
    assert!(
        matches!(confirmed.answer, GatewayAnswer::Approved(_)),
        "{confirmed:?}"
    );
    // Search, which localstripe lacks, is what a look-up without an id asks.
    let unstored = order("order-4", "pm_card_visa", None);
    let status = stripe.look_up(&unstored).await;
    assert!(
        matches!(&status, GatewayStatus::Unavailable { cause } if cause.starts_with("search answered 404")),
        "{status:?}"
    );
    assert_eq!(
        stripe.cancel(&unstored, "a test refund").await,
        CancelAnswer::Unavailable {
            cause: "no PaymentIntent id stored".into()
        }
    );
}

/// A `Stripe-Signature` for `body`, signed with `secret` at `t` (unix seconds).
fn signed(secret: &str, t: i64, body: &[u8]) -> HeaderMap {
    let mut mac = Hmac::<Sha256>::new_from_slice(secret.as_bytes()).expect("any key length");
    mac.update(format!("{t}.").as_bytes());
    mac.update(body);
    let signature = hex::encode(mac.finalize().into_bytes());
    let mut headers = HeaderMap::new();
    let value = HeaderValue::from_str(&format!("t={t},v1={signature}")).expect("ASCII");
    headers.insert("stripe-signature", value);
    headers
}

#[test]
fn a_webhook_signed_with_the_secret_is_taken_and_a_forged_or_old_one_refused() {
    // A webhook is checked without a call: no server is needed.
    let stripe = adapter("http://127.0.0.1:9");
    let body = br#"{"id":"evt_1","type":"payment_intent.succeeded","data":{"object":{"id":"pi_1","metadata":{"order_id":"order-5"}}}}"#;
    let now = now_ms();
    let hint = Hint {
        order_id: "order-5".into(),
        event_id: Some("evt_1".into()),
    };
    let fresh = signed(WEBHOOK_SECRET, now / 1000, body);
    assert_eq!(stripe.webhook(&fresh, body, now), Ok(Some(hint)));
    let forged = signed("whsec_someone_else", now / 1000, body);
    assert_eq!(
        stripe.webhook(&forged, body, now),
        Err(WebhookRefusal::Signature("no v1 signature matches"))
    );
    let old = signed(WEBHOOK_SECRET, now / 1000 - 301, body);
    assert_eq!(
        stripe.webhook(&old, body, now),
        Err(WebhookRefusal::Signature("signed more than 300 s ago"))
    );
}

#[tokio::test]
async fn localstripe_s_own_webhook_verifies_and_names_the_order() {
    let localstripe = Localstripe::start().await;
    let stripe = adapter(localstripe.url());
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
        .await
        .expect("a loopback port");
    let hook = format!("http://{}/webhook", listener.local_addr().expect("bound"));
    let (deliveries, mut delivered) = tokio::sync::mpsc::unbounded_channel();
    let app = axum::Router::new().route(
        "/webhook",
        axum::routing::post(move |headers: HeaderMap, body: Bytes| {
            let _ = deliveries.send((headers, body));
            async { StatusCode::OK }
        }),
    );
    tokio::spawn(async move { axum::serve(listener, app).await });
    reqwest::Client::new()
        .post(format!("{}/_config/webhooks/origin", localstripe.url()))
        .bearer_auth(SECRET_KEY)
        .form(&[("url", hook.as_str()), ("secret", WEBHOOK_SECRET)])
        .send()
        .await
        .and_then(reqwest::Response::error_for_status)
        .expect("localstripe takes the webhook endpoint");

    let confirmed = stripe
        .confirm(&order("order-6", "pm_card_visa", None))
        .await;
    assert!(
        matches!(confirmed.answer, GatewayAnswer::Approved(_)),
        "{confirmed:?}"
    );
    // Sent about a second after its event, signed at the event's time; other events
    // (the balance's) verify too, and name no payment.
    let hint = tokio::time::timeout(Duration::from_secs(20), async {
        loop {
            let (headers, body) = delivered.recv().await.expect("the listener runs");
            match stripe.webhook(&headers, &body, now_ms()) {
                Ok(Some(hint)) => return hint,
                Ok(None) => continue,
                Err(refusal) => panic!("{refusal}: {}", String::from_utf8_lossy(&body)),
            }
        }
    })
    .await
    .unwrap_or_else(|_| panic!("no webhook named order-6:\n{}", localstripe.log()));
    assert_eq!(hint.order_id, "order-6");
    assert!(
        hint.event_id
            .as_deref()
            .is_some_and(|id| id.starts_with("evt_")),
        "{hint:?}"
    );
}
