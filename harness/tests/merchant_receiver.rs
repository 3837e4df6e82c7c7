//! The merchant receiver the webhook tests deliver to (`harness::merchant`): it accepts
//! what is signed by the Standard Webhooks scheme, refuses and counts the rest, answers
//! as the mode tells after recording, and keeps what it received across a restart. The
//! deliveries here are signed by the scheme in this file, not by the origin's sender.

use std::time::{Duration, SystemTime, UNIX_EPOCH};

use base64::engine::general_purpose::STANDARD;
use base64::Engine as _;
use harness::eventually::eventually;
use harness::merchant::MerchantReceiver;
use hmac::{Hmac, Mac as _};
use reqwest::StatusCode;
use serde_json::{json, Value};
use sha2::Sha256;

/// The example secret of the Standard Webhooks specification.
const SECRET: &str = "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw";
const OTHER_SECRET: &str = "whsec_c2VjcmV0LW9mLWFub3RoZXItbWVyY2hhbnQ=";
const MIB: usize = 1024 * 1024;

/// One delivery as the sender puts it on the wire.
#[derive(Clone)]
struct Delivery {
    id: String,
    timestamp: u64,
    body: Vec<u8>,
    signature: Option<String>,
}

impl Delivery {
    /// `body` as `id`, signed now with [`SECRET`].
    fn signed(id: &str, body: &Value) -> Delivery {
        let body = serde_json::to_vec(body).expect("a JSON value serialises");
        let timestamp = now();
        let signature = Some(signature(SECRET, id, timestamp, &body));
        Delivery {
            id: id.to_owned(),
            timestamp,
            body,
            signature,
        }
    }

    async fn post(
        &self,
        client: &reqwest::Client,
        url: &str,
    ) -> reqwest::Result<reqwest::Response> {
        let mut request = client
            .post(url)
            .header("content-type", "application/json")
            .header("webhook-id", &self.id)
            .header("webhook-timestamp", self.timestamp.to_string())
            .body(self.body.clone());
        if let Some(signature) = &self.signature {
            request = request.header("webhook-signature", signature);
        }
        request.send().await
    }

    async fn status(&self, receiver: &MerchantReceiver) -> StatusCode {
        let response = self.post(&reqwest::Client::new(), &receiver.url()).await;
        response.expect("the receiver answers").status()
    }
}

/// `v1,<base64 HMAC-SHA256 of "{id}.{timestamp}.{body}">`, keyed by the secret's
/// base64-decoded part after `whsec_`.
fn signature(secret: &str, id: &str, timestamp: u64, body: &[u8]) -> String {
    let key = STANDARD
        .decode(secret.trim_start_matches("whsec_"))
        .expect("a base64 secret");
    let mut mac = Hmac::<Sha256>::new_from_slice(&key).expect("HMAC takes any key");
    mac.update(format!("{id}.{timestamp}.").as_bytes());
    mac.update(body);
    format!("v1,{}", STANDARD.encode(mac.finalize().into_bytes()))
}

fn now() -> u64 {
    let since_epoch = SystemTime::now().duration_since(UNIX_EPOCH);
    since_epoch.expect("the clock is past 1970").as_secs()
}

fn payment(amount: u64) -> Value {
    json!({ "type": "payment.approved", "data": { "orderId": "order-1", "amount": amount } })
}

fn ids_and_modes(deliveries: &Value) -> Vec<(String, String)> {
    let list = deliveries.as_array().expect("a list of deliveries");
    let field = |delivery: &Value, name: &str| delivery[name].as_str().unwrap_or("").to_owned();
    list.iter()
        .map(|delivery| (field(delivery, "webhookId"), field(delivery, "mode")))
        .collect()
}

#[tokio::test]
async fn a_signed_delivery_is_accepted_and_listed_as_sent() {
    let receiver = MerchantReceiver::start(SECRET).await;
    let delivery = Delivery::signed("msg_accepted", &payment(15_000));

    assert_eq!(delivery.status(&receiver).await, StatusCode::NO_CONTENT);

    let deliveries = receiver.deliveries().await;
    assert_eq!(deliveries.as_array().map(Vec::len), Some(1), "{deliveries}");
    let listed = &deliveries[0];
    assert_eq!(listed["webhookId"], "msg_accepted");
    assert_eq!(listed["timestamp"], delivery.timestamp.to_string());
    assert_eq!(listed["signatures"], json!(delivery.signature));
    assert_eq!(listed["body"], payment(15_000));
    assert_eq!(listed["mode"], "ok");
    assert!(listed["receivedAtMs"].as_u64() >= Some(delivery.timestamp * 1000));
    assert_eq!(receiver.refused().await, 0);
}

#[tokio::test]
async fn one_right_signature_among_several_is_enough() {
    let receiver = MerchantReceiver::start(SECRET).await;
    let mut delivery = Delivery::signed("msg_rotating", &payment(15_000));
    let wrong = signature(
        OTHER_SECRET,
        &delivery.id,
        delivery.timestamp,
        &delivery.body,
    );
    let right = delivery.signature.take().unwrap_or_default();
    delivery.signature = Some(format!("{wrong} {right}"));

    assert_eq!(delivery.status(&receiver).await, StatusCode::NO_CONTENT);
    let listed = ids_and_modes(&receiver.deliveries().await);
    assert_eq!(listed, [("msg_rotating".to_owned(), "ok".to_owned())]);
}

