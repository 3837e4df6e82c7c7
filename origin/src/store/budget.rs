//! The PG's call budget shared by every instance on one PostgreSQL database
//! ([`SharedBudget`]; `docs/design/guard.md`): the limiter's sliding window as a row per unit
//! of the limit, its token bucket as one row, both on the database's clock.

use async_trait::async_trait;
use std::sync::Arc;

use sqlx::PgPool;

use super::{SharedBudget, Slot, StoreError};
use rules::sliding_window::Rate;

/// The database's clock, epoch ms: the one clock every instance reads.
const NOW_MS: &str = "(EXTRACT(EPOCH FROM clock_timestamp()) * 1000)::BIGINT";

/// [`SharedBudget`] on a PostgreSQL pool.
pub struct PostgresBudget {
    pool: PgPool,
}

impl PostgresBudget {
    /// The budget of the instances on `pool`'s database.
    pub(super) fn of(pool: &PgPool) -> Arc<dyn SharedBudget> {
        Arc::new(Self { pool: pool.clone() })
    }
}

#[async_trait]
impl SharedBudget for PostgresBudget {
    async fn prepare_slots(&self, guard: &str, rate: Rate) -> Result<(), StoreError> {
        sqlx::query(
            "INSERT INTO guard_budget_slots (guard, slot, counts_until, holder) \
             SELECT $1, slot, 0, 0 FROM generate_series(0, $2 - 1) AS slot \
             ON CONFLICT DO NOTHING",
        )
        .bind(guard)
        .bind(i64::from(rate.limit))
        .execute(&self.pool)
        .await?;
        Ok(())
    }

    async fn take_slot(
        &self,
        guard: &str,
        rate: Rate,
        hold_ms: i64,
        holder: i64,
    ) -> Result<Option<Slot>, StoreError> {
        // A slot another instance is taking right now is skipped, not waited for; one
        // freed meanwhile is re-read under its lock before it is taken.
        let slot: Option<i32> = sqlx::query_scalar(&format!(
            "WITH free AS (SELECT slot FROM guard_budget_slots \
             WHERE guard = $1 AND slot < $2 AND counts_until < {NOW_MS} \
             ORDER BY slot LIMIT 1 FOR UPDATE SKIP LOCKED) \
             UPDATE guard_budget_slots AS s SET counts_until = {NOW_MS} + $3, holder = $4 \
             FROM free WHERE s.guard = $1 AND s.slot = free.slot RETURNING s.slot"
        ))
        .bind(guard)
        .bind(i64::from(rate.limit))
        .bind(hold_ms)
        .bind(holder)
        .fetch_optional(&self.pool)
        .await?;
        Ok(slot.map(|slot| Slot { slot, holder }))
    }

    async fn finish_slot(&self, guard: &str, slot: Slot, window_ms: i64) -> Result<(), StoreError> {
        sqlx::query(&format!(
            "UPDATE guard_budget_slots SET counts_until = {NOW_MS} + $4 \
             WHERE guard = $1 AND slot = $2 AND holder = $3"
        ))
        .bind(guard)
        .bind(slot.slot)
        .bind(slot.holder)
        .bind(window_ms)
        .execute(&self.pool)
        .await?;
        Ok(())
    }

    async fn prepare_bucket(&self, guard: &str, rate: Rate) -> Result<(), StoreError> {
        // A bucket made for another rate starts again, full, at this one.
        sqlx::query(&format!(
            "INSERT INTO guard_budget_buckets (guard, call_limit, window_ms, units, refilled_at) \
             VALUES ($1, $2, $3, $2 * $3, {NOW_MS}) ON CONFLICT (guard) DO UPDATE SET \
             call_limit = excluded.call_limit, window_ms = excluded.window_ms, \
             units = excluded.units, refilled_at = excluded.refilled_at \
             WHERE guard_budget_buckets.call_limit <> excluded.call_limit \
             OR guard_budget_buckets.window_ms <> excluded.window_ms"
        ))
        .bind(guard)
        .bind(i64::from(rate.limit))
        .bind(rate.window_ms)
        .execute(&self.pool)
        .await?;
        Ok(())
    }

    async fn take_token(&self, guard: &str) -> Result<bool, StoreError> {
        // The refill, exact in integer units: each millisecond adds `call_limit` units,
        // a call costs `window_ms`, the bucket holds `call_limit × window_ms`.
        let refilled = "LEAST(b.call_limit * b.window_ms, \
                        b.units + GREATEST(0, now.ms - b.refilled_at) * b.call_limit)";
        let taken = sqlx::query(&format!(
            "WITH now AS (SELECT {NOW_MS} AS ms) \
             UPDATE guard_budget_buckets AS b SET units = {refilled} - b.window_ms, \
             refilled_at = GREATEST(b.refilled_at, now.ms) \
             FROM now WHERE b.guard = $1 AND {refilled} >= b.window_ms"
        ))
        .bind(guard)
        .execute(&self.pool)
        .await?;
        Ok(taken.rows_affected() == 1)
    }
}
