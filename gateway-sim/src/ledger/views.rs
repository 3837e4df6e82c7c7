//! The ledger as its callers see it: a payment as the Payment object is made
//! from it, and the admin view, each admin type serializing as its wire shape.

use serde::Serialize;

use super::Ledger;

/// A payment's `status`, in Toss's words.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "SCREAMING_SNAKE_CASE")]
pub enum PaymentStatus {
    /// A confirm received and promised, not decided yet.
    InProgress,
    /// Approved.
    Done,
    /// Declined.
    Aborted,
    /// Approved, then fully cancelled.
    Canceled,
}

/// One payment as the ledger knows it; [`crate::payment`] makes the Toss
/// Payment object of it. Times are epoch milliseconds.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PaymentRecord {
    pub payment_key: String,
    pub order_id: String,
    pub status: PaymentStatus,
    /// What was approved (the confirm's amount plus any `approvedAmountDelta`),
    /// or what was asked while undecided or declined.
    pub amount: u64,
    /// When the confirm arrived.
    pub requested_at: u64,
    /// `Some` once approved, cancelled since or not.
    pub approved_at: Option<u64>,
    /// The decision's transaction; `None` while undecided.
    pub transaction_key: Option<String>,
    /// The card approval number of an approved charge.
    pub approve_no: Option<String>,
    pub cancel: Option<CancelRecord>,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CancelRecord {
    pub transaction_key: String,
    pub reason: String,
    pub canceled_at: u64,
    pub amount: u64,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct ReceivedRequest {
    pub order_id: String,
    /// Epoch milliseconds.
    pub received_at: u64,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Approval {
    pub order_id: String,
    pub payment_key: String,
    /// What was approved and charged.
    pub amount: u64,
    pub approved_at: u64,
    /// Confirms that named this charge, the first included: replays of its
    /// answer under an Idempotency-Key and repeats refused as
    /// `ALREADY_PROCESSED_PAYMENT`.
    pub request_count: u64,
    /// Epoch milliseconds; `None` (JSON `null`) unless cancelled.
    pub cancelled_at: Option<u64>,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Decline {
    pub order_id: String,
    pub payment_key: String,
    pub amount: u64,
    pub declined_at: u64,
    /// Confirms that named this charge, the first included.
    pub request_count: u64,
}

/// One webhook and how its delivery went.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct WebhookRecord {
    pub order_id: String,
    pub payment_key: String,
    /// The payment's status the webhook tells.
    pub status: PaymentStatus,
    /// `tosspayments-webhook-transmission-id`, the same on every attempt.
    pub transmission_id: String,
    /// Epoch milliseconds of the 200 answer; `None` (JSON `null`) until then.
    pub delivered_at: Option<u64>,
    /// Deliveries tried so far, answered or not.
    pub attempts: u32,
}

/// One Toss API request as it arrived, whatever became of it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Call {
    pub method: String,
    pub path: String,
    /// The `Idempotency-Key` header as sent, on any method.
    pub idempotency_key: Option<String>,
    /// `Authorization: Basic` named the configured secret key, colon included.
    pub authorized: bool,
    /// The `TossPayments-Test-Code` header as sent.
    pub test_code: Option<String>,
    /// Epoch milliseconds.
    pub received_at: u64,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct LedgerSnapshot {
    /// Every valid, authorized confirm received: replays, refusals,
    /// rate-limited and unprocessed ones included.
    pub request_count: usize,
    /// Every look-up received, answered or still held (`statusDelayMs`).
    pub status_query_count: u64,
    pub requests: Vec<ReceivedRequest>,
    /// Approved charges in decision order; one order may appear more than
    /// once when confirms were not idempotent.
    pub approvals: Vec<Approval>,
    /// Declined charges in decision order.
    pub declines: Vec<Decline>,
    /// Webhooks owed to the payment system, in the order they were owed.
    pub webhooks: Vec<WebhookRecord>,
    /// Every Toss API request, in arrival order.
    pub calls: Vec<Call>,
}

impl Ledger {
    pub fn snapshot(&self) -> LedgerSnapshot {
        let mut approvals = Vec::new();
        let mut declines = Vec::new();
        for charge in &self.charges {
            let order_id = charge.order_id.clone();
            let payment_key = charge.payment_key.clone();
            if charge.approved {
                approvals.push(Approval {
                    order_id,
                    payment_key,
                    amount: charge.amount,
                    approved_at: charge.decided_at,
                    request_count: charge.request_count,
                    cancelled_at: charge.cancel.as_ref().map(|cancel| cancel.canceled_at),
                });
            } else {
                declines.push(Decline {
                    order_id,
                    payment_key,
                    amount: charge.amount,
                    declined_at: charge.decided_at,
                    request_count: charge.request_count,
                });
            }
        }
        LedgerSnapshot {
            request_count: self.requests.len(),
            status_query_count: self.status_queries,
            requests: self.requests.clone(),
            approvals,
            declines,
            webhooks: self.webhooks.clone(),
            calls: self.calls.clone(),
        }
    }
}
