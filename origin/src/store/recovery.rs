//! Recovery's side of the store: payments claimed a page at a time under a lease, the
//! lease renewed by its holder, the decision recorded (ending the lease only for its
//! holder), and a late approval's refund owed and then done.

use sqlx::Row;

use super::payments::PAYMENT_COLUMNS;
use super::sql::{sql_bounds, Written as _};
use super::{Lease, Payment, StoreError};
use crate::policy::recovery::Decision;

sql_bounds! {
    /// Claims up to `limit` due payments in one statement; `lock` is what keeps
    /// concurrent claims apart on this database ([`Dialect::CLAIM_LOCK`]).
    ///
    /// [`Dialect::CLAIM_LOCK`]: super::sql_store::Dialect::CLAIM_LOCK
    pub(super) async fn claim_for_recovery(
        &mut self,
        lock: &str,
        now_ms: i64,
        pending_before_ms: i64,
        lease: Lease<'_>,
        limit: u32,
    ) -> Result<Vec<Payment>, StoreError> {
        let sql = format!(
            "UPDATE payments SET recovery_lease_until = $1, recovery_lease_holder = $5 \
             WHERE id IN (\
               SELECT id FROM payments \
               WHERE (status IN ('PENDING', 'UNKNOWN') OR refund_due = 1) \
               AND next_recovery_at <= $2 AND recovery_lease_until <= $2 \
               AND (status <> 'PENDING' OR created_at <= $3) \
               ORDER BY next_recovery_at, id LIMIT $4 {lock}) \
             RETURNING {PAYMENT_COLUMNS}"
        );
        let rows = sqlx::query(&sql)
            .bind(lease.until_ms)
            .bind(now_ms)
            .bind(pending_before_ms)
            .bind(i64::from(limit))
            .bind(lease.holder)
            .fetch_all(&mut *self.conn)
            .await?;
        rows.iter().map(|row| self.payment_from_row(row)).collect()
    }

    pub(super) async fn renew_recovery_leases(
        &mut self,
        payment_ids: &[i64],
        lease: Lease<'_>,
        now_ms: i64,
    ) -> Result<Vec<i64>, StoreError> {
        if payment_ids.is_empty() {
            return Ok(Vec::new());
        }
        let ids: Vec<String> = (4..4 + payment_ids.len()).map(|n| format!("${n}")).collect();
        let sql = format!(
            "UPDATE payments SET recovery_lease_until = $1 \
             WHERE recovery_lease_holder = $2 AND recovery_lease_until > $3 \
               AND id IN ({}) RETURNING id",
            ids.join(", ")
        );
        let mut statement = sqlx::query(&sql)
            .bind(lease.until_ms)
            .bind(lease.holder)
            .bind(now_ms);
        for id in payment_ids {
            statement = statement.bind(*id);
        }
        let rows = statement.fetch_all(&mut *self.conn).await?;
        rows.iter()
            .map(|row| row.try_get("id").map_err(StoreError::from))
            .collect()
    }

    pub(super) async fn record_recovery(
        &mut self,
        payment_id: i64,
        decision: &Decision,
        lease_holder: &str,
        now_ms: i64,
    ) -> Result<Option<Payment>, StoreError> {
        // The lease ends only if it is still the recorder's (the last parameter).
        let done = match decision {
            Decision::Approve { approved_at } => sqlx::query(
                "UPDATE payments SET status = 'APPROVED', approved_at = $1, \
                 recovery_lease_until = CASE WHEN recovery_lease_holder = $4 \
                 THEN 0 ELSE recovery_lease_until END, \
                 updated_at = $2 WHERE id = $3 AND status IN ('PENDING', 'UNKNOWN')",
            )
            .bind(*approved_at)
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
        .execute(&mut *self.conn)
        .await?;
        if done.rows() == 0 {
            return Ok(None);
        }
        self.payment_by_id(payment_id).await.map(Some)
    }

    pub(super) async fn mark_refund_due(
        &mut self,
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
        .execute(&mut *self.conn)
        .await?;
        Ok(done.rows() == 1)
    }

    pub(super) async fn record_refunded(
        &mut self,
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
        .execute(&mut *self.conn)
        .await?;
        if done.rows() == 0 {
            return Ok(None);
        }
        self.payment_by_id(payment_id).await.map(Some)
    }
}
