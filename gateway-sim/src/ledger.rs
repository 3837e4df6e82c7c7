//! What the simulated gateway knows: charges by `orderId` and every confirm
//! it received.
//!
//! Kept free of I/O, of the clock and of randomness — callers pass `now_ms`
//! and the outcome of any roll — so the gateway's rules (idempotency,
//! conflicts, declines, the rate cap, what gets counted) are unit tested
//! directly. The view types serialize as the wire shapes of the routes that
//! expose them.
//!
//! A confirm goes through two steps. [`Ledger::receive`] records its arrival
//! and applies the rate cap; what it lets through comes back as a
//! [`Received`] ticket, which only [`Ledger::process`] turns into a decision.
//! Faults that never process a confirm (a hang, an injected 500) drop the
//! ticket, leaving the confirm received but undecided.

use std::collections::{HashMap, VecDeque};
use std::num::NonZeroU32;

use serde::Serialize;

/// The rate cap's sliding window.
const RATE_WINDOW_MS: u64 = 1000;

/// A confirm that passed validation: non-empty keys and a positive amount.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ConfirmRequest {
    pub payment_key: String,
    pub order_id: String,
    pub amount: u64,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "SCREAMING_SNAKE_CASE")]
pub enum PaymentStatus {
    Approved,
    Declined,
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
    request: ConfirmRequest,
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
    /// Confirms that matched this charge, the first included.
    pub request_count: u64,
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
    pub requests: Vec<ReceivedRequest>,
    /// Approved charges in decision order; one order may appear more than
    /// once when confirms were not idempotent.
    pub approvals: Vec<Approval>,
    /// Declined charges in decision order.
    pub declines: Vec<Decline>,
}

#[derive(Debug)]
struct Charge {
    order_id: String,
    payment_key: String,
    amount: u64,
    status: PaymentStatus,
    decided_at: u64,
    request_count: u64,
}

impl Charge {
    fn confirmation(&self) -> Confirmation {
        Confirmation {
            order_id: self.order_id.clone(),
            status: self.status,
            approved_at: (self.status == PaymentStatus::Approved).then_some(self.decided_at),
        }
    }
}

#[derive(Debug, Default)]
pub struct Ledger {
    requests: Vec<ReceivedRequest>,
    // A Vec keeps decision order for the admin view; the index points at each
    // order's latest charge, the one repeats and status queries see.
    charges: Vec<Charge>,
    latest_by_order_id: HashMap<String, usize>,
    /// When the confirms let through in the last window arrived, oldest first.
    let_through: VecDeque<u64>,
}

impl Ledger {
    /// Records the confirm as received and applies the rate cap: at most
    /// `max_per_second` confirms are let through in any window of one
    /// second. Refused confirms do not count toward the cap, so a client that
    /// keeps retrying is not shut out for good.
    pub fn receive(
        &mut self,
        request: ConfirmRequest,
        now_ms: u64,
        max_per_second: Option<NonZeroU32>,
    ) -> Result<Received, RateLimited> {
        self.requests.push(ReceivedRequest {
            order_id: request.order_id.clone(),
            received_at: now_ms,
        });

        // Kept with no cap too, so a cap switched on later sees the last second.
        while self
            .let_through
            .front()
            .is_some_and(|&at| at.saturating_add(RATE_WINDOW_MS) <= now_ms)
        {
            self.let_through.pop_front();
        }
        if let Some(max_per_second) = max_per_second {
            if self.let_through.len() >= max_per_second.get() as usize {
                return Err(RateLimited { max_per_second });
            }
        }
        self.let_through.push_back(now_ms);
        Ok(Received { request })
    }

