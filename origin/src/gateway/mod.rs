//! The payment gateway (PG) port: confirm, look up, cancel, and a webhook checked as its
//! PG's scheme requires. Two adapters implement it, chosen by `GATEWAY_PROVIDER`:
//! [`toss`] (Toss Payments v1, the default) and [`stripe`] (Stripe PaymentIntents). The
//! guard, recovery, the refund of late approvals and the webhook route use the port
//! only; nothing outside an adapter knows a PG's wire format (`docs/design/gateways.md`).
//!
//! Every answer is classified by what we know afterwards, into the classes of
//! [`crate::policy::answers`]. A request that never left (no connection) was not sent,
//! so it cannot have charged anyone. A request that left and got no clear answer
//! (timeout, 5xx, an unreadable body, a code no list names) may have charged someone:
//! its outcome is unknown until the PG is asked again. Approvals are never retried.

mod config;
mod http;
pub mod stripe;
pub mod toss;

use std::sync::Arc;

use async_trait::async_trait;
use axum::http::HeaderMap;

pub use crate::policy::answers::{
    Approval, CancelAnswer, Confirmed, Expected, GatewayAnswer, GatewayStatus,
};
use crate::store::Payment;
pub use config::{GatewayConfig, Provider};

/// The payment as an adapter needs it: what the customer confirmed, and the keys this
/// origin stored for it before any call.
#[derive(Debug, Clone, Copy)]
pub struct Order<'a> {
    pub order_id: &'a str,
    /// Toss's `paymentKey`, Stripe's `pm_…`: what the PG's payment window made.
    pub payment_key: &'a str,
    pub amount: i64,
    /// The `Idempotency-Key` of this payment's confirm; its cancel's is derived from it
    /// ([`Order::cancel_key`]), so every retry of one operation sends the same key.
    pub confirm_key: &'a str,
    /// The PG's own id for it, once an answer named it (Stripe's `pi_…`).
    pub reference: Option<&'a str>,
}

impl<'a> Order<'a> {
    pub fn of(payment: &'a Payment) -> Self {
        Self {
            order_id: &payment.order_id,
            payment_key: &payment.payment_key,
            amount: payment.amount,
            confirm_key: &payment.gateway.confirm_key,
            reference: payment.gateway.reference.as_deref(),
        }
    }

    /// The `Idempotency-Key` of the one cancel (refund) this payment may need.
    pub fn cancel_key(&self) -> String {
        format!("{}:cancel", self.confirm_key)
    }
}

/// What a webhook says, once its PG's scheme accepted it: which payment to look up. It is
/// a hint, never the truth: the origin acts only on the look-up's answer.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Hint {
    pub order_id: String,
    /// The PG's id for the event, to take each one once (Stripe's `evt_…`).
    pub event_id: Option<String>,
}

/// Why a webhook was refused: answered 400, nothing done.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum WebhookRefusal {
    #[error("not a webhook body: {0}")]
    Malformed(String),
    #[error("the signature does not verify: {0}")]
    Signature(&'static str),
}

/// One PG behind the guarantees of the guard and recovery.
#[async_trait]
pub trait Gateway: Send + Sync {
    fn provider(&self) -> Provider;

    /// The currency every payment is made in (`GATEWAY_CURRENCY`), ISO 4217.
    fn currency(&self) -> &str;

    /// Why the PG would refuse `order_id` unread, if it would: checked before anything is
    /// stored, so a customer hears of a bad order id at once and nobody is paged for it.
    fn order_id_problem(&self, _order_id: &str) -> Option<String> {
        None
    }

    /// Asks the PG to approve a payment, once. Bounded by the caller's guard.
    async fn confirm(&self, order: &Order<'_>) -> Confirmed;

    /// Asks the PG what became of a payment. Safe to ask any number of times.
    async fn look_up(&self, order: &Order<'_>) -> GatewayStatus;

    /// Whether the PG answers a question that charges nobody: a look-up of `probe_id`, an
    /// id no payment has. Any answer but a 5xx or a 429 is the PG working (its "not
    /// found" above all); the breaker's look-up probe. Bounded by the caller.
    async fn answers(&self, probe_id: &str) -> bool;

    /// Whether the PG's confirm path answers: a confirm of a payment that cannot exist
    /// (`probe_id` as its key, its order and its Idempotency-Key), which charges nobody. Any
    /// answer but a 5xx or a 429 is the path working — Toss's `NOT_FOUND_PAYMENT` or
    /// `NOT_FOUND_PAYMENT_SESSION`, Stripe's 404 `resource_missing` above all; a PG whose
    /// confirms stall leaves it unanswered as it leaves payments. The breaker's confirm
    /// probe, once a payment it let through half-open went unanswered. Bounded by the
    /// caller.
    async fn answers_confirm(&self, probe_id: &str) -> bool;

    /// Cancels (refunds in full) an approved payment, under [`Order::cancel_key`].
    async fn cancel(&self, order: &Order<'_>, reason: &str) -> CancelAnswer;

    /// A webhook as received: accepted by the PG's scheme (its signature, its age),
    /// `Ok(None)` for an event that names no payment, or refused.
    fn webhook(
        &self,
        headers: &HeaderMap,
        body: &[u8],
        now_ms: i64,
    ) -> Result<Option<Hint>, WebhookRefusal>;
}

/// The adapter `config` names.
pub fn open(config: &GatewayConfig) -> anyhow::Result<Arc<dyn Gateway>> {
    Ok(match config.provider {
        Provider::Toss => Arc::new(toss::Toss::new(config)?),
        Provider::Stripe => Arc::new(stripe::Stripe::new(config)?),
    })
}

/// What the order's approval must match.
pub fn expected<'a>(order: &Order<'a>, currency: &'a str) -> Expected<'a> {
    Expected {
        order_id: order.order_id,
        amount: order.amount,
        currency,
    }
}
