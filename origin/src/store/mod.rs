//! Where payments are kept. All SQL lives behind [`Store`]; the use cases never see it.
//!
//! SQLite ([`sqlite::SqliteStore`]) is the default; PostgreSQL ([`postgres::PostgresStore`])
//! is for several origin instances sharing one database. [`open`] chooses by the URL's
//! scheme.

mod budget;
mod checkpoint;
mod controls;
mod events;
mod group_commit;
mod idempotency;
mod nonces;
mod open;
pub mod outbox;
mod outbox_sql;
mod payment_keys;
mod payments;
pub mod postgres;
mod reconciliation;
mod recovery;
mod rooms;
mod sql;
mod sql_store;
pub mod sqlite;
pub mod transient;
mod types;
mod users;

use async_trait::async_trait;
use rules::sliding_window::Rate;

pub use self::open::{open, without_password, Backend};
pub use self::outbox::{Ack, Attempt, Backlog, Claim, Failure, Outbox, OutboxEvent};
pub use self::types::*;
use crate::policy::recovery::Decision;
use crate::policy::settlement::period::Period;
use crate::policy::settlement::queue::{Item, ItemStatus, Resolution};
use crate::policy::settlement::reconcile::Finding;

#[async_trait]
pub trait Store: Outbox + Send + Sync + 'static {
    /// TX 1: inserts the payment as PENDING and commits. For an event with stock, it
    /// reserves a unit in the same statement or transaction: `SoldOut` when none is
    /// left, `WrongAmount` when the amount is not the event's price.
    async fn insert_pending(&self, payment: NewPayment) -> Result<Payment, StoreError>;

    /// TX 2: records the outcome of a payment that is still PENDING, and returns the
    /// payment as it now stands. A payment that already left PENDING is left as it is.
    async fn record_outcome(
        &self,
        payment_id: i64,
        outcome: Outcome,
        now_ms: i64,
    ) -> Result<Payment, StoreError>;

    /// Keeps the PG's own id for a payment (Stripe's `pi_…`), the moment an answer named
    /// it, whatever the answer.
    async fn record_reference(&self, payment_id: i64, reference: &str) -> Result<(), StoreError>;

    /// The user's payment for `order_id`; another user's payment is not found.
    async fn payment_by_order(
        &self,
        user_id: &str,
        order_id: &str,
    ) -> Result<Option<Payment>, StoreError>;

    /// The user's most recent payments, newest first.
    async fn recent_payments(&self, user_id: &str, limit: u32) -> Result<Vec<Payment>, StoreError>;

    /// Claims an Idempotency-Key for a request, atomically with any concurrent claim
    /// of the same key. A record older than `retain_ms` counts as absent.
    async fn claim_idempotency_key(
        &self,
        claim: &IdempotencyClaim,
        now_ms: i64,
    ) -> Result<Claimed, StoreError>;

    /// What is recorded for `claim`'s key, without claiming it or writing anything;
    /// `None` when no record is kept within its retention, or only a lease that ran out.
    async fn idempotency_record(
        &self,
        claim: &IdempotencyClaim,
        now_ms: i64,
    ) -> Result<Option<IdempotencyRecord>, StoreError>;

    /// Stores the response of a claimed key's request, for replay.
    async fn finish_idempotency_key(
        &self,
        user_id: &str,
        key: &str,
        response: &StoredResponse,
    ) -> Result<(), StoreError>;

    /// Forgets a claimed key whose request did nothing, so a retry runs afresh.
    async fn release_idempotency_key(&self, user_id: &str, key: &str) -> Result<(), StoreError>;

    /// Deletes records created before `before_ms`; returns how many.
    async fn purge_idempotency_keys(&self, before_ms: i64) -> Result<u64, StoreError>;

    /// Records an edge nonce until `expires_at_ms`: true the first time any instance on
    /// this database records it, false for every replay.
    async fn first_use_of_nonce(&self, nonce: &str, expires_at_ms: i64)
        -> Result<bool, StoreError>;

    /// Forgets the nonces that expired before `now_ms`; returns how many.
    async fn purge_edge_nonces(&self, now_ms: i64) -> Result<u64, StoreError>;

    /// The operator's setting of `guard`'s breaker, if one was ever made.
    async fn breaker_control(&self, guard: &str) -> Result<Option<BreakerControl>, StoreError>;

    /// Sets `guard`'s breaker as an operator asked, for every instance on the database:
    /// the setting's version, higher than every earlier one's (`control.version` is not
    /// read).
    async fn set_breaker_control(
        &self,
        guard: &str,
        control: &BreakerControl,
    ) -> Result<i64, StoreError>;

    /// The waiting room an operator defined for `event_id`, if one was.
    async fn event_room(
        &self,
        event_id: &str,
    ) -> Result<Option<rules::drop::RoomUpdate>, StoreError>;

    /// Every waiting room operators defined, by event id, at most `limit`.
    async fn event_rooms(
        &self,
        limit: u32,
    ) -> Result<Vec<(String, rules::drop::RoomUpdate)>, StoreError>;

    /// Sets the waiting room of `event_id`: the update to hand the edge, its version
    /// higher than every earlier one's. With `expected`, only over that version (0: no
    /// room yet), atomically: `StaleVersion` names the version in force otherwise.
    async fn set_event_room(
        &self,
        event_id: &str,
        settings: &rules::drop::RoomSettings,
        state: rules::drop::RoomState,
        now_ms: i64,
        expected: Option<u64>,
    ) -> Result<rules::drop::RoomUpdate, StoreError>;

    /// The PG's call budget every instance on this database shares (PostgreSQL); `None`
    /// where one instance keeps its own (SQLite).
    fn shared_budget(&self) -> Option<std::sync::Arc<dyn SharedBudget>>;

    /// The payment with this id.
    async fn payment_by_id(&self, payment_id: i64) -> Result<Payment, StoreError>;

    /// The payment for `order_id`, whoever owns it (PG webhooks name only the order; a
    /// confirm asks who holds the order before anything else).
    async fn payment_by_order_id(&self, order_id: &str) -> Result<Option<Payment>, StoreError>;

    /// Payments in `status`, oldest first.
    async fn payments_with_status(
        &self,
        status: PaymentStatus,
        limit: u32,
    ) -> Result<Vec<Payment>, StoreError>;

    /// Claims up to `limit` payments due for recovery — UNKNOWN ones, PENDING ones
    /// created before `pending_before_ms` (a confirm that died), and FAILED ones with a
    /// refund due — whose next attempt is due at `now_ms` and whose lease (if any) has
    /// run out, oldest due first; each is leased to `lease`. Concurrent claims never
    /// return the same payment.
    async fn claim_for_recovery(
        &self,
        now_ms: i64,
        pending_before_ms: i64,
        lease: Lease<'_>,
        limit: u32,
    ) -> Result<Vec<Payment>, StoreError>;

    /// Extends to `lease.until_ms` the leases `lease.holder` still holds at `now_ms`
    /// among `payment_ids`; answers the ids still held. A lease that ran out, or that
    /// another holder took since, is not renewed.
    async fn renew_recovery_leases(
        &self,
        payment_ids: &[i64],
        lease: Lease<'_>,
        now_ms: i64,
    ) -> Result<Vec<i64>, StoreError>;

    /// Records what recovery decided, if the payment is still PENDING or UNKNOWN;
    /// `None` when it was settled meanwhile. A payment asked about again later is
    /// UNKNOWN from now on. Its lease ends if `lease_holder` holds it: another holder's
    /// lease stays, so a recovery that lost its lease cannot free the payment for a third.
    async fn record_recovery(
        &self,
        payment_id: i64,
        decision: &Decision,
        lease_holder: &str,
        now_ms: i64,
    ) -> Result<Option<Payment>, StoreError>;

    /// Creates an event or sets its stock and price; `StockBelowCommitted` when the
    /// stock would fall below the units already reserved or sold.
    async fn upsert_event(&self, event: &EventSpec, now_ms: i64) -> Result<EventView, StoreError>;

    /// The event and its units now.
    async fn event(&self, event_id: &str) -> Result<Option<EventView>, StoreError>;

    /// The first `limit` events by id, with their units now.
    async fn events(&self, limit: u32) -> Result<Vec<EventView>, StoreError>;

    /// Marks a FAILED payment the PG approved after all: its charge must be cancelled.
    /// Recovery claims it from `next_attempt_at` until [`Store::record_refunded`].
    /// False when the payment is not FAILED.
    async fn mark_refund_due(
        &self,
        payment_id: i64,
        next_attempt_at: i64,
        now_ms: i64,
    ) -> Result<bool, StoreError>;

    /// Records that a late approval was cancelled at the PG: FAILED (refund due) →
    /// REFUNDED, with `note` for operators. `None` when it was not due.
    async fn record_refunded(
        &self,
        payment_id: i64,
        note: &str,
        now_ms: i64,
    ) -> Result<Option<Payment>, StoreError>;

    /// Our APPROVED payments approved in `[from_ms, to_ms)`: order id and amount.
    async fn approved_between(
        &self,
        from_ms: i64,
        to_ms: i64,
    ) -> Result<Vec<(String, i64)>, StoreError>;

    /// Queues the exceptions found reconciling `period` as PENDING items, one per
    /// distinct finding: one already known (pending or resolved) is not added again.
    /// Returns how many were added.
    async fn queue_exceptions(
        &self,
        findings: &[Finding],
        period: &Period,
        now_ms: i64,
    ) -> Result<u64, StoreError>;

    /// Closes the pending AMOUNT_MISMATCH and INTERNAL_ONLY items of orders a file has
    /// now matched, with [`CLOSED_BY_A_MATCH`](crate::policy::settlement::queue::CLOSED_BY_A_MATCH). Returns how many.
    async fn close_matched(&self, order_ids: &[String], now_ms: i64) -> Result<u64, StoreError>;

    /// Queue items in `status` (all when `None`) with ids above `after_id`, oldest first.
    async fn reconciliation_items(
        &self,
        status: Option<ItemStatus>,
        after_id: i64,
        limit: u32,
    ) -> Result<Vec<Item>, StoreError>;

    /// How many items are PENDING.
    async fn pending_reconciliation_items(&self) -> Result<u64, StoreError>;

    /// Resolves a pending item with an operator's note.
    async fn resolve_reconciliation_item(
        &self,
        id: i64,
        note: &str,
        now_ms: i64,
    ) -> Result<Resolution, StoreError>;

    /// Payment keys as stored (sealed, or in plain text from before encryption) that
    /// are not sealed under KEK `version`, of payments with ids above `after_id`, by id.
    async fn payment_keys_not_on(
        &self,
        version: u32,
        after_id: i64,
        limit: u32,
    ) -> Result<Vec<StoredPaymentKey>, StoreError>;

    /// How many payment keys are not sealed under KEK `version`.
    async fn count_payment_keys_not_on(&self, version: u32) -> Result<u64, StoreError>;

    /// Stores each payment's new sealed key if its stored key is still the old one, in
    /// one transaction; returns how many were replaced.
    async fn replace_payment_keys(&self, replacements: &[Replacement]) -> Result<u64, StoreError>;

    /// Adds a user; the name must be new.
    async fn insert_user(&self, user: &User, now_ms: i64) -> Result<(), StoreError>;

    /// Replaces a user's password hash; false when there is no such user.
    async fn set_password_hash(
        &self,
        username: &str,
        password_hash: &str,
        now_ms: i64,
    ) -> Result<bool, StoreError>;

    /// The user with this (normalised) name.
    async fn user_by_name(&self, username: &str) -> Result<Option<User>, StoreError>;
}

