//! A late approval undone: the PG approved a payment we had already recorded FAILED, so
//! the charge is owed back — marked refund-due first (durably), cancelled at the PG,
//! then recorded REFUNDED; retried every cycle while the PG cannot cancel.

use crate::clock::now_ms;
use crate::gateway::{CancelAnswer, GatewayStatus, Order};
use crate::store::transient::retry_transient;
use crate::store::{Payment, StoreError};

use super::{Applied, Recovery};

/// What the PG is told a late approval's cancel is for (Toss requires a reason).
const CANCEL_REASON: &str = "approved after the payment was recorded failed";

impl Recovery {
    /// Cancels the late approval of a FAILED payment at the PG and records REFUNDED.
    pub(super) async fn refund(&self, payment: Payment) -> Result<Applied, StoreError> {
        let now = now_ms();
        let retry_at = now + self.config.backoff_base_ms;
        if !payment.recovery.refund_due {
            tracing::error!(order_id = %payment.order_id, reason = payment.failure_reason.as_deref(), "the PG approved a payment recorded FAILED; cancelling the charge");
            // Owed durably before the PG is asked, so a crash cannot forget it.
            let marked = retry_transient(&self.metrics, "mark_refund_due", || {
                self.store
                    .mark_refund_due(payment.payment_id, retry_at, now)
            })
            .await?;
            if !marked {
                let current = self.store.payment_by_id(payment.payment_id).await?;
                return Ok(self.settled(current, GatewayStatus::Cancelled));
            }
        }
        let order = Order::of(&payment);
        let answer = match self
            .guard
            .call(self.gateway.cancel(&order, CANCEL_REASON))
            .await
        {
            Ok(answer) => answer,
            Err(refusal) => CancelAnswer::Unavailable {
                cause: format!("the recovery guard refused: {}", refusal.reason()),
            },
        };
        if answer != CancelAnswer::Cancelled {
            tracing::warn!(order_id = %payment.order_id, ?answer, "a late approval could not be cancelled yet; retrying later");
            self.metrics.late_approval("refund_pending");
            retry_transient(&self.metrics, "mark_refund_due", || {
                self.store
                    .mark_refund_due(payment.payment_id, retry_at, now_ms())
            })
            .await?;
            return Ok(Applied::RefundPending(payment));
        }
        let note = format!(
            "the PG approved it after it was recorded FAILED ({}); the charge was cancelled",
            payment.failure_reason.as_deref().unwrap_or("no reason")
        );
        let refunded = retry_transient(&self.metrics, "record_refunded", || {
            self.store
                .record_refunded(payment.payment_id, &note, now_ms())
        })
        .await?;
        let current = match refunded {
            Some(payment) => payment,
            None => self.store.payment_by_id(payment.payment_id).await?,
        };
        tracing::info!(order_id = %current.order_id, "late approval cancelled at the PG: REFUNDED");
        self.metrics.late_approval("refunded");
        self.metrics.payment_settled(current.status.as_str());
        Ok(Applied::Refunded(current))
    }
}
