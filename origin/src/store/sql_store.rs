//! The [`Store`] over either database: [`SqlStore`] on SQLite (`sqlite.rs`, the
//! default) or PostgreSQL (`postgres.rs`, for several instances sharing one database).
//! Almost every query is written once, by area (`payments.rs`, `idempotency.rs`,
//! `recovery.rs`, `events.rs`, `reconciliation.rs`, `payment_keys.rs`, `users.rs`,
//! `nonces.rs`, `controls.rs`);
//! a backend writes only what differs — its [`Dialect`]: taking an event's last unit,
//! setting an event's stock, the lock a recovery claim takes — and how it opens.

use std::sync::Arc;

use async_trait::async_trait;
use sqlx::{Database, Pool};

use super::checkpoint::Checkpoints;
use super::group_commit::GroupCommit;
use super::sql::{sql_bounds, Sql};
use super::{
    BreakerControl, Claimed, EventSpec, EventView, IdempotencyClaim, IdempotencyRecord, Lease,
    NewPayment, Outcome, Payment, PaymentStatus, Replacement, SharedBudget, Store, StoreError,
    StoredPaymentKey, StoredResponse, User,
};
use crate::crypto::FieldCipher;
use crate::policy::recovery::Decision;
use crate::policy::settlement::period::Period;
use crate::policy::settlement::queue::{Item, ItemStatus, Resolution};
use crate::policy::settlement::reconcile::Finding;

/// The store on one database's pool.
pub struct SqlStore<DB: Database> {
    pub(super) cipher: FieldCipher,
    pub(super) pool: Pool<DB>,
    /// Where the writes go one at a time, in batches (`group_commit.rs`): SQLite's;
    /// none on PostgreSQL, where a write takes a connection of the pool as a read does.
    pub(super) writer: Option<Arc<GroupCommit<DB>>>,
    /// SQLite's checkpoints (`checkpoint.rs`), until the last clone is dropped; none on
    /// PostgreSQL.
    pub(super) checkpoints: Option<Arc<Checkpoints>>,
}

impl<DB: Database> Clone for SqlStore<DB> {
    fn clone(&self) -> Self {
        Self {
            cipher: self.cipher.clone(),
            pool: self.pool.clone(),
            writer: self.writer.clone(),
            checkpoints: self.checkpoints.clone(),
        }
    }
}

/// `on!(store, kind, |sql| body)`: runs the future `body` with `sql`, an [`Sql`] on a
/// connection, and answers its output. A `read` runs on a connection of the pool; a
/// `write` (a request's) or a `background` write (one of the process's loops) in its
/// lane of the store's writer, in a batch, answered once the batch has committed — or,
/// on a store with no writer, as a read does.
macro_rules! on {
    ($store:ident, read, |$sql:ident| $body:expr) => {{
        let mut conn = $store.pool.acquire().await?;
        let mut $sql = $crate::store::sql::Sql::on(&mut *conn, &$store.cipher);
        $body.await
    }};
    ($store:ident, write, |$sql:ident| $body:expr) => {
        on!(@write $store, $crate::store::group_commit::Lane::Request, |$sql| $body)
    };
    ($store:ident, background, |$sql:ident| $body:expr) => {
        on!(@write $store, $crate::store::group_commit::Lane::Background, |$sql| $body)
    };
    (@write $store:ident, $lane:expr, |$sql:ident| $body:expr) => {
        match &$store.writer {
            Some(writer) => {
                let mut turn = writer.turn($lane).await?;
                let written = {
                    let mut place = turn.place().await?;
                    let written = {
                        let mut $sql = $crate::store::sql::Sql::on(&mut *place, &$store.cipher);
                        $body.await
                    };
                    place.settle(written).await
                };
                turn.committed(written).await
            }
            None => on!($store, read, |$sql| $body),
        }
    };
}
pub(super) use on;

/// What a database does its own way.
#[async_trait]
pub trait Dialect: Database {
    /// Inserts a PENDING payment, taking one of its event's units if it has one.
    async fn insert_pending(
        store: &mut Sql<'_, Self>,
        new: NewPayment,
    ) -> Result<Payment, StoreError>;

    /// What locks the payments a recovery claim chooses, so that concurrent claims
    /// never take one payment twice (nothing where one writer runs at a time).
    const CLAIM_LOCK: &'static str;

    /// What keeps the outbox's publishers apart, taken in the publishing transaction
    /// (nothing where one writer runs at a time).
    const PUBLISH_LOCK: &'static str;

    /// See [`Store::upsert_event`]: no unit is taken while the stock changes.
    async fn upsert_event(
        store: &mut Sql<'_, Self>,
        event: &EventSpec,
        now_ms: i64,
    ) -> Result<EventView, StoreError>;

    /// See [`Store::shared_budget`].
    fn shared_budget(pool: &Pool<Self>) -> Option<Arc<dyn SharedBudget>>;
}

