//! Payments: reading them back, and recording an approval call's outcome. (Inserting
//! one is a backend's own: how an event's last unit is taken differs.)

use sqlx::Row;

use super::sql::sql_bounds;
use super::{GatewayKeys, Outcome, Payment, PaymentStatus, StoreError};
use crate::crypto::PAYMENT_KEY;
use crate::policy::recovery::RecoveryState;

/// The columns [`Sql::payment_from_row`](super::sql::Sql) reads.
pub(super) const PAYMENT_COLUMNS: &str = "id, order_id, user_id, payment_key, amount, \
     event_id, status, failure_reason, approved_at, created_at, updated_at, \
     recovery_attempts, not_found_count, last_not_found_at, next_recovery_at, flag_reason, \
     refund_due, pg_confirm_key, pg_reference";

/// Payments that hold one of their event's units: reserved or sold.
pub(super) const HOLDS_A_UNIT: &str = "status IN ('PENDING', 'UNKNOWN', 'APPROVED')";

sql_bounds! {
    /// A payment row as the store hands it out: its payment key opened.
    pub(super) fn payment_from_row(&self, row: &DB::Row) -> Result<Payment, StoreError> {
        let status: String = row.try_get("status")?;
        let status = PaymentStatus::parse(&status).ok_or_else(|| {
            StoreError::Database(sqlx::Error::Decode(
                format!("unknown status {status}").into(),
            ))
        })?;
        let order_id: String = row.try_get("order_id")?;
        let payment_key: String = row.try_get("payment_key")?;
        let payment_key = self.cipher.open(PAYMENT_KEY, &order_id, &payment_key)?;
        let confirm_key: Option<String> = row.try_get("pg_confirm_key")?;
        let gateway = GatewayKeys {
            confirm_key: confirm_key.unwrap_or_else(|| GatewayKeys::legacy(&order_id)),
            reference: row.try_get("pg_reference")?,
        };
        Ok(Payment {
            payment_id: row.try_get("id")?,
            order_id,
            user_id: row.try_get("user_id")?,
            payment_key,
            amount: row.try_get("amount")?,
            event_id: row.try_get("event_id")?,
            status,
            failure_reason: row.try_get("failure_reason")?,
            approved_at: row.try_get("approved_at")?,
            created_at: row.try_get("created_at")?,
            updated_at: row.try_get("updated_at")?,
            recovery: RecoveryState {
                attempts: count(row.try_get("recovery_attempts")?),
                not_found_count: count(row.try_get("not_found_count")?),
                last_not_found_at: row.try_get("last_not_found_at")?,
                next_attempt_at: row.try_get("next_recovery_at")?,
                flag: row.try_get("flag_reason")?,
                refund_due: row.try_get::<i64, _>("refund_due")? != 0,
            },
            gateway,
        })
    }

    pub(super) async fn record_outcome(
        &mut self,
        payment_id: i64,
        outcome: Outcome,
        now_ms: i64,
    ) -> Result<Payment, StoreError> {
        let (status, reason, approved_at, flag) = match outcome {
            Outcome::Approved { approved_at } => {
                (PaymentStatus::Approved, None, Some(approved_at), None)
            }
            Outcome::Failed { reason } => (PaymentStatus::Failed, Some(reason), None, None),
            Outcome::Unknown => (PaymentStatus::Unknown, None, None, None),
            Outcome::Flagged { flag } => (PaymentStatus::Unknown, None, None, Some(flag)),
        };
        sqlx::query(
            "UPDATE payments SET status = $1, failure_reason = $2, approved_at = $3, \
             updated_at = $4, flag_reason = COALESCE($6, flag_reason) \
             WHERE id = $5 AND status = 'PENDING'",
        )
        .bind(status.as_str())
        .bind(reason.as_deref())
        .bind(approved_at)
        .bind(now_ms)
        .bind(payment_id)
        .bind(flag.as_deref())
        .execute(&mut *self.conn)
        .await?;
        self.payment_by_id(payment_id).await
    }

    pub(super) async fn record_reference(
        &mut self,
        payment_id: i64,
        reference: &str,
    ) -> Result<(), StoreError> {
        sqlx::query("UPDATE payments SET pg_reference = $1 WHERE id = $2")
            .bind(reference)
            .bind(payment_id)
            .execute(&mut *self.conn)
            .await?;
        Ok(())
    }

    pub(super) async fn payment_by_order(
        &mut self,
        user_id: &str,
        order_id: &str,
    ) -> Result<Option<Payment>, StoreError> {
        let sql =
            format!("SELECT {PAYMENT_COLUMNS} FROM payments WHERE order_id = $1 AND user_id = $2");
        let row = sqlx::query(&sql)
            .bind(order_id)
            .bind(user_id)
            .fetch_optional(&mut *self.conn)
            .await?;
        row.map(|row| self.payment_from_row(&row)).transpose()
    }

    pub(super) async fn recent_payments(
        &mut self,
        user_id: &str,
        limit: u32,
    ) -> Result<Vec<Payment>, StoreError> {
        let sql = format!(
            "SELECT {PAYMENT_COLUMNS} FROM payments WHERE user_id = $1 ORDER BY id DESC LIMIT $2"
        );
        let rows = sqlx::query(&sql)
            .bind(user_id)
            .bind(i64::from(limit))
            .fetch_all(&mut *self.conn)
            .await?;
        rows.iter().map(|row| self.payment_from_row(row)).collect()
    }

    pub(super) async fn payment_by_id(&mut self, payment_id: i64) -> Result<Payment, StoreError> {
        let sql = format!("SELECT {PAYMENT_COLUMNS} FROM payments WHERE id = $1");
        let row = sqlx::query(&sql)
            .bind(payment_id)
            .fetch_optional(&mut *self.conn)
            .await?;
        row.map(|row| self.payment_from_row(&row))
            .transpose()?
            .ok_or(StoreError::NoSuchPayment(payment_id))
    }

    pub(super) async fn payment_by_order_id(
        &mut self,
        order_id: &str,
    ) -> Result<Option<Payment>, StoreError> {
        let sql = format!("SELECT {PAYMENT_COLUMNS} FROM payments WHERE order_id = $1");
        let row = sqlx::query(&sql)
            .bind(order_id)
            .fetch_optional(&mut *self.conn)
            .await?;
        row.map(|row| self.payment_from_row(&row)).transpose()
    }

    pub(super) async fn payments_with_status(
        &mut self,
        status: PaymentStatus,
        limit: u32,
    ) -> Result<Vec<Payment>, StoreError> {
        let sql =
            format!("SELECT {PAYMENT_COLUMNS} FROM payments WHERE status = $1 ORDER BY id LIMIT $2");
        let rows = sqlx::query(&sql)
            .bind(status.as_str())
            .bind(i64::from(limit))
            .fetch_all(&mut *self.conn)
            .await?;
        rows.iter().map(|row| self.payment_from_row(row)).collect()
    }
}

/// A stored counter (never negative) as a count.
fn count(stored: i64) -> u32 {
    u32::try_from(stored).unwrap_or_default()
}
