//! The Toss Payment object (API version 2022-11-16), made from a ledger
//! [`PaymentRecord`]: what a confirm, a look-up and a cancel answer with 200,
//! and what a webhook carries as `data`. Pure, like the ledger.
//!
//! The simulator has one merchant and one way to pay — a card, paid at once
//! (`NORMAL`, `카드`, KRW) — so the fields a card payment leaves empty are
//! `null` and the card is the same masked one every time. Times are Seoul's
//! (`+09:00`), as Toss writes them; `approvedAt` is `null` until `DONE`.

use chrono::{DateTime, Datelike, Timelike};
use serde::Serialize;

use crate::codes;
use crate::ledger::{CancelRecord, PaymentRecord, PaymentStatus};
use crate::settlement::MERCHANT_ID;

/// The API version the object's shape is Toss's of.
pub const API_VERSION: &str = "2022-11-16";
/// Every payment's `orderName`: the simulator has no payment window to set it.
pub const ORDER_NAME: &str = "gateway-sim 주문";
const SEOUL_OFFSET_MS: i64 = 9 * 60 * 60 * 1000;

#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Payment {
    pub version: &'static str,
    pub m_id: &'static str,
    pub last_transaction_key: Option<String>,
    pub payment_key: String,
    pub order_id: String,
    pub order_name: &'static str,
    #[serde(rename = "type")]
    pub kind: &'static str,
    pub method: &'static str,
    pub status: PaymentStatus,
    pub requested_at: String,
    pub approved_at: Option<String>,
    pub use_escrow: bool,
    pub culture_expense: bool,
    pub total_amount: u64,
    pub balance_amount: u64,
    pub supplied_amount: u64,
    pub vat: u64,
    pub tax_free_amount: u64,
    pub tax_exemption_amount: u64,
    pub currency: &'static str,
    pub cancels: Option<Vec<Cancel>>,
    pub failure: Option<Failure>,
    pub card: Option<Card>,
    pub virtual_account: (),
    pub transfer: (),
    pub mobile_phone: (),
    pub gift_certificate: (),
    pub easy_pay: (),
    pub cash_receipt: (),
    pub discount: (),
    pub secret: (),
    pub receipt: Option<Link>,
    pub checkout: Link,
    pub is_partial_cancelable: bool,
    pub country: &'static str,
    pub metadata: (),
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Cancel {
    pub transaction_key: String,
    pub cancel_reason: String,
    pub canceled_at: String,
    pub cancel_amount: u64,
    pub tax_free_amount: u64,
    pub tax_exemption_amount: u64,
    pub refundable_amount: u64,
    pub easy_pay_discount_amount: u64,
    pub receipt_key: String,
    pub cancel_status: &'static str,
    pub cancel_request_id: (),
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Failure {
    pub code: &'static str,
    pub message: &'static str,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Card {
    pub amount: u64,
    pub issuer_code: &'static str,
    pub acquirer_code: &'static str,
    pub number: &'static str,
    pub installment_plan_months: u32,
    pub approve_no: String,
    pub use_card_point: bool,
    pub card_type: &'static str,
    pub owner_type: &'static str,
    pub acquire_status: &'static str,
    pub is_interest_free: bool,
    pub interest_payer: (),
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Link {
    pub url: String,
}

impl Payment {
    pub fn of(record: &PaymentRecord) -> Self {
        let total = record.amount;
        let cancelled = record.status == PaymentStatus::Canceled;
        // A tenth of the supplied amount, rounded half up: total / 11.
        let vat = total / 11 + u64::from(total % 11 >= 6);
        let card = record.approve_no.as_ref().map(|approve_no| Card {
            amount: total,
            // 71: Lotte Card, a code Toss's docs use in their examples.
            issuer_code: "71",
            acquirer_code: "71",
            number: "43301234****123*",
            installment_plan_months: 0,
            approve_no: approve_no.clone(),
            use_card_point: false,
            card_type: "신용",
            owner_type: "개인",
            acquire_status: if cancelled { "CANCELED" } else { "READY" },
            is_interest_free: false,
            interest_payer: (),
        });
        let receipt = record
            .approved_at
            .and(record.transaction_key.as_ref())
            .map(|transaction| Link {
                url: format!(
                    "https://dashboard.tosspayments.com/receipt/redirection?transactionId={transaction}&ref=PX"
                ),
            });
        Self {
            version: API_VERSION,
            m_id: MERCHANT_ID,
            last_transaction_key: record
                .cancel
                .as_ref()
                .map(|cancel| cancel.transaction_key.clone())
                .or_else(|| record.transaction_key.clone()),
            payment_key: record.payment_key.clone(),
            order_id: record.order_id.clone(),
            order_name: ORDER_NAME,
            kind: "NORMAL",
            method: "카드",
            status: record.status,
            requested_at: seoul_time(record.requested_at),
            approved_at: record.approved_at.map(seoul_time),
            use_escrow: false,
            culture_expense: false,
            total_amount: total,
            balance_amount: if cancelled { 0 } else { total },
            supplied_amount: total - vat,
            vat,
            tax_free_amount: 0,
            tax_exemption_amount: 0,
            currency: "KRW",
            cancels: record
                .cancel
                .as_ref()
                .map(|cancel| vec![Cancel::of(cancel)]),
            failure: (record.status == PaymentStatus::Aborted).then_some(Failure {
                code: codes::REJECT_CARD_PAYMENT.code,
                message: codes::REJECT_CARD_PAYMENT.message,
            }),
            card,
            virtual_account: (),
            transfer: (),
            mobile_phone: (),
            gift_certificate: (),
            easy_pay: (),
            cash_receipt: (),
            discount: (),
            secret: (),
            receipt,
            checkout: Link {
                url: format!(
                    "https://api.tosspayments.com/v1/payments/{}/checkout",
                    record.payment_key
                ),
            },
            // Only full cancels are carried out.
            is_partial_cancelable: false,
            country: "KR",
            metadata: (),
        }
    }
}

impl Cancel {
    fn of(cancel: &CancelRecord) -> Self {
        Self {
            transaction_key: cancel.transaction_key.clone(),
            cancel_reason: cancel.reason.clone(),
            canceled_at: seoul_time(cancel.canceled_at),
            cancel_amount: cancel.amount,
            tax_free_amount: 0,
            tax_exemption_amount: 0,
            refundable_amount: 0,
            easy_pay_discount_amount: 0,
            receipt_key: cancel.transaction_key.clone(),
            cancel_status: "DONE",
            cancel_request_id: (),
        }
    }
}

/// Epoch milliseconds as Toss writes a payment's times:
/// `yyyy-MM-dd'T'HH:mm:ss+09:00`.
pub fn seoul_time(epoch_ms: u64) -> String {
    let at = seoul(epoch_ms);
    format!(
        "{:04}-{:02}-{:02}T{:02}:{:02}:{:02}+09:00",
        at.year(),
        at.month(),
        at.day(),
        at.hour(),
        at.minute(),
        at.second()
    )
}

/// Epoch milliseconds as a webhook's `createdAt`: Seoul's wall clock,
/// `yyyy-MM-dd'T'HH:mm:ss.SSSSSS`, with no offset.
pub fn webhook_time(epoch_ms: u64) -> String {
    let at = seoul(epoch_ms);
    format!(
        "{:04}-{:02}-{:02}T{:02}:{:02}:{:02}.{:06}",
        at.year(),
        at.month(),
        at.day(),
        at.hour(),
        at.minute(),
        at.second(),
        at.timestamp_subsec_micros()
    )
}

/// Seoul's wall clock as a UTC time shifted by its offset (Korea keeps no
/// summer time). A time chrono cannot hold reads as the epoch.
fn seoul(epoch_ms: u64) -> DateTime<chrono::Utc> {
    i64::try_from(epoch_ms)
        .ok()
        .and_then(|ms| ms.checked_add(SEOUL_OFFSET_MS))
        .and_then(DateTime::from_timestamp_millis)
        .unwrap_or(DateTime::UNIX_EPOCH)
}

#[cfg(test)]
mod tests;
