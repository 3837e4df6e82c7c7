//! Stripe's objects as far as the adapter reads them — a PaymentIntent, an error — and
//! what each says. Fields that decide nothing are not read, and any field may be missing
//! from an answer we did not expect: a body that lacks what decides is not one of these.

use serde::Deserialize;
use serde_json::Value;

use crate::gateway::{Approval, GatewayStatus};

/// 402 codes that say the card was not charged, whatever the error's `type` (localstripe
/// sends `card_declined` as an `invalid_request_error`; Stripe sends every card error as
/// `card_error`, which is a decline too).
const DECLINED: &[&str] = &[
    "card_declined",
    "expired_card",
    "incorrect_cvc",
    "incorrect_number",
    "incorrect_zip",
    "insufficient_funds",
    "invalid_cvc",
    "invalid_expiry_month",
    "invalid_expiry_year",
    "invalid_number",
    "authentication_required",
    "payment_intent_authentication_failure",
    "payment_intent_payment_attempt_failed",
];

/// The fields of a PaymentIntent that decide anything.
#[derive(Debug, Deserialize)]
pub(super) struct PaymentIntent {
    /// `pi_…`; absent only from a body that is not quite Stripe's.
    #[serde(default)]
    id: Option<String>,
    pub(super) status: String,
    amount: i64,
    currency: String,
    created: Option<i64>,
    metadata: Option<serde_json::Map<String, Value>>,
    /// An id, or the charge itself when expanded.
    latest_charge: Option<Value>,
    last_payment_error: Option<StripeError>,
}

/// Stripe's error object, `{"error": {type, code, decline_code, …}}`.
#[derive(Debug, Deserialize)]
struct ErrorBody {
    error: StripeError,
}

#[derive(Debug, Deserialize)]
pub(super) struct StripeError {
    #[serde(rename = "type")]
    kind: Option<String>,
    pub(super) code: Option<String>,
    decline_code: Option<String>,
}

impl PaymentIntent {
    pub(super) fn parse(body: &[u8]) -> Result<Self, String> {
        serde_json::from_slice(body).map_err(|err| format!("not a PaymentIntent: {err}"))
    }

    pub(super) fn approval(&self) -> Result<Approval, String> {
        let order_id = self
            .metadata
            .as_ref()
            .and_then(|metadata| metadata.get("order_id"))
            .and_then(Value::as_str)
            .ok_or("it has no metadata.order_id")?;
        Ok(Approval {
            order_id: order_id.to_owned(),
            amount: self.amount,
            currency: self.currency.to_ascii_uppercase(),
            approved_at: self.created.and_then(|at| at.checked_mul(1000)),
            reference: self.id.clone().filter(|id| id.starts_with("pi_")),
        })
    }

    pub(super) fn failure_code(&self) -> String {
        self.last_payment_error
            .as_ref()
            .map_or_else(|| self.status.clone(), StripeError::decline)
    }

    /// What the PaymentIntent says became of the payment.
    pub(super) fn outcome(&self) -> GatewayStatus {
        let unavailable = |cause: String| GatewayStatus::Unavailable { cause };
        match self.status.as_str() {
            // It stays `succeeded` after a refund: its latest charge, expanded, tells.
            "succeeded" => {
                let charge = self.latest_charge.as_ref();
                let refunded = charge
                    .and_then(|c| c.get("refunded"))
                    .and_then(Value::as_bool);
                let amount_refunded = charge
                    .and_then(|c| c.get("amount_refunded"))
                    .and_then(Value::as_i64);
                match (refunded, amount_refunded) {
                    (Some(true), _) => GatewayStatus::Cancelled,
                    (_, Some(part)) if part > 0 => {
                        unavailable(format!("{part} of it refunded at Stripe, not all"))
                    }
                    _ => self.approval().map_or_else(
                        |cause| unavailable(format!("succeeded, but {cause}")),
                        GatewayStatus::Approved,
                    ),
                }
            }
            // Back to `requires_payment_method` after a failed attempt: nobody was charged.
            "requires_payment_method" | "canceled" => GatewayStatus::Declined,
            "processing" | "requires_action" | "requires_confirmation" | "requires_capture" => {
                GatewayStatus::Pending
            }
            other => unavailable(format!("status {other} is in no list")),
        }
    }
}

impl StripeError {
    pub(super) fn parse(body: &[u8]) -> Option<Self> {
        serde_json::from_slice::<ErrorBody>(body)
            .ok()
            .map(|body| body.error)
    }

    pub(super) fn code(&self) -> String {
        self.code
            .clone()
            .or_else(|| self.kind.clone())
            .unwrap_or_else(|| "no code".into())
    }

    /// The issuer's reason when Stripe names one (`insufficient_funds`), else the code.
    pub(super) fn decline(&self) -> String {
        self.decline_code.clone().unwrap_or_else(|| self.code())
    }

    pub(super) fn is_decline(&self) -> bool {
        self.kind.as_deref() == Some("card_error")
            || self
                .code
                .as_deref()
                .is_some_and(|code| DECLINED.contains(&code))
    }

    pub(super) fn is_idempotency(&self) -> bool {
        self.kind.as_deref() == Some("idempotency_error")
            || self
                .code
                .as_deref()
                .is_some_and(|code| code.starts_with("idempotency"))
    }
}

/// The `pi_…` id an answer names: a PaymentIntent's `id`, or an error's
/// `error.payment_intent.id` (a decline's PaymentIntent exists, in
/// `requires_payment_method`).
pub(super) fn reference(body: &[u8]) -> Option<String> {
    let body: Value = serde_json::from_slice(body).ok()?;
    let id = body
        .get("id")
        .or_else(|| body.pointer("/error/payment_intent/id"))?
        .as_str()?;
    id.starts_with("pi_").then(|| id.to_owned())
}
