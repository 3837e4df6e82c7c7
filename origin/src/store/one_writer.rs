//! One writer at a time for a SQLite store: every method that writes waits its turn in
//! one first-come, first-served queue of the process (an async mutex, fair), and only
//! then begins its transaction; reads go straight to the pool. SQLite has one write
//! lock per database, and one origin process per file: the queue is where the writers
//! met anyway, but there a writer that found the lock taken slept in SQLite's busy
//! handler (1, 2, 5, 10, 15 ms …) however soon the lock came free — a confirm that met
//! one of the outbox's writes took 18–25 ms (`docs/design/webhooks.md`). Here it is
//! woken the moment the writer ahead commits.
//!
//! **Two lanes.** The process's own loops — the outbox's passes (its results, publishing
//! and claiming, one transaction each), recovery, settlement, the purges, the key
//! rotation — write in the background lane:
//! they first take turns among themselves, so at most one of them is ever in the
//! queue. A request's write (a confirm's, a login's, an operator's) waits behind at
//! most one background write, however many the loops have to make; the background
//! loses nothing but its place, and goes next whenever no request is ahead of it.
//!
//! Nothing is acknowledged that was not committed: a writer's future answers only once
//! its own transaction has, and one dropped while it waits (its request gone, the
//! process killed) never began. PostgreSQL locks rows, not the database, and keeps its
//! pool: this wraps the SQLite store only (`open.rs`).

use std::sync::Arc;

use async_trait::async_trait;
use tokio::sync::{Mutex, MutexGuard};

use super::*;
use crate::policy::recovery::Decision;
use crate::policy::settlement::period::Period;
use crate::policy::settlement::queue::{Item, ItemStatus, Resolution};
use crate::policy::settlement::reconcile::Finding;

/// `inner`, its writes one at a time in the order they asked, a request's ahead of all
/// but one of the background's.
pub struct OneWriter<S> {
    inner: S,
    /// The turn to write: held by one writer, waited for first come, first served.
    turn: Mutex<()>,
    /// What a background writer holds before it waits for the turn.
    background: Mutex<()>,
}

/// Whose write it is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Lane {
    /// A request's: someone is waiting for the answer.
    Request,
    /// One of the process's own loops.
    Background,
}

/// A writer's turn, held until its transaction is over; the turn is given up before
/// the background lane, so the next background writer queues only once it is over.
struct Turn<'a> {
    _turn: MutexGuard<'a, ()>,
    _lane: Option<MutexGuard<'a, ()>>,
}

impl<S> OneWriter<S> {
    pub fn new(inner: S) -> Self {
        Self {
            inner,
            turn: Mutex::new(()),
            background: Mutex::new(()),
        }
    }

    async fn turn(&self, lane: Lane) -> Turn<'_> {
        let lane = match lane {
            Lane::Request => None,
            Lane::Background => Some(self.background.lock().await),
        };
        Turn {
            _turn: self.turn.lock().await,
            _lane: lane,
        }
    }
}