/// The limiter's budget kept in the database, so that every instance on it counts against
/// one limit (`docs/design/guard.md`). Its times are the database's clock.
#[async_trait]
pub trait SharedBudget: Send + Sync + 'static {
    /// Makes the sliding window's slots for `rate` under `guard`, if they are not there.
    async fn prepare_slots(&self, guard: &str, rate: Rate) -> Result<(), StoreError>;

    /// Takes a slot of `guard`'s window that no longer counts, for `hold_ms` at most (the
    /// call's timeout and a window: an instance that dies holding it frees it then), to
    /// `holder`; `None` when all `rate.limit` count.
    async fn take_slot(
        &self,
        guard: &str,
        rate: Rate,
        hold_ms: i64,
        holder: i64,
    ) -> Result<Option<Slot>, StoreError>;

    /// The slot's call is over: it counts for `window_ms` more, if its holder still holds it.
    async fn finish_slot(&self, guard: &str, slot: Slot, window_ms: i64) -> Result<(), StoreError>;

    /// Makes `guard`'s token bucket for `rate`, full; one kept for another rate starts
    /// again.
    async fn prepare_bucket(&self, guard: &str, rate: Rate) -> Result<(), StoreError>;

    /// Takes a token from `guard`'s bucket; false when it has none.
    async fn take_token(&self, guard: &str) -> Result<bool, StoreError>;
}
