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
//! ticket, leaving the confirm received but undecided. A ticket that will be
//! processed later (the `DELAY` mode's wait) is first [`Ledger::defer`]red:
//! until it is decided, its order is `PENDING` to a status query.
//!
//! An approved charge can be cancelled ([`Ledger::cancel`]); it stays among
//! the approvals, with the time it was cancelled, so money taken and not
//! given back can be counted.
//!
//! Callbacks to the payment system are owed here too: a decision or a cancel
//! made with `notify` puts a [`Callback`] in an outbox, which the caller
//! empties with [`Ledger::take_callbacks`] and delivers, reporting each
//! attempt back through [`Ledger::callback_attempted`].

use std::collections::{HashMap, VecDeque};
use std::num::NonZeroU32;

use rules::callback::{CallbackBody, CallbackStatus};

mod calls;
mod views;

pub use calls::{
    CancelOutcome, Cancelling, ConfirmOutcome, ConfirmRequest, Confirmation, OrderStatus,
    PaymentStatus, Processing, RateLimited, Received,
};
pub use views::{Approval, CallbackRecord, Decline, LedgerSnapshot, PaymentView, ReceivedRequest};

/// The rate cap's sliding window.
const RATE_WINDOW_MS: u64 = 1000;

/// Names one owed callback, to report its delivery attempts.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct CallbackId(usize);

/// A callback waiting in the outbox to be delivered.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Callback {
    pub id: CallbackId,
    pub body: CallbackBody,
}

#[derive(Debug)]
struct Charge {
    order_id: String,
    payment_key: String,
    amount: u64,
    status: PaymentStatus,
    decided_at: u64,
    request_count: u64,
    cancelled_at: Option<u64>,
}

impl Charge {
    fn confirmation(&self) -> Confirmation {
        Confirmation {
            order_id: self.order_id.clone(),
            status: self.status,
            approved_at: (self.status == PaymentStatus::Approved).then_some(self.decided_at),
        }
    }

    fn is_live_approval(&self) -> bool {
        self.status == PaymentStatus::Approved && self.cancelled_at.is_none()
    }
}

/// The confirms of one order that are deferred and not decided yet.
#[derive(Debug)]
struct Pending {
    /// The amount of the first of them, which a status query answers.
    amount: u64,
    confirms: usize,
}

