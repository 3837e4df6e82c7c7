//! What goes in and out of the ledger: a confirm and a cancel as validated,
//! the ticket between a confirm's two steps, and each call's outcome.

use std::num::NonZeroU32;

use super::PaymentRecord;

/// A confirm that passed validation: Toss's limits on `paymentKey` and
/// `orderId`, and a positive amount.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ConfirmRequest {
    pub payment_key: String,
    pub order_id: String,
    pub amount: u64,
}

/// A confirm recorded as received and let through the rate cap.
///
/// Only the ledger makes one, and only [`Ledger::process`](super::Ledger::process)
/// consumes it, so nothing is decided without first being counted as received.
#[derive(Debug)]
#[must_use = "a received confirm is either processed or deliberately left undecided"]
pub struct Received {
    pub(super) request: ConfirmRequest,
    /// When it arrived: the payment's `requestedAt`.
    pub(super) received_at: u64,
    /// Counted among its payment's `IN_PROGRESS` confirms until processed.
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
    /// A confirm of a payment already decided is refused
    /// (`ALREADY_PROCESSED_PAYMENT`), and so is an order paid under another
    /// `paymentKey` (`DUPLICATED_ORDER_ID`); `false`: every confirm is
    /// charged anew.
    pub idempotent: bool,
    /// The caller's roll against the decline rate: a new charge is declined.
    pub decline: bool,
    /// A new charge owes the payment system a webhook.
    pub notify: bool,
    /// Added to the confirm's amount to make the approved amount.
    pub amount_delta: i64,
}

/// A cancel that passed validation.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CancelRequest {
    pub payment_key: String,
    pub reason: String,
    /// `None`: the whole balance. Only a full cancel is carried out.
    pub amount: Option<u64>,
}

/// How a cancel is carried out, chosen by the caller from the fault
/// settings.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Cancelling {
    /// `true`: the payment's latest charge (the one a look-up answers) is
    /// cancelled; `false`: every approved charge of its order.
    pub idempotent: bool,
    /// Each charge cancelled now owes the payment system a webhook.
    pub notify: bool,
}

/// Names one charge, to count the confirms that named it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ChargeId(pub(super) usize);

#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ConfirmOutcome {
    /// A new charge, approved now: `DONE`.
    Approved(ChargeId, PaymentRecord),
    /// A new charge, declined now: `ABORTED`.
    Declined(ChargeId, PaymentRecord),
    /// The payment was decided before (idempotent mode): nothing charged.
    AlreadyProcessed(ChargeId),
    /// The order was paid under another `paymentKey` (idempotent mode):
    /// nothing charged.
    DuplicatedOrderId,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub enum CancelOutcome {
    /// Approved charges were cancelled now; the payment as it now stands.
    Cancelled(PaymentRecord),
    /// Everything there was to cancel was cancelled before.
    AlreadyCancelled,
    /// The charge to cancel was declined: no money was taken.
    Declined,
    /// A confirm of the payment will be processed but is not decided yet.
    InProgress,
    /// A `cancelAmount` above what is left to cancel.
    AmountTooLarge,
    /// A `cancelAmount` below the balance: partial cancels are not carried
    /// out.
    Partial,
    /// No confirm of the payment was processed or promised.
    Unknown,
}
