//! What the simulated gateway knows: payments by `orderId` and every confirm
//! it received.
//!
//! Kept free of I/O and of the clock (callers pass `now_ms`) so the
//! gateway's rules — idempotency, conflicts, what gets counted — are unit
//! tested directly. The view types serialize as the wire shapes of the
//! routes that expose them.

use std::collections::HashMap;

use serde::Serialize;

/// A confirm that passed validation: non-empty keys and a positive amount.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ConfirmRequest {
    pub payment_key: String,
    pub order_id: String,
    pub amount: u64,
}

/// Only approvals exist until declines arrive with fault injection.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "SCREAMING_SNAKE_CASE")]
pub enum PaymentStatus {
    Approved,
}

/// The gateway's answer to a confirm; repeats get the first one unchanged.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Confirmation {
    pub order_id: String,
    pub status: PaymentStatus,
    /// Epoch milliseconds.
    pub approved_at: u64,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ConfirmOutcome {
    /// The order was seen for the first time and decided now.
    First(Confirmation),
    /// Same order, key and amount as before: the first result, replayed.
    Repeat(Confirmation),
    /// Same order but a different key or amount: refused, nothing changed.
    Conflict,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct PaymentView {
    pub order_id: String,
    pub status: PaymentStatus,
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
    pub amount: u64,
    pub approved_at: u64,
    /// Confirms for this order that matched it, the first included.
    pub request_count: u64,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct LedgerSnapshot {
    /// Every confirm received, conflicts included.
    pub request_count: usize,
    pub requests: Vec<ReceivedRequest>,
    /// In approval order.
    pub approvals: Vec<Approval>,
}

#[derive(Debug)]
struct Payment {
    payment_key: String,
    amount: u64,
    confirmation: Confirmation,
    request_count: u64,
}

#[derive(Debug, Default)]
pub struct Ledger {
    requests: Vec<ReceivedRequest>,
    // A Vec keeps approval order for the admin view; the index makes lookups cheap.
    payments: Vec<Payment>,
    by_order_id: HashMap<String, usize>,
}

impl Ledger {
    /// Records the confirm and decides it; the single place where a
    /// payment's outcome is chosen.
    pub fn confirm(&mut self, req: ConfirmRequest, now_ms: u64) -> ConfirmOutcome {
        self.requests.push(ReceivedRequest {
            order_id: req.order_id.clone(),
            received_at: now_ms,
        });

        if let Some(&index) = self.by_order_id.get(&req.order_id) {
            let payment = &mut self.payments[index];
            if payment.payment_key != req.payment_key || payment.amount != req.amount {
                return ConfirmOutcome::Conflict;
            }
            payment.request_count += 1;
            return ConfirmOutcome::Repeat(payment.confirmation.clone());
        }

        let confirmation = Confirmation {
            order_id: req.order_id.clone(),
            status: PaymentStatus::Approved,
            approved_at: now_ms,
        };
        self.by_order_id.insert(req.order_id, self.payments.len());
        self.payments.push(Payment {
            payment_key: req.payment_key,
            amount: req.amount,
            confirmation: confirmation.clone(),
            request_count: 1,
        });
        ConfirmOutcome::First(confirmation)
    }

    pub fn payment(&self, order_id: &str) -> Option<PaymentView> {
        let payment = &self.payments[*self.by_order_id.get(order_id)?];
        Some(PaymentView {
            order_id: payment.confirmation.order_id.clone(),
            status: payment.confirmation.status,
            amount: payment.amount,
        })
    }

    pub fn snapshot(&self) -> LedgerSnapshot {
        // Every payment is an approval for now; filter on status here once
        // declines exist.
        let approvals = self
            .payments
            .iter()
            .map(|payment| Approval {
                order_id: payment.confirmation.order_id.clone(),
                amount: payment.amount,
                approved_at: payment.confirmation.approved_at,
                request_count: payment.request_count,
            })
            .collect();
        LedgerSnapshot {
            request_count: self.requests.len(),
            requests: self.requests.clone(),
            approvals,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn request(order_id: &str, payment_key: &str, amount: u64) -> ConfirmRequest {
        ConfirmRequest {
            payment_key: payment_key.to_owned(),
            order_id: order_id.to_owned(),
            amount,
        }
    }

    fn approved(order_id: &str, approved_at: u64) -> Confirmation {
        Confirmation {
            order_id: order_id.to_owned(),
            status: PaymentStatus::Approved,
            approved_at,
        }
    }

    #[test]
    fn first_confirm_is_approved_at_now() {
        let mut ledger = Ledger::default();
        let outcome = ledger.confirm(request("o-1", "pk-1", 1000), 50);
        assert_eq!(outcome, ConfirmOutcome::First(approved("o-1", 50)));
    }

    #[test]
    fn repeat_confirm_returns_first_result_and_is_counted() {
        let mut ledger = Ledger::default();
        ledger.confirm(request("o-1", "pk-1", 1000), 50);
        let outcome = ledger.confirm(request("o-1", "pk-1", 1000), 90);

        assert_eq!(outcome, ConfirmOutcome::Repeat(approved("o-1", 50)));
        let snapshot = ledger.snapshot();
        assert_eq!(snapshot.request_count, 2);
        assert_eq!(snapshot.approvals.len(), 1);
        assert_eq!(snapshot.approvals[0].request_count, 2);
        assert_eq!(snapshot.approvals[0].approved_at, 50);
    }

    #[test]
    fn repeat_with_different_amount_conflicts_and_changes_nothing() {
        let mut ledger = Ledger::default();
        ledger.confirm(request("o-1", "pk-1", 1000), 50);
        let outcome = ledger.confirm(request("o-1", "pk-1", 999), 60);

        assert_eq!(outcome, ConfirmOutcome::Conflict);
        let snapshot = ledger.snapshot();
        assert_eq!(
            snapshot.request_count, 2,
            "conflict still counts as received"
        );
        assert_eq!(snapshot.approvals[0].amount, 1000);
        assert_eq!(snapshot.approvals[0].request_count, 1);
    }

    #[test]
    fn repeat_with_different_payment_key_conflicts() {
        let mut ledger = Ledger::default();
        ledger.confirm(request("o-1", "pk-1", 1000), 50);
        let outcome = ledger.confirm(request("o-1", "pk-2", 1000), 60);
        assert_eq!(outcome, ConfirmOutcome::Conflict);
    }

    #[test]
    fn unknown_order_has_no_payment() {
        let mut ledger = Ledger::default();
        ledger.confirm(request("o-1", "pk-1", 1000), 50);
        assert_eq!(ledger.payment("o-2"), None);
    }

    #[test]
    fn known_order_reports_status_and_amount() {
        let mut ledger = Ledger::default();
        ledger.confirm(request("o-1", "pk-1", 1000), 50);
        let view = ledger.payment("o-1").expect("payment recorded");
        assert_eq!(view.status, PaymentStatus::Approved);
        assert_eq!(view.amount, 1000);
    }

    #[test]
    fn snapshot_lists_requests_and_approvals_in_arrival_order() {
        let mut ledger = Ledger::default();
        ledger.confirm(request("o-2", "pk-2", 200), 10);
        ledger.confirm(request("o-1", "pk-1", 100), 20);
        ledger.confirm(request("o-2", "pk-2", 200), 30);

        let snapshot = ledger.snapshot();
        let received: Vec<_> = snapshot
            .requests
            .iter()
            .map(|r| (r.order_id.as_str(), r.received_at))
            .collect();
        assert_eq!(received, [("o-2", 10), ("o-1", 20), ("o-2", 30)]);
        let approved: Vec<_> = snapshot
            .approvals
            .iter()
            .map(|a| a.order_id.as_str())
            .collect();
        assert_eq!(approved, ["o-2", "o-1"]);
    }
}
