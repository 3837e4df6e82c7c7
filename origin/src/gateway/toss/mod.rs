//! Toss Payments v1, as Toss documents it (https://docs.tosspayments.com/reference; the
//! facts used and their sources: `docs/design/gateways.md`):
//! `Authorization: Basic base64(secretKey + ":")` on every call, the confirm
//! `POST /v1/payments/confirm {paymentKey, orderId, amount}`, the look-up by order
//! `GET /v1/payments/orders/{orderId}` (why not by payment key: the design page), the cancel
//! `POST /v1/payments/{paymentKey}/cancel {cancelReason}`. Every POST carries the
//! payment's own `Idempotency-Key`: Toss takes the key, the API key, the URL and the
//! method as one request and ignores the body, so a key is never shared by two orders.
//! Toss signs no payment webhook: `PAYMENT_STATUS_CHANGED` is taken as a hint, and the
//! payment is looked up.

mod classify;
mod codes;

use async_trait::async_trait;
use axum::http::HeaderMap;
use base64::Engine as _;
use serde::Deserialize;
use serde_json::json;

use super::http::{self, Sent};
use super::{
    CancelAnswer, Confirmed, Gateway, GatewayAnswer, GatewayConfig, GatewayStatus, Hint, Order,
    Provider, WebhookRefusal,
};

pub use codes::{
    Class, CANCELLED_BEFORE, CANCEL_LATER, CANCEL_REFUSED, DECLINED, NOT_SENT, UNKNOWN,
};

/// The amount a confirm probe names: any whole amount Toss would take.
const PROBE_AMOUNT: i64 = 1_000;

pub struct Toss {
    http: reqwest::Client,
    base_url: String,
    /// `Basic base64(secretKey + ":")`, made once.
    authorization: String,
    currency: String,
}

impl Toss {
    pub fn new(config: &GatewayConfig) -> anyhow::Result<Self> {
        Ok(Self {
            http: http::client()?,
            base_url: config.url.clone(),
            authorization: basic(config.secret_key.expose()),
            currency: config.currency.clone(),
        })
    }

    fn post(&self, path: &str, key: &str) -> reqwest::RequestBuilder {
        self.http
            .post(format!("{}{path}", self.base_url))
            .header("authorization", &self.authorization)
            .header("idempotency-key", key)
    }

    /// `GET /v1/payments/orders/{orderId}`, or `None` for an id that cannot be a path
    /// segment.
    fn payment_of_order(&self, order_id: &str) -> Option<reqwest::RequestBuilder> {
        let segment = http::path_segment(order_id)?;
        Some(
            self.http
                .get(format!("{}/v1/payments/orders/{segment}", self.base_url))
                .header("authorization", &self.authorization),
        )
    }
}

/// Toss's Basic header: the secret key is the user name, the password is empty, and the
/// colon between them is required.
pub fn basic(secret_key: &str) -> String {
    let encoded = base64::engine::general_purpose::STANDARD.encode(format!("{secret_key}:"));
    format!("Basic {encoded}")
}

#[async_trait]
impl Gateway for Toss {
    fn provider(&self) -> Provider {
        Provider::Toss
    }

    fn currency(&self) -> &str {
        &self.currency
    }

    /// Toss takes order ids of 6 to 64 characters of `[A-Za-z0-9_-]` (`INVALID_ORDER_ID`).
    fn order_id_problem(&self, order_id: &str) -> Option<String> {
        let plain = order_id
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || matches!(b, b'-' | b'_'));
        (!(6..=64).contains(&order_id.len()) || !plain).then(|| {
            "orderId must be 6 to 64 letters, digits, '-' or '_' (Toss Payments' order ids)"
                .to_owned()
        })
    }

    async fn confirm(&self, order: &Order<'_>) -> Confirmed {
        let body = json!({
            "paymentKey": order.payment_key,
            "orderId": order.order_id,
            "amount": order.amount,
        });
        let request = self
            .post("/v1/payments/confirm", order.confirm_key)
            .json(&body);
        let answer = match http::send(request).await {
            Sent::Unconnected(_) => GatewayAnswer::NotSent,
            Sent::NoAnswer(cause) => GatewayAnswer::Unknown { cause },
            Sent::Answered { status, body } => classify::confirm(status, &body),
        };
        match &answer {
            GatewayAnswer::Rejected { status, code } => {
                tracing::error!(order_id = order.order_id, status, code, "Toss refused our confirm unprocessed: nobody was charged; check the configuration");
            }
            GatewayAnswer::Unknown { cause } => {
                tracing::warn!(
                    order_id = order.order_id,
                    cause,
                    "Toss's answer to a confirm is unknown; it will be looked up"
                );
            }
            _ => {}
        }
        answer.into()
    }

    async fn look_up(&self, order: &Order<'_>) -> GatewayStatus {
        let Some(request) = self.payment_of_order(order.order_id) else {
            return GatewayStatus::Unavailable {
                cause: format!("order id {:?} cannot be a path segment", order.order_id),
            };
        };
        match http::send(request).await {
            Sent::Unconnected(cause) | Sent::NoAnswer(cause) => {
                GatewayStatus::Unavailable { cause }
            }
            Sent::Answered { status, body } => classify::look_up(status, &body),
        }
    }

    async fn answers(&self, probe_id: &str) -> bool {
        match self.payment_of_order(probe_id) {
            Some(request) => http::answers(request).await,
            None => false,
        }
    }

    /// `POST /v1/payments/confirm` with `probe_id` as the payment key and the order id (6
    /// to 64 of `[A-Za-z0-9_-]`, as ours are): no payment window made such a key, so Toss
    /// refuses it unprocessed, 404 `NOT_FOUND_PAYMENT` (or `NOT_FOUND_PAYMENT_SESSION`).
    async fn answers_confirm(&self, probe_id: &str) -> bool {
        let body = json!({
            "paymentKey": probe_id,
            "orderId": probe_id,
            "amount": PROBE_AMOUNT,
        });
        let request = self.post("/v1/payments/confirm", probe_id).json(&body);
        http::answers(request).await
    }

    async fn cancel(&self, order: &Order<'_>, reason: &str) -> CancelAnswer {
        let Some(segment) = http::path_segment(order.payment_key) else {
            return CancelAnswer::Unavailable {
                cause: "the payment key cannot be a path segment".into(),
            };
        };
        let request = self
            .post(
                &format!("/v1/payments/{segment}/cancel"),
                &order.cancel_key(),
            )
            .json(&json!({ "cancelReason": reason }));
        match http::send(request).await {
            Sent::Unconnected(cause) | Sent::NoAnswer(cause) => CancelAnswer::Unavailable { cause },
            Sent::Answered { status, body } => classify::cancel(status, &body),
        }
    }

    /// Toss's retries of one webhook carry one `tosspayments-webhook-transmission-id`.
    fn webhook(
        &self,
        headers: &HeaderMap,
        body: &[u8],
        _now_ms: i64,
    ) -> Result<Option<Hint>, WebhookRefusal> {
        let transmission = headers
            .get("tosspayments-webhook-transmission-id")
            .and_then(|value| value.to_str().ok())
            .filter(|id| !id.is_empty() && id.len() <= 128)
            .map(|id| format!("toss:{id}"));
        Ok(webhook_hint(body)?.map(|hint| Hint {
            event_id: transmission,
            ..hint
        }))
    }
}

