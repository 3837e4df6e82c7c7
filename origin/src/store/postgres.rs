//! The PostgreSQL store, for several origin instances sharing one database. Same
//! statements and semantics as the SQLite store: every write is one statement, atomic
//! on its own, so concurrent instances meet only in the database's row locks and
//! unique indexes — never in the application.

use std::str::FromStr;
use std::time::Duration;

use async_trait::async_trait;
use sqlx::postgres::{PgConnectOptions, PgPoolOptions};
use sqlx::{Executor as _, PgPool, Postgres, Row};

use super::payments::{HOLDS_A_UNIT, PAYMENT_COLUMNS};
use super::sql::{unique_violation_as, Sql};
use super::{
    Claimed, EventSpec, EventView, IdempotencyClaim, Lease, NewPayment, Outcome, Payment,
    PaymentStatus, Replacement, Store, StoreError, StoredPaymentKey, StoredResponse, User,
};
use crate::crypto::{FieldCipher, PAYMENT_KEY};
use crate::policy::recovery::Decision;
use crate::policy::settlement::period::Period;
use crate::policy::settlement::queue::{Item, ItemStatus, Resolution};
use crate::policy::settlement::reconcile::Finding;

/// Nothing waits on the database without a bound (`docs/design/guard.md`): a connection comes
/// within the acquire timeout given to [`PostgresStore::open`], a row or table lock within
/// 3 s (SQLite's busy timeout; then 55P03, transient), and no statement runs longer
/// than 5 s. Set on every connection the pool opens.
const SESSION_BOUNDS: &str = "SET lock_timeout = '3s'; SET statement_timeout = '5s'";
/// Connections per instance; every instance sharing the database holds up to this many.
pub const MAX_CONNECTIONS: u32 = 8;

#[derive(Clone)]
pub struct PostgresStore {
    cipher: FieldCipher,
    pool: PgPool,
}

impl PostgresStore {
    /// The queries written once for both databases, on this pool.
    fn sql(&self) -> Sql<'_, Postgres> {
        Sql {
            pool: &self.pool,
            cipher: &self.cipher,
        }
    }

    /// Connects to the database at `url` (`postgres://…`) and migrates it; instances
    /// starting together migrate one after the other (the migrator holds an advisory
    /// lock). A request waits at most `acquire_timeout` for a connection.
    pub async fn open(
        url: &str,
        acquire_timeout: Duration,
        cipher: FieldCipher,
    ) -> anyhow::Result<Self> {
        let options = PgConnectOptions::from_str(url)?.application_name("origin");
        let pool = PgPoolOptions::new()
            .max_connections(MAX_CONNECTIONS)
            .acquire_timeout(acquire_timeout)
            .after_connect(|connection, _| {
                Box::pin(async move {
                    connection.execute(SESSION_BOUNDS).await?;
                    Ok(())
                })
            })
            .connect_with(options)
            .await?;
        sqlx::migrate!("migrations/postgres").run(&pool).await?;
        Ok(Self { pool, cipher })
    }
}

#[async_trait]
impl Store for PostgresStore {
    async fn insert_pending(&self, new: NewPayment) -> Result<Payment, StoreError> {
        let insert = format!(
            "INSERT INTO payments (order_id, user_id, payment_key, amount, event_id, status, \
             created_at, updated_at) VALUES ($1, $2, $3, $4, $5, 'PENDING', $6, $6) \
             RETURNING {PAYMENT_COLUMNS}"
        );
        let mut tx = self.pool.begin().await?;
        if let Some(event_id) = &new.event_id {
            // The event's row lock makes reservations for one event take turns, across
            // instances; the count then sees every unit taken before.
            let event =
                sqlx::query("SELECT stock, amount FROM events WHERE event_id = $1 FOR UPDATE")
                    .bind(event_id)
                    .fetch_optional(&mut *tx)
                    .await?;
            if let Some(event) = event {
                let (stock, price): (i64, i64) =
                    (event.try_get("stock")?, event.try_get("amount")?);
                if price != new.amount {
                    return Err(StoreError::WrongAmount { price });
                }
                let held: i64 = sqlx::query_scalar(&format!(
                    "SELECT COUNT(*) FROM payments WHERE event_id = $1 AND {HOLDS_A_UNIT}"
                ))
                .bind(event_id)
                .fetch_one(&mut *tx)
                .await?;
                if held >= stock {
                    return Err(StoreError::SoldOut);
                }
            }
        }
        let row = sqlx::query(&insert)
            .bind(&new.order_id)
            .bind(&new.user_id)
            .bind(
                self.cipher
                    .seal(PAYMENT_KEY, &new.order_id, &new.payment_key)?,
            )
            .bind(new.amount)
            .bind(&new.event_id)
            .bind(new.now_ms)
            .fetch_one(&mut *tx)
            .await
            .map_err(|err| unique_violation_as(err, StoreError::DuplicateOrder))?;
        tx.commit().await?;
        self.sql().payment_from_row(&row)
    }

