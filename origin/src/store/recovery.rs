//! What recovery records: its decision on a payment (ending the lease only for its
//! holder), and a late approval's refund owed and then done. (Claiming payments and
//! renewing leases are a backend's own: how concurrent claims are kept apart differs.)

use super::sql::{sql_bounds, Written as _};
use super::{Payment, StoreError};
use crate::policy::recovery::Decision;

sql_bounds! {
    pub(super) async fn record_recovery(
        &self,
        payment_id: i64,
        decision: &Decision,
        lease_holder: &str,
        now_ms: i64,
    ) -> Result<Option<Payment>, StoreError> {
        // The lease ends only if it is still the recorder's (the last parameter).
        let done = match decision {
            Decision::Approve { approved_at, flag } => sqlx::query(
                "UPDATE payments SET status = 'APPROVED', approved_at = $1, \
                 flag_reason = COALESCE($2, flag_reason), \
                 recovery_lease_until = CASE WHEN recovery_lease_holder = $5 \
                 THEN 0 ELSE recovery_lease_until END, \
                 updated_at = $3 WHERE id = $4 AND status IN ('PENDING', 'UNKNOWN')",
            )
            .bind(*approved_at)
            .bind(flag.as_deref())
            .bind(now_ms)
            .bind(payment_id),
            Decision::Fail { reason } => sqlx::query(
                "UPDATE payments SET status = 'FAILED', failure_reason = $1, \
                 recovery_lease_until = \
                 CASE WHEN recovery_lease_holder = $4 THEN 0 ELSE recovery_lease_until END, updated_at = $2 \
                 WHERE id = $3 AND status IN ('PENDING', 'UNKNOWN')",
            )
            .bind(*reason)
            .bind(now_ms)
            .bind(payment_id),
            Decision::Later { state } => sqlx::query(
                "UPDATE payments SET status = 'UNKNOWN', recovery_attempts = $1, \
                 not_found_count = $2, last_not_found_at = $3, next_recovery_at = $4, \
                 flag_reason = $5, recovery_lease_until = \
                 CASE WHEN recovery_lease_holder = $8 THEN 0 ELSE recovery_lease_until END, updated_at = $6 \
                 WHERE id = $7 AND status IN ('PENDING', 'UNKNOWN')",
            )
            .bind(i64::from(state.attempts))
            .bind(i64::from(state.not_found_count))
            .bind(state.last_not_found_at)
            .bind(state.next_attempt_at)
            .bind(state.flag.as_deref())
            .bind(now_ms)
            .bind(payment_id),
        }
        .bind(lease_holder)
        .execute(self.pool)
        .await?;
        if done.rows() == 0 {
            return Ok(None);
        }
        self.payment_by_id(payment_id).await.map(Some)
    }

    pub(super) async fn mark_refund_due(
        &self,
        payment_id: i64,
        next_attempt_at: i64,
        now_ms: i64,
    ) -> Result<bool, StoreError> {
        let done = sqlx::query(
            "UPDATE payments SET refund_due = 1, next_recovery_at = $1, \
             recovery_lease_until = 0, updated_at = $2 WHERE id = $3 AND status = 'FAILED'",
        )
        .bind(next_attempt_at)
        .bind(now_ms)
        .bind(payment_id)
        .execute(self.pool)
        .await?;
        Ok(done.rows() == 1)
    }

    pub(super) async fn record_refunded(
        &self,
        payment_id: i64,
        note: &str,
        now_ms: i64,
    ) -> Result<Option<Payment>, StoreError> {
        let done = sqlx::query(
            "UPDATE payments SET status = 'REFUNDED', refund_due = 0, flag_reason = $1, \
             recovery_lease_until = 0, updated_at = $2 \
             WHERE id = $3 AND status = 'FAILED' AND refund_due = 1",
        )
        .bind(note)
        .bind(now_ms)
        .bind(payment_id)
        .execute(self.pool)
        .await?;
        if done.rows() == 0 {
            return Ok(None);
        }
        self.payment_by_id(payment_id).await.map(Some)
    }
}
