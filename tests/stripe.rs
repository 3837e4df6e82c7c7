//! `GATEWAY_PROVIDER=stripe` against localstripe, through the origin as a real process:
//! a `pm_card_visa` confirm is APPROVED and exactly one PaymentIntent carries its order
//! id — succeeded, `krw`, for the amount; `pm_card_chargeCustomerFail` is FAILED as a
//! decline, never UNKNOWN; a webhook with a wrong signature, or one older than 300 s, is
//! refused and changes nothing, and a well-signed one that lies is looked up and changes
//! nothing either. The approval's `pi_…` id is stored from the confirm's answer. (The
//! adapter's own
//! tests against localstripe, and what localstripe cannot show: `origin/tests/stripe.rs`.)

use crate::support;

use hmac::{Hmac, Mac};
use reqwest::StatusCode;
use serde_json::{json, Value};
use sha2::Sha256;
use sqlx::sqlite::SqliteConnectOptions;
use sqlx::ConnectOptions as _;
use support::System;

const WEBHOOK_SECRET: &str = "whsec_e2e_0123456789abcdef";

async fn confirm(system: &System, order_id: &str, card: &str) -> (StatusCode, Value) {
    let body = json!({ "orderId": order_id, "paymentKey": card, "amount": 5000 }).to_string();
    let response = system
        .confirm_at_origin("user-1", Some(&format!("key-{order_id}")), &body)
        .await;
    let status = response.status();
    (status, response.json().await.expect("a JSON body"))
}

/// The PG's id the origin keeps for the payment of `order_id` (`payments.pg_reference`).
async fn stored_reference(system: &System, order_id: &str) -> Option<String> {
    let path = system
        .database_url()
        .strip_prefix("sqlite://")
        .expect("a SQLite origin");
    let mut db = SqliteConnectOptions::new()
        .filename(path)
        .read_only(true)
        .connect()
        .await
        .expect("the origin's database");
    sqlx::query_scalar("SELECT pg_reference FROM payments WHERE order_id = ?")
        .bind(order_id)
        .fetch_one(&mut db)
        .await
        .expect("the payment's row")
}

fn signature(t: i64, body: &str, secret: &str) -> String {
    let mut mac = Hmac::<Sha256>::new_from_slice(secret.as_bytes()).expect("any key length");
    mac.update(format!("{t}.{body}").as_bytes());
    format!("t={t},v1={}", hex::encode(mac.finalize().into_bytes()))
}

