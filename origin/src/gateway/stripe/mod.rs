//! Stripe PaymentIntents, as Stripe documents them (https://docs.stripe.com/api; the facts
//! used and their sources: `docs/design/gateways.md`): `Authorization: Bearer <secret
//! key>` on every call, form-encoded bodies with bracket keys, JSON answers, and the API version pinned by `Stripe-Version` so the
//! objects have the fields read here (`latest_charge`).
//!
//! - Confirm: `POST /v1/payment_intents` creates and confirms in one call — `amount`,
//!   `currency` (lower case; KRW is zero-decimal, so the amount goes as it is),
//!   `payment_method` (the order's `pm_…`), `confirm=true`, `metadata[order_id]` and
//!   `payment_method_types[]=card` (so no `return_url` is needed) — under the payment's
//!   `Idempotency-Key`. Nothing else is sent: localstripe refuses every parameter it does
//!   not know (`automatic_payment_methods`, `description`, `return_url`, …).
//! - Look-up: `GET /v1/payment_intents/{pi}` by the stored id, with the latest charge
//!   expanded (a refunded PaymentIntent stays `succeeded`; its charge says `refunded`).
//!   Without a stored id, search by `metadata['order_id']`, which lags writes by up to an
//!   hour: what it does not find is unavailable, never "not found".
//! - Cancel: a full refund, `POST /v1/refunds` with `payment_intent`, under the cancel's
//!   `Idempotency-Key`. The reason is logged, not sent: Stripe takes only three fixed
//!   reasons, and localstripe none.
//! - Webhook: `Stripe-Signature` checked ([`signature`]), then the event read for the
//!   order it names.

mod classify;
mod event;
mod objects;
mod signature;

use async_trait::async_trait;
use axum::http::HeaderMap;
use reqwest::Method;

use super::config::Secret;
use super::http::{self, Sent};
use super::{
    CancelAnswer, Confirmed, Gateway, GatewayAnswer, GatewayConfig, GatewayStatus, Hint, Order,
    Provider, WebhookRefusal,
};

/// The API version every answer is read as, so the account's default version cannot
/// change their shape; it has the `latest_charge` a look-up expands.
const API_VERSION: &str = "2024-06-20";

pub struct Stripe {
    http: reqwest::Client,
    base_url: String,
    /// `Bearer <secret key>`, made once.
    authorization: String,
    currency: String,
    webhook_secret: Option<Secret>,
}

impl Stripe {
    pub fn new(config: &GatewayConfig) -> anyhow::Result<Self> {
        Ok(Self {
            http: http::client()?,
            base_url: config.url.clone(),
            authorization: format!("Bearer {}", config.secret_key.expose()),
            currency: config.currency.clone(),
            webhook_secret: config.webhook_secret.clone(),
        })
    }

    fn request(&self, method: Method, path: &str) -> reqwest::RequestBuilder {
        self.http
            .request(method, format!("{}{path}", self.base_url))
            .header("authorization", &self.authorization)
            .header("stripe-version", API_VERSION)
    }

    /// A look-up's `GET`, its answer read by `read`.
    async fn get(
        &self,
        path: &str,
        query: &[(&str, &str)],
        read: fn(u16, &[u8]) -> GatewayStatus,
    ) -> GatewayStatus {
        match http::send(self.request(Method::GET, path).query(query)).await {
            Sent::Unconnected(cause) | Sent::NoAnswer(cause) => {
                GatewayStatus::Unavailable { cause }
            }
            Sent::Answered { status, body } => read(status, &body),
        }
    }
}

#[async_trait]
impl Gateway for Stripe {
    fn provider(&self) -> Provider {
        Provider::Stripe
    }

    fn currency(&self) -> &str {
        &self.currency
    }

