//! What goes in and out of the ledger: a confirm as validated, the tickets between its
//! two steps, and each call's outcome.

use std::num::NonZeroU32;

use serde::Serialize;

/// A confirm that passed validation: non-empty keys and a positive amount.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ConfirmRequest {
    pub payment_key: String,
    pub order_id: String,
    pub amount: u64,
}

/// How a charge was decided.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "SCREAMING_SNAKE_CASE")]
pub enum PaymentStatus {
    Approved,
    Declined,
}

/// What a status query answers for an order.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "SCREAMING_SNAKE_CASE")]
pub enum OrderStatus {
    /// Received and promised, not decided yet.
    Pending,
    Approved,
    Declined,
    /// Approved, then cancelled.
    Cancelled,
}

/// The gateway's answer to a confirm; idempotent repeats get the same one.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Confirmation {
    pub order_id: String,
    pub status: PaymentStatus,
    /// Epoch milliseconds; `None` (JSON `null`) when declined.
    pub approved_at: Option<u64>,
}

/// A confirm recorded as received and let through the rate cap.
///
/// Only the ledger makes one, and only [`Ledger::process`] consumes it, so
/// nothing is decided without first being counted as received.
#[derive(Debug)]
#[must_use = "a received confirm is either processed or deliberately left undecided"]
pub struct Received {
    pub(super) request: ConfirmRequest,
    /// Counted among its order's pending confirms until processed.
    pub(super) deferred: bool,
}

/// The rate cap refused the confirm: it is recorded as received, nothing
/// else.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RateLimited {
    /// The cap that was reached.
    pub max_per_second: NonZeroU32,
}

/// How a processed confirm is decided, chosen by the caller from the fault
/// settings.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Processing {
    /// Repeats of a known order replay its result instead of charging again.
    pub idempotent: bool,
    /// The caller's roll against the decline rate: a new charge is declined.
    pub decline: bool,
    /// A new charge owes the payment system a callback.
    pub notify: bool,
}

/// How a cancel is carried out, chosen by the caller from the fault
/// settings.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Cancelling {
    /// `true`: the order's latest charge (the one its status query answers)
    /// is cancelled; `false`: every approved charge of the order.
    pub idempotent: bool,
    /// Each charge cancelled now owes the payment system a callback.
    pub notify: bool,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ConfirmOutcome {
    /// A new charge, decided now: the order's first confirm or, when not
    /// idempotent, any confirm.
    New(Confirmation),
    /// Same order, key and amount as before: the recorded result, replayed.
    Repeat(Confirmation),
    /// Same order but a different key or amount: refused, nothing changed.
    Conflict,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CancelOutcome {
    /// Approved charges were cancelled now.
    Cancelled,
    /// Everything there was to cancel was cancelled before; answered like
    /// the first cancel.
    AlreadyCancelled,
    /// The charge to cancel was declined: no money was taken.
    Declined,
    /// A confirm of the order will be processed but is not decided yet.
    Pending,
    /// No confirm of the order was processed or promised.
    Unknown,
}