#[derive(Debug, Default)]
pub struct Ledger {
    requests: Vec<ReceivedRequest>,
    // A Vec keeps decision order for the admin view; the index lists each
    // order's charges in that order, the last being the one repeats and
    // status queries see.
    charges: Vec<Charge>,
    charges_by_order_id: HashMap<String, Vec<usize>>,
    pending: HashMap<String, Pending>,
    /// When the confirms let through in the last window arrived, oldest first.
    let_through: VecDeque<u64>,
    callbacks: Vec<CallbackRecord>,
    outbox: Vec<Callback>,
    /// Status queries received, answered or not yet.
    status_queries: u64,
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
        Ok(Received {
            request,
            deferred: false,
        })
    }

    /// Promises that a received confirm will be processed later: until
    /// then, its order is `PENDING` to a status query (unless a charge of
    /// the order is already decided).
    pub fn defer(&mut self, mut received: Received) -> Received {
        if !received.deferred {
            let request = &received.request;
            self.pending
                .entry(request.order_id.clone())
                .or_insert(Pending {
                    amount: request.amount,
                    confirms: 0,
                })
                .confirms += 1;
            received.deferred = true;
        }
        received
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
        if received.deferred {
            if let Some(pending) = self.pending.get_mut(&request.order_id) {
                pending.confirms = pending.confirms.saturating_sub(1);
                if pending.confirms == 0 {
                    self.pending.remove(&request.order_id);
                }
            }
        }
        if processing.idempotent {
            if let Some(index) = self.latest(&request.order_id) {
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
            cancelled_at: None,
        };
        let confirmation = charge.confirmation();
        let index = self.charges.len();
        self.charges_by_order_id
            .entry(charge.order_id.clone())
            .or_default()
            .push(index);
        self.charges.push(charge);
        if processing.notify {
            let status = match confirmation.status {
                PaymentStatus::Approved => CallbackStatus::Approved,
                PaymentStatus::Declined => CallbackStatus::Declined,
            };
            self.owe_callback(index, status);
        }
        ConfirmOutcome::New(confirmation)
    }

    /// Cancels the order's approved charge — every one of them when not
    /// idempotent. A cancelled charge stays among the approvals, with the
    /// time it was cancelled.
    pub fn cancel(&mut self, order_id: &str, now_ms: u64, cancelling: Cancelling) -> CancelOutcome {
        let Some(indices) = self.charges_by_order_id.get(order_id) else {
            return if self.pending.contains_key(order_id) {
                CancelOutcome::Pending
            } else {
                CancelOutcome::Unknown
            };
        };
        let targets = if cancelling.idempotent {
            &indices[indices.len().saturating_sub(1)..]
        } else {
            &indices[..]
        };
        let approved: Vec<usize> = targets
            .iter()
            .copied()
            .filter(|&index| self.charges[index].status == PaymentStatus::Approved)
            .collect();
        if approved.is_empty() {
            return CancelOutcome::Declined;
        }
        let mut outcome = CancelOutcome::AlreadyCancelled;
        for index in approved {
            if self.charges[index].is_live_approval() {
                self.charges[index].cancelled_at = Some(now_ms);
                if cancelling.notify {
                    self.owe_callback(index, CallbackStatus::Cancelled);
                }
                outcome = CancelOutcome::Cancelled;
            }
        }
        outcome
    }

    /// What a status query answers: the order's latest charge or, while
    /// none is decided, its pending confirm.
    pub fn payment(&self, order_id: &str) -> Option<PaymentView> {
        let Some(index) = self.latest(order_id) else {
            let pending = self.pending.get(order_id)?;
            return Some(PaymentView {
                order_id: order_id.to_owned(),
                status: OrderStatus::Pending,
                amount: pending.amount,
                approved_at: None,
            });
        };
        let charge = &self.charges[index];
        let status = match (charge.status, charge.cancelled_at) {
            (PaymentStatus::Declined, _) => OrderStatus::Declined,
            (PaymentStatus::Approved, None) => OrderStatus::Approved,
            (PaymentStatus::Approved, Some(_)) => OrderStatus::Cancelled,
        };
        Some(PaymentView {
            order_id: charge.order_id.clone(),
            status,
            amount: charge.amount,
            approved_at: charge.confirmation().approved_at,
        })
    }

    /// Empties the outbox: the callbacks owed since it was last emptied.
    pub fn take_callbacks(&mut self) -> Vec<Callback> {
        std::mem::take(&mut self.outbox)
    }

    /// Records one delivery attempt of a callback; `delivered`: it was
    /// answered 2xx.
    pub fn callback_attempted(&mut self, id: CallbackId, now_ms: u64, delivered: bool) {
        if let Some(record) = self.callbacks.get_mut(id.0) {
            record.attempts += 1;
            if delivered && record.delivered_at.is_none() {
                record.delivered_at = Some(now_ms);
            }
        }
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
                    cancelled_at: charge.cancelled_at,
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
            status_query_count: self.status_queries,
            requests: self.requests.clone(),
            approvals,
            declines,
            callbacks: self.callbacks.clone(),
        }
    }

    /// Counts a status query as it arrives.
    pub fn count_status_query(&mut self) {
        self.status_queries += 1;
    }

    /// The index of the order's latest charge.
    fn latest(&self, order_id: &str) -> Option<usize> {
        self.charges_by_order_id.get(order_id)?.last().copied()
    }

    fn owe_callback(&mut self, index: usize, status: CallbackStatus) {
        let charge = &self.charges[index];
        let body = CallbackBody {
            order_id: charge.order_id.clone(),
            status,
            amount: signed(charge.amount),
            approved_at: (charge.status == PaymentStatus::Approved)
                .then(|| signed(charge.decided_at)),
        };
        let id = CallbackId(self.callbacks.len());
        self.callbacks.push(CallbackRecord {
            order_id: body.order_id.clone(),
            status,
            delivered_at: None,
            attempts: 0,
        });
        self.outbox.push(Callback { id, body });
    }
}

/// Amounts and times come from `i64` bodies and the clock, so they fit; the
/// cap only keeps the conversion total.
fn signed(value: u64) -> i64 {
    i64::try_from(value).unwrap_or(i64::MAX)
}

#[cfg(test)]
mod tests;