    /// Decides a received confirm; the single place where a charge's outcome
    /// is chosen.
    pub fn process(
        &mut self,
        received: Received,
        now_ms: u64,
        processing: Processing,
    ) -> ConfirmOutcome {
        let request = received.request;
        if processing.idempotent {
            if let Some(&index) = self.latest_by_order_id.get(&request.order_id) {
                let charge = &mut self.charges[index];
                if charge.payment_key != request.payment_key || charge.amount != request.amount {
                    return ConfirmOutcome::Conflict;
                }
                charge.request_count += 1;
                return ConfirmOutcome::Repeat(charge.confirmation());
            }
        }

        let status = if processing.decline {
            PaymentStatus::Declined
        } else {
            PaymentStatus::Approved
        };
        let charge = Charge {
            order_id: request.order_id,
            payment_key: request.payment_key,
            amount: request.amount,
            status,
            decided_at: now_ms,
            request_count: 1,
        };
        let confirmation = charge.confirmation();
        self.latest_by_order_id
            .insert(charge.order_id.clone(), self.charges.len());
        self.charges.push(charge);
        ConfirmOutcome::New(confirmation)
    }

    /// The order's latest charge.
    pub fn payment(&self, order_id: &str) -> Option<PaymentView> {
        let charge = &self.charges[*self.latest_by_order_id.get(order_id)?];
        Some(PaymentView {
            order_id: charge.order_id.clone(),
            status: charge.status,
            amount: charge.amount,
        })
    }

    pub fn snapshot(&self) -> LedgerSnapshot {
        let mut approvals = Vec::new();
        let mut declines = Vec::new();
        for charge in &self.charges {
            let order_id = charge.order_id.clone();
            match charge.status {
                PaymentStatus::Approved => approvals.push(Approval {
                    order_id,
                    amount: charge.amount,
                    approved_at: charge.decided_at,
                    request_count: charge.request_count,
                }),
                PaymentStatus::Declined => declines.push(Decline {
                    order_id,
                    amount: charge.amount,
                    declined_at: charge.decided_at,
                    request_count: charge.request_count,
                }),
            }
        }
        LedgerSnapshot {
            request_count: self.requests.len(),
            requests: self.requests.clone(),
            approvals,
            declines,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const IDEMPOTENT: Processing = Processing {
        idempotent: true,
        decline: false,
    };
    const NOT_IDEMPOTENT: Processing = Processing {
        idempotent: false,
        decline: false,
    };
    const DECLINE: Processing = Processing {
        idempotent: true,
        decline: true,
    };

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
            approved_at: Some(approved_at),
        }
    }

    fn declined(order_id: &str) -> Confirmation {
        Confirmation {
            order_id: order_id.to_owned(),
            status: PaymentStatus::Declined,
            approved_at: None,
        }
    }

    /// Receives with no rate cap and processes at the same instant.
    fn confirm(
        ledger: &mut Ledger,
        req: ConfirmRequest,
        now_ms: u64,
        processing: Processing,
    ) -> ConfirmOutcome {
        let received = ledger.receive(req, now_ms, None).expect("no cap");
        ledger.process(received, now_ms, processing)
    }

    fn cap(max: u32) -> Option<NonZeroU32> {
        Some(NonZeroU32::new(max).expect("positive cap"))
    }

    #[test]
    fn first_confirm_is_approved_at_now() {
        let mut ledger = Ledger::default();
        let outcome = confirm(&mut ledger, request("o-1", "pk-1", 1000), 50, IDEMPOTENT);
        assert_eq!(outcome, ConfirmOutcome::New(approved("o-1", 50)));
    }

    #[test]
    fn repeat_confirm_returns_first_result_and_is_counted() {
        let mut ledger = Ledger::default();
        confirm(&mut ledger, request("o-1", "pk-1", 1000), 50, IDEMPOTENT);
        let outcome = confirm(&mut ledger, request("o-1", "pk-1", 1000), 90, IDEMPOTENT);

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
        confirm(&mut ledger, request("o-1", "pk-1", 1000), 50, IDEMPOTENT);
        let outcome = confirm(&mut ledger, request("o-1", "pk-1", 999), 60, IDEMPOTENT);

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
        confirm(&mut ledger, request("o-1", "pk-1", 1000), 50, IDEMPOTENT);
        let outcome = confirm(&mut ledger, request("o-1", "pk-2", 1000), 60, IDEMPOTENT);
        assert_eq!(outcome, ConfirmOutcome::Conflict);
    }