#[tokio::test]
async fn what_cannot_be_verified_is_refused_counted_and_not_listed() {
    let receiver = MerchantReceiver::start(SECRET).await;
    let good = Delivery::signed("msg_unverifiable", &payment(15_000));
    let mut changed_byte = good.clone();
    let last_digit = changed_byte.body.len() - 3; // `...15000}}`
    changed_byte.body[last_digit] = b'1';
    let mut wrong_secret = good.clone();
    wrong_secret.signature = Some(signature(
        OTHER_SECRET,
        &good.id,
        good.timestamp,
        &good.body,
    ));
    let mut stale = good.clone();
    stale.timestamp = now() - 301;
    stale.signature = Some(signature(SECRET, &good.id, stale.timestamp, &good.body));
    let mut unsigned = good.clone();
    unsigned.signature = None;

    let cases = [
        ("one byte of the body changed", changed_byte),
        ("signed with another secret", wrong_secret),
        ("signed 301 s ago", stale),
        ("no signature", unsigned),
    ];
    for (refused, (case, delivery)) in (1..).zip(cases) {
        assert_eq!(
            delivery.status(&receiver).await,
            StatusCode::BAD_REQUEST,
            "{case}"
        );
        assert_eq!(receiver.refused().await, refused, "{case}");
    }
    assert_eq!(receiver.deliveries().await, json!([]));
}

#[tokio::test]
async fn each_mode_answers_as_told_after_recording_the_delivery() {
    let receiver = MerchantReceiver::start(SECRET).await;
    let client = reqwest::Client::new();
    let url = receiver.url();

    receiver.set_mode("error").await;
    let error = Delivery::signed("msg_error", &payment(1));
    assert_eq!(
        error.status(&receiver).await,
        StatusCode::INTERNAL_SERVER_ERROR
    );

    receiver.set_mode("gone").await;
    let gone = Delivery::signed("msg_gone", &payment(2));
    assert_eq!(gone.status(&receiver).await, StatusCode::GONE);

    receiver.set_mode("huge").await;
    let huge = Delivery::signed("msg_huge", &payment(3));
    let mut response = huge
        .post(&client, &url)
        .await
        .expect("the receiver answers");
    assert_eq!(response.status(), StatusCode::OK);
    assert_eq!(response.content_length(), Some(100 * MIB as u64));
    let mut read = 0;
    while read < MIB {
        let chunk = response.chunk().await.expect("the body streams");
        read += chunk.expect("more than 1 MiB of body").len();
    }
    drop(response);

    receiver.set_mode("hang").await;
    let hang = Delivery::signed("msg_hang", &payment(4));
    let hurried = reqwest::Client::builder()
        .timeout(Duration::from_secs(2))
        .build()
        .expect("a client");
    let timed_out = hang.post(&hurried, &url).await.err();
    assert!(
        timed_out.is_some_and(|err| err.is_timeout()),
        "hang answered"
    );

    let modes = ["error", "gone", "huge", "hang"];
    let expected: Vec<_> = modes
        .map(|mode| (format!("msg_{mode}"), mode.to_owned()))
        .into();
    eventually(
        "every delivery listed",
        Duration::from_secs(30),
        Duration::from_millis(100),
        || async {
            let listed = ids_and_modes(&receiver.deliveries().await);
            if listed == expected {
                Ok(())
            } else {
                Err(format!("{listed:?}"))
            }
        },
    )
    .await;
}

#[tokio::test]
async fn a_stopped_receiver_refuses_connections_and_comes_back_with_what_it_had() {
    let mut receiver = MerchantReceiver::start(SECRET).await;
    let client = reqwest::Client::new();
    let before = Delivery::signed("msg_before", &payment(1));
    assert_eq!(before.status(&receiver).await, StatusCode::NO_CONTENT);
    let unsigned = Delivery {
        signature: None,
        ..before.clone()
    };
    assert_eq!(unsigned.status(&receiver).await, StatusCode::BAD_REQUEST);
    receiver.set_mode("error").await;

    receiver.stop();
    let during = Delivery::signed("msg_during", &payment(2));
    let refused = during.post(&client, &receiver.url()).await.err();
    assert!(
        refused.is_some_and(|err| err.is_connect()),
        "a stopped receiver answered"
    );

    receiver.restart().await;
    let after = Delivery::signed("msg_after", &payment(3));
    assert_eq!(
        after.status(&receiver).await,
        StatusCode::NO_CONTENT,
        "back in mode ok"
    );
    let listed = ids_and_modes(&receiver.deliveries().await);
    let expected = [("msg_before", "ok"), ("msg_after", "ok")];
    assert_eq!(
        listed,
        expected.map(|(id, mode)| (id.to_owned(), mode.to_owned()))
    );
    assert_eq!(receiver.refused().await, 1);
}
