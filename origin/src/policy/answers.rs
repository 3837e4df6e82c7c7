//! What the payment gateway said, as far as we can know it: an approval's answer, a
//! cancel's, and the status of an order. Plain data, no I/O: the rules (the guard's,
//! recovery's) decide on these, and only the client in `gateway/mod.rs` makes them.

/// What the PG said to one approval request, as far as we can know it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum GatewayAnswer {
    Approved {
        approved_at: i64,
    },
    Declined,
    /// The PG received the request and refused it without charging (a 4xx).
    Rejected {
        status: u16,
    },
    /// The request never reached the PG.
    NotSent,
    /// The request may have reached the PG; only asking it later can tell.
    Unknown {
        cause: String,
    },
}

/// What the PG said to a cancel (refund) of an approved charge.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum CancelAnswer {
    /// Cancelled now or before: no money is held.
    Cancelled,
    /// The PG refuses: nothing approved to cancel, or not decided yet.
    Refused { status: u16, code: String },
    /// No answer; ask again later.
    Unavailable { cause: String },
}

/// The PG's answer to "what happened to this order?".
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum GatewayStatus {
    /// `approved_at` when the PG says; else the time recovery learned it.
    Approved {
        approved_at: Option<i64>,
        amount: i64,
    },
    Declined,
    Cancelled,
    NotFound,
    /// Received and still being processed.
    Pending,
    /// No answer: the PG is away, slow, or the recovery guard refused to ask.
    Unavailable {
        cause: String,
    },
}
