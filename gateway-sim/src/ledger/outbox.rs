//! The webhooks the ledger owes: put in an outbox as decisions and cancels
//! are made, taken out by the caller to deliver, and each attempt recorded.

use super::charge::transmission_id;
use super::{Ledger, PaymentRecord, WebhookRecord};

/// Names one owed webhook, to report its delivery attempts.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct WebhookId(usize);

/// A webhook waiting in the outbox to be delivered.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Webhook {
    pub id: WebhookId,
    pub transmission_id: String,
    /// When the status changed: the body's `createdAt`.
    pub created_at: u64,
    pub payment: PaymentRecord,
}

impl Ledger {
    /// Empties the outbox: the webhooks owed since it was last emptied.
    pub fn take_webhooks(&mut self) -> Vec<Webhook> {
        std::mem::take(&mut self.outbox)
    }

    /// Records one delivery attempt of a webhook; `delivered`: it was
    /// answered 200 in time.
    pub fn webhook_attempted(&mut self, id: WebhookId, now_ms: u64, delivered: bool) {
        if let Some(record) = self.webhooks.get_mut(id.0) {
            record.attempts += 1;
            if delivered && record.delivered_at.is_none() {
                record.delivered_at = Some(now_ms);
            }
        }
    }

    pub(super) fn owe_webhook(&mut self, payment: &PaymentRecord, now_ms: u64) {
        let id = WebhookId(self.webhooks.len());
        let transmission_id = transmission_id(id.0 as u64);
        self.webhooks.push(WebhookRecord {
            order_id: payment.order_id.clone(),
            payment_key: payment.payment_key.clone(),
            status: payment.status,
            transmission_id: transmission_id.clone(),
            delivered_at: None,
            attempts: 0,
        });
        self.outbox.push(Webhook {
            id,
            transmission_id,
            created_at: now_ms,
            payment: payment.clone(),
        });
    }
}
