//! The PostgreSQL store, for several origin instances sharing one database: how it
//! opens, and its `Dialect` — where it differs from SQLite so that concurrent
//! instances stay apart: an event's row locked while a unit is taken or its stock
//! changes, and recovery claims that skip the rows another claim holds. Every other
//! query is the shared one (`sql_store.rs`).

use std::str::FromStr;
use std::time::Duration;

use async_trait::async_trait;
use sqlx::postgres::{PgConnectOptions, PgPoolOptions};
use sqlx::{Connection as _, Executor as _, Postgres, Row};

use super::budget::PostgresBudget;
use super::payments::{HOLDS_A_UNIT, PAYMENT_COLUMNS};
use super::sql::{unique_violation_as, Sql};
use super::sql_store::{Dialect, SqlStore};
use super::{EventSpec, EventView, NewPayment, Payment, SharedBudget, StoreError};
use crate::crypto::{FieldCipher, PAYMENT_KEY};

/// Nothing waits on the database without a bound (`docs/design/guard.md`): a connection comes
/// within the acquire timeout given to [`PostgresStore::open`], a row or table lock within
/// 3 s (SQLite's busy timeout; then 55P03, transient), and no statement runs longer
/// than 5 s. Set on every connection the pool opens.
const SESSION_BOUNDS: &str = "SET lock_timeout = '3s'; SET statement_timeout = '5s'";
/// Connections per instance; every instance sharing the database holds up to this many.
pub const MAX_CONNECTIONS: u32 = 8;

/// The store on PostgreSQL.
pub type PostgresStore = SqlStore<Postgres>;

impl PostgresStore {
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
        Ok(Self {
            pool,
            cipher,
            writer: None,
            checkpoints: None,
        })
    }
}

#[async_trait]
impl Dialect for Postgres {
    // The candidates are locked as they are chosen, and a row another instance's
    // claim holds is skipped, not waited for: concurrent claims never take one
    // payment twice (a row leased meanwhile no longer matches, as the lock re-reads it).
    const CLAIM_LOCK: &'static str = "FOR UPDATE SKIP LOCKED";

    // One publisher at a time, to its commit: the places it gives follow the last
    // committed one's (the key is the outbox's own, "pevents" in ASCII).
    const PUBLISH_LOCK: &'static str = "SELECT pg_advisory_xact_lock(31636756573877363)";

    fn shared_budget(pool: &sqlx::Pool<Self>) -> Option<std::sync::Arc<dyn SharedBudget>> {
        Some(PostgresBudget::of(pool))
    }

    async fn insert_pending(
        store: &mut Sql<'_, Self>,
        new: NewPayment,
    ) -> Result<Payment, StoreError> {
        let insert = format!(
            "INSERT INTO payments (order_id, user_id, payment_key, amount, event_id, status, \
             created_at, updated_at, pg_confirm_key) \
             VALUES ($1, $2, $3, $4, $5, 'PENDING', $6, $6, $7) \
             RETURNING {PAYMENT_COLUMNS}"
        );
        let mut tx = store.conn.begin().await?;
        if let Some(event_id) = &new.event_id {
            // The event's row lock makes reservations for one event take turns, across
            // instances; the count then sees every unit taken before.
            let event =
                sqlx::query("SELECT stock, amount FROM events WHERE event_id = $1 FOR UPDATE")
                    .bind(event_id)
                    .fetch_optional(&mut *tx)
                    .await?;
            let event = event.ok_or(StoreError::UnknownEvent)?;
            let (stock, price): (i64, i64) = (event.try_get("stock")?, event.try_get("amount")?);
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
        let row = sqlx::query(&insert)
            .bind(&new.order_id)
            .bind(&new.user_id)
            .bind(
                store
                    .cipher
                    .seal(PAYMENT_KEY, &new.order_id, &new.payment_key)?,
            )
            .bind(new.amount)
            .bind(&new.event_id)
            .bind(new.now_ms)
            .bind(&new.confirm_key)
            .fetch_one(&mut *tx)
            .await
            .map_err(|err| unique_violation_as(err, StoreError::DuplicateOrder))?;
        tx.commit().await?;
        store.payment_from_row(&row)
    }

    async fn upsert_event(
        store: &mut Sql<'_, Self>,
        event: &EventSpec,
        now_ms: i64,
    ) -> Result<EventView, StoreError> {
        let mut tx = store.conn.begin().await?;
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
        store
            .event(&event.event_id)
            .await?
            .ok_or(StoreError::Database(sqlx::Error::RowNotFound))
    }
}
