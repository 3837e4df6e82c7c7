//! What the Worker asks an event's waiting room, and what it answers.

use serde::{Deserialize, Serialize};

/// A call to a waiting room, on behalf of one user.
#[derive(Debug, Serialize, Deserialize)]
#[serde(tag = "op", rename_all = "camelCase", rename_all_fields = "camelCase")]
pub enum RoomRequest {
    /// Join the line (idempotent): answers the user's `QueueStatus`.
    Enter { user: String },
    /// The user's placement, or `null` when they are not in the line.
    Status { user: String },
    /// Leave the line; everyone behind moves up.
    Leave { user: String },
    /// The payment gate: claim the user's live pass for the payment `order_id`. A pass
    /// backs one payment at a time; the same order may claim it again (a retry).
    ClaimPass { user: String, order_id: String },
    /// The claiming payment failed, so nothing was bought: the pass may back another.
    ReleaseClaim { user: String, order_id: String },
    /// A payment succeeded: the pass is used up and the user leaves the line.
    Consume { user: String },
    /// The origin answered a confirm for this event `SOLD_OUT`: the line stops growing
    /// (idempotent; stored).
    MarkSoldOut,
    /// The origin's PG guard refuses payments for `for_ms` more (its breaker is open): the
    /// room holds that long (stored; a shorter pause than the one in force changes nothing).
    PausePayments { for_ms: u64 },
}

/// Where a user stands in a room: `QueueStatus` of API.md without the event id, which
/// the Worker adds (a room does not know its own name). Once the event is sold out,
/// `soldOut` is `true`; a newcomer turned away then has position 0 (not in the line).
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Placement {
    /// People ahead + 1; 0 when not in the line.
    pub position: u64,
    pub admitted: bool,
    /// Epoch milliseconds.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub pass_expires_at: Option<i64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub eta_seconds: Option<u64>,
    pub poll_after_seconds: u64,
    /// Absent unless sold out, so other queues keep their shape.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub sold_out: bool,
    /// Payments are paused (the origin cannot take them): places are kept, live passes
    /// extended, and nobody new is admitted until `pausedUntil`. Absent otherwise.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub paused: bool,
    /// When the pause is expected to end (epoch ms).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub paused_until: Option<i64>,
}

/// The answer to [`RoomRequest::ClaimPass`].
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "claim", rename_all = "camelCase")]
pub enum PassClaim {
    /// The pass is live and now backs this order.
    Granted,
    /// No live pass: not admitted, expired, or never in the line.
    NoPass,
    /// The pass backs another order that has not failed.
    InUse,
    /// Payments are paused until `until` (epoch ms): no confirm goes to the origin.
    Paused { until: i64 },
}

/// `QueueStatus` of API.md.
#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct QueueStatus<'a> {
    pub event_id: &'a str,
    #[serde(flatten)]
    pub placement: Placement,
}
