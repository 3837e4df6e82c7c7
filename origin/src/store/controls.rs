//! Operators' settings of the guards' breakers, one row per guard.

use sqlx::Row;

use super::sql::{decode_error, sql_bounds};
use super::{BreakerControl, StoreError};
use crate::policy::breaker::BreakerMode;

sql_bounds! {
    pub(super) async fn breaker_control(
        &mut self,
        guard: &str,
    ) -> Result<Option<BreakerControl>, StoreError> {
        let row = sqlx::query(
            "SELECT mode, reason, set_by, set_at, version FROM breaker_controls WHERE guard = $1",
        )
        .bind(guard)
        .fetch_optional(&mut *self.conn)
        .await?;
        let Some(row) = row else {
            return Ok(None);
        };
        let mode: String = row.try_get("mode")?;
        Ok(Some(BreakerControl {
            mode: BreakerMode::from_name(&mode)
                .ok_or_else(|| decode_error(format!("breaker mode {mode:?}")))?,
            reason: row.try_get("reason")?,
            by: row.try_get("set_by")?,
            at_ms: row.try_get("set_at")?,
            version: row.try_get("version")?,
        }))
    }

    pub(super) async fn set_breaker_control(
        &mut self,
        guard: &str,
        control: &BreakerControl,
    ) -> Result<i64, StoreError> {
        let version: i64 = sqlx::query_scalar(
            "INSERT INTO breaker_controls (guard, mode, reason, set_by, set_at, version) \
             VALUES ($1, $2, $3, $4, $5, 1) ON CONFLICT (guard) DO UPDATE SET \
             mode = excluded.mode, reason = excluded.reason, set_by = excluded.set_by, \
             set_at = excluded.set_at, version = breaker_controls.version + 1 \
             RETURNING version",
        )
        .bind(guard)
        .bind(control.mode.as_str())
        .bind(control.reason.as_str())
        .bind(control.by.as_str())
        .bind(control.at_ms)
        .fetch_one(&mut *self.conn)
        .await?;
        Ok(version)
    }
}
