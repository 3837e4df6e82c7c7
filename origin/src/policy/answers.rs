//! What the payment gateway said, as far as we can know it: an approval's answer, a
//! cancel's, and the status of an order. Plain data, no I/O: the rules (the guard's,
//! recovery's) decide on these, and only the adapters in `gateway/` make them — each
//! from its own PG's wire format, into these four classes: approved, declined, not sent,
//! unknown.

/// What the PG says it approved. An approval counts only once it names the order, the
/// amount and the currency we sent ([`Approval::mismatch`]).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Approval {
    pub order_id: String,
    pub amount: i64,
    /// ISO 4217, upper case.
    pub currency: String,
    /// Epoch milliseconds, when the PG says.
    pub approved_at: Option<i64>,
    /// The PG's own id for the payment, when it is not the order id (Stripe's `pi_…`):
    /// kept, so that what this approval may need later — a refund — can name it.
    pub reference: Option<String>,
}

/// The order an approval must be for.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Expected<'a> {
    pub order_id: &'a str,
    pub amount: i64,
    pub currency: &'a str,
}

impl Approval {
    /// Why this approval is not the expected order's, for an operator; `None` when it is.
    pub fn mismatch(&self, expected: Expected<'_>) -> Option<String> {
        let mut differences = Vec::new();
        if self.order_id != expected.order_id {
            differences.push(format!(
                "order {:?}, not {:?}",
                self.order_id, expected.order_id
            ));
        }
        if self.amount != expected.amount || !self.currency.eq_ignore_ascii_case(expected.currency)
        {
            differences.push(format!(
                "{} {}, the payment was for {} {}",
                self.amount, self.currency, expected.amount, expected.currency
            ));
        }
        (!differences.is_empty()).then(|| format!("the PG approved {}", differences.join("; ")))
    }
}

/// What the PG said to one approval request, as far as we can know it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum GatewayAnswer {
    Approved(Approval),
    /// The card, its issuer or a limit refused the charge: the customer's decline.
    Declined {
        code: String,
    },
    /// The PG refused our request before processing it — our configuration or our
    /// input — so nobody was charged. An operator's alert, never a customer's decline.
    Rejected {
        status: u16,
        code: String,
    },
    /// The PG refused it for our rate (a 429, Stripe's or Toss's) before processing it:
    /// nobody was charged, and the PG is telling us to slow down, which counts against its
    /// health.
    Throttled {
        code: String,
    },
    /// The request never reached the PG.
    NotSent,
    /// The request may have reached the PG; only asking it later can tell.
    Unknown {
        cause: String,
    },
}

/// What a confirm came back with: the answer, and the PG's id for the payment when the
/// answer named one (stored at once, whatever the answer).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Confirmed {
    pub answer: GatewayAnswer,
    pub reference: Option<String>,
}

impl From<GatewayAnswer> for Confirmed {
    fn from(answer: GatewayAnswer) -> Self {
        Self {
            answer,
            reference: None,
        }
    }
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
    Approved(Approval),
    /// Declined, or expired before it was confirmed: nobody was charged.
    Declined,
    Cancelled,
    NotFound,
    /// Received and still being processed.
    Pending,
    /// No answer: the PG is away, slow, said something we cannot read, or the recovery
    /// guard refused to ask.
    Unavailable {
        cause: String,
    },
}

#[cfg(test)]
mod tests {
    use super::*;

    fn approval(order_id: &str, amount: i64, currency: &str) -> Approval {
        Approval {
            order_id: order_id.into(),
            amount,
            currency: currency.into(),
            approved_at: None,
            reference: None,
        }
    }

    #[test]
    fn an_approval_counts_only_for_the_order_amount_and_currency_sent() {
        let expected = Expected {
            order_id: "order-1",
            amount: 15_000,
            currency: "KRW",
        };
        assert_eq!(approval("order-1", 15_000, "KRW").mismatch(expected), None);
        assert_eq!(approval("order-1", 15_000, "krw").mismatch(expected), None);
        let cases = [
            (
                approval("order-1", 15_100, "KRW"),
                "the PG approved 15100 KRW, the payment was for 15000 KRW",
            ),
            (
                approval("order-1", 15_000, "USD"),
                "the PG approved 15000 USD, the payment was for 15000 KRW",
            ),
            (
                approval("order-2", 15_000, "KRW"),
                "the PG approved order \"order-2\", not \"order-1\"",
            ),
        ];
        for (approval, said) in cases {
            assert_eq!(approval.mismatch(expected).as_deref(), Some(said));
        }
    }
}
