//! What the guard needs to know of each kind of PG answer: what a timeout makes of it,
//! whether it counts against the PG's health, and its label in metrics.

use std::time::Duration;

use crate::policy::answers::{CancelAnswer, Confirmed, GatewayAnswer, GatewayStatus};

/// Why a call that timed out has no answer.
fn no_answer_within(timeout: Duration) -> String {
    format!("no answer within the {} ms timeout", timeout.as_millis())
}

/// What the guard needs to know of a PG call's answer.
pub trait Answer {
    /// The answer when the call took longer than the timeout.
    fn timed_out(timeout: Duration) -> Self;
    /// Whether it counts against the PG's health.
    fn is_failure(&self) -> bool;
    /// A short label for metrics.
    fn kind(&self) -> &'static str;
}

impl Answer for GatewayAnswer {
    /// Sent and not answered: it may have charged, so it is unknown.
    fn timed_out(timeout: Duration) -> Self {
        Self::Unknown {
            cause: no_answer_within(timeout),
        }
    }

    /// No answer, a 5xx, a refused connection, or a refusal for our rate count; a decline
    /// or another refusal is the PG working.
    fn is_failure(&self) -> bool {
        match self {
            Self::Approved(_) | Self::Declined { .. } | Self::Rejected { .. } => false,
            Self::Throttled { .. } | Self::NotSent | Self::Unknown { .. } => true,
        }
    }

    fn kind(&self) -> &'static str {
        match self {
            Self::Approved(_) => "approved",
            Self::Declined { .. } => "declined",
            Self::Rejected { .. } => "rejected",
            Self::Throttled { .. } => "throttled",
            Self::NotSent => "not_sent",
            Self::Unknown { .. } => "unknown",
        }
    }
}

impl Answer for Confirmed {
    fn timed_out(timeout: Duration) -> Self {
        GatewayAnswer::timed_out(timeout).into()
    }

    fn is_failure(&self) -> bool {
        self.answer.is_failure()
    }

    fn kind(&self) -> &'static str {
        self.answer.kind()
    }
}

impl Answer for CancelAnswer {
    fn timed_out(timeout: Duration) -> Self {
        Self::Unavailable {
            cause: no_answer_within(timeout),
        }
    }

    fn is_failure(&self) -> bool {
        matches!(self, Self::Unavailable { .. })
    }

    fn kind(&self) -> &'static str {
        match self {
            Self::Cancelled => "cancelled",
            Self::Refused { .. } => "cancel_refused",
            Self::Unavailable { .. } => "unavailable",
        }
    }
}

impl Answer for GatewayStatus {
    fn timed_out(timeout: Duration) -> Self {
        Self::Unavailable {
            cause: no_answer_within(timeout),
        }
    }

    /// Only no answer counts: every status, NOT_FOUND included, is the PG working.
    fn is_failure(&self) -> bool {
        matches!(self, Self::Unavailable { .. })
    }

    fn kind(&self) -> &'static str {
        match self {
            Self::Approved(_) => "approved",
            Self::Declined => "declined",
            Self::Cancelled => "cancelled",
            Self::NotFound => "not_found",
            Self::Pending => "pending",
            Self::Unavailable { .. } => "unavailable",
        }
    }
}