sql_bounds! {
    @impl (#[async_trait] impl<DB: Dialect> Store for SqlStore<DB>)

    async fn insert_pending(&self, new: NewPayment) -> Result<Payment, StoreError> {
        on!(self, write, |sql| DB::insert_pending(&mut sql, new))
    }

    async fn record_outcome(
        &self,
        payment_id: i64,
        outcome: Outcome,
        now_ms: i64,
    ) -> Result<Payment, StoreError> {
        on!(self, write, |sql| sql.record_outcome(payment_id, outcome, now_ms))
    }

    async fn record_reference(&self, payment_id: i64, reference: &str) -> Result<(), StoreError> {
        on!(self, write, |sql| sql.record_reference(payment_id, reference))
    }

    async fn payment_by_order(
        &self,
        user_id: &str,
        order_id: &str,
    ) -> Result<Option<Payment>, StoreError> {
        on!(self, read, |sql| sql.payment_by_order(user_id, order_id))
    }

    async fn recent_payments(&self, user_id: &str, limit: u32) -> Result<Vec<Payment>, StoreError> {
        on!(self, read, |sql| sql.recent_payments(user_id, limit))
    }

    async fn claim_idempotency_key(
        &self,
        claim: &IdempotencyClaim,
        now_ms: i64,
    ) -> Result<Claimed, StoreError> {
        on!(self, write, |sql| sql.claim_idempotency_key(claim, now_ms))
    }

    async fn idempotency_record(
        &self,
        claim: &IdempotencyClaim,
        now_ms: i64,
    ) -> Result<Option<IdempotencyRecord>, StoreError> {
        on!(self, read, |sql| sql.idempotency_record(claim, now_ms))
    }

    async fn finish_idempotency_key(
        &self,
        user_id: &str,
        key: &str,
        response: &StoredResponse,
    ) -> Result<(), StoreError> {
        on!(self, write, |sql| sql.finish_idempotency_key(user_id, key, response))
    }

    async fn release_idempotency_key(&self, user_id: &str, key: &str) -> Result<(), StoreError> {
        on!(self, write, |sql| sql.release_idempotency_key(user_id, key))
    }

    async fn purge_idempotency_keys(&self, before_ms: i64) -> Result<u64, StoreError> {
        on!(self, background, |sql| sql.purge_idempotency_keys(before_ms))
    }

    async fn first_use_of_nonce(
        &self,
        nonce: &str,
        expires_at_ms: i64,
    ) -> Result<bool, StoreError> {
        on!(self, write, |sql| sql.first_use_of_nonce(nonce, expires_at_ms))
    }

    async fn purge_edge_nonces(&self, now_ms: i64) -> Result<u64, StoreError> {
        on!(self, background, |sql| sql.purge_edge_nonces(now_ms))
    }

    async fn breaker_control(&self, guard: &str) -> Result<Option<BreakerControl>, StoreError> {
        on!(self, read, |sql| sql.breaker_control(guard))
    }

    async fn event_room(&self, event_id: &str) -> Result<Option<rules::drop::RoomUpdate>, StoreError> {
        on!(self, read, |sql| sql.event_room(event_id))
    }

    async fn event_rooms(
        &self,
        limit: u32,
    ) -> Result<Vec<(String, rules::drop::RoomUpdate)>, StoreError> {
        on!(self, read, |sql| sql.event_rooms(limit))
    }

    async fn set_event_room(
        &self,
        event_id: &str,
        settings: &rules::drop::RoomSettings,
        state: rules::drop::RoomState,
        now_ms: i64,
        expected: Option<u64>,
    ) -> Result<rules::drop::RoomUpdate, StoreError> {
        on!(self, write, |sql| sql.set_event_room(event_id, settings, state, now_ms, expected))
    }

    async fn set_breaker_control(
        &self,
        guard: &str,
        control: &BreakerControl,
    ) -> Result<i64, StoreError> {
        on!(self, write, |sql| sql.set_breaker_control(guard, control))
    }

    fn shared_budget(&self) -> Option<Arc<dyn SharedBudget>> {
        DB::shared_budget(&self.pool)
    }

    async fn payment_by_id(&self, payment_id: i64) -> Result<Payment, StoreError> {
        on!(self, read, |sql| sql.payment_by_id(payment_id))
    }

    async fn payment_by_order_id(&self, order_id: &str) -> Result<Option<Payment>, StoreError> {
        on!(self, read, |sql| sql.payment_by_order_id(order_id))
    }

    async fn payments_with_status(
        &self,
        status: PaymentStatus,
        limit: u32,
    ) -> Result<Vec<Payment>, StoreError> {
        on!(self, read, |sql| sql.payments_with_status(status, limit))
    }

    async fn claim_for_recovery(
        &self,
        now_ms: i64,
        pending_before_ms: i64,
        lease: Lease<'_>,
        limit: u32,
    ) -> Result<Vec<Payment>, StoreError> {
        let lock = DB::CLAIM_LOCK;
        let mut claimed = on!(self, background, |sql| {
            sql.claim_for_recovery(lock, now_ms, pending_before_ms, lease, limit)
        })?;
        // RETURNING keeps no order, on either database: oldest due first, as chosen.
        claimed.sort_by_key(|payment| (payment.recovery.next_attempt_at, payment.payment_id));
        Ok(claimed)
    }

    async fn renew_recovery_leases(
        &self,
        payment_ids: &[i64],
        lease: Lease<'_>,
        now_ms: i64,
    ) -> Result<Vec<i64>, StoreError> {
        on!(self, background, |sql| sql.renew_recovery_leases(payment_ids, lease, now_ms))
    }

    async fn record_recovery(
        &self,
        payment_id: i64,
        decision: &Decision,
        lease_holder: &str,
        now_ms: i64,
    ) -> Result<Option<Payment>, StoreError> {
        on!(self, background, |sql| sql.record_recovery(payment_id, decision, lease_holder, now_ms))
    }

    async fn upsert_event(&self, event: &EventSpec, now_ms: i64) -> Result<EventView, StoreError> {
        on!(self, write, |sql| DB::upsert_event(&mut sql, event, now_ms))
    }

    async fn event(&self, event_id: &str) -> Result<Option<EventView>, StoreError> {
        on!(self, read, |sql| sql.event(event_id))
    }

    async fn events(&self, limit: u32) -> Result<Vec<EventView>, StoreError> {
        on!(self, read, |sql| sql.events(limit))
    }

    async fn mark_refund_due(
        &self,
        payment_id: i64,
        next_attempt_at: i64,
        now_ms: i64,
    ) -> Result<bool, StoreError> {
        on!(self, background, |sql| sql.mark_refund_due(payment_id, next_attempt_at, now_ms))
    }

    async fn record_refunded(
        &self,
        payment_id: i64,
        note: &str,
        now_ms: i64,
    ) -> Result<Option<Payment>, StoreError> {
        on!(self, background, |sql| sql.record_refunded(payment_id, note, now_ms))
    }

    async fn approved_between(
        &self,
        from_ms: i64,
        to_ms: i64,
    ) -> Result<Vec<(String, i64)>, StoreError> {
        on!(self, read, |sql| sql.approved_between(from_ms, to_ms))
    }

    async fn queue_exceptions(
        &self,
        findings: &[Finding],
        period: &Period,
        now_ms: i64,
    ) -> Result<u64, StoreError> {
        on!(self, background, |sql| sql.queue_exceptions(findings, period, now_ms))
    }

    async fn close_matched(&self, order_ids: &[String], now_ms: i64) -> Result<u64, StoreError> {
        on!(self, background, |sql| sql.close_matched(order_ids, now_ms))
    }

    async fn reconciliation_items(
        &self,
        status: Option<ItemStatus>,
        after_id: i64,
        limit: u32,
    ) -> Result<Vec<Item>, StoreError> {
        on!(self, read, |sql| sql.reconciliation_items(status, after_id, limit))
    }

    async fn pending_reconciliation_items(&self) -> Result<u64, StoreError> {
        on!(self, read, |sql| sql.pending_reconciliation_items())
    }

    async fn resolve_reconciliation_item(
        &self,
        id: i64,
        note: &str,
        now_ms: i64,
    ) -> Result<Resolution, StoreError> {
        on!(self, write, |sql| sql.resolve_reconciliation_item(id, note, now_ms))
    }

    async fn payment_keys_not_on(
        &self,
        version: u32,
        after_id: i64,
        limit: u32,
    ) -> Result<Vec<StoredPaymentKey>, StoreError> {
        on!(self, read, |sql| sql.payment_keys_not_on(version, after_id, limit))
    }

    async fn count_payment_keys_not_on(&self, version: u32) -> Result<u64, StoreError> {
        on!(self, read, |sql| sql.count_payment_keys_not_on(version))
    }

    async fn replace_payment_keys(&self, replacements: &[Replacement]) -> Result<u64, StoreError> {
        on!(self, background, |sql| sql.replace_payment_keys(replacements))
    }

    async fn insert_user(&self, user: &User, now_ms: i64) -> Result<(), StoreError> {
        on!(self, write, |sql| sql.insert_user(user, now_ms))
    }

    async fn set_password_hash(
        &self,
        username: &str,
        password_hash: &str,
        now_ms: i64,
    ) -> Result<bool, StoreError> {
        on!(self, write, |sql| sql.set_password_hash(username, password_hash, now_ms))
    }

    async fn user_by_name(&self, username: &str) -> Result<Option<User>, StoreError> {
        on!(self, read, |sql| sql.user_by_name(username))
    }
}