    #[test]
    fn unknown_order_has_no_payment() {
        let mut ledger = Ledger::default();
        confirm(&mut ledger, request("o-1", "pk-1", 1000), 50, IDEMPOTENT);
        assert_eq!(ledger.payment("o-2"), None);
    }

    #[test]
    fn known_order_reports_status_and_amount() {
        let mut ledger = Ledger::default();
        confirm(&mut ledger, request("o-1", "pk-1", 1000), 50, IDEMPOTENT);
        let view = ledger.payment("o-1").expect("payment recorded");
        assert_eq!(view.status, PaymentStatus::Approved);
        assert_eq!(view.amount, 1000);
    }

    #[test]
    fn snapshot_lists_requests_and_approvals_in_arrival_order() {
        let mut ledger = Ledger::default();
        confirm(&mut ledger, request("o-2", "pk-2", 200), 10, IDEMPOTENT);
        confirm(&mut ledger, request("o-1", "pk-1", 100), 20, IDEMPOTENT);
        confirm(&mut ledger, request("o-2", "pk-2", 200), 30, IDEMPOTENT);

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

    #[test]
    fn declined_charge_is_stored_declined_and_is_no_approval() {
        let mut ledger = Ledger::default();
        let outcome = confirm(&mut ledger, request("o-1", "pk-1", 1000), 50, DECLINE);

        assert_eq!(outcome, ConfirmOutcome::New(declined("o-1")));
        let view = ledger.payment("o-1").expect("payment recorded");
        assert_eq!(view.status, PaymentStatus::Declined);
        let snapshot = ledger.snapshot();
        assert!(snapshot.approvals.is_empty());
        assert_eq!(
            snapshot.declines,
            [Decline {
                order_id: "o-1".into(),
                amount: 1000,
                declined_at: 50,
                request_count: 1,
            }]
        );
    }

    #[test]
    fn repeat_of_a_declined_order_replays_the_decline_whatever_the_roll() {
        let mut ledger = Ledger::default();
        confirm(&mut ledger, request("o-1", "pk-1", 1000), 50, DECLINE);
        let outcome = confirm(&mut ledger, request("o-1", "pk-1", 1000), 60, IDEMPOTENT);

        assert_eq!(outcome, ConfirmOutcome::Repeat(declined("o-1")));
        let snapshot = ledger.snapshot();
        assert!(snapshot.approvals.is_empty());
        assert_eq!(snapshot.declines[0].request_count, 2);
    }

    #[test]
    fn decline_roll_does_not_touch_an_approved_order() {
        let mut ledger = Ledger::default();
        confirm(&mut ledger, request("o-1", "pk-1", 1000), 50, IDEMPOTENT);
        let outcome = confirm(&mut ledger, request("o-1", "pk-1", 1000), 60, DECLINE);
        assert_eq!(outcome, ConfirmOutcome::Repeat(approved("o-1", 50)));
        assert!(ledger.snapshot().declines.is_empty());
    }

    #[test]
    fn non_idempotent_repeat_is_another_approval() {
        let mut ledger = Ledger::default();
        confirm(
            &mut ledger,
            request("o-1", "pk-1", 1000),
            50,
            NOT_IDEMPOTENT,
        );
        let outcome = confirm(
            &mut ledger,
            request("o-1", "pk-1", 1000),
            90,
            NOT_IDEMPOTENT,
        );

        assert_eq!(outcome, ConfirmOutcome::New(approved("o-1", 90)));
        let snapshot = ledger.snapshot();
        let approvals: Vec<_> = snapshot
            .approvals
            .iter()
            .map(|a| (a.order_id.as_str(), a.approved_at, a.request_count))
            .collect();
        assert_eq!(approvals, [("o-1", 50, 1), ("o-1", 90, 1)]);
    }

    #[test]
    fn non_idempotent_repeat_with_another_amount_is_a_new_charge_not_a_conflict() {
        let mut ledger = Ledger::default();
        confirm(
            &mut ledger,
            request("o-1", "pk-1", 1000),
            50,
            NOT_IDEMPOTENT,
        );
        let outcome = confirm(&mut ledger, request("o-1", "pk-2", 700), 60, NOT_IDEMPOTENT);

        assert_eq!(outcome, ConfirmOutcome::New(approved("o-1", 60)));
        assert_eq!(ledger.payment("o-1").map(|view| view.amount), Some(700));
    }

    #[test]
    fn status_query_answers_the_latest_charge() {
        let mut ledger = Ledger::default();
        let decline_once = Processing {
            idempotent: false,
            decline: true,
        };
        confirm(
            &mut ledger,
            request("o-1", "pk-1", 1000),
            50,
            NOT_IDEMPOTENT,
        );
        confirm(&mut ledger, request("o-1", "pk-1", 1000), 60, decline_once);
        let view = ledger.payment("o-1").expect("payment recorded");
        assert_eq!(view.status, PaymentStatus::Declined);

        // Back to idempotent: a repeat replays the latest charge.
        let outcome = confirm(&mut ledger, request("o-1", "pk-1", 1000), 70, IDEMPOTENT);
        assert_eq!(outcome, ConfirmOutcome::Repeat(declined("o-1")));
    }

    #[test]
    fn received_but_unprocessed_confirm_is_counted_and_undecided() {
        let mut ledger = Ledger::default();
        let received = ledger.receive(request("o-1", "pk-1", 1000), 50, None);
        drop(received.expect("no cap"));

        assert_eq!(ledger.payment("o-1"), None);
        let snapshot = ledger.snapshot();
        assert_eq!(snapshot.request_count, 1);
        assert!(snapshot.approvals.is_empty());
        assert!(snapshot.declines.is_empty());
    }

    #[test]
    fn rate_cap_refuses_confirms_beyond_the_cap_within_a_second() {
        let mut ledger = Ledger::default();
        assert!(ledger.receive(request("o-1", "pk", 1), 0, cap(2)).is_ok());
        assert!(ledger.receive(request("o-2", "pk", 1), 400, cap(2)).is_ok());
        let refused = ledger.receive(request("o-3", "pk", 1), 999, cap(2));
        assert_eq!(
            refused.map(|_| ()),
            Err(RateLimited {
                max_per_second: NonZeroU32::new(2).expect("positive"),
            })
        );

        let snapshot = ledger.snapshot();
        assert_eq!(snapshot.request_count, 3, "refused confirms are received");
        assert_eq!(snapshot.requests[2].order_id, "o-3");
    }

    #[test]
    fn rate_cap_window_slides() {
        let mut ledger = Ledger::default();
        assert!(ledger.receive(request("o-1", "pk", 1), 0, cap(2)).is_ok());
        assert!(ledger.receive(request("o-2", "pk", 1), 400, cap(2)).is_ok());
        // The confirm at 0 leaves the window at 1000; the one at 400 is still in it.
        assert!(ledger
            .receive(request("o-3", "pk", 1), 1000, cap(2))
            .is_ok());
        assert!(ledger
            .receive(request("o-4", "pk", 1), 1100, cap(2))
            .is_err());
        assert!(ledger
            .receive(request("o-5", "pk", 1), 1400, cap(2))
            .is_ok());
    }

    #[test]
    fn refused_confirms_do_not_count_toward_the_cap() {
        let mut ledger = Ledger::default();
        assert!(ledger.receive(request("o-1", "pk", 1), 0, cap(1)).is_ok());
        for now in [100, 500, 900] {
            assert!(ledger
                .receive(request("o-x", "pk", 1), now, cap(1))
                .is_err());
        }
        assert!(ledger
            .receive(request("o-2", "pk", 1), 1000, cap(1))
            .is_ok());
    }

    #[test]
    fn without_a_cap_every_confirm_is_let_through_and_a_later_cap_sees_them() {
        let mut ledger = Ledger::default();
        for now in 0..5 {
            assert!(ledger.receive(request("o", "pk", 1), now, None).is_ok());
        }
        assert!(ledger.receive(request("o", "pk", 1), 10, cap(5)).is_err());
    }
}
