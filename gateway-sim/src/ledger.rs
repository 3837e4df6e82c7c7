//! What the simulated gateway knows: charges by `paymentKey` and `orderId`,
//! the answers kept under Idempotency-Keys, and every request it received.
//!
//! Kept free of I/O, of the clock and of randomness — callers pass `now_ms`
//! and the outcome of any roll — so the gateway's rules (idempotency, repeats
//! refused, declines, the rate cap, what gets counted) are unit tested
//! directly.
//!
//! A confirm goes through two steps. [`Ledger::receive`] records its arrival
//! and applies the rate cap; what it lets through comes back as a
//! [`Received`] ticket, which only [`Ledger::process`] turns into a decision.
//! Faults that never process a confirm (a hang, an injected 500) drop the
//! ticket, leaving the confirm received but undecided. A ticket that will be
//! processed later (`DELAY`'s wait, a capacity's processing time) is first
//! [`Ledger::defer`]red: until it is decided, its payment is `IN_PROGRESS` to a
//! look-up.
//!
//! A `paymentKey` its imitation of the payment window issued (`issued`) is
//! taken for that window's order and amount only; any other key not seen
//! before is taken as one a real window issued, since the simulator cannot
//! tell a made-up key.
//!
//! An approved charge can be cancelled ([`Ledger::cancel`]); it stays among
//! the approvals, with the time it was cancelled, so money taken and not
//! given back can be counted.
//!
//! Webhooks to the payment system are owed here too: a decision or a cancel
//! made with `notify` puts a [`Webhook`] in an outbox, holding the Payment as
//! it then stood; the caller empties it with [`Ledger::take_webhooks`] and
//! delivers, reporting each attempt back through [`Ledger::webhook_attempted`].

use std::collections::{HashMap, VecDeque};
use std::num::NonZeroU32;

mod charge;
mod decisions;
mod issued;
mod keys;
mod outbox;
mod views;

use charge::{transaction_key, Charge};
pub use decisions::{
    CancelOutcome, CancelRequest, Cancelling, ChargeId, ConfirmOutcome, ConfirmRequest, Processing,
    RateLimited, Received,
};
use issued::IssuedKeys;
pub use issued::{IssuedKey, NotAsIssued};
use keys::Keys;
pub use keys::{Claim, KeyClaim, StoredAnswer, KEY_LIFETIME_MS};
pub use outbox::{Webhook, WebhookId};
pub use views::{
    Approval, Call, CancelRecord, Decline, LedgerSnapshot, PaymentRecord, PaymentStatus,
    ReceivedRequest, WebhookRecord,
};

/// The rate cap's sliding window.
const RATE_WINDOW_MS: u64 = 1000;

/// The confirms of one payment that are deferred and not decided yet.
#[derive(Debug)]
struct Pending {
    /// The first of them, which a look-up answers.
    order_id: String,
    amount: u64,
    requested_at: u64,
    confirms: usize,
}

#[derive(Debug, Default)]
pub struct Ledger {
    calls: Vec<Call>,
    requests: Vec<ReceivedRequest>,
    // A Vec keeps decision order for the admin view; the indexes list each
    // payment's and order's charges in that order, the last being the one a
    // look-up sees.
    charges: Vec<Charge>,
    by_payment_key: HashMap<String, Vec<usize>>,
    by_order_id: HashMap<String, Vec<usize>>,
    pending: HashMap<String, Pending>,
    keys: Keys,
    issued: IssuedKeys,
    transactions: u64,
    /// When the confirms let through in the last window arrived, oldest first.
    let_through: VecDeque<u64>,
    webhooks: Vec<WebhookRecord>,
    outbox: Vec<Webhook>,
    /// Look-ups received, answered or not yet.
    status_queries: u64,
}