#[tokio::test]
async fn stripe_approves_declines_and_its_webhooks_are_verified() {
    let localstripe = harness::localstripe::Localstripe::start().await;
    let system = System::backend(&[
        ("GATEWAY_PROVIDER", "stripe"),
        ("GATEWAY_URL", localstripe.url()),
        ("GATEWAY_SECRET_KEY", "sk_test_e2e_0123456789"),
        ("GATEWAY_WEBHOOK_SECRET", WEBHOOK_SECRET),
        ("RECOVERY_INTERVAL_MS", "3600000"),
    ])
    .await;

    let (status, approved) = confirm(&system, "order-visa", "pm_card_visa").await;
    assert_eq!(
        (status, approved["status"].as_str()),
        (StatusCode::CREATED, Some("APPROVED")),
        "{approved}\n{}",
        localstripe.log()
    );
    let listed: Value = system
        .http
        .get(format!(
            "{}/v1/payment_intents?limit=100",
            localstripe.url()
        ))
        .bearer_auth("sk_test_e2e_0123456789")
        .send()
        .await
        .expect("localstripe answers")
        .json()
        .await
        .expect("a list");
    let carrying: Vec<&Value> = listed["data"]
        .as_array()
        .expect("data")
        .iter()
        .filter(|intent| intent["metadata"]["order_id"] == "order-visa")
        .collect();
    assert_eq!(carrying.len(), 1, "{listed}");
    assert_eq!(
        (
            carrying[0]["status"].as_str(),
            carrying[0]["currency"].as_str(),
            carrying[0]["amount"].as_i64()
        ),
        (Some("succeeded"), Some("krw"), Some(5000))
    );
    // Kept from the confirm's answer (recovery runs hourly here): the lying webhook's
    // look-up below asks Stripe by this id.
    assert_eq!(
        stored_reference(&system, "order-visa").await.as_deref(),
        carrying[0]["id"].as_str(),
        "the pi_… id stored"
    );

    let (status, declined) = confirm(&system, "order-declined", "pm_card_chargeCustomerFail").await;
    assert_eq!(
        (
            status,
            declined["status"].as_str(),
            declined["failureReason"].as_str()
        ),
        (StatusCode::CREATED, Some("FAILED"), Some("DECLINED"))
    );

    // Webhooks claiming the declined order succeeded: forged, then stale.
    let body = json!({
        "id": "evt_forged_1",
        "type": "payment_intent.succeeded",
        "data": {"object": {"id": "pi_forged", "object": "payment_intent", "status": "succeeded",
                             "amount": 5000, "currency": "krw",
                             "metadata": {"order_id": "order-declined"}}},
    })
    .to_string();
    let now = harness::signed::now_ms() / 1000;
    for (header, what) in [
        (
            signature(now, &body, "whsec_not_the_endpoint_s"),
            "a wrong secret",
        ),
        (signature(now - 301, &body, WEBHOOK_SECRET), "301 s old"),
        ("t=1,v0=abc".to_owned(), "no v1"),
    ] {
        let answer = system
            .http
            .post(format!("{}/gateway/webhooks/stripe", system.origin))
            .header("stripe-signature", header)
            .header("content-type", "application/json")
            .body(body.clone())
            .send()
            .await
            .expect("the origin answers");
        assert_eq!(answer.status(), StatusCode::BAD_REQUEST, "{what}");
    }
    let toss = system
        .http
        .post(format!("{}/gateway/webhooks/toss", system.origin))
        .body(body.clone())
        .send()
        .await
        .expect("the origin answers");
    assert_eq!(toss.status(), StatusCode::NOT_FOUND, "not this origin's PG");

    // Well signed, and lying: it says the approved order's payment failed. The look-up by
    // the stored pi_… id finds it succeeded, and that is what counts.
    let lie = json!({
        "id": "evt_signed_1",
        "type": "payment_intent.payment_failed",
        "data": {"object": {"id": "pi_other", "object": "payment_intent",
                             "status": "requires_payment_method", "amount": 5000,
                             "currency": "krw", "metadata": {"order_id": "order-visa"}}},
    })
    .to_string();
    let signed = system
        .http
        .post(format!("{}/gateway/webhooks/stripe", system.origin))
        .header("stripe-signature", signature(now, &lie, WEBHOOK_SECRET))
        .header("content-type", "application/json")
        .body(lie)
        .send()
        .await
        .expect("the origin answers");
    assert_eq!(signed.status(), StatusCode::OK, "a verified hint is taken");
    let metrics = harness::eventually::eventually(
        "the verified webhook's payment looked up",
        std::time::Duration::from_secs(10),
        std::time::Duration::from_millis(50),
        || async {
            let metrics = system.origin_metrics().await;
            metrics
                .contains(r#"origin_gateway_webhooks_total{outcome="looked_up"} 1"#)
                .then_some(metrics.clone())
                .ok_or(metrics)
        },
    )
    .await;
    assert!(
        metrics.contains(r#"origin_gateway_webhooks_total{outcome="refused"} 3"#),
        "{metrics}"
    );
    let payments = system.payments_at(&system.origin).await;
    assert_eq!(
        (
            payments["order-declined"]["status"].as_str(),
            payments["order-declined"]["failureReason"].as_str()
        ),
        (Some("FAILED"), Some("DECLINED")),
        "refused webhooks changed nothing"
    );
    assert_eq!(
        payments["order-visa"]["status"], "APPROVED",
        "the look-up, not the webhook, decides"
    );
}