/// Toss's webhook body: `{eventType, createdAt, data}`, the payment in `data`.
#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct WebhookBody {
    event_type: String,
    data: Option<WebhookData>,
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct WebhookData {
    order_id: Option<String>,
}

/// Which payment a Toss webhook is about. `PAYMENT_STATUS_CHANGED` and
/// `CANCEL_STATUS_CHANGED` name one; any other event is acknowledged and left.
fn webhook_hint(body: &[u8]) -> Result<Option<Hint>, WebhookRefusal> {
    let body: WebhookBody =
        serde_json::from_slice(body).map_err(|err| WebhookRefusal::Malformed(err.to_string()))?;
    if !matches!(
        body.event_type.as_str(),
        "PAYMENT_STATUS_CHANGED" | "CANCEL_STATUS_CHANGED"
    ) {
        return Ok(None);
    }
    let data = body
        .data
        .ok_or_else(|| WebhookRefusal::Malformed(format!("{} without data", body.event_type)))?;
    let order_id = data.order_id.ok_or_else(|| {
        WebhookRefusal::Malformed(format!("{} names no orderId", body.event_type))
    })?;
    Ok(Some(Hint {
        order_id,
        event_id: None,
    }))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_basic_header_keeps_its_colon() {
        // "test_sk_zXLkKEypNArWmo50nX3lmeaxYG5R:" — the cancel guide's correct header.
        assert_eq!(
            basic("test_sk_zXLkKEypNArWmo50nX3lmeaxYG5R"),
            "Basic dGVzdF9za196WExrS0V5cE5BcldtbzUwblgzbG1lYXhZRzVSOg=="
        );
    }

    #[test]
    fn an_order_id_toss_would_refuse_is_refused_before_anything_is_stored() {
        let config = GatewayConfig::from_lookup(|name| {
            (name == "GATEWAY_SECRET_KEY").then(|| "test_sk_x".to_owned())
        })
        .expect("a configuration");
        let toss = Toss::new(&config).expect("the adapter");
        for fine in ["order-1", "ORDER_123456", &"a".repeat(64)] {
            assert_eq!(toss.order_id_problem(fine), None, "{fine}");
        }
        for refused in ["o-1", "order", "order.1", "주문번호-1", &"a".repeat(65)] {
            assert!(toss.order_id_problem(refused).is_some(), "{refused}");
        }
    }

    #[test]
    fn a_webhook_names_its_payment_or_is_refused() {
        let hint = webhook_hint(
            br#"{"eventType":"PAYMENT_STATUS_CHANGED","createdAt":"2022-01-01T00:00:00.000000","data":{"orderId":"order-1","paymentKey":"pk-1","status":"DONE"}}"#,
        );
        assert_eq!(
            hint,
            Ok(Some(Hint {
                order_id: "order-1".into(),
                event_id: None,
            }))
        );
        assert_eq!(
            webhook_hint(br#"{"eventType":"BILLING_DELETED","data":{}}"#),
            Ok(None)
        );
        for body in [
            &b"not json"[..],
            br#"{"eventType":"PAYMENT_STATUS_CHANGED"}"#,
            br#"{"eventType":"PAYMENT_STATUS_CHANGED","data":{"status":"DONE"}}"#,
            br#"{"data":{"orderId":"order-1"}}"#,
        ] {
            assert!(
                matches!(webhook_hint(body), Err(WebhookRefusal::Malformed(_))),
                "{}",
                String::from_utf8_lossy(body)
            );
        }
    }
}