impl Ledger {
    /// Records a Toss API request as it arrived.
    pub fn record_call(&mut self, call: Call) {
        self.calls.push(call);
    }

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
            received_at: now_ms,
            deferred: false,
        })
    }

    /// Promises that a received confirm will be processed later: until
    /// then, its payment is `IN_PROGRESS` to a look-up (unless a charge of
    /// it is already decided).
    pub fn defer(&mut self, mut received: Received) -> Received {
        if !received.deferred {
            let request = &received.request;
            self.pending
                .entry(request.payment_key.clone())
                .or_insert(Pending {
                    order_id: request.order_id.clone(),
                    amount: request.amount,
                    requested_at: received.received_at,
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
        let Received {
            request,
            received_at,
            deferred,
        } = received;
        if deferred {
            if let Some(pending) = self.pending.get_mut(&request.payment_key) {
                pending.confirms = pending.confirms.saturating_sub(1);
                if pending.confirms == 0 {
                    self.pending.remove(&request.payment_key);
                }
            }
        }
        if processing.idempotent {
            if let Some(index) = latest(&self.by_payment_key, &request.payment_key) {
                self.charges[index].request_count += 1;
                return ConfirmOutcome::AlreadyProcessed(ChargeId(index));
            }
            let paid_elsewhere = self
                .by_order_id
                .get(&request.order_id)
                .is_some_and(|all| all.iter().any(|&index| self.charges[index].approved));
            if paid_elsewhere {
                return ConfirmOutcome::DuplicatedOrderId;
            }
        }

        let approved = !processing.decline;
        let amount = if approved {
            request
                .amount
                .saturating_add_signed(processing.amount_delta)
        } else {
            request.amount
        };
        let index = self.charges.len();
        let charge = Charge {
            payment_key: request.payment_key,
            order_id: request.order_id,
            amount,
            approved,
            requested_at: received_at,
            decided_at: now_ms,
            request_count: 1,
            transaction_key: self.next_transaction_key(),
            number: index,
            cancel: None,
        };
        index_charge(&mut self.by_payment_key, &charge.payment_key, index);
        index_charge(&mut self.by_order_id, &charge.order_id, index);
        self.charges.push(charge);
        let record = self.charges[index].record();
        if processing.notify {
            self.owe_webhook(&record, now_ms);
        }
        if approved {
            ConfirmOutcome::Approved(ChargeId(index), record)
        } else {
            ConfirmOutcome::Declined(ChargeId(index), record)
        }
    }

    /// Cancels the payment's approved charge in full — when not idempotent,
    /// every approved charge of its order. A cancelled charge stays among the
    /// approvals, with the time it was cancelled.
    pub fn cancel(
        &mut self,
        request: &CancelRequest,
        now_ms: u64,
        cancelling: Cancelling,
    ) -> CancelOutcome {
        let Some(latest) = latest(&self.by_payment_key, &request.payment_key) else {
            return if self.pending.contains_key(&request.payment_key) {
                CancelOutcome::InProgress
            } else {
                CancelOutcome::Unknown
            };
        };
        let targets = if cancelling.idempotent {
            vec![latest]
        } else {
            let order_id = &self.charges[latest].order_id;
            self.by_order_id.get(order_id).cloned().unwrap_or_default()
        };
        let live: Vec<usize> = targets
            .iter()
            .copied()
            .filter(|&index| self.charges[index].is_live_approval())
            .collect();
        let Some(&last) = live.last() else {
            return if targets.iter().any(|&index| self.charges[index].approved) {
                CancelOutcome::AlreadyCancelled
            } else {
                CancelOutcome::Declined
            };
        };
        let balance = self.charges[last].amount;
        match request.amount {
            Some(amount) if amount > balance => return CancelOutcome::AmountTooLarge,
            Some(amount) if amount < balance => return CancelOutcome::Partial,
            _ => {}
        }
        for index in live {
            let cancel = CancelRecord {
                transaction_key: self.next_transaction_key(),
                reason: request.reason.clone(),
                canceled_at: now_ms,
                amount: self.charges[index].amount,
            };
            self.charges[index].cancel = Some(cancel);
            if cancelling.notify {
                let record = self.charges[index].record();
                self.owe_webhook(&record, now_ms);
            }
        }
        CancelOutcome::Cancelled(self.charges[last].record())
    }

    /// What a look-up by `paymentKey` answers: the payment's latest charge
    /// or, while none is decided, its confirm in progress.
    pub fn payment_by_key(&self, payment_key: &str) -> Option<PaymentRecord> {
        match latest(&self.by_payment_key, payment_key) {
            Some(index) => Some(self.charges[index].record()),
            None => self
                .pending
                .get(payment_key)
                .map(|pending| in_progress(payment_key, pending)),
        }
    }

    /// What a look-up by `orderId` answers: the order's latest charge or,
    /// while none is decided, a confirm of it in progress.
    pub fn payment_by_order(&self, order_id: &str) -> Option<PaymentRecord> {
        match latest(&self.by_order_id, order_id) {
            Some(index) => Some(self.charges[index].record()),
            None => self
                .pending
                .iter()
                .filter(|(_, pending)| pending.order_id == order_id)
                .min_by_key(|(_, pending)| pending.requested_at)
                .map(|(payment_key, pending)| in_progress(payment_key, pending)),
        }
    }

    /// Looks an Idempotency-Key up under `path` (see [`Claim`]). A replay
    /// counts as a confirm of the charge its answer tells of.
    pub fn claim_key(&mut self, path: &str, key: &str, now_ms: u64) -> Claim {
        let (claim, charge) = self.keys.claim(path, key, now_ms);
        if let Some(ChargeId(index)) = charge {
            if let Some(charge) = self.charges.get_mut(index) {
                charge.request_count += 1;
            }
        }
        claim
    }

    /// Keeps the first answer under a claimed key; `charge`: the one it
    /// tells of, if any.
    pub fn complete_key(
        &mut self,
        claim: KeyClaim,
        answer: StoredAnswer,
        charge: Option<ChargeId>,
    ) {
        self.keys.complete(claim, answer, charge);
    }

    /// Lets a claimed key go, nothing kept under it.
    pub fn release_key(&mut self, claim: KeyClaim) {
        self.keys.release(claim);
    }

    /// Records a `paymentKey` the imitation window issued for `issued`.
    pub fn issue_key(&mut self, payment_key: String, issued: IssuedKey) {
        self.issued.issue(payment_key, issued);
    }

    /// Refuses a confirm of an issued key for another order or amount.
    pub fn check_issued(
        &self,
        payment_key: &str,
        order_id: &str,
        amount: u64,
    ) -> Result<(), NotAsIssued> {
        self.issued.check(payment_key, order_id, amount)
    }

    /// Counts a look-up as it arrives.
    pub fn count_status_query(&mut self) {
        self.status_queries += 1;
    }

    fn next_transaction_key(&mut self) -> String {
        self.transactions += 1;
        transaction_key(self.transactions)
    }
}

fn index_charge(index: &mut HashMap<String, Vec<usize>>, key: &str, charge: usize) {
    index.entry(key.to_owned()).or_default().push(charge);
}

/// The latest charge under `key` in `index`.
fn latest(index: &HashMap<String, Vec<usize>>, key: &str) -> Option<usize> {
    index.get(key)?.last().copied()
}

fn in_progress(payment_key: &str, pending: &Pending) -> PaymentRecord {
    PaymentRecord {
        payment_key: payment_key.to_owned(),
        order_id: pending.order_id.clone(),
        status: PaymentStatus::InProgress,
        amount: pending.amount,
        requested_at: pending.requested_at,
        approved_at: None,
        transaction_key: None,
        approve_no: None,
        cancel: None,
    }
}

#[cfg(test)]
mod tests;
