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
    /// SQLite's checkpoints (`checkpoint.rs`), until the last clone is dropped; none on
    /// PostgreSQL.
    pub(super) checkpoints: Option<Arc<Checkpoints>>,
}

impl<DB: Database> Clone for SqlStore<DB> {
    fn clone(&self) -> Self {
        Self {
            cipher: self.cipher.clone(),
            pool: self.pool.clone(),
            checkpoints: self.checkpoints.clone(),
        }
    }
}

impl<DB: Database> SqlStore<DB> {
    /// The queries written once for both databases, on this pool.
    pub(super) fn sql(&self) -> Sql<'_, DB> {
        Sql {
            pool: &self.pool,
            cipher: &self.cipher,
        }
    }
}

/// What a database does its own way.
#[async_trait]
pub trait Dialect: Database {
    /// Inserts a PENDING payment, taking one of its event's units if it has one.
    async fn insert_pending(store: &Sql<'_, Self>, new: NewPayment) -> Result<Payment, StoreError>;

    /// What locks the payments a recovery claim chooses, so that concurrent claims
    /// never take one payment twice (nothing where one writer runs at a time).
    const CLAIM_LOCK: &'static str;

    /// What keeps the outbox's publishers apart, taken in the publishing transaction
    /// (nothing where one writer runs at a time).
    const PUBLISH_LOCK: &'static str;

    /// See [`Store::upsert_event`]: no unit is taken while the stock changes.
    async fn upsert_event(
        store: &Sql<'_, Self>,
        event: &EventSpec,
        now_ms: i64,
    ) -> Result<EventView, StoreError>;

    /// See [`Store::shared_budget`].
    fn shared_budget(pool: &Pool<Self>) -> Option<Arc<dyn SharedBudget>>;
}

sql_bounds! {
    @impl (#[async_trait] impl<DB: Dialect> Store for SqlStore<DB>)

    async fn insert_pending(&self, new: NewPayment) -> Result<Payment, StoreError> {
        DB::insert_pending(&self.sql(), new).await
    }

    async fn record_outcome(
        &self,
        payment_id: i64,
        outcome: Outcome,
        now_ms: i64,
    ) -> Result<Payment, StoreError> {
        self.sql().record_outcome(payment_id, outcome, now_ms).await
    }

    async fn record_reference(&self, payment_id: i64, reference: &str) -> Result<(), StoreError> {
        self.sql().record_reference(payment_id, reference).await
    }

    async fn payment_by_order(
        &self,
        user_id: &str,
        order_id: &str,
    ) -> Result<Option<Payment>, StoreError> {
        self.sql().payment_by_order(user_id, order_id).await
    }

    async fn recent_payments(&self, user_id: &str, limit: u32) -> Result<Vec<Payment>, StoreError> {
        self.sql().recent_payments(user_id, limit).await
    }

    async fn claim_idempotency_key(
        &self,
        claim: &IdempotencyClaim,
        now_ms: i64,
    ) -> Result<Claimed, StoreError> {
        self.sql().claim_idempotency_key(claim, now_ms).await
    }

    async fn idempotency_record(
        &self,
        claim: &IdempotencyClaim,
        now_ms: i64,
    ) -> Result<Option<IdempotencyRecord>, StoreError> {
        self.sql().idempotency_record(claim, now_ms).await
    }

    async fn finish_idempotency_key(
        &self,
        user_id: &str,
        key: &str,
        response: &StoredResponse,
    ) -> Result<(), StoreError> {
        self.sql()
            .finish_idempotency_key(user_id, key, response)
            .await
    }

    async fn release_idempotency_key(&self, user_id: &str, key: &str) -> Result<(), StoreError> {
        self.sql().release_idempotency_key(user_id, key).await
    }

    async fn purge_idempotency_keys(&self, before_ms: i64) -> Result<u64, StoreError> {
        self.sql().purge_idempotency_keys(before_ms).await
    }

    async fn first_use_of_nonce(
        &self,
        nonce: &str,
        expires_at_ms: i64,
    ) -> Result<bool, StoreError> {
        self.sql().first_use_of_nonce(nonce, expires_at_ms).await
    }

    async fn purge_edge_nonces(&self, now_ms: i64) -> Result<u64, StoreError> {
        self.sql().purge_edge_nonces(now_ms).await
    }

    async fn breaker_control(&self, guard: &str) -> Result<Option<BreakerControl>, StoreError> {
        self.sql().breaker_control(guard).await
    }

    async fn event_room(&self, event_id: &str) -> Result<Option<rules::drop::RoomUpdate>, StoreError> {
        self.sql().event_room(event_id).await
    }

    async fn event_rooms(
        &self,
        limit: u32,
    ) -> Result<Vec<(String, rules::drop::RoomUpdate)>, StoreError> {
        self.sql().event_rooms(limit).await
    }

    async fn set_event_room(
        &self,
        event_id: &str,
        settings: &rules::drop::RoomSettings,
        state: rules::drop::RoomState,
        now_ms: i64,
        expected: Option<u64>,
    ) -> Result<rules::drop::RoomUpdate, StoreError> {
        self.sql()
            .set_event_room(event_id, settings, state, now_ms, expected)
            .await
    }

    async fn set_breaker_control(
        &self,
        guard: &str,
        control: &BreakerControl,
    ) -> Result<i64, StoreError> {
        self.sql().set_breaker_control(guard, control).await
    }

    fn shared_budget(&self) -> Option<Arc<dyn SharedBudget>> {
        DB::shared_budget(&self.pool)
    }

    async fn payment_by_id(&self, payment_id: i64) -> Result<Payment, StoreError> {
        self.sql().payment_by_id(payment_id).await
    }

    async fn payment_by_order_id(&self, order_id: &str) -> Result<Option<Payment>, StoreError> {
        self.sql().payment_by_order_id(order_id).await
    }

    async fn payments_with_status(
        &self,
        status: PaymentStatus,
        limit: u32,
    ) -> Result<Vec<Payment>, StoreError> {
        self.sql().payments_with_status(status, limit).await
    }

    async fn claim_for_recovery(
        &self,
        now_ms: i64,
        pending_before_ms: i64,
        lease: Lease<'_>,
        limit: u32,
    ) -> Result<Vec<Payment>, StoreError> {
        let mut claimed = self
            .sql()
            .claim_for_recovery(DB::CLAIM_LOCK, now_ms, pending_before_ms, lease, limit)
            .await?;
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
        self.sql()
            .renew_recovery_leases(payment_ids, lease, now_ms)
            .await
    }

    async fn record_recovery(
        &self,
        payment_id: i64,
        decision: &Decision,
        lease_holder: &str,
        now_ms: i64,
    ) -> Result<Option<Payment>, StoreError> {
        self.sql()
            .record_recovery(payment_id, decision, lease_holder, now_ms)
            .await
    }

    async fn upsert_event(&self, event: &EventSpec, now_ms: i64) -> Result<EventView, StoreError> {
        DB::upsert_event(&self.sql(), event, now_ms).await
    }

    async fn event(&self, event_id: &str) -> Result<Option<EventView>, StoreError> {
        self.sql().event(event_id).await
    }

    async fn events(&self, limit: u32) -> Result<Vec<EventView>, StoreError> {
        self.sql().events(limit).await
    }

    async fn mark_refund_due(
        &self,
        payment_id: i64,
        next_attempt_at: i64,
        now_ms: i64,
    ) -> Result<bool, StoreError> {
        self.sql()
            .mark_refund_due(payment_id, next_attempt_at, now_ms)
            .await
    }

    async fn record_refunded(
        &self,
        payment_id: i64,
        note: &str,
        now_ms: i64,
    ) -> Result<Option<Payment>, StoreError> {
        self.sql().record_refunded(payment_id, note, now_ms).await
    }

    async fn approved_between(
        &self,
        from_ms: i64,
        to_ms: i64,
    ) -> Result<Vec<(String, i64)>, StoreError> {
        self.sql().approved_between(from_ms, to_ms).await
    }

    async fn queue_exceptions(
        &self,
        findings: &[Finding],
        period: &Period,
        now_ms: i64,
    ) -> Result<u64, StoreError> {
        self.sql().queue_exceptions(findings, period, now_ms).await
    }

    async fn close_matched(&self, order_ids: &[String], now_ms: i64) -> Result<u64, StoreError> {
        self.sql().close_matched(order_ids, now_ms).await
    }

    async fn reconciliation_items(
        &self,
        status: Option<ItemStatus>,
        after_id: i64,
        limit: u32,
    ) -> Result<Vec<Item>, StoreError> {
        self.sql()
            .reconciliation_items(status, after_id, limit)
            .await
    }

    async fn pending_reconciliation_items(&self) -> Result<u64, StoreError> {
        self.sql().pending_reconciliation_items().await
    }

    async fn resolve_reconciliation_item(
        &self,
        id: i64,
        note: &str,
        now_ms: i64,
    ) -> Result<Resolution, StoreError> {
        self.sql()
            .resolve_reconciliation_item(id, note, now_ms)
            .await
    }

    async fn payment_keys_not_on(
        &self,
        version: u32,
        after_id: i64,
        limit: u32,
    ) -> Result<Vec<StoredPaymentKey>, StoreError> {
        self.sql()
            .payment_keys_not_on(version, after_id, limit)
            .await
    }

    async fn count_payment_keys_not_on(&self, version: u32) -> Result<u64, StoreError> {
        self.sql().count_payment_keys_not_on(version).await
    }

    async fn replace_payment_keys(&self, replacements: &[Replacement]) -> Result<u64, StoreError> {
        self.sql().replace_payment_keys(replacements).await
    }

    async fn insert_user(&self, user: &User, now_ms: i64) -> Result<(), StoreError> {
        self.sql().insert_user(user, now_ms).await
    }

    async fn set_password_hash(
        &self,
        username: &str,
        password_hash: &str,
        now_ms: i64,
    ) -> Result<bool, StoreError> {
        self.sql()
            .set_password_hash(username, password_hash, now_ms)
            .await
    }

    async fn user_by_name(&self, username: &str) -> Result<Option<User>, StoreError> {
        self.sql().user_by_name(username).await
    }
}