    async fn confirm(&self, order: &Order<'_>) -> Confirmed {
        let form = [
            ("amount", order.amount.to_string()),
            ("currency", self.currency.to_ascii_lowercase()),
            ("payment_method", order.payment_key.to_owned()),
            ("confirm", "true".to_owned()),
            ("metadata[order_id]", order.order_id.to_owned()),
            ("payment_method_types[]", "card".to_owned()),
        ];
        let request = self
            .request(Method::POST, "/v1/payment_intents")
            .header("idempotency-key", order.confirm_key)
            .form(&form);
        let confirmed = match http::send(request).await {
            Sent::Unconnected(_) => GatewayAnswer::NotSent.into(),
            Sent::NoAnswer(cause) => GatewayAnswer::Unknown { cause }.into(),
            Sent::Answered { status, body } => classify::confirm(status, &body),
        };
        let reference = confirmed.reference.as_deref();
        match &confirmed.answer {
            GatewayAnswer::Rejected { status, code } => {
                tracing::error!(order_id = order.order_id, reference, status, code, "Stripe refused our confirm unprocessed: nobody was charged; check the configuration");
            }
            GatewayAnswer::Unknown { cause } => {
                tracing::warn!(
                    order_id = order.order_id,
                    reference,
                    cause,
                    "Stripe's answer to a confirm is unknown; it will be looked up"
                );
            }
            _ => {}
        }
        confirmed
    }

    async fn look_up(&self, order: &Order<'_>) -> GatewayStatus {
        let Some(reference) = order.reference else {
            return match classify::search_query(order.order_id) {
                Some(query) => {
                    let query = [
                        ("query", query.as_str()),
                        ("expand[]", "data.latest_charge"),
                    ];
                    self.get("/v1/payment_intents/search", &query, classify::search)
                        .await
                }
                None => GatewayStatus::Unavailable {
                    cause: format!("order id {:?} cannot be searched for", order.order_id),
                },
            };
        };
        let Some(segment) = http::path_segment(reference) else {
            return GatewayStatus::Unavailable {
                cause: format!("PaymentIntent id {reference:?} cannot be a path segment"),
            };
        };
        let path = format!("/v1/payment_intents/{segment}");
        self.get(&path, &[("expand[]", "latest_charge")], classify::look_up)
            .await
    }

    async fn answers(&self, probe_id: &str) -> bool {
        let Some(segment) = http::path_segment(probe_id) else {
            return false;
        };
        let path = format!("/v1/payment_intents/pi_{segment}");
        http::answers(self.request(Method::GET, &path)).await
    }

    /// `POST /v1/payment_intents/pi_<probe_id>/confirm`: the confirm of a PaymentIntent
    /// that does not exist, which Stripe answers 404 `resource_missing`. (Ours create and
    /// confirm in one `POST /v1/payment_intents`; this is the same API's confirm, and
    /// needs no PaymentMethod, real or not.)
    async fn answers_confirm(&self, probe_id: &str) -> bool {
        let Some(segment) = http::path_segment(probe_id) else {
            return false;
        };
        let path = format!("/v1/payment_intents/pi_{segment}/confirm");
        let request = self
            .request(Method::POST, &path)
            .header("idempotency-key", probe_id);
        http::answers(request).await
    }

    async fn cancel(&self, order: &Order<'_>, reason: &str) -> CancelAnswer {
        let Some(reference) = order.reference else {
            return CancelAnswer::Unavailable {
                cause: "no PaymentIntent id stored".into(),
            };
        };
        tracing::info!(
            order_id = order.order_id,
            reference,
            reason,
            "refunding at Stripe"
        );
        let request = self
            .request(Method::POST, "/v1/refunds")
            .header("idempotency-key", order.cancel_key())
            .form(&[("payment_intent", reference)]);
        match http::send(request).await {
            Sent::Unconnected(cause) | Sent::NoAnswer(cause) => CancelAnswer::Unavailable { cause },
            Sent::Answered { status, body } => classify::cancel(status, &body),
        }
    }

    fn webhook(
        &self,
        headers: &HeaderMap,
        body: &[u8],
        now_ms: i64,
    ) -> Result<Option<Hint>, WebhookRefusal> {
        let header = headers
            .get("stripe-signature")
            .map(|value| value.as_bytes());
        let secret = self.webhook_secret.as_ref().map(Secret::expose);
        signature::verify(secret, header, body, now_ms)?;
        event::hint(body)
    }
}
