//! The ledger as the admin routes show it: each view serializes as its wire shape.

use rules::callback::CallbackStatus;
use serde::Serialize;

use super::OrderStatus;

#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct PaymentView {
    pub order_id: String,
    pub status: OrderStatus,
    pub amount: u64,
    /// Epoch milliseconds, for an approved (or since cancelled) charge;
    /// absent otherwise.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub approved_at: Option<u64>,
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
    pub amount: u64,
    pub approved_at: u64,
    /// Confirms that matched this charge, the first included.
    pub request_count: u64,
    /// Epoch milliseconds; `None` (JSON `null`) unless cancelled.
    pub cancelled_at: Option<u64>,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Decline {
    pub order_id: String,
    pub amount: u64,
    pub declined_at: u64,
    /// Confirms that matched this charge, the first included.
    pub request_count: u64,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct LedgerSnapshot {
    /// Every confirm received: conflicts, rate-limited and unprocessed ones
    /// included.
    pub request_count: usize,
    /// Every status query received, answered or still held (`statusDelayMs`).
    pub status_query_count: u64,
    pub requests: Vec<ReceivedRequest>,
    /// Approved charges in decision order; one order may appear more than
    /// once when confirms were not idempotent.
    pub approvals: Vec<Approval>,
    /// Declined charges in decision order.
    pub declines: Vec<Decline>,
    /// Callbacks owed to the payment system, in the order they were owed.
    pub callbacks: Vec<CallbackRecord>,
}

/// One callback and how its delivery went.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct CallbackRecord {
    pub order_id: String,
    pub status: CallbackStatus,
    /// Epoch milliseconds of the 2xx answer; `None` (JSON `null`) until then.
    pub delivered_at: Option<u64>,
    /// Deliveries tried so far, answered or not.
    pub attempts: u32,
}