    async fn record_outcome(
        &self,
        payment_id: i64,
        outcome: Outcome,
        now_ms: i64,
    ) -> Result<Payment, StoreError> {
        self.sql().record_outcome(payment_id, outcome, now_ms).await
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
        // One statement. The candidates are locked as they are chosen, and a row another
        // instance's claim holds is skipped, not waited for: concurrent claims never
        // take one payment twice (a row leased meanwhile no longer matches, as the lock
        // re-reads it).
        let sql = format!(
            "UPDATE payments SET recovery_lease_until = $1, recovery_lease_holder = $5 \
             WHERE id IN (\
               SELECT id FROM payments \
               WHERE (status IN ('PENDING', 'UNKNOWN') OR refund_due = 1) \
               AND next_recovery_at <= $2 AND recovery_lease_until <= $2 \
               AND (status <> 'PENDING' OR created_at <= $3) \
               ORDER BY next_recovery_at, id LIMIT $4 FOR UPDATE SKIP LOCKED) \
             RETURNING {PAYMENT_COLUMNS}"
        );
        let rows = sqlx::query(&sql)
            .bind(lease.until_ms)
            .bind(now_ms)
            .bind(pending_before_ms)
            .bind(i64::from(limit))
            .bind(lease.holder)
            .fetch_all(&self.pool)
            .await?;
        let mut claimed = rows
            .iter()
            .map(|row| self.sql().payment_from_row(row))
            .collect::<Result<Vec<_>, _>>()?;
        // RETURNING keeps no order: oldest due first, as chosen.
        claimed.sort_by_key(|payment| (payment.recovery.next_attempt_at, payment.payment_id));
        Ok(claimed)
    }

    async fn renew_recovery_leases(
        &self,
        payment_ids: &[i64],
        lease: Lease<'_>,
        now_ms: i64,
    ) -> Result<Vec<i64>, StoreError> {
        let rows = sqlx::query(
            "UPDATE payments SET recovery_lease_until = $1 \
             WHERE recovery_lease_holder = $2 AND recovery_lease_until > $3 AND id = ANY($4) \
             RETURNING id",
        )
        .bind(lease.until_ms)
        .bind(lease.holder)
        .bind(now_ms)
        .bind(payment_ids)
        .fetch_all(&self.pool)
        .await?;
        rows.iter()
            .map(|row| row.try_get("id").map_err(StoreError::from))
            .collect()
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
        let mut tx = self.pool.begin().await?;
        sqlx::query(
            "INSERT INTO events (event_id, stock, amount, created_at, updated_at) \
             VALUES ($1, $2, $3, $4, $4) ON CONFLICT (event_id) DO NOTHING",
        )
        .bind(&event.event_id)
        .bind(event.stock)
        .bind(event.amount)
        .bind(now_ms)
        .execute(&mut *tx)
        .await?;
        // Locked like a reservation, so no unit is taken while the stock changes.
        sqlx::query("SELECT 1 FROM events WHERE event_id = $1 FOR UPDATE")
            .bind(&event.event_id)
            .execute(&mut *tx)
            .await?;
        let committed: i64 = sqlx::query_scalar(&format!(
            "SELECT COUNT(*) FROM payments WHERE event_id = $1 AND {HOLDS_A_UNIT}"
        ))
        .bind(&event.event_id)
        .fetch_one(&mut *tx)
        .await?;
        if event.stock < committed {
            return Err(StoreError::StockBelowCommitted { committed });
        }
        sqlx::query(
            "UPDATE events SET stock = $2, amount = $3, updated_at = $4 WHERE event_id = $1",
        )
        .bind(&event.event_id)
        .bind(event.stock)
        .bind(event.amount)
        .bind(now_ms)
        .execute(&mut *tx)
        .await?;
        tx.commit().await?;
        self.event(&event.event_id)
            .await?
            .ok_or(StoreError::Database(sqlx::Error::RowNotFound))
    }

    async fn event(&self, event_id: &str) -> Result<Option<EventView>, StoreError> {
        self.sql().event(event_id).await
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

impl PostgresStore {}