/// The impl of `$trait` for `OneWriter<S>`: each method marked `write` waits for its
/// turn in the request lane, each marked `background` in the background lane, each
/// marked `read` not at all; `$extra` items are pasted as they are.
macro_rules! one_writer {
    (
        $trait:ident { $($extra:item)* }
        $( $kind:ident fn $name:ident(&self $(, $arg:ident: $ty:ty)* $(,)?) -> $ret:ty; )*
    ) => {
        #[async_trait]
        impl<S: Store> $trait for OneWriter<S> {
            $($extra)*
            $(
                async fn $name(&self $(, $arg: $ty)*) -> $ret {
                    let _turn = one_writer!(@turn $kind self);
                    self.inner.$name($($arg),*).await
                }
            )*
        }
    };
    (@turn write $self:ident) => { Some($self.turn(Lane::Request).await) };
    (@turn background $self:ident) => { Some($self.turn(Lane::Background).await) };
    (@turn read $self:ident) => { None::<Turn<'_>> };
}

one_writer! {
    Outbox {}
    background fn publish_events(&self) -> Result<u64, StoreError>;
    background fn delivery_pass(&self, ended: &[Attempt], claim: Option<Claim<'_>>)
        -> Result<Vec<OutboxEvent>, StoreError>;
    read fn outbox_work(&self, due_at_ms: Option<i64>) -> Result<bool, StoreError>;
    write fn redeliver(&self, id: i64, now_ms: i64) -> Result<bool, StoreError>;
    read fn payment_events(&self, after: i64, limit: u32) -> Result<Vec<OutboxEvent>, StoreError>;
    read fn webhook_backlog(&self, listed: u32) -> Result<Backlog, StoreError>;
    read fn endpoint_disabled(&self, url: &str) -> Result<Option<(i64, String)>, StoreError>;
    background fn set_endpoint_disabled(&self, url: &str, disabled: Option<(i64, &str)>)
        -> Result<(), StoreError>;
}

one_writer! {
    Store {
        fn shared_budget(&self) -> Option<Arc<dyn SharedBudget>> {
            self.inner.shared_budget()
        }
    }
    write fn insert_pending(&self, payment: NewPayment) -> Result<Payment, StoreError>;
    write fn record_outcome(&self, payment_id: i64, outcome: Outcome, now_ms: i64)
        -> Result<Payment, StoreError>;
    write fn record_reference(&self, payment_id: i64, reference: &str) -> Result<(), StoreError>;
    read fn payment_by_order(&self, user_id: &str, order_id: &str)
        -> Result<Option<Payment>, StoreError>;
    read fn recent_payments(&self, user_id: &str, limit: u32) -> Result<Vec<Payment>, StoreError>;
    write fn claim_idempotency_key(&self, claim: &IdempotencyClaim, now_ms: i64)
        -> Result<Claimed, StoreError>;
    read fn idempotency_record(&self, claim: &IdempotencyClaim, now_ms: i64)
        -> Result<Option<IdempotencyRecord>, StoreError>;
    write fn finish_idempotency_key(&self, user_id: &str, key: &str, response: &StoredResponse)
        -> Result<(), StoreError>;
    write fn release_idempotency_key(&self, user_id: &str, key: &str) -> Result<(), StoreError>;
    background fn purge_idempotency_keys(&self, before_ms: i64) -> Result<u64, StoreError>;
    write fn first_use_of_nonce(&self, nonce: &str, expires_at_ms: i64)
        -> Result<bool, StoreError>;
    background fn purge_edge_nonces(&self, now_ms: i64) -> Result<u64, StoreError>;
    read fn breaker_control(&self, guard: &str) -> Result<Option<BreakerControl>, StoreError>;
    write fn set_breaker_control(&self, guard: &str, control: &BreakerControl)
        -> Result<i64, StoreError>;
    read fn event_room(&self, event_id: &str)
        -> Result<Option<rules::drop::RoomUpdate>, StoreError>;
    read fn event_rooms(&self, limit: u32)
        -> Result<Vec<(String, rules::drop::RoomUpdate)>, StoreError>;
    write fn set_event_room(
        &self,
        event_id: &str,
        settings: &rules::drop::RoomSettings,
        state: rules::drop::RoomState,
        now_ms: i64,
        expected: Option<u64>,
    ) -> Result<rules::drop::RoomUpdate, StoreError>;
    read fn payment_by_id(&self, payment_id: i64) -> Result<Payment, StoreError>;
    read fn payment_by_order_id(&self, order_id: &str) -> Result<Option<Payment>, StoreError>;
    read fn payments_with_status(&self, status: PaymentStatus, limit: u32)
        -> Result<Vec<Payment>, StoreError>;
    background fn claim_for_recovery(
        &self,
        now_ms: i64,
        pending_before_ms: i64,
        lease: Lease<'_>,
        limit: u32,
    ) -> Result<Vec<Payment>, StoreError>;
    background fn renew_recovery_leases(&self, payment_ids: &[i64], lease: Lease<'_>, now_ms: i64)
        -> Result<Vec<i64>, StoreError>;
    background fn record_recovery(
        &self,
        payment_id: i64,
        decision: &Decision,
        lease_holder: &str,
        now_ms: i64,
    ) -> Result<Option<Payment>, StoreError>;
    write fn upsert_event(&self, event: &EventSpec, now_ms: i64) -> Result<EventView, StoreError>;
    read fn event(&self, event_id: &str) -> Result<Option<EventView>, StoreError>;
    read fn events(&self, limit: u32) -> Result<Vec<EventView>, StoreError>;
    background fn mark_refund_due(&self, payment_id: i64, next_attempt_at: i64, now_ms: i64)
        -> Result<bool, StoreError>;
    background fn record_refunded(&self, payment_id: i64, note: &str, now_ms: i64)
        -> Result<Option<Payment>, StoreError>;
    read fn approved_between(&self, from_ms: i64, to_ms: i64)
        -> Result<Vec<(String, i64)>, StoreError>;
    background fn queue_exceptions(&self, findings: &[Finding], period: &Period, now_ms: i64)
        -> Result<u64, StoreError>;
    background fn close_matched(&self, order_ids: &[String], now_ms: i64) -> Result<u64, StoreError>;
    read fn reconciliation_items(&self, status: Option<ItemStatus>, after_id: i64, limit: u32)
        -> Result<Vec<Item>, StoreError>;
    read fn pending_reconciliation_items(&self) -> Result<u64, StoreError>;
    write fn resolve_reconciliation_item(&self, id: i64, note: &str, now_ms: i64)
        -> Result<Resolution, StoreError>;
    read fn payment_keys_not_on(&self, version: u32, after_id: i64, limit: u32)
        -> Result<Vec<StoredPaymentKey>, StoreError>;
    read fn count_payment_keys_not_on(&self, version: u32) -> Result<u64, StoreError>;
    background fn replace_payment_keys(&self, replacements: &[Replacement]) -> Result<u64, StoreError>;
    write fn insert_user(&self, user: &User, now_ms: i64) -> Result<(), StoreError>;
    write fn set_password_hash(&self, username: &str, password_hash: &str, now_ms: i64)
        -> Result<bool, StoreError>;
    read fn user_by_name(&self, username: &str) -> Result<Option<User>, StoreError>;
}

#[cfg(test)]
mod tests;
